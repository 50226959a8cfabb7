/* Reductions, transposes, gathers, scatters, and loops that species cannot describe. */
#include <math.h>
#include <stddef.h>

#define N 1048576
#define R 512
#define C 256
#define BINS 64

/* expect: N|element -> 1|shared ; f = 2 */
double sum_of_squares(const double *x)
{
    double s = 0.0;
    for (long i = 0; i < N; i++)
        s += x[i] * x[i];
    return s;
}

/* expect: N|element -> 1|shared ; f = 2 */
int count_above(const float *x, float level)
{
    int count = 0;
    for (long i = 0; i < N; i++)
        if (x[i] > level)
            count++;
    return count;
}

/* expect: N|element -> 1|shared ; f = 5 */
float norm2(const float *x)
{
    float s = 0.0f;
    for (long i = 0; i < N; i++)
        s = s + sqrtf(x[i] * x[i] + 1.0f) * 2.0f;
    return s;
}

/* expect: RxC|tile(1xC) -> R|element ; f = 1 */
void row_max(const float m[R][C], float best[R])
{
    for (int r = 0; r < R; r++) {
        float b = m[r][0];
        for (int c = 0; c < C; c++)
            b = m[r][c] > b ? m[r][c] : b;
        best[r] = b;
    }
}

/* expect: N|element -> BINS|shared ; f = 2 */
void histogram_scaled(const float *x, unsigned int hist[BINS])
{
    for (long i = 0; i < N; i++)
        hist[(int)(x[i] * 64.0f)] += 1;
}

/* expect: unordered RxC|element -> CxR|element ; f = 0 (a copy) */
void transpose(const float in[R][C], float out[C][R])
{
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            out[c][r] = in[r][c];
}

/* expect: unordered RxC|element -> RxC|element ; f = 0 (a copy) */
void mirror(const float *in, float *out)
{
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            out[r * C + c] = in[r * C + (C - 1 - c)];
}

/* expect unsure: unordered N|element ^ TABLE_SIZE|element -> N|element ; f = 1 (the table's size is not declared) */
void gather(const float *table, const int index[N], float *out)
{
    for (long i = 0; i < N; i++)
        out[i] = 2.0f * table[index[i]];
}

/* expect: unordered N|element ^ N|element -> N|element ; f = 1 */
void scatter(const float in[N], const int perm[N], float out[N])
{
    for (long i = 0; i < N; i++)
        out[perm[i]] = 2.0f * in[i];
}

/* expect: R|element ^ C|element ^ RxC|element -> RxC|element ; f = 3 */
void rank_one_update(const float x[R], const float y[C], float A[R][C], float alpha)
{
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            A[r][c] = A[r][c] + alpha * x[r] * y[c];
}

/* expect: N|element -> N|element ; f = 19 */
void transcendental(const float *x, float *y)
{
    for (long i = 0; i < N; i++)
        y[i] = expf(x[i]) + logf(x[i] + 1.0f) - 1.0f;
}

/* expect: unclassified (CSR rows have data-dependent bounds) */
void spmv_csr(const int *rowptr, const int *col, const float *val, const float *x, float *y)
{
    for (int r = 0; r < R; r++) {
        float acc = 0.0f;
        for (int k = rowptr[r]; k < rowptr[r + 1]; k++)
            acc += val[k] * x[col[k]];
        y[r] = acc;
    }
}

struct node { float value; struct node *next; };

/* expect: unclassified (pointer chasing) */
float list_sum(const struct node *head)
{
    float s = 0.0f;
    for (const struct node *p = head; p != NULL; p = p->next)
        s += p->value;
    return s;
}

/* expect: unclassified (early exit) */
long find_first(const float *x, float key)
{
    for (long i = 0; i < N; i++)
        if (x[i] == key)
            return i;
    return -1;
}

/* expect: unclassified (recursion) */
float tree_sum(const float *x, long lo, long hi)
{
    if (hi - lo == 1)
        return x[lo];
    float s = 0.0f;
    for (int half = 0; half < 2; half++)
        s += tree_sum(x, lo + half * (hi - lo) / 2, lo + (half + 1) * (hi - lo) / 2);
    return s;
}
