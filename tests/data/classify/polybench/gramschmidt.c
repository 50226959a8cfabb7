/* From PolyBench/C 4.2.1 (linear-algebra/solvers/gramschmidt/gramschmidt.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define M 1000
#define N 1200

static
void kernel_gramschmidt(int m, int n,
			double A[M][N],
			double R[N][N],
			double Q[M][N])
{
  int i, j, k;

  double nrm;
  for (k = 0; k < N; k++)
    {
      nrm = (0.0);
      /* why: Launched for every k: the squared norm of column k into nrm. */
      /* expect: Mx1|element -> 1|shared ; f = 2 */
      for (i = 0; i < M; i++)
        nrm += A[i][k] * A[i][k];
      R[k][k] = sqrt(nrm);
      /* why: Q[:,k] = A[:,k] / R[k][k]. */
      /* expect: Mx1|element ^ 1x1|full -> Mx1|element ; f = 1 */
      for (i = 0; i < M; i++)
        Q[i][k] = A[i][k] / R[k][k];
      /* why: Launched for every k, one work unit per column j > k: R[k][j] = Q[:,k] . A[:,j] must finish before A[:,j] is updated with it (i runs in sequence), so A's column is read and written whole; 600 columns on average over the 1199 launches that have one (k = N-1 has none). */
      /* expect: Mx1|full ^ Mx600|tile(Mx1) -> 1x600|element ^ Mx600|tile(Mx1) ; f = 4 */
      for (j = k + 1; j < N; j++)
	{
	  R[k][j] = (0.0);
	  for (i = 0; i < M; i++)
	    R[k][j] += Q[i][k] * A[i][j];
	  for (i = 0; i < M; i++)
	    A[i][j] = A[i][j] - Q[i][k] * R[k][j];
	}
    }
}
