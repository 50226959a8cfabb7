/* From PolyBench/C 4.2.1 (linear-algebra/kernels/bicg/bicg.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define M 1900
#define N 2100

static
void kernel_bicg(int m, int n,
		 double A[N][M],
		 double s[M],
		 double q[N],
		 double p[M],
		 double r[N])
{
  int i, j;
  /* why: s[i] = 0: a fill. */
  /* expect: 1|full -> M|element ; f = 0 */
  for (i = 0; i < M; i++)
    s[i] = 0;
  /* why: Two reductions fused: every (i, j) reads A[i][j], r[i] and p[j] and adds into s[j] (over i) and q[i] (over j); both outputs are accumulated by many work units: shared. */
  /* expect: NxM|element ^ N|element ^ M|element -> M|shared ^ N|shared ; f = 4 */
  for (i = 0; i < N; i++)
    {
      q[i] = (0.0);
      for (j = 0; j < M; j++)
	{
	  s[j] = s[j] + r[i] * A[i][j];
	  q[i] = q[i] + A[i][j] * p[j];
	}
    }
}
