/* From PolyBench/C 4.2.1 (datamining/correlation/correlation.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define M 1200
#define N 1400

static
void kernel_correlation(int m, int n,
			double float_n,
			double data[N][M],
			double corr[M][M],
			double mean[M],
			double stddev[M])
{
  int i, j, k;

  double eps = (0.1);
  /* why: mean[j]: each column j of data is summed (N adds) and divided once. */
  /* expect: NxM|tile(Nx1) -> M|element ; f = 1401/1400 */
  for (j = 0; j < M; j++)
    {
      mean[j] = (0.0);
      for (i = 0; i < N; i++)
	mean[j] += data[i][j];
      mean[j] /= float_n;
    }


   /* why: stddev[j]: each column j, centred by mean[j], squared and summed, then scaled and square-rooted. */
   /* expect: NxM|tile(Nx1) ^ M|element -> M|element */
   for (j = 0; j < M; j++)
    {
      stddev[j] = (0.0);
      for (i = 0; i < N; i++)
        stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
      stddev[j] /= float_n;
      stddev[j] = sqrt(stddev[j]);
      /* The following in an inelegant but usual way to handle
         near-zero std. dev. values, which below would cause a zero-
         divide. */
      stddev[j] = stddev[j] <= eps ? (1.0) : stddev[j];
    }

  /* Center and reduce the column vectors. */
  /* why: data[i][j] centred and reduced by its column's mean and stddev, in place. */
  /* expect: M|element ^ NxM|element ^ M|element -> NxM|element ; f = 4 */
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      {
        data[i][j] -= mean[j];
        data[i][j] /= sqrt(float_n) * stddev[j];
      }

  /* Calculate the m * m correlation matrix. */
  for (i = 0; i < M-1; i++)
    {
      corr[i][i] = (1.0);
      /* why: Launched for every i < M-1: corr[i][j] for j > i is column i dot column j (column i is read by every work unit), written also at corr[j][i]; 600 columns on average. */
      /* expect: Nx1|full ^ Nx600|tile(Nx1) -> 1x600|element ^ 600x1|element ; f = 2 */
      for (j = i+1; j < M; j++)
        {
          corr[i][j] = (0.0);
          for (k = 0; k < N; k++)
            corr[i][j] += (data[k][i] * data[k][j]);
          corr[j][i] = corr[i][j];
        }
    }
  corr[M-1][M-1] = (1.0);
}
