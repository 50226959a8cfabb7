/* perfcast's OpenCL micro-benchmarks: the same suite as bench.c, for any OpenCL device
 * (CPUs through PoCL, GPUs through their vendor's runtime).  Build with -DUSE_FP64 where the
 * device has double precision. */

#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* ---------------------------------------------------------------- global memory
 * One element per work-item (PER_ITEM for the reading kernels, spaced by the global size so that
 * neighbouring work-items read neighbouring words): fixed trip counts that the runtimes vectorise.
 * Float everywhere, so that every device runs them; bandwidth does not depend on it. */

#ifndef PER_ITEM
#error "PER_ITEM (elements per work-item of the reading kernels) comes from perfcast.bench.accelerator as -D"
#endif

__kernel void mem_read(__global const float *a, __global float *sink)
{
    size_t i = get_global_id(0), step = get_global_size(0);
    float s = 0.0f;
    for (int r = 0; r < PER_ITEM; r++) s += a[i + r * step];
    sink[i] = s;
}

/* Each work-item writes one float, the sum of its lanes: writing the whole vector (and reading its line first,
 * write-allocate) would add 1/8 to the bytes a 16-wide item moves, uncounted (clpeak writes one float too).
 * The lanes are summed by halving the vector (lo + hi): a loop over them through a float pointer kept the
 * accumulator in memory on PoCL 3.1, and the 8-wide read ran at 17.7 against 21.1 GB/s (AVX2 VM, 4 rounds). */
#define LANES_SUM_2(v) ((v).x + (v).y)
#define LANES_SUM_4(v) LANES_SUM_2((v).lo + (v).hi)
#define LANES_SUM_8(v) LANES_SUM_4((v).lo + (v).hi)
#define LANES_SUM_16(v) LANES_SUM_8((v).lo + (v).hi)
#define SINK_SUM(N, s) sink[get_global_id(0)] = LANES_SUM_##N(s);

/* The same read with N-wide vectors, each work-group reading one contiguous block (a CPU core streams it; a
 * GPU's group still coalesces): the backend tries the widths and keeps the best, as clpeak reports its best. */
#define MEM_READ_VEC(N)                                                                         \
    __kernel void mem_read_v##N(__global const float##N *a, __global float *sink)               \
    {                                                                                           \
        size_t size = get_local_size(0);                                                        \
        size_t i = get_group_id(0) * size * PER_ITEM + get_local_id(0);                         \
        float##N s = (float##N)(0.0f);                                                          \
        for (int r = 0; r < PER_ITEM; r++) s += a[i + r * size];                                \
        SINK_SUM(N, s)                                                                          \
    }
MEM_READ_VEC(4)
MEM_READ_VEC(8)
MEM_READ_VEC(16)

/* The same with each work-item reading PER_ITEM consecutive vectors: one stream per core where a runtime runs a
 * work-group's items one after the other (PoCL), which its prefetchers follow better than PER_ITEM streams a
 * group apart; uncoalesced on a GPU, where the strided kernels above win the trial. */
#define MEM_READ_ITEM(N)                                                                        \
    __kernel void mem_read_c##N(__global const float##N *a, __global float *sink)               \
    {                                                                                           \
        size_t i = get_global_id(0) * PER_ITEM;                                                 \
        float##N s = (float##N)(0.0f);                                                          \
        for (int r = 0; r < PER_ITEM; r++) s += a[i + r];                                       \
        SINK_SUM(N, s)                                                                          \
    }
MEM_READ_ITEM(8)
MEM_READ_ITEM(16)

__kernel void mem_write(__global float *a, float value)
{
    a[get_global_id(0)] = value;
}

__kernel void mem_copy(__global float *restrict c, __global const float *restrict a)
{
    size_t i = get_global_id(0);
    c[i] = a[i];
}

__kernel void mem_triad(__global float *restrict a, __global const float *restrict b,
                        __global const float *restrict c, float scalar)
{
    size_t i = get_global_id(0);
    a[i] = b[i] + scalar * c[i];
}

