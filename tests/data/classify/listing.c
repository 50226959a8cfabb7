/* The four loops of the boat hull authors' example listing, in plain C.
 * Each loop is preceded by the species a person writes for it, and its f. */
/* K is left undefined: it stays a symbol, bound at prediction time (--define K=4096). */
float A[K], B[K];
float C[10][10], D[10][10];

void listing(void)
{
    /* expect: K|element -> K|element ; f = 2 */
    for (int i = 0; i < K; i++)
        B[i] = 2 * A[i] + 5;

    /* expect: K|neighb(3) -> K|element ; f = 2/3 */
    for (int i = 1; i < K - 1; i++)
        B[i] = A[i - 1] + A[i] + A[i + 1];

    /* expect: 10x10|element -> 10x10|element ; f = 2 */
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 10; j++)
            D[i][j] = C[i][j] > 255.0f ? 255.0f : (C[i][j] < 0.0f ? 0.0f : C[i][j]);
}

float total;

void accumulate(void)
{
    /* expect: K|element -> 1|shared ; f = 1 */
    for (int i = 0; i < K; i++)
        total = total + A[i];
}
