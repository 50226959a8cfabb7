/* From PolyBench/C 4.2.1 (linear-algebra/solvers/trisolv/trisolv.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define N 2000

static
void kernel_trisolv(int n,
		    double L[N][N],
		    double x[N],
		    double b[N])
{
  int i, j;
  for (i = 0; i < N; i++)
    {
      x[i] = b[i];
      /* why: Forward substitution: launched for every i, row i of L dot x[0..i-1] into x[i]. */
      /* expect: 1x1000|element ^ 1000|element -> 1|shared ; f = 2 */
      for (j = 0; j <i; j++)
        x[i] -= L[i][j] * x[j];
      x[i] = x[i] / L[i][i];
    }
}