/* The triad as most kernels are written: an int index and a guard for the last group. A CPU compiler without
 * mask registers (AVX2) turns the guarded accesses of a vectorised work-item loop into masked loads and stores,
 * which can cost more than the bytes they move. */
__kernel void mem_triad_guarded(__global float *restrict a, __global const float *restrict b,
                                __global const float *restrict c, float scalar, int n)
{
    int i = get_global_id(0);
    if (i < n) a[i] = b[i] + scalar * c[i];
}

/* The copy written the same way: one load and one store an element where the triad has two loads. Beside the
 * guarded triad it tells a masked load's cost from a masked store's (docs/models.md §3.6). */
__kernel void mem_copy_guarded(__global float *restrict c, __global const float *restrict a, int n)
{
    int i = get_global_id(0);
    if (i < n) c[i] = a[i];
}

/* One useful float per `stride` floats: neighbouring work-items touch different cache lines. */
__kernel void mem_strided(__global const float *a, int stride, __global float *sink)
{
    size_t i = get_global_id(0), step = get_global_size(0);
    float s = 0.0f;
    for (int r = 0; r < PER_ITEM; r++) s += a[(i + r * step) * stride];
    sink[i] = s;
}

__kernel void mem_random(__global const float *a, __global const int *idx, __global float *sink)
{
    size_t i = get_global_id(0), step = get_global_size(0);
    float s = 0.0f;
    for (int r = 0; r < PER_ITEM; r++) s += a[idx[i + r * step]];
    sink[i] = s;
}

/* The same loads with each address computed from the indices (a multiplicative hash scaled to `count`
 * elements, in 64 bits: PoCL 3.1's mul_hi was slower than the loads), read from no index array: a level's own
 * rate of loads to random lines, without the wait for an index, or the index array's traffic, mem_random adds. */
__kernel void mem_random_computed(__global const float *a, uint count, __global float *sink)
{
    uint i = get_global_id(0), step = get_global_size(0);
    float s = 0.0f;
    for (uint r = 0; r < PER_ITEM; r++) s += a[(uint)(((ulong)((i + r * step) * 2654435761u) * count) >> 32)];
    sink[i] = s;
}

/* ---------------------------------------------------------------- compute
 * PEAK_CHAINS independent chains of PEAK_WIDTH-wide vectors per work-item: explicit vectors, because a
 * per-work-item loop is not vectorised across work-items by every runtime (PoCL on CPUs).  Both are
 * passed as -D by perfcast.bench.opencl, which builds a few shapes from the device's native vector width
 * and keeps the fastest: too few independent vectors leave the FMA pipes idle, too many spill.
 * FMA kernels do v = v*a + b (2 ops a lane), add kernels v = v + b (1 op); the integer "add"
 * kernel does (v + b) ^ a (2 ops), since a plain chain of integer adds is folded by compilers. */

#ifndef PEAK_WIDTH
#define PEAK_WIDTH 16
#endif
#ifndef PEAK_CHAINS
#define PEAK_CHAINS 8
#endif
#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)
#if PEAK_WIDTH == 1
#define VEC(T) T
#else
#define VEC(T) PASTE(T, PEAK_WIDTH)
#endif

/* The chains are separate variables, written out by EACH_CHAIN: a loop over an array of them is left rolled
 * by PoCL 3.1 without an unroll pragma, and v[] then lives in memory (half the rate). */
#if PEAK_CHAINS == 4
#define EACH_CHAIN(X, A) X(0, A) X(1, A) X(2, A) X(3, A)
#elif PEAK_CHAINS == 8
#define EACH_CHAIN(X, A) X(0, A) X(1, A) X(2, A) X(3, A) X(4, A) X(5, A) X(6, A) X(7, A)
#else
#error "PEAK_CHAINS must be 4 or 8"
#endif
#define CHAIN_INIT(i, T) VEC(T) v##i = (VEC(T))((T)get_global_id(0) + (T)i);
#define CHAIN_STEP(i, STEP) v##i = STEP(v##i);
#define CHAIN_SUM(i, unused) t += v##i;

