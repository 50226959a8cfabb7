/* From PolyBench/C 4.2.1 (medley/nussinov/nussinov.c), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */

#include <math.h>
#define N 2500
typedef char base;
#define match(b1, b2) (((b1)+(b2)) == 3 ? 1 : 0)
#define max_score(s1, s2) ((s1 >= s2) ? s1 : s2)

static
void kernel_nussinov(int n, base seq[N],
			   double table[N][N])
{
  int i, j, k;
 for (i = N-1; i >= 0; i--) {
  for (j=i+1; j<N; j++) {

   if (j-1>=0)
      table[i][j] = max_score(table[i][j], table[i][j-1]);
   if (i+1<N)
      table[i][j] = max_score(table[i][j], table[i+1][j]);

   if (j-1>=0 && i+1<N) {
     /* don't allow adjacent elements to bond */
     if (i<j-1)
        table[i][j] = max_score(table[i][j], table[i+1][j-1]+match(seq[i], seq[j]));
     else
        table[i][j] = max_score(table[i][j], table[i+1][j-1]);
   }

   /* why: The i and j loops are a dynamic-programming wavefront; the k loop is the one data-parallel kernel, launched for every (i, j): a max-plus reduction of row i with column j of table into table[i][j], (N-2)/3 long on average. */
   /* expect: 1x832|element ^ 832x1|element -> 1|shared ; f = 3 */
   for (k=i+1; k<j; k++) {
      table[i][j] = max_score(table[i][j], table[i][k] + table[k+1][j]);
   }
  }
 }
}
