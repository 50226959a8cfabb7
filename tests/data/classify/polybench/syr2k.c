/* From PolyBench/C 4.2.1 (linear-algebra/blas/syr2k/syr2k.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define M 1000
#define N 1200

static
void kernel_syr2k(int n, int m,
		  double alpha,
		  double beta,
		  double C[N][N],
		  double A[N][M],
		  double B[N][M])
{
  int i, j, k;

//BLAS PARAMS
//UPLO  = 'L'
//TRANS = 'N'
//A is NxM
//B is NxM
//C is NxN
  for (i = 0; i < N; i++) {
    /* why: Launched for every i: C[i][j] *= beta for j <= i. */
    /* expect: 1x600|element -> 1x600|element ; f = 1 */
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    /* why: Launched for every i, one work unit per j <= i: C[i][j] accumulates rows j of A and B against rows i of B and A (rows i read by all). */
    /* expect: 600xM|tile(1xM) ^ 1xM|full ^ 1xM|full ^ 600xM|tile(1xM) ^ 1x600|element -> 1x600|element ; f = 6 */
    for (k = 0; k < M; k++)
      for (j = 0; j <= i; j++)
	{
	  C[i][j] += A[j][k]*alpha*B[i][k] + B[j][k]*alpha*A[i][k];
	}
  }
}
