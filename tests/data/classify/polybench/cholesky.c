/* From PolyBench/C 4.2.1 (linear-algebra/solvers/cholesky/cholesky.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define N 2000

static
void kernel_cholesky(int n,
		     double A[N][N])
{
  int i, j, k;
  for (i = 0; i < N; i++) {
     //j<i
     for (j = 0; j < i; j++) {
        /* why: Launched for every (i, j < i): the dot product of rows i and j of A up to column j into A[i][j]; 666 is the mean length over the N(N-1)/2 launches. */
        /* expect: 1x666|element ^ 1x666|element -> 1|shared ; f = 2 */
        for (k = 0; k < j; k++) {
           A[i][j] -= A[i][k] * A[j][k];
        }
        A[i][j] /= A[j][j];
     }
     // i==j case
     /* why: Launched for every i: the sum of squares of row i up to column i into A[i][i]; i = 0 runs nothing, so 1000 on average over the 1999 launches. */
     /* expect: 1x1000|element -> 1|shared ; f = 2 */
     for (k = 0; k < i; k++) {
        A[i][i] -= A[i][k] * A[i][k];
     }
     A[i][i] = sqrt(A[i][i]);
  }
}
