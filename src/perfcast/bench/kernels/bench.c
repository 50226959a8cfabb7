/* perfcast's native CPU micro-benchmarks.  Built twice by perfcast.bench.cpu: once vectorised
 * (-O3 -march=native, 512-bit vectors where the CPU has them) and once scalar
 * (-fno-tree-vectorize), so that the "no SIMD" ceiling is measured, not assumed.
 *
 * Every function times `passes` passes inside one OpenMP region (no fork/join per pass, so
 * arrays that fit in L1 are measured too) and returns the wall-clock seconds of the region.
 * Each thread works on its own contiguous part of the arrays (page-spaced in the streaming kernels).
 * The empty asm with a memory clobber after each pass stops the compiler from merging or dropping passes.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>

#define BARRIER() __asm__ volatile("" ::: "memory")
/* Register blocks are sized by perfcast.kernels.native.vector_isa() from the CPU's vector registers and
 * passed as -D: REGISTER_BYTES of independent values per thread, in CHAINS vector registers. */
#if !defined(REGISTER_BYTES) || !defined(CHAINS)
#error "compile with perfcast.kernels.native.vector_isa().defines(): -DREGISTER_BYTES=... -DCHAINS=..."
#endif
#define VECTOR_BYTES (REGISTER_BYTES / CHAINS)
#ifndef LANES
#define LANES (REGISTER_BYTES / 4) /* fp32 values per register block in the intensity sweep */
#endif
/* The vector build holds each block as CHAINS vectors of VECTOR_BYTES (GCC/Clang vector extensions), unrolled
 * by hand, not as an array of scalars left to the vectoriser: gcc 12 on an AVX-512 Zen 4 kept a 384-float
 * block in memory (a load, an FMA and a store per vector: fp32 peak 117-140 GFLOP/s against likwid-bench's
 * 231) while it unrolled the 192-double block of the same bytes into registers (114 against 113). The scalar
 * build (4-byte "vectors") keeps plain arrays: one-lane vectors are not promoted to registers. */
#define VECTOR_BLOCKS (VECTOR_BYTES > 4)

/* This thread's part [lo, hi) of n items: an equal share, in thread order. */
static inline void part(long n, long *lo, long *hi)
{
    int t = omp_get_thread_num(), count = omp_get_num_threads();
    long chunk = (n + count - 1) / count;
    *lo = t * chunk < n ? t * chunk : n;
    *hi = *lo + chunk < n ? *lo + chunk : n;
}

/* The streaming kernels give each thread an equal share of n doubles, but start every share on its own
 * 4 KiB page (`pitch` apart), so the arrays hold spaced_extent(n, threads) doubles.  Why: with the shares
 * side by side, the second thread's L1 triad fell from 275 to 199 GB/s on an AVX2 EPYC, with its share
 * line-aligned too, and recovered once the shares were a page apart; most likely the first core's
 * prefetchers, which run to the end of a page, pull lines the second thread then writes.  Page starts
 * also keep every share's vector loads as aligned as the arrays. */
#define PAGE_DOUBLES (4096 / 8)

static inline long spaced_pitch(long n, int count)
{
    long chunk = (n + count - 1) / count;
    return (chunk + PAGE_DOUBLES - 1) / PAGE_DOUBLES * PAGE_DOUBLES;
}

/* This thread's share of part(), moved to the start of its own page run. */
static inline void spaced_part(long n, long *lo, long *hi)
{
    long first, last;
    part(n, &first, &last);
    *lo = omp_get_thread_num() * spaced_pitch(n, omp_get_num_threads());
    *hi = *lo + (last - first);
}

/* Doubles each array of a streaming kernel needs for n elements on `threads` threads. */
long spaced_extent(long n, int threads)
{
    long chunk = (n + threads - 1) / threads, extent = 0;
    for (int t = 0; t < threads; t++) {
        long first = t * chunk < n ? t * chunk : n, last = first + chunk < n ? first + chunk : n;
        if (last > first) extent = t * spaced_pitch(n, threads) + (last - first);
    }
    return extent;
}

/* ---------------------------------------------------------------- memory */

double mem_read(const double *a, long n, long passes, int threads, double *sink)
{
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
        long lo, hi;
        spaced_part(n, &lo, &hi);
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (long p = 0; p < passes; p++) {
            long i = lo;
            for (; i + 4 <= hi; i += 4) {
                s0 += a[i];
                s1 += a[i + 1];
                s2 += a[i + 2];
                s3 += a[i + 3];
            }
            for (; i < hi; i++) s0 += a[i];
            BARRIER();
        }
        sink[omp_get_thread_num()] = s0 + s1 + s2 + s3;
    }
    return omp_get_wtime() - start;
}

