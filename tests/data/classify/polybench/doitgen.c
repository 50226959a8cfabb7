/* From PolyBench/C 4.2.1 (linear-algebra/kernels/doitgen/doitgen.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define NQ 140
#define NR 150
#define NP 160

void kernel_doitgen(int nr, int nq, int np,
		    double A[NR][NQ][NP],
		    double C4[NP][NP],
		    double sum[NP])
{
  int r, q, p, s;
  /* why: Each (r, q, p) reduces A[r][q][:] with column p of C4; sum[p] is scratch set before use in every (r, q) (a temporary, not an output), then copied back into A[r][q][p]. */
  /* expect: NRxNQxNP|tile(1x1xNP) ^ NPxNP|tile(NPx1) -> NRxNQxNP|element ; f = 2 */
  for (r = 0; r < NR; r++)
    for (q = 0; q < NQ; q++)  {
      for (p = 0; p < NP; p++)  {
	sum[p] = (0.0);
	for (s = 0; s < NP; s++)
	  sum[p] += A[r][q][s] * C4[s][p];
      }
      for (p = 0; p < NP; p++)
	A[r][q][p] = sum[p];
    }
}
