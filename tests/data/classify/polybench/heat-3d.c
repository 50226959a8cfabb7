/* From PolyBench/C 4.2.1 (stencils/heat-3d/heat-3d.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define TSTEPS 500
#define N 120

static
void kernel_heat_3d(int tsteps,
		      int n,
		      double A[N][N][N],
		      double B[N][N][N])
{
  int t, i, j, k;
    for (t = 1; t <= TSTEPS; t++) {
        /* why: 7-point heat stencil A -> B on the interior, launched TSTEPS times; the star fits a 3x3x3 box. */
        /* expect: NxNxN|neighb(3x3x3) -> 118x118x118|element */
        for (i = 1; i < N-1; i++) {
            for (j = 1; j < N-1; j++) {
                for (k = 1; k < N-1; k++) {
                    B[i][j][k] =   (0.125) * (A[i+1][j][k] - (2.0) * A[i][j][k] + A[i-1][j][k])
                                 + (0.125) * (A[i][j+1][k] - (2.0) * A[i][j][k] + A[i][j-1][k])
                                 + (0.125) * (A[i][j][k+1] - (2.0) * A[i][j][k] + A[i][j][k-1])
                                 + A[i][j][k];
                }
            }
        }
        /* why: The same stencil B -> A. */
        /* expect: NxNxN|neighb(3x3x3) -> 118x118x118|element */
        for (i = 1; i < N-1; i++) {
           for (j = 1; j < N-1; j++) {
               for (k = 1; k < N-1; k++) {
                   A[i][j][k] =   (0.125) * (B[i+1][j][k] - (2.0) * B[i][j][k] + B[i-1][j][k])
                                + (0.125) * (B[i][j+1][k] - (2.0) * B[i][j][k] + B[i][j-1][k])
                                + (0.125) * (B[i][j][k+1] - (2.0) * B[i][j][k] + B[i][j][k-1])
                                + B[i][j][k];
               }
           }
       }
    }
}