double mem_write(double *a, long n, long passes, int threads)
{
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
        long lo, hi;
        spaced_part(n, &lo, &hi);
        for (long p = 0; p < passes; p++) {
            double value = (double)p;
            for (long i = lo; i < hi; i++) a[i] = value;
            BARRIER();
        }
    }
    return omp_get_wtime() - start;
}

double mem_copy(double *restrict c, const double *restrict a, long n, long passes, int threads)
{
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
        long lo, hi;
        spaced_part(n, &lo, &hi);
        for (long p = 0; p < passes; p++) {
            for (long i = lo; i < hi; i++) c[i] = a[i];
            BARRIER();
        }
    }
    return omp_get_wtime() - start;
}

double mem_triad(double *restrict a, const double *restrict b, const double *restrict c, double scalar, long n,
                 long passes, int threads)
{
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
        long lo, hi;
        spaced_part(n, &lo, &hi);
        for (long p = 0; p < passes; p++) {
            for (long i = lo; i < hi; i++) a[i] = b[i] + scalar * c[i];
            BARRIER();
        }
    }
    return omp_get_wtime() - start;
}

/* Reads every `stride`-th double of a[0..n): one useful 8-byte word per cache line touched. */
double mem_strided(const double *a, long n, long stride, long passes, int threads, double *sink)
{
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
        long lo, hi;
        part(n / stride, &lo, &hi);
        double s = 0;
        for (long p = 0; p < passes; p++) {
            for (long i = lo; i < hi; i++) s += a[i * stride];
            BARRIER();
        }
        sink[omp_get_thread_num()] = s;
    }
    return omp_get_wtime() - start;
}

/* Gathers a[idx[i]] for a random permutation idx: scattered (uncoalesced) 8-byte reads. */
double mem_random(const double *a, const int64_t *idx, long m, long passes, int threads, double *sink)
{
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
        long lo, hi;
        part(m, &lo, &hi);
        double s = 0;
        for (long p = 0; p < passes; p++) {
            for (long i = lo; i < hi; i++) s += a[idx[i]];
            BARRIER();
        }
        sink[omp_get_thread_num()] = s;
    }
    return omp_get_wtime() - start;
}

/* ---------------------------------------------------------------- compute (registers only) */

/* Each thread runs `reps` x `k` operations on REGISTER_BYTES of independent values held in registers
 * (three quarters of the vector registers, enough independent chains to cover the FMA latency without
 * spilling): FMA kernels do v = v*a + b (2 ops), add kernels v = v + b (1 op), the integer one (v + b) ^ a
 * (2 ops). */
#if VECTOR_BLOCKS
#define COMPUTE_KERNEL(NAME, TYPE, STEP)                                                        \
    double NAME(long reps, int k, int threads, TYPE a, TYPE b, TYPE *sink)                    \
    {                                                                                           \
        typedef TYPE vec __attribute__((vector_size(VECTOR_BYTES)));                            \
        enum { WIDTH = VECTOR_BYTES / sizeof(TYPE) };                                           \
        double start = omp_get_wtime();                                                         \
        _Pragma("omp parallel num_threads(threads)")                                           \
        {                                                                                       \
            vec v[CHAINS];                                                                      \
            for (int i = 0; i < CHAINS; i++)                                                    \
                for (int l = 0; l < WIDTH; l++) v[i][l] = (TYPE)(i * WIDTH + l + omp_get_thread_num()); \
            for (long r = 0; r < reps; r++) {                                                   \
                for (int q = 0; q < k; q++)                                                     \
                    _Pragma("GCC unroll 64") for (int i = 0; i < CHAINS; i++) v[i] = STEP;      \
                __asm__ volatile("" : : "r"(v) : "memory");                                     \
            }                                                                                   \
            TYPE total = 0;                                                                     \
            for (int i = 0; i < CHAINS; i++)                                                    \
                for (int l = 0; l < WIDTH; l++) total += v[i][l];                               \
            sink[omp_get_thread_num()] = total;                                                 \
        }                                                                                       \
        return omp_get_wtime() - start;                                                         \
    }
