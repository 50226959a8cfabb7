/* From PolyBench/C 4.2.1 (linear-algebra/blas/gemver/gemver.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define N 2000

static
void kernel_gemver(int n,
		   double alpha,
		   double beta,
		   double A[N][N],
		   double u1[N],
		   double v1[N],
		   double u2[N],
		   double v2[N],
		   double w[N],
		   double x[N],
		   double y[N],
		   double z[N])
{
  int i, j;
  /* why: A += u1 v1^T + u2 v2^T, element by element. */
  /* expect: NxN|element ^ N|element ^ N|element ^ N|element ^ N|element -> NxN|element ; f = 4 */
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];

  /* why: x += beta * A^T y: x[i] accumulates column i of A times all of y. */
  /* expect: N|element ^ NxN|tile(Nx1) ^ N|full -> N|element ; f = 3 */
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      x[i] = x[i] + beta * A[j][i] * y[j];

  /* why: x += z. */
  /* expect: N|element ^ N|element -> N|element ; f = 1 */
  for (i = 0; i < N; i++)
    x[i] = x[i] + z[i];

  /* why: w += alpha * A x: w[i] accumulates row i of A times all of x. */
  /* expect: N|element ^ NxN|tile(1xN) ^ N|full -> N|element ; f = 3 */
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      w[i] = w[i] +  alpha * A[i][j] * x[j];
}
