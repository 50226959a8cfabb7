/* From PolyBench/C 4.2.1 (linear-algebra/blas/gemm/gemm.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define NI 1000
#define NJ 1100
#define NK 1200

static
void kernel_gemm(int ni, int nj, int nk,
		 double alpha,
		 double beta,
		 double C[NI][NJ],
		 double A[NI][NK],
		 double B[NK][NJ])
{
  int i, j, k;

//BLAS PARAMS
//TRANSA = 'N'
//TRANSB = 'N'
// => Form C := alpha*A*B + beta*C,
//A is NIxNK
//B is NKxNJ
//C is NIxNJ
  /* why: C = beta*C + alpha*A*B with k outside j: C[i][j] is scaled (read: an input) and accumulates row i of A times column j of B. */
  /* expect: NIxNJ|element ^ NIxNK|tile(1xNK) ^ NKxNJ|tile(NKx1) -> NIxNJ|element ; f = 3601/1200 */
  for (i = 0; i < NI; i++) {
    for (j = 0; j < NJ; j++)
	C[i][j] *= beta;
    for (k = 0; k < NK; k++) {
       for (j = 0; j < NJ; j++)
	  C[i][j] += alpha * A[i][k] * B[k][j];
    }
  }
}
