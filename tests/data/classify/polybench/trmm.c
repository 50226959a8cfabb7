/* From PolyBench/C 4.2.1 (linear-algebra/blas/trmm/trmm.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define M 1000
#define N 1200

static
void kernel_trmm(int m, int n,
		 double alpha,
		 double A[M][M],
		 double B[M][N])
{
  int i, j, k;

//BLAS parameters
//SIDE   = 'L'
//UPLO   = 'L'
//TRANSA = 'T'
//DIAG   = 'U'
// => Form  B := alpha*A**T*B.
// A is MxM
// B is MxN
  for (i = 0; i < M; i++)
     /* why: Launched for every i, one work unit per column j: B[i][j] accumulates column i of A below the diagonal (read by all) times column j of B below row i, then is scaled. */
     /* expect: 499x1|full ^ 499xN|tile(499x1) ^ 1xN|element -> 1xN|element */
     for (j = 0; j < N; j++) {
        for (k = i+1; k < M; k++)
           B[i][j] += A[k][i] * B[k][j];
        B[i][j] = alpha * B[i][j];
     }
}
