/* From PolyBench/C 4.2.1 (stencils/jacobi-1d/jacobi-1d.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define TSTEPS 500
#define N 2000

static
void kernel_jacobi_1d(int tsteps,
			    int n,
			    double A[N],
			    double B[N])
{
  int t, i;
  for (t = 0; t < TSTEPS; t++)
    {
      /* why: 3-point average A -> B on the interior, launched TSTEPS times. */
      /* expect: N|neighb(3) -> 1998|element ; f = 1 */
      for (i = 1; i < N - 1; i++)
	B[i] = 0.33333 * (A[i-1] + A[i] + A[i + 1]);
      /* why: The same B -> A. */
      /* expect: N|neighb(3) -> 1998|element ; f = 1 */
      for (i = 1; i < N - 1; i++)
	A[i] = 0.33333 * (B[i-1] + B[i] + B[i + 1]);
    }
}