#define COMPUTE(NAME, T, STEP)                                                           \
    __kernel void NAME(int k, T a, T b, __global T *sink)                                \
    {                                                                                    \
        EACH_CHAIN(CHAIN_INIT, T)                                                        \
        for (int q = 0; q < k; q++) {                                                    \
            EACH_CHAIN(CHAIN_STEP, STEP)                                                 \
        }                                                                                \
        VEC(T) t = (VEC(T))((T)0);                                                       \
        EACH_CHAIN(CHAIN_SUM, _)                                                         \
        T s = (T)0;                                                                      \
        for (int i = 0; i < PEAK_WIDTH; i++) s += ((T *)&t)[i];                          \
        sink[get_global_id(0)] = s;                                                      \
    }

#define FMA_STEP(x) mad(x, a, b)
#define ADD_STEP(x) ((x) + b)
#define IMAD_STEP(x) ((x) * a + b)
#define IADD_STEP(x) (((x) + b) ^ a)
COMPUTE(peak_f32_fma, float, FMA_STEP)
COMPUTE(peak_f32_add, float, ADD_STEP)
COMPUTE(peak_i32_fma, uint, IMAD_STEP)
COMPUTE(peak_i32_add, uint, IADD_STEP)
#ifdef USE_FP64
COMPUTE(peak_f64_fma, double, FMA_STEP)
COMPUTE(peak_f64_add, double, ADD_STEP)
#endif

/* ---------------------------------------------------------------- elementary functions */

/* exp, log and sin in turn on ELEMENTARY_CHAINS independent scalar values per work-item (-D from
 * perfcast.bench.accelerator), `k` rounds: 3 calls per value a round. The arguments stay inside (0, 2), where
 * every implementation takes its fast path; the add or negation before each call is the kernel's only other
 * arithmetic. Scalar on purpose: a kernel that calls a library function is what the rate is for, and PoCL 3.1
 * does not vectorise work-items across such calls. */
#ifndef ELEMENTARY_CHAINS
#error "ELEMENTARY_CHAINS (independent values per work-item) comes from perfcast.bench.accelerator as -D"
#endif
#define ELEMENTARY(NAME, T_)                                                               \
    __kernel void NAME(int k, __global T_ *sink)                                           \
    {                                                                                      \
        typedef T_ T;                                                                      \
        T v[ELEMENTARY_CHAINS], t = (T)0;                                                  \
        _Pragma("unroll") for (int c = 0; c < ELEMENTARY_CHAINS; c++)                      \
            v[c] = (T)(get_global_id(0) & 255) * (T)1e-3 + (T)0.25 * c;                    \
        for (int q = 0; q < k; q++) {                                                      \
            _Pragma("unroll") for (int c = 0; c < ELEMENTARY_CHAINS; c++) {                \
                v[c] = exp(-v[c]);                                                         \
                v[c] = log(v[c] + (T)1.5);                                                 \
                v[c] = sin(v[c] + (T)0.5);                                                 \
            }                                                                              \
        }                                                                                  \
        _Pragma("unroll") for (int c = 0; c < ELEMENTARY_CHAINS; c++) t += v[c];           \
        sink[get_global_id(0)] = t;                                                        \
    }
ELEMENTARY(elementary_f32, float)
#ifdef USE_FP64
ELEMENTARY(elementary_f64, double)
#endif

/* ---------------------------------------------------------------- integer divisions */

/* DIVISION_CHAINS independent int32 quotients per work-item (-D from perfcast.bench.accelerator), `k` rounds:
 * each round divides every value by `d` and adds `big` back (d = 3, big = 2^30 keep it below 2^31). `d` is an
 * argument so that no compiler turns the division into a multiply, as a kernel dividing by its size gets it. */
