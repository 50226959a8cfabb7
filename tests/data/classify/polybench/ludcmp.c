/* From PolyBench/C 4.2.1 (linear-algebra/solvers/ludcmp/ludcmp.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define N 2000

static
void kernel_ludcmp(int n,
		   double A[N][N],
		   double b[N],
		   double x[N],
		   double y[N])
{
  int i, j, k;

  double w;
  for (i = 0; i < N; i++) {
    for (j = 0; j <i; j++) {
       w = A[i][j];
       /* why: As lu, lower part: w accumulates row i times column j into one value per launch. */
       /* expect: 1x666|element ^ 666x1|element -> 1|shared ; f = 2 */
       for (k = 0; k < j; k++) {
          w -= A[i][k] * A[k][j];
       }
        A[i][j] = w / A[j][j];
    }
   /* why: As lu, upper part: A[i][j] for j >= i. */
   /* expect: 1x1000|element ^ 1x999|full ^ 999x1000|tile(999x1) -> 1x1000|element ; f = 2 */
   for (j = i; j < N; j++) {
       w = A[i][j];
       for (k = 0; k < i; k++) {
          w -= A[i][k] * A[k][j];
       }
       A[i][j] = w;
    }
  }

  for (i = 0; i < N; i++) {
     w = b[i];
     /* why: Forward substitution: launched for every i, row i of A dot y[0..i-1] into w. */
     /* expect: 1x1000|element ^ 1000|element -> 1|shared ; f = 2 */
     for (j = 0; j < i; j++)
        w -= A[i][j] * y[j];
     y[i] = w;
  }

   for (i = N-1; i >=0; i--) {
     w = y[i];
     /* why: Back substitution: row i of A beyond the diagonal dot x into w. */
     /* expect: 1x1000|element ^ 1000|element -> 1|shared ; f = 2 */
     for (j = i+1; j < N; j++)
        w -= A[i][j] * x[j];
     x[i] = w / A[i][i];
  }
}
