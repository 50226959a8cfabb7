/* From PolyBench/C 4.2.1 (linear-algebra/kernels/3mm/3mm.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define NI 800
#define NJ 900
#define NK 1000
#define NL 1100
#define NM 1200

static
void kernel_3mm(int ni, int nj, int nk, int nl, int nm,
		double E[NI][NJ],
		double A[NI][NK],
		double B[NK][NJ],
		double F[NJ][NL],
		double C[NJ][NM],
		double D[NM][NL],
		double G[NI][NL])
{
  int i, j, k;
  /* E := A*B */
  /* why: E = A*B, a matrix product into a zeroed output. */
  /* expect: NIxNK|tile(1xNK) ^ NKxNJ|tile(NKx1) -> NIxNJ|element ; f = 2 */
  for (i = 0; i < NI; i++)
    for (j = 0; j < NJ; j++)
      {
	E[i][j] = (0.0);
	for (k = 0; k < NK; ++k)
	  E[i][j] += A[i][k] * B[k][j];
      }
  /* F := C*D */
  /* why: F = C*D, a matrix product into a zeroed output. */
  /* expect: NJxNM|tile(1xNM) ^ NMxNL|tile(NMx1) -> NJxNL|element ; f = 2 */
  for (i = 0; i < NJ; i++)
    for (j = 0; j < NL; j++)
      {
	F[i][j] = (0.0);
	for (k = 0; k < NM; ++k)
	  F[i][j] += C[i][k] * D[k][j];
      }
  /* G := E*F */
  /* why: G = E*F, a matrix product into a zeroed output. */
  /* expect: NIxNJ|tile(1xNJ) ^ NJxNL|tile(NJx1) -> NIxNL|element ; f = 2 */
  for (i = 0; i < NI; i++)
    for (j = 0; j < NL; j++)
      {
	G[i][j] = (0.0);
	for (k = 0; k < NJ; ++k)
	  G[i][j] += E[i][k] * F[k][j];
      }
}
