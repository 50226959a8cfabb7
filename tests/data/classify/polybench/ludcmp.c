/* From PolyBench/C 4.2.1 (linear-algebra/solvers/ludcmp/ludcmp.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define N 2000

static
void kernel_ludcmp(int n,
		   double A[N][N],
		   double b[N],
		   double x[N],
		   double y[N])
{
  int i, j, k;

  double w;
  for (i = 0; i < N; i++) {
    for (j = 0; j <i; j++) {
       w = A[i][j];
       for (k = 0; k < j; k++) {
          w -= A[i][k] * A[k][j];
       }
        A[i][j] = w / A[j][j];
    }
   for (j = i; j < N; j++) {
       w = A[i][j];
       for (k = 0; k < i; k++) {
          w -= A[i][k] * A[k][j];
       }
       A[i][j] = w;
    }
  }

  for (i = 0; i < N; i++) {
     w = b[i];
     for (j = 0; j < i; j++)
        w -= A[i][j] * y[j];
     y[i] = w;
  }

   for (i = N-1; i >=0; i--) {
     w = y[i];
     for (j = i+1; j < N; j++)
        w -= A[i][j] * x[j];
     x[i] = w / A[i][i];
  }
}
