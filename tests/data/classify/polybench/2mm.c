/* From PolyBench/C 4.2.1 (linear-algebra/kernels/2mm/2mm.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define NI 800
#define NJ 900
#define NK 1100
#define NL 1200

static
void kernel_2mm(int ni, int nj, int nk, int nl,
		double alpha,
		double beta,
		double tmp[NI][NJ],
		double A[NI][NK],
		double B[NK][NJ],
		double C[NJ][NL],
		double D[NI][NL])
{
  int i, j, k;
  /* D := alpha*A*B*C + beta*D */
  /* why: tmp = alpha*A*B: each (i, j) reduces row i of A with column j of B; tmp is set to 0 first, so its old value is not read. */
  /* expect: NIxNK|tile(1xNK) ^ NKxNJ|tile(NKx1) -> NIxNJ|element ; f = 3 */
  for (i = 0; i < NI; i++)
    for (j = 0; j < NJ; j++)
      {
	tmp[i][j] = (0.0);
	for (k = 0; k < NK; ++k)
	  tmp[i][j] += alpha * A[i][k] * B[k][j];
      }
  /* why: D = beta*D + tmp*C: D is scaled in place (its old value is read: an input), then accumulates row i of tmp times column j of C. */
  /* expect: NIxNL|element ^ NIxNJ|tile(1xNJ) ^ NJxNL|tile(NJx1) -> NIxNL|element ; f = 1801/900 */
  for (i = 0; i < NI; i++)
    for (j = 0; j < NL; j++)
      {
	D[i][j] *= beta;
	for (k = 0; k < NJ; ++k)
	  D[i][j] += tmp[i][k] * C[k][j];
      }
}
