/* Synthetic primitives of known algorithmic species and tunable operator complexity,
 * for validating the boat hull model on CPUs.  Compiled by perfcast.kernels.native with
 * gcc -O3 -march=native -fopenmp: vectorised and multi-threaded, as the model's lower end assumes.
 *
 * The operator applied to each element is a chain of k fused multiply-adds v = v*a + b
 * (2k ops).  Work is done on register-sized blocks so that a long chain runs from registers,
 * not from L1, and the blocks give the vectoriser independent lanes.
 */
#include <stddef.h>

#ifndef LANES /* floats per register block, from perfcast.kernels.native.vector_isa() via -D */
#define LANES 128
#endif

/* The operator: k chained FMAs on each of `len` independent values (len <= LANES). */
static inline void fma_chain(float *restrict v, long len, int k, float a, float b)
{
    for (int r = 0; r < k; r++)
        for (long i = 0; i < len; i++) v[i] = v[i] * a + b;
}

/* N|element -> N|element.  k == 0: v = x + b (f = 1); else k FMAs (f = 2k). */
void elementwise(const float *restrict x, float *restrict y, long n, int k, float a, float b)
{
    if (k == 0) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) y[i] = x[i] + b;
        return;
    }
    long blocks = n / LANES;
#pragma omp parallel for schedule(static)
    for (long blk = 0; blk < blocks; blk++) {
        float v[LANES];
        const float *in = x + blk * LANES;
        for (int i = 0; i < LANES; i++) v[i] = in[i];
        fma_chain(v, LANES, k, a, b);
        float *out = y + blk * LANES;
        for (int i = 0; i < LANES; i++) out[i] = v[i];
    }
    for (long i = blocks * LANES; i < n; i++) { /* tail */
        float v = x[i];
        for (int r = 0; r < k; r++) v = v * a + b;
        y[i] = v;
    }
}

/* N|element -> 1|shared: sum over elements of (k FMAs on the element); f = 2k + 1. */
float reduce_sum(const float *restrict x, long n, int k, float a, float b)
{
    long blocks = n / LANES;
    float total = 0.0f;
#pragma omp parallel reduction(+ : total)
    {
        float acc[LANES] = {0};
#pragma omp for schedule(static)
        for (long blk = 0; blk < blocks; blk++) {
            float v[LANES];
            const float *in = x + blk * LANES;
            for (int i = 0; i < LANES; i++) v[i] = in[i];
            fma_chain(v, LANES, k, a, b);
            for (int i = 0; i < LANES; i++) acc[i] += v[i];
        }
        for (int i = 0; i < LANES; i++) total += acc[i];
    }
    for (long i = blocks * LANES; i < n; i++) {
        float v = x[i];
        for (int r = 0; r < k; r++) v = v * a + b;
        total += v;
    }
    return total;
}

/* AxB|neighb(NxN) -> AxB|element over an input padded by N/2 on every side
 * (rows x cols outputs, input (rows+N-1) x (cols+N-1)).  Each neighbour value takes k FMAs
 * and is then accumulated with one more FMA: f = 2k + 2 per neighbour.  Outputs are made a
 * register block at a time, so the accumulators stay in registers across the N*N neighbours. */
void neighbourhood(const float *restrict in, float *restrict out, long rows, long cols, int size, int k,
                   float a, float b, float w)
{
    long stride = cols + size - 1;
#pragma omp parallel for schedule(static)
    for (long r = 0; r < rows; r++) {
        for (long c0 = 0; c0 < cols; c0 += LANES) {
            long len = cols - c0 < LANES ? cols - c0 : LANES;
            float acc[LANES] = {0};
            for (int dr = 0; dr < size; dr++) {
                for (int dc = 0; dc < size; dc++) {
                    const float *src = in + (r + dr) * stride + c0 + dc;
                    float v[LANES];
                    for (long i = 0; i < len; i++) v[i] = src[i];
                    fma_chain(v, len, k, a, b);
                    for (long i = 0; i < len; i++) acc[i] += w * v[i];
                }
            }
            for (long i = 0; i < len; i++) out[r * cols + c0 + i] = acc[i];
        }
    }
}
