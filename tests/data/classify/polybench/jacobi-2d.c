/* From PolyBench/C 4.2.1 (stencils/jacobi-2d/jacobi-2d.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define TSTEPS 500
#define N 1300

static
void kernel_jacobi_2d(int tsteps,
			    int n,
			    double A[N][N],
			    double B[N][N])
{
  int t, i, j;
  for (t = 0; t < TSTEPS; t++)
    {
      /* why: 5-point average A -> B on the interior, launched TSTEPS times. */
      /* expect: NxN|neighb(3x3) -> 1298x1298|element ; f = 5/9 */
      for (i = 1; i < N - 1; i++)
	for (j = 1; j < N - 1; j++)
	  B[i][j] = (0.2) * (A[i][j] + A[i][j-1] + A[i][1+j] + A[1+i][j] + A[i-1][j]);
      /* why: The same B -> A. */
      /* expect: NxN|neighb(3x3) -> 1298x1298|element ; f = 5/9 */
      for (i = 1; i < N - 1; i++)
	for (j = 1; j < N - 1; j++)
	  A[i][j] = (0.2) * (B[i][j] + B[i][j-1] + B[i][1+j] + B[1+i][j] + B[i-1][j]);
    }
}
