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

#define PER_ITEM 16

__kernel void mem_read(__global const float *a, __global float *sink)
{
    size_t i = get_global_id(0), step = get_global_size(0);
    float s = 0.0f;
    for (int r = 0; r < PER_ITEM; r++) s += a[i + r * step];
    sink[i] = s;
}

/* The same read with N-wide vectors, each work-group reading one contiguous block (a CPU core streams it; a
 * GPU's group still coalesces): the backend tries the widths and keeps the best, as clpeak reports its best. */
#define MEM_READ_VEC(N)                                                                         \
    __kernel void mem_read_v##N(__global const float##N *a, __global float##N *sink)            \
    {                                                                                           \
        size_t size = get_local_size(0);                                                        \
        size_t i = get_group_id(0) * size * PER_ITEM + get_local_id(0);                         \
        float##N s = (float##N)(0.0f);                                                          \
        for (int r = 0; r < PER_ITEM; r++) s += a[i + r * size];                                \
        sink[get_global_id(0)] = s;                                                             \
    }
MEM_READ_VEC(4)
MEM_READ_VEC(8)
MEM_READ_VEC(16)

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

/* ---------------------------------------------------------------- compute
 * Eight independent chains of 16-wide vectors per work-item: explicit vectors, because a
 * per-work-item loop is not vectorised across work-items by every runtime (PoCL on CPUs).
 * FMA kernels do v = v*a + b (2 ops a lane), add kernels v = v + b (1 op); the integer "add"
 * kernel does (v + b) ^ a (2 ops), since a plain chain of integer adds is folded by compilers. */

#define CHAINS 8
#define WIDTH 16
#define COMPUTE(NAME, T, VT, STEP)                                                       \
    __kernel void NAME(int k, T a, T b, __global T *sink)                                \
    {                                                                                    \
        VT base = (VT)((T)get_global_id(0));                                             \
        VT v0 = base, v1 = base + (T)1, v2 = base + (T)2, v3 = base + (T)3;              \
        VT v4 = base + (T)4, v5 = base + (T)5, v6 = base + (T)6, v7 = base + (T)7;       \
        for (int q = 0; q < k; q++) {                                                    \
            v0 = STEP(v0); v1 = STEP(v1); v2 = STEP(v2); v3 = STEP(v3);                  \
            v4 = STEP(v4); v5 = STEP(v5); v6 = STEP(v6); v7 = STEP(v7);                  \
        }                                                                                \
        VT t = v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7;                                   \
        sink[get_global_id(0)] = t.s0 + t.s1 + t.s2 + t.s3 + t.s4 + t.s5 + t.s6 + t.s7  \
                                 + t.s8 + t.s9 + t.sa + t.sb + t.sc + t.sd + t.se + t.sf; \
    }

#define FMA_STEP(x) mad(x, a, b)
#define ADD_STEP(x) ((x) + b)
#define IMAD_STEP(x) ((x) * a + b)
#define IADD_STEP(x) (((x) + b) ^ a)
COMPUTE(peak_f32_fma, float, float16, FMA_STEP)
COMPUTE(peak_f32_add, float, float16, ADD_STEP)
COMPUTE(peak_i32_fma, uint, uint16, IMAD_STEP)
COMPUTE(peak_i32_add, uint, uint16, IADD_STEP)
#ifdef USE_FP64
COMPUTE(peak_f64_fma, double, double16, FMA_STEP)
COMPUTE(peak_f64_add, double, double16, ADD_STEP)
#endif

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

__kernel void empty(__global float *sink)
{
    if (get_global_id(0) == (size_t)-1) sink[0] = 0.0f;  /* never true: keeps the argument used */
}

/* ---------------------------------------------------------------- intensity sweep */

__kernel void mix_f32(__global float *x, int k, float a, float b)
{
    size_t i = get_global_id(0);
    float v = x[i];
    for (int q = 0; q < k; q++) v = mad(v, a, b);
    x[i] = v;
}
