/* Synthetic primitives of known algorithmic species and tunable operator complexity,
 * for validating the boat hull model on CPUs.  Compiled by perfcast.kernels.native with
 * gcc -O3 -march=native -fopenmp: vectorised and multi-threaded, as the model's lower end assumes.
 *
 * The operator applied to each element is a chain of k fused multiply-adds v = v*a + b
 * (2k ops).  Work is done on register-sized blocks so that a long chain runs from registers,
 * not from L1, and the blocks give the vectoriser independent lanes.
 */
#include <stddef.h>

/* Register blocks from perfcast.kernels.native.vector_isa() via -D: REGISTER_BYTES in CHAINS vectors. */
#if !defined(REGISTER_BYTES) || !defined(CHAINS) || !defined(LANES)
#error "compile with perfcast.kernels.native.native_flags(): -DREGISTER_BYTES=... -DLANES=... -DCHAINS=..."
#endif
#define VECTOR_BYTES (REGISTER_BYTES / CHAINS)
/* A full block is CHAINS vectors (GCC/Clang vector extensions) unrolled by hand: left to the vectoriser as
 * an array of LANES floats, gcc 12 kept an AVX-512 block (384 floats) in memory on a Zen 4, a load and a
 * store around every FMA (see bench.c). */
typedef float vec __attribute__((vector_size(VECTOR_BYTES)));

/* The operator on a full block: k chained FMAs on each of its LANES values. */
static inline void fma_block(vec *v, int k, float a, float b)
{
    for (int r = 0; r < k; r++)
#pragma GCC unroll 64
        for (int i = 0; i < CHAINS; i++) v[i] = v[i] * a + b;
}

/* The operator on a partial block: k chained FMAs on each of `len` values (len < LANES). */
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
        vec v[CHAINS];
        __builtin_memcpy(v, x + blk * LANES, sizeof v);
        fma_block(v, k, a, b);
        __builtin_memcpy(y + blk * LANES, v, sizeof v);
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
        vec acc[CHAINS] = {0};
#pragma omp for schedule(static)
        for (long blk = 0; blk < blocks; blk++) {
            vec v[CHAINS];
            __builtin_memcpy(v, x + blk * LANES, sizeof v);
            fma_block(v, k, a, b);
#pragma GCC unroll 64
            for (int i = 0; i < CHAINS; i++) acc[i] += v[i];
        }
        float lanes[LANES];
        __builtin_memcpy(lanes, acc, sizeof lanes);
        for (int i = 0; i < LANES; i++) total += lanes[i];
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
            if (len == LANES) {
                vec acc[CHAINS] = {0};
                for (int dr = 0; dr < size; dr++) {
                    for (int dc = 0; dc < size; dc++) {
                        vec v[CHAINS];
                        __builtin_memcpy(v, in + (r + dr) * stride + c0 + dc, sizeof v);
                        fma_block(v, k, a, b);
#pragma GCC unroll 64
                        for (int i = 0; i < CHAINS; i++) acc[i] += w * v[i];
                    }
                }
                __builtin_memcpy(out + r * cols + c0, acc, sizeof acc);
                continue;
            }
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
