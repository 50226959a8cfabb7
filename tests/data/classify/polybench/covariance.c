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
  /* why: mean[j]: column sums, divided once. */
  /* expect: NxM|tile(Nx1) -> M|element ; f = 1401/1400 */
  for (j = 0; j < M; j++)
    {
      mean[j] = (0.0);
      for (i = 0; i < N; i++)
        mean[j] += data[i][j];
      mean[j] /= float_n;
    }

  /* why: data[i][j] -= mean[j], in place. */
  /* expect: M|element ^ NxM|element -> NxM|element ; f = 1 */
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      data[i][j] -= mean[j];

  for (i = 0; i < M; i++)
    /* why: Launched for every i: cov[i][j] for j >= i is column i dot column j, scaled, and mirrored to cov[j][i]; 600.5 columns on average. */
    /* expect: Nx1|full ^ Nx600|tile(Nx1) -> 1x600|element ^ 600x1|element */
    for (j = i; j < M; j++)
      {
        cov[i][j] = (0.0);
        for (k = 0; k < N; k++)
	  cov[i][j] += data[k][i] * data[k][j];
        cov[i][j] /= (float_n - (1.0));
        cov[j][i] = cov[i][j];
      }
}
