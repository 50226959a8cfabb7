/* From PolyBench/C 4.2.1 (linear-algebra/kernels/atax/atax.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define M 1900
#define N 2100

static
void kernel_atax(int m, int n,
		 double A[M][N],
		 double x[N],
		 double y[N],
		 double tmp[M])
{
  int i, j;
  /* why: y[i] = 0: a fill; the stored value is the only thing read. */
  /* expect: 1|full -> N|element ; f = 0 */
  for (i = 0; i < N; i++)
    y[i] = 0;
  /* why: Work unit i: tmp[i] = row i of A times x (the first j loop must end before the second uses tmp[i]), then every row adds into all of y: y is shared, tmp is an element per row. */
  /* expect: MxN|tile(1xN) ^ N|full -> M|element ^ N|shared ; f = 4 */
  for (i = 0; i < M; i++)
    {
      tmp[i] = (0.0);
      for (j = 0; j < N; j++)
	tmp[i] = tmp[i] + A[i][j] * x[j];
      for (j = 0; j < N; j++)
	y[j] = y[j] + A[i][j] * tmp[i];
    }
}
