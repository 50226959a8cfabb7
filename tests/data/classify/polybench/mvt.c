/* From PolyBench/C 4.2.1 (linear-algebra/kernels/mvt/mvt.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define N 2000

static
void kernel_mvt(int n,
		double x1[N],
		double x2[N],
		double y_1[N],
		double y_2[N],
		double A[N][N])
{
  int i, j;
  /* why: x1 += A y_1: x1[i] accumulates row i of A times all of y_1. */
  /* expect: N|element ^ NxN|tile(1xN) ^ N|full -> N|element ; f = 2 */
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      x1[i] = x1[i] + A[i][j] * y_1[j];
  /* why: x2 += A^T y_2: column i of A. */
  /* expect: N|element ^ NxN|tile(Nx1) ^ N|full -> N|element ; f = 2 */
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      x2[i] = x2[i] + A[j][i] * y_2[j];
}
