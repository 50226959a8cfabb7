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
      for (i = 0; i < M; i++)
        nrm += A[i][k] * A[i][k];
      R[k][k] = sqrt(nrm);
      for (i = 0; i < M; i++)
        Q[i][k] = A[i][k] / R[k][k];
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
