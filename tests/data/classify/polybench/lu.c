/* From PolyBench/C 4.2.1 (linear-algebra/solvers/lu/lu.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define N 2000

static
void kernel_lu(int n,
	       double A[N][N])
{
  int i, j, k;
  for (i = 0; i < N; i++) {
    for (j = 0; j <i; j++) {
       /* why: Launched for every (i, j < i): row i dot column j of A up to j, subtracted from A[i][j]; 666 on average. */
       /* expect: 1x666|element ^ 666x1|element -> 1|shared ; f = 2 */
       for (k = 0; k < j; k++) {
          A[i][j] -= A[i][k] * A[k][j];
       }
        A[i][j] /= A[j][j];
    }
   /* why: Launched for every i, one work unit per j >= i: A[i][j] -= row i (first i columns, read by all) times column j; i is 999.5 and N - i is 1000.5 on average. */
   /* expect: 1x999|full ^ 999x1000|tile(999x1) ^ 1x1000|element -> 1x1000|element ; f = 2 */
   for (j = i; j < N; j++) {
       for (k = 0; k < i; k++) {
          A[i][j] -= A[i][k] * A[k][j];
       }
    }
  }
}
