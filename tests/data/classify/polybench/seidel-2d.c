/* From PolyBench/C 4.2.1 (stencils/seidel-2d/seidel-2d.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define TSTEPS 500
#define N 2000

static
void kernel_seidel_2d(int tsteps,
		      int n,
		      double A[N][N])
{
  int t, i, j;
  for (t = 0; t <= TSTEPS - 1; t++)
    /* expect: unclassified (Gauss-Seidel: each point reads neighbours updated earlier in the same sweep, along i and j) */
    for (i = 1; i<= N - 2; i++)
      for (j = 1; j <= N - 2; j++)
	A[i][j] = (A[i-1][j-1] + A[i-1][j] + A[i-1][j+1]
		   + A[i][j-1] + A[i][j] + A[i][j+1]
		   + A[i+1][j-1] + A[i+1][j] + A[i+1][j+1])/(9.0);
}
