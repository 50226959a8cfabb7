/* From PolyBench/C 4.2.1 (linear-algebra/solvers/durbin/durbin.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define N 2000

static
void kernel_durbin(int n,
		   double r[N],
		   double y[N])
{
 double z[N];
 double alpha;
 double beta;
 double sum;

 int i,k;
 y[0] = -r[0];
 beta = (1.0);
 alpha = -r[0];

 for (k = 1; k < N; k++) {
   beta = (1-alpha*alpha)*beta;
   sum = (0.0);
   /* why: Launched for k = 1..N-1: sum of r[k-i-1]*y[i] over i < k (r read backwards: unordered); k is 1000 on average. */
   /* expect: unordered 1000|element ^ 1000|element -> 1|shared ; f = 2 */
   for (i=0; i<k; i++) {
      sum += r[k-i-1]*y[i];
   }
   alpha = - (r[k] + sum)/beta;

   /* why: z[i] = y[i] + alpha*y[k-i-1]: y read forwards and backwards. */
   /* expect: unordered 1000|element ^ 1000|element -> 1000|element ; f = 2 */
   for (i=0; i<k; i++) {
      z[i] = y[i] + alpha*y[k-i-1];
   }
   /* why: y[i] = z[i]: a copy. */
   /* expect: 1000|element -> 1000|element ; f = 0 */
   for (i=0; i<k; i++) {
     y[i] = z[i];
   }
   y[k] = alpha;
 }
}
