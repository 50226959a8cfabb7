/* From PolyBench/C 4.2.1 (linear-algebra/blas/gesummv/gesummv.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define N 1300

static
void kernel_gesummv(int n,
		    double alpha,
		    double beta,
		    double A[N][N],
		    double B[N][N],
		    double tmp[N],
		    double x[N],
		    double y[N])
{
  int i, j;
  /* why: tmp[i] and y[i]: rows i of A and B times x, then y = alpha*tmp + beta*y. */
  /* expect: NxN|tile(1xN) ^ N|full ^ NxN|tile(1xN) -> N|element ^ N|element ; f = 5203/1300 */
  for (i = 0; i < N; i++)
    {
      tmp[i] = (0.0);
      y[i] = (0.0);
      for (j = 0; j < N; j++)
	{
	  tmp[i] = A[i][j] * x[j] + tmp[i];
	  y[i] = B[i][j] * x[j] + y[i];
	}
      y[i] = alpha * tmp[i] + beta * y[i];
    }
}
