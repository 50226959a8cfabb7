/* From PolyBench/C 4.2.1 (linear-algebra/blas/symm/symm.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define M 1000
#define N 1200

static
void kernel_symm(int m, int n,
		 double alpha,
		 double beta,
		 double C[M][N],
		 double A[M][M],
		 double B[M][N])
{
  int i, j, k;
  double temp2;

//BLAS PARAMS
//SIDE = 'L'
//UPLO = 'L'
// =>  Form  C := alpha*A*B + beta*C
// A is MxM
// B is MxN
// C is MxN
//note that due to Fortran array layout, the code below more closely resembles upper triangular case in BLAS
   for (i = 0; i < M; i++)
      /* why: Launched for every i, one work unit per column j: C[k][j] for k < i accumulates B[i][j]*A[i][k] while temp2 reduces column j of B against row i of A; then C[i][j] is rewritten. Two outputs: the block of C above row i, and C[i][j]. */
      /* expect: 1xN|element ^ 499xN|tile(499x1) ^ 1x499|full ^ 1x1|full ^ 499xN|tile(499x1) ^ 1xN|element -> 499xN|tile(499x1) ^ 1xN|element */
      for (j = 0; j < N; j++ )
      {
        temp2 = 0;
        for (k = 0; k < i; k++) {
           C[k][j] += alpha*B[i][j] * A[i][k];
           temp2 += B[k][j] * A[i][k];
        }
        C[i][j] = beta * C[i][j] + alpha*B[i][j] * A[i][i] + alpha * temp2;
     }
}