#else
#define COMPUTE_KERNEL(NAME, TYPE, STEP)                                                        \
    double NAME(long reps, int k, int threads, TYPE a, TYPE b, TYPE *sink)                    \
    {                                                                                           \
        enum { COUNT = REGISTER_BYTES / sizeof(TYPE) };                                         \
        double start = omp_get_wtime();                                                         \
        _Pragma("omp parallel num_threads(threads)")                                           \
        {                                                                                       \
            TYPE v[COUNT];                                                                      \
            for (int i = 0; i < COUNT; i++) v[i] = (TYPE)(i + omp_get_thread_num());            \
            for (long r = 0; r < reps; r++) {                                                   \
                for (int q = 0; q < k; q++)                                                     \
                    for (int i = 0; i < COUNT; i++) v[i] = STEP;                                \
                __asm__ volatile("" : : "r"(v) : "memory");                                     \
            }                                                                                   \
            TYPE total = 0;                                                                     \
            for (int i = 0; i < COUNT; i++) total += v[i];                                      \
            sink[omp_get_thread_num()] = total;                                                 \
        }                                                                                       \
        return omp_get_wtime() - start;                                                         \
    }
#endif

COMPUTE_KERNEL(peak_f32_fma, float, v[i] * a + b)
COMPUTE_KERNEL(peak_f32_add, float, v[i] + b)
COMPUTE_KERNEL(peak_f64_fma, double, v[i] * a + b)
COMPUTE_KERNEL(peak_f64_add, double, v[i] + b)
COMPUTE_KERNEL(peak_i32_fma, uint32_t, v[i] * a + b)
COMPUTE_KERNEL(peak_i32_add, uint32_t, (v[i] + b) ^ a) /* 2 ops: a plain add chain is folded */

/* ---------------------------------------------------------------- elementary functions */

/* exp, log and sin in turn on ELEMENTARY_CHAINS independent values per thread (-D from
 * perfcast.bench.accelerator, as the accelerator suites' elementary kernels take it), `rounds` rounds a pass: 3
 * calls per value a round. The C library's routines, as a kernel calling them gets them (no -ffast-math: gcc
 * calls the scalar routines); arguments inside (0, 2), their fast paths. */
#ifndef ELEMENTARY_CHAINS
#error "ELEMENTARY_CHAINS (independent values per thread) comes from perfcast.bench.accelerator as -D"
#endif
#define ELEMENTARY_KERNEL(NAME, TYPE, EXP, LOG, SIN)                                             \
    double NAME(long passes, long rounds, int threads, TYPE *sink)                              \
    {                                                                                           \
        double start = omp_get_wtime();                                                         \
        _Pragma("omp parallel num_threads(threads)")                                           \
        {                                                                                       \
            TYPE v[ELEMENTARY_CHAINS], t = 0;                                                   \
            for (int i = 0; i < ELEMENTARY_CHAINS; i++)                                         \
                v[i] = (TYPE)0.25 * i + (TYPE)1e-3 * omp_get_thread_num();                      \
            for (long p = 0; p < passes; p++) {                                                 \
                for (long r = 0; r < rounds; r++)                                               \
                    for (int i = 0; i < ELEMENTARY_CHAINS; i++) {                               \
                        v[i] = EXP(-v[i]);                                                      \
                        v[i] = LOG(v[i] + (TYPE)1.5);                                           \
                        v[i] = SIN(v[i] + (TYPE)0.5);                                           \
                    }                                                                           \
                __asm__ volatile("" : : "r"(v) : "memory");                                     \
            }                                                                                   \
            for (int i = 0; i < ELEMENTARY_CHAINS; i++) t += v[i];                              \
            sink[omp_get_thread_num()] = t;                                                     \
        }                                                                                       \
        return omp_get_wtime() - start;                                                         \
    }

ELEMENTARY_KERNEL(elementary_f32, float, expf, logf, sinf)
ELEMENTARY_KERNEL(elementary_f64, double, exp, log, sin)

/* ---------------------------------------------------------------- integer divisions */

/* DIVISION_CHAINS independent int32 quotients per thread (-D from perfcast.bench.accelerator, as bench.cl's
 * int_division), `rounds` rounds a pass: each divides every value by `d` and adds `big` back. `d` comes in at
 * run time, so gcc emits a divide (idiv), as for a loop dividing by a size; no vector unit divides integers. */
#ifndef DIVISION_CHAINS
#error "DIVISION_CHAINS (independent quotients per thread) comes from perfcast.bench.accelerator as -D"
#endif
double int_division(long passes, long rounds, int threads, int d, int big, int *sink)
{
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
        int v[DIVISION_CHAINS], t = 0;
        for (int i = 0; i < DIVISION_CHAINS; i++) v[i] = big + i + omp_get_thread_num();
        for (long p = 0; p < passes; p++) {
            for (long r = 0; r < rounds; r++)
                for (int i = 0; i < DIVISION_CHAINS; i++) v[i] = v[i] / d + big;
            __asm__ volatile("" : : "r"(v) : "memory");
        }
        for (int i = 0; i < DIVISION_CHAINS; i++) t ^= v[i];
        sink[omp_get_thread_num()] = t;
    }
    return omp_get_wtime() - start;
}

