/* From PolyBench/C 4.2.1 (medley/deriche/deriche.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define W 4096
#define H 2160

static
void kernel_deriche(int w, int h, double alpha,
       double imgIn[W][H],
       double imgOut[W][H],
       double y1[W][H],
       double y2[W][H]) {
    int i,j;
    double xm1, tm1, ym1, ym2;
    double xp1, xp2;
    double tp1, tp2;
    double yp1, yp2;

    double k;
    double a1, a2, a3, a4, a5, a6, a7, a8;
    double b1, b2, c1, c2;
   k = ((1.0)-exp(-alpha))*((1.0)-exp(-alpha))/((1.0)+(2.0)*alpha*exp(-alpha)-exp((2.0)*alpha));
   a1 = a5 = k;
   a2 = a6 = k*exp(-alpha)*(alpha-(1.0));
   a3 = a7 = k*exp(-alpha)*(alpha+(1.0));
   a4 = a8 = -k*exp((-2.0)*alpha);
   b1 =  pow((2.0),-alpha);
   b2 = -exp((-2.0)*alpha);
   c1 = c2 = 1;

   /* why: Causal IIR filter along each row: ym1, ym2 carry y1[i][j-1], y1[i][j-2] from one j to the next, so j runs in sequence and a work unit is a row. */
   /* expect: WxH|tile(1xH) -> WxH|tile(1xH) ; f = 7 */
   for (i=0; i<W; i++) {
        ym1 = (0.0);
        ym2 = (0.0);
        xm1 = (0.0);
        for (j=0; j<H; j++) {
            y1[i][j] = a1*imgIn[i][j] + a2*xm1 + b1*ym1 + b2*ym2;
            xm1 = imgIn[i][j];
            ym2 = ym1;
            ym1 = y1[i][j];
        }
    }

    /* why: Anti-causal filter along each row (j downwards): the same recurrence. */
    /* expect: WxH|tile(1xH) -> WxH|tile(1xH) ; f = 7 */
    for (i=0; i<W; i++) {
        yp1 = (0.0);
        yp2 = (0.0);
        xp1 = (0.0);
        xp2 = (0.0);
        for (j=H-1; j>=0; j--) {
            y2[i][j] = a3*xp1 + a4*xp2 + b1*yp1 + b2*yp2;
            xp2 = xp1;
            xp1 = imgIn[i][j];
            yp2 = yp1;
            yp1 = y2[i][j];
        }
    }

    /* why: imgOut = c1*(y1 + y2), point by point. */
    /* expect: WxH|element ^ WxH|element -> WxH|element ; f = 2 */
    for (i=0; i<W; i++)
        for (j=0; j<H; j++) {
            imgOut[i][j] = c1 * (y1[i][j] + y2[i][j]);
        }

    /* why: Causal filter along each column: the recurrence runs over i, a work unit is a column. */
    /* expect: WxH|tile(Wx1) -> WxH|tile(Wx1) ; f = 7 */
    for (j=0; j<H; j++) {
        tm1 = (0.0);
        ym1 = (0.0);
        ym2 = (0.0);
        for (i=0; i<W; i++) {
            y1[i][j] = a5*imgOut[i][j] + a6*tm1 + b1*ym1 + b2*ym2;
            tm1 = imgOut[i][j];
            ym2 = ym1;
            ym1 = y1 [i][j];
        }
    }


    /* why: Anti-causal filter along each column. */
    /* expect: WxH|tile(Wx1) -> WxH|tile(Wx1) ; f = 7 */
    for (j=0; j<H; j++) {
        tp1 = (0.0);
        tp2 = (0.0);
        yp1 = (0.0);
        yp2 = (0.0);
        for (i=W-1; i>=0; i--) {
            y2[i][j] = a7*tp1 + a8*tp2 + b1*yp1 + b2*yp2;
            tp2 = tp1;
            tp1 = imgOut[i][j];
            yp2 = yp1;
            yp1 = y2[i][j];
        }
    }

    /* why: imgOut = c2*(y1 + y2), point by point. */
    /* expect: WxH|element ^ WxH|element -> WxH|element ; f = 2 */
    for (i=0; i<W; i++)
        for (j=0; j<H; j++)
            imgOut[i][j] = c2*(y1[i][j] + y2[i][j]);
}
