/* From PolyBench/C 4.2.1 (datamining/covariance/covariance.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define M 1200
#define N 1400

static
void kernel_covariance(int m, int n,
		       double float_n,
		       double data[N][M],
		       double cov[M][M],
		       double mean[M])
{
  int i, j, k;
  for (j = 0; j < M; j++)
    {
      mean[j] = (0.0);
      for (i = 0; i < N; i++)
        mean[j] += data[i][j];
      mean[j] /= float_n;
    }

  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      data[i][j] -= mean[j];

  for (i = 0; i < M; i++)
    for (j = i; j < M; j++)
      {
        cov[i][j] = (0.0);
        for (k = 0; k < N; k++)
	  cov[i][j] += data[k][i] * data[k][j];
        cov[i][j] /= (float_n - (1.0));
        cov[j][i] = cov[i][j];
      }
}
