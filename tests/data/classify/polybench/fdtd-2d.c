/* From PolyBench/C 4.2.1 (stencils/fdtd-2d/fdtd-2d.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define TMAX 500
#define NX 1000
#define NY 1200

static
void kernel_fdtd_2d(int tmax,
		    int nx,
		    int ny,
		    double ex[NX][NY],
		    double ey[NX][NY],
		    double hz[NX][NY],
		    double _fict_[TMAX])
{
  int t, i, j;
  for(t = 0; t < TMAX; t++)
    {
      /* why: Launched every time step: row 0 of ey set to _fict_[t], one value every work unit reads. */
      /* expect: 1|full -> 1xNY|element ; f = 0 */
      for (j = 0; j < NY; j++)
	ey[0][j] = _fict_[t];
      /* why: ey[i][j] for i >= 1 updated in place from hz[i][j] and hz[i-1][j]. */
      /* expect: 999xNY|element ^ NXxNY|neighb(2x1) -> 999xNY|element ; f = 3/2 */
      for (i = 1; i < NX; i++)
	for (j = 0; j < NY; j++)
	  ey[i][j] = ey[i][j] - (0.5)*(hz[i][j]-hz[i-1][j]);
      /* why: ex[i][j] for j >= 1 updated in place from hz[i][j] and hz[i][j-1]. */
      /* expect: NXx1199|element ^ NXxNY|neighb(1x2) -> NXx1199|element ; f = 3/2 */
      for (i = 0; i < NX; i++)
	for (j = 1; j < NY; j++)
	  ex[i][j] = ex[i][j] - (0.5)*(hz[i][j]-hz[i][j-1]);
      /* why: hz updated in place from the ex pair along j and the ey pair along i. */
      /* expect: 999x1199|element ^ 999xNY|neighb(1x2) ^ NXx1199|neighb(2x1) -> 999x1199|element ; f = 5/2 */
      for (i = 0; i < NX - 1; i++)
	for (j = 0; j < NY - 1; j++)
	  hz[i][j] = hz[i][j] - (0.7)*  (ex[i][j+1] - ex[i][j] +
				       ey[i+1][j] - ey[i][j]);
    }
}
