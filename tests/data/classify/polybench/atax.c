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
  for (i = 0; i < N; i++)
    y[i] = 0;
  for (i = 0; i < M; i++)
    {
      tmp[i] = (0.0);
      for (j = 0; j < N; j++)
	tmp[i] = tmp[i] + A[i][j] * x[j];
      for (j = 0; j < N; j++)
	y[j] = y[j] + A[i][j] * tmp[i];
    }
}