#ifndef DIVISION_CHAINS
#error "DIVISION_CHAINS (independent quotients per work-item) comes from perfcast.bench.accelerator as -D"
#endif
__kernel void int_division(int k, int d, int big, __global int *sink)
{
    int v[DIVISION_CHAINS], t = 0;
    _Pragma("unroll") for (int c = 0; c < DIVISION_CHAINS; c++) v[c] = big + (int)get_global_id(0) + c;
    for (int q = 0; q < k; q++) {
        _Pragma("unroll") for (int c = 0; c < DIVISION_CHAINS; c++) v[c] = v[c] / d + big;
    }
    _Pragma("unroll") for (int c = 0; c < DIVISION_CHAINS; c++) t ^= v[c];
    sink[get_global_id(0)] = t;
}

/* ---------------------------------------------------------------- scalar instruction issue (CPU devices) */

#ifdef CPU_RATES /* PoCL's CPU device only (perfcast.bench.opencl: cpu_rates) */

/* Eight uint chains (d reads c's value, no more), two integer operations each a round, `k` rounds: 16 operations and the loop's
 * add, compare and two branches, 20 instructions a round as Oclgrind counts them (phis aside; docs/models.md,
 * §3.3; tests/bench/test_scalar_issue.py counts them).
 * Each chain's pair of operations is its own (add-xor, xor-add, sub-xor, ...): no two rounds' chains are alike,
 * so no compiler packs them into a vector, and the inner loop's recurrences keep PoCL's work-group loop scalar.
 * That is the code a CPU runs when its compiler left a kernel scalar. */
__kernel void scalar_issue(int k, __global uint *sink)
{
    uint g = (uint)get_global_id(0);
    uint a = g, b = g + 1u, c = g + 2u, d = g + 3u, e = g + 4u, f = g + 5u, h = g + 6u, i = g + 7u;
    for (int q = 0; q < k; q++) {
        a = (a + 0x9e3779b9u) ^ 0x85ebca6bu;
        b = (b ^ 0xc2b2ae35u) + 0x27d4eb2fu;
        c = (0x165667b1u - c) ^ 0xd3a2646cu;
        d = (d ^ 0xfd7046c5u) - c;
        e = (e + 0x7feb352du) | 0x846ca68bu;
        f = (f | 0x2c1b3c6du) + 0x297a2d39u;
        h = (0x632be59bu - h) | 0x1b873593u;
        i = (i & 0xe6546b64u) + 0x5bd1e995u;
    }
    sink[g] = a ^ b ^ c ^ d ^ e ^ f ^ h ^ i;
}

/* ---------------------------------------------------------------- atomic increments (PoCL's CPU device) */

/* `k` atomic increments per work-item into a 256-bin local histogram, each bin drawn by a linear congruential
 * generator (one multiply-add a draw), then the group's bins added to `sink` (256 atomics a group, few beside
 * the k per work-item). The read-modify-write a histogram kernel makes, priced by docs/models.md §3.4. */
__kernel void atomic_increments(int k, __global uint *sink)
{
    __local uint bins[256];
    for (int b = get_local_id(0); b < 256; b += get_local_size(0)) bins[b] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint x = (uint)get_global_id(0) * 2654435761u + 1u;
    for (int q = 0; q < k; q++) {
        x = x * 1664525u + 1013904223u;
        atomic_inc(&bins[x >> 24]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = get_local_id(0); b < 256; b += get_local_size(0))
        if (bins[b]) atomic_add(&sink[b], bins[b]);
}

/* ---------------------------------------------------------------- local memory and barriers (PoCL's CPU device) */

/* Each work-item sums `loads` words of local memory in four independent chains, in one barrier region: 1 + loads
 * local accesses a work-item, at the local memory's throughput (a CPU runtime runs a region's work-items as one
 * loop, which it vectorises where it can). The work-group size is a power of two at most 1024 and `mask` is that
 * size - 1 (docs/models.md §3.9). */
__kernel void local_loads(int loads, int mask, __global float *sink)
{
    __local float lm[1024];
    int lid = get_local_id(0);
    float v0 = (float)lid, v1 = 0.0f, v2 = 0.0f, v3 = 0.0f;
    lm[lid] = v0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int a = 0; a < loads; a += 4) {
        v0 += lm[(lid + a + 1) & mask];
        v1 += lm[(lid + a + 2) & mask];
        v2 += lm[(lid + a + 3) & mask];
        v3 += lm[(lid + a + 4) & mask];
    }
    sink[get_global_id(0)] = v0 + v1 + v2 + v3;
}