/* ---------------------------------------------------------------- scalar instruction issue */

/* bench.cl's scalar_issue on every thread: eight uint32 chains (d reads c), each with its own pair of integer
 * operations, `rounds` rounds a pass (20 instructions a round as Oclgrind counts the OpenCL twin). Run from the
 * scalar build (-fno-tree-vectorize): the rate a core issues code its compiler left scalar (§3.3). */
double scalar_issue(long passes, long rounds, int threads, uint32_t *sink)
{
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
        uint32_t g = (uint32_t)omp_get_thread_num();
        uint32_t a = g, b = g + 1u, c = g + 2u, d = g + 3u, e = g + 4u, f = g + 5u, h = g + 6u, i = g + 7u;
        for (long p = 0; p < passes; p++) {
            for (long q = 0; q < rounds; q++) {
                a = (a + 0x9e3779b9u) ^ 0x85ebca6bu;
                b = (b ^ 0xc2b2ae35u) + 0x27d4eb2fu;
                c = (0x165667b1u - c) ^ 0xd3a2646cu;
                d = (d ^ 0xfd7046c5u) - c;
                e = (e + 0x7feb352du) | 0x846ca68bu;
                f = (f | 0x2c1b3c6du) + 0x297a2d39u;
                h = (0x632be59bu - h) | 0x1b873593u;
                i = (i & 0xe6546b64u) + 0x5bd1e995u;
            }
            __asm__ volatile("" : : "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
        }
        sink[omp_get_thread_num()] = a ^ b ^ c ^ d ^ e ^ f ^ h ^ i;
    }
    return omp_get_wtime() - start;
}

/* ---------------------------------------------------------------- atomic increments */

/* bench.cl's atomic_increments on every thread: `rounds` atomic increments a pass into the thread's own 256-bin
 * histogram, each bin drawn by a linear congruential generator (a locked add on x86, as suite.c's histogram and
 * PoCL's atomic_inc emit), then the bins added to `sink` with atomics. */
double atomic_increments(long passes, long rounds, int threads, uint32_t *sink)
{
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
        uint32_t bins[256] = {0};
        uint32_t x = (uint32_t)omp_get_thread_num() * 2654435761u + 1u;
        for (long p = 0; p < passes; p++)
            for (long q = 0; q < rounds; q++) {
                x = x * 1664525u + 1013904223u;
                __atomic_fetch_add(&bins[x >> 24], 1u, __ATOMIC_RELAXED);
            }
        for (int b = 0; b < 256; b++)
            if (bins[b]) __atomic_fetch_add(&sink[b], bins[b], __ATOMIC_RELAXED);
    }
    return omp_get_wtime() - start;
}

/* ---------------------------------------------------------------- mixbench sweep */

/* In place over x[0..n): each element takes k FMAs (2k ops) between its load and its store,
 * so one kernel sweeps arithmetic intensity 2k / 8 op/B (fp32: 4 B read + 4 B written). */
double mix_f32(float *x, long n, int k, float a, float b, long passes, int threads)
{
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
        long lo, hi;
        part(n / LANES, &lo, &hi);
        for (long p = 0; p < passes; p++) {
            for (long blk = lo; blk < hi; blk++) {
                float *at = x + blk * LANES;
#if VECTOR_BLOCKS
                typedef float vec __attribute__((vector_size(VECTOR_BYTES)));
                vec v[CHAINS]; /* LANES floats: the block of the compute kernels, as vectors (see above) */
                __builtin_memcpy(v, at, sizeof v);
                for (int q = 0; q < k; q++)
                    _Pragma("GCC unroll 64") for (int i = 0; i < CHAINS; i++) v[i] = v[i] * a + b;
                __builtin_memcpy(at, v, sizeof v);
#else
                float v[LANES];
                for (int i = 0; i < LANES; i++) v[i] = at[i];
                for (int q = 0; q < k; q++)
                    for (int i = 0; i < LANES; i++) v[i] = v[i] * a + b;
                for (int i = 0; i < LANES; i++) at[i] = v[i];
#endif
            }
            BARRIER();
        }
    }
    return omp_get_wtime() - start;
}
