/* From PolyBench/C 4.2.1 (medley/floyd-warshall/floyd-warshall.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define N 2800

static
void kernel_floyd_warshall(int n,
			   double path[N][N])
{
  int i, j, k;
  for (k = 0; k < N; k++)
    {
      /* why: Loop k reads path[i][k] and path[k][j], which its earlier iterations wrote: N launches of the (i, j) kernel, row k and column k serving every work unit. */
      /* expect: NxN|element ^ Nx1|element ^ 1xN|element -> NxN|element ; f = 3 */
      for(i = 0; i < N; i++)
	for (j = 0; j < N; j++)
	  path[i][j] = path[i][j] < path[i][k] + path[k][j] ?
	    path[i][j] : path[i][k] + path[k][j];
    }
}