/* Each work-item crosses `regions` barriers with one value live across them and one add between: a CPU runtime
 * ends the work-items' loop at each barrier and begins the next region's, its own cost of a crossing. A kernel's
 * values live across a barrier cost more (each saved and restored per work-item), which this leaves out. */
__kernel void barrier_regions(int regions, __global float *sink)
{
    float v = (float)get_local_id(0);
    for (int r = 0; r < regions; r++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        v += 1.0f;
    }
    sink[get_global_id(0)] = v;
}

/* The same crossings with eight values live across each barrier, rotated between (one add, as above): a CPU runtime
 * saves each of a work-item's live values at a barrier and restores it after, per work-item. The difference from
 * barrier_regions is what seven more values cost a crossing. */
__kernel void barrier_context(int regions, __global float *sink)
{
    float v0 = (float)get_local_id(0), v1 = v0 + 1.0f, v2 = v0 + 2.0f, v3 = v0 + 3.0f;
    float v4 = v0 + 4.0f, v5 = v0 + 5.0f, v6 = v0 + 6.0f, v7 = v0 + 7.0f;
    for (int r = 0; r < regions; r++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        float t = v0;
        v0 = v1; v1 = v2; v2 = v3; v3 = v4; v4 = v5; v5 = v6; v6 = v7; v7 = t + 1.0f;
    }
    sink[get_global_id(0)] = v0 + 2.0f * v1 + 3.0f * v2 + 4.0f * v3 + 5.0f * v4 + 6.0f * v5 + 7.0f * v6 + 8.0f * v7;
}

#endif /* CPU_RATES */

/* ---------------------------------------------------------------- local memory (T_ldst) */

/* Each work-item loads a neighbour's word and stores its own, `k` times: 2k local accesses of 4 B.
 * The work-group size is a power of two and `mask` is that size - 1. */
__kernel void local_ldst(int k, int mask, __global float *sink, __local float *lm)
{
    int lid = get_local_id(0);
    lm[lid] = (float)lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    float v = 0.0f;
    for (int q = 0; q < k; q++) {
        v += lm[(lid + q + 1) & mask];
        lm[lid] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    sink[get_global_id(0)] = lm[(lid + 1) & mask];
}

/* ---------------------------------------------------------------- launch latency: a kernel doing nothing */

/* One store to each 4 KiB page (1024 ints) of `a`: on a buffer no one wrote before, each store waits for the
   operating system to map its page (the first-touch rate, docs/models.md §3.7). */
__kernel void touch_pages(__global int *a)
{
    a[get_global_id(0) * 1024] = 1;
}

__kernel void empty(__global float *sink)
{
    if (get_global_id(0) == (size_t)-1) sink[0] = 0.0f;  /* never true: keeps the argument used */
}

/* Work-group cost: no work-item does anything, so a launch's time is the runtime's own, its launch and the
   starting of each work-group (docs/models.md §3.8). */
__kernel void no_work(__global float *sink)
{
}

/* ---------------------------------------------------------------- intensity sweep */

__kernel void mix_f32(__global float *x, int k, float a, float b)
{
    size_t i = get_global_id(0);
    float v = x[i];
    for (int q = 0; q < k; q++) v = mad(v, a, b);
    x[i] = v;
}
