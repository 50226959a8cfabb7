/* From PolyBench/C 4.2.1 (stencils/adi/adi.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define TSTEPS 500
#define N 1000

static
void kernel_adi(int tsteps, int n,
		double u[N][N],
		double v[N][N],
		double p[N][N],
		double q[N][N])
{
  int t, i, j;
  double DX, DY, DT;
  double B1, B2;
  double mul1, mul2;
  double a, b, c, d, e, f;
  DX = (1.0)/(double)N;
  DY = (1.0)/(double)N;
  DT = (1.0)/(double)TSTEPS;
  B1 = (2.0);
  B2 = (1.0);
  mul1 = B1 * DT / (DX * DX);
  mul2 = B2 * DT / (DY * DY);

  a = -mul1 /  (2.0);
  b = (1.0)+mul1;
  c = a;
  d = -mul2 / (2.0);
  e = (1.0)+mul2;
  f = d;

 for (t=1; t<=TSTEPS; t++) {
    //Column Sweep
    /* why: Column sweep, launched TSTEPS times: each column i solves a tridiagonal system; j runs in sequence (p[i][j] needs p[i][j-1]), so a work unit reads columns i-1..i+1 of u and writes column i of v and row i of p and q. */
    /* expect: 998x1000|neighb(998x3) -> 1000x998|tile(1000x1) ^ 998x999|tile(1x999) ^ 998x999|tile(1x999) */
    for (i=1; i<N-1; i++) {
      v[0][i] = (1.0);
      p[i][0] = (0.0);
      q[i][0] = v[0][i];
      for (j=1; j<N-1; j++) {
        p[i][j] = -c / (a*p[i][j-1]+b);
        q[i][j] = (-d*u[j][i-1]+((1.0)+(2.0)*d)*u[j][i] - f*u[j][i+1]-a*q[i][j-1])/(a*p[i][j-1]+b);
      }

      v[N-1][i] = (1.0);
      for (j=N-2; j>=1; j--) {
        v[j][i] = p[i][j] * v[j+1][i] + q[i][j];
      }
    }
    //Row Sweep
    /* why: Row sweep: the same recurrence along rows, reading rows i-1..i+1 of v and writing row i of u and of p and q. */
    /* expect: 1000x998|neighb(3x998) -> 998x1000|tile(1x1000) ^ 998x999|tile(1x999) ^ 998x999|tile(1x999) */
    for (i=1; i<N-1; i++) {
      u[i][0] = (1.0);
      p[i][0] = (0.0);
      q[i][0] = u[i][0];
      for (j=1; j<N-1; j++) {
        p[i][j] = -f / (d*p[i][j-1]+e);
        q[i][j] = (-a*v[i-1][j]+((1.0)+(2.0)*a)*v[i][j] - c*v[i+1][j]-d*q[i][j-1])/(d*p[i][j-1]+e);
      }
      u[i][N-1] = (1.0);
      for (j=N-2; j>=1; j--) {
        u[i][j] = p[i][j] * u[i][j+1] + q[i][j];
      }
    }
  }
}
