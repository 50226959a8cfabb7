// perfcast's CUDA micro-benchmarks: the suite of bench.cl for NVIDIA GPUs, compiled at run time
// by CuPy (NVRTC) and checked with nvcc by the tests.  Kernels are extern "C" so CuPy finds them.

// PER_ITEM (elements per thread of the reading kernels), CHAINS (independent values per thread of the compute
// kernels) and ELEMENTARY_CHAINS (the same for the elementary-function kernels) come from
// perfcast.bench.cuda.kernel_defines() as -D, the one place they are set.
#if !defined(PER_ITEM) || !defined(CHAINS) || !defined(ELEMENTARY_CHAINS) || !defined(DIVISION_CHAINS)
#error "compile with perfcast.bench.cuda.kernel_defines(): -DPER_ITEM=... -DCHAINS=... -DELEMENTARY_CHAINS=... -DDIVISION_CHAINS=..."
#endif

// ------------------------------------------------------------------ global memory (one element per thread)

extern "C" __global__ void mem_read(const float *__restrict__ a, float *__restrict__ sink)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;
    float s = 0.0f;
#pragma unroll
    for (int r = 0; r < PER_ITEM; r++) s += a[i + r * step];
    sink[i] = s;
}

extern "C" __global__ void mem_write(float *__restrict__ a, float value)
{
    a[blockIdx.x * (size_t)blockDim.x + threadIdx.x] = value;
}

extern "C" __global__ void mem_copy(float *__restrict__ c, const float *__restrict__ a)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    c[i] = a[i];
}

extern "C" __global__ void mem_triad(float *__restrict__ a, const float *__restrict__ b,
                                     const float *__restrict__ c, float scalar)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    a[i] = b[i] + scalar * c[i];
}

// The same four with W floats per access (float2, float4): on an H100 (3.35 TB/s spec) the triad above gave
// 2.77 TB/s and BabelStream's in double 3.02 (the same call: docs/validation/gpu-h100-rerun), so the
// backend tries each width, keeps the best as the DRAM figure and the scalar triad as a ceiling. The arrays are
// the float ones above, viewed W at a time (CuPy's allocations are 256-byte aligned).
__device__ inline float2 splat2(float v) { return make_float2(v, v); }
__device__ inline float4 splat4(float v) { return make_float4(v, v, v, v); }
__device__ inline float2 axpy(float2 b, float s, float2 c) { return make_float2(b.x + s * c.x, b.y + s * c.y); }
__device__ inline float4 axpy(float4 b, float s, float4 c)
{
    return make_float4(b.x + s * c.x, b.y + s * c.y, b.z + s * c.z, b.w + s * c.w);
}
__device__ inline float lanes(float2 v) { return v.x + v.y; }
__device__ inline float lanes(float4 v) { return (v.x + v.y) + (v.z + v.w); }

#define MEM_STREAM_WIDE(W)                                                                                   \
    extern "C" __global__ void mem_read_v##W(const float##W *__restrict__ a, float *__restrict__ sink)      \
    {                                                                                                        \
        size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;    \
        float##W s = splat##W(0.0f);                                                                         \
        _Pragma("unroll") for (int r = 0; r < PER_ITEM; r++) s = axpy(s, 1.0f, a[i + r * step]);            \
        sink[i] = lanes(s);                                                                                  \
    }                                                                                                        \
    extern "C" __global__ void mem_write_v##W(float##W *__restrict__ a, float value)                        \
    {                                                                                                        \
        a[blockIdx.x * (size_t)blockDim.x + threadIdx.x] = splat##W(value);                                  \
    }                                                                                                        \
    extern "C" __global__ void mem_copy_v##W(float##W *__restrict__ c, const float##W *__restrict__ a)      \
    {                                                                                                        \
        size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;                                            \
        c[i] = a[i];                                                                                         \
    }                                                                                                        \
    extern "C" __global__ void mem_triad_v##W(float##W *__restrict__ a, const float##W *__restrict__ b,     \
                                              const float##W *__restrict__ c, float scalar)                  \
    {                                                                                                        \
        size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;                                            \
        a[i] = axpy(b[i], scalar, c[i]);                                                                     \
    }
MEM_STREAM_WIDE(2)
MEM_STREAM_WIDE(4)

extern "C" __global__ void mem_strided(const float *__restrict__ a, int stride, float *__restrict__ sink)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;
    float s = 0.0f;
#pragma unroll
    for (int r = 0; r < PER_ITEM; r++) s += a[(i + r * step) * stride];
    sink[i] = s;
}

// L2 read bandwidth: `passes` sweeps over a working set of mask + 1 floats (a power of two) in one launch, each
// load cached at L2 only (ld.global.cg: L1 would serve a set this small from the second pass on). One launch
// reads about a GiB, so it lasts far longer than a launch costs: a sweep of one triad per launch timed the
// launches below about 50 MiB on an H200 (docs/validation/gpu-h200). Neighbouring threads read neighbouring
// words; the passes move on by the grid's size, so no load repeats an address the compiler could keep.
extern "C" __global__ void mem_read_l2(const float *__restrict__ a, int mask, int passes, float *__restrict__ sink)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;
    float s = 0.0f;
    for (int p = 0; p < passes; p++) {
#pragma unroll
        for (int r = 0; r < PER_ITEM; r++) {
            const float *at = a + ((i + ((size_t)p * PER_ITEM + r) * step) & (size_t)mask);
            float v;
            asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(at));
            s += v;
        }
    }
    sink[i] = s;
}

extern "C" __global__ void mem_random(const float *__restrict__ a, const int *__restrict__ idx,
                                      float *__restrict__ sink)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;
    float s = 0.0f;
#pragma unroll
    for (int r = 0; r < PER_ITEM; r++) s += a[idx[i + r * step]];
    sink[i] = s;
}

// ------------------------------------------------------------------ compute: CHAINS independent chains per thread

#define COMPUTE(NAME, T, STEP)                                                                   \
    extern "C" __global__ void NAME(int k, T a, T b, T *sink)                                    \
    {                                                                                            \
        T v[CHAINS];                                                                             \
        T base = (T)(blockIdx.x * blockDim.x + threadIdx.x);                                     \
        _Pragma("unroll") for (int c = 0; c < CHAINS; c++) v[c] = base + (T)c;                   \
        for (int q = 0; q < k; q++) {                                                            \
            _Pragma("unroll") for (int c = 0; c < CHAINS; c++) v[c] = STEP(v[c]);                 \
        }                                                                                        \
        T total = 0;                                                                             \
        _Pragma("unroll") for (int c = 0; c < CHAINS; c++) total += v[c];                        \
        sink[blockIdx.x * blockDim.x + threadIdx.x] = total;                                     \
    }

#define FMA_STEP(x) fma(x, a, b)
#define ADD_STEP(x) ((x) + b)
#define IMAD_STEP(x) ((x) * a + b)
#define IADD_STEP(x) (((x) + b) ^ a)
COMPUTE(peak_f32_fma, float, FMA_STEP)
COMPUTE(peak_f32_add, float, ADD_STEP)
COMPUTE(peak_f64_fma, double, FMA_STEP)
COMPUTE(peak_f64_add, double, ADD_STEP)
COMPUTE(peak_i32_fma, unsigned int, IMAD_STEP)
COMPUTE(peak_i32_add, unsigned int, IADD_STEP)

// ------------------------------------------------------------------ elementary functions

// exp, log and sin in turn on ELEMENTARY_CHAINS independent values per thread, k rounds: 3 calls per value a
// round, arguments inside (0, 2) (the fast paths), as in bench.cl.
template <typename T> __device__ __forceinline__ T elementary_round(T v)
{
    v = exp(-v);
    v = log(v + (T)1.5);
    return sin(v + (T)0.5);
}
#define ELEMENTARY(NAME, T)                                                                      \
    extern "C" __global__ void NAME(int k, T *sink)                                              \
    {                                                                                            \
        unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;                                  \
        T v[ELEMENTARY_CHAINS], t = (T)0;                                                        \
        _Pragma("unroll") for (int c = 0; c < ELEMENTARY_CHAINS; c++)                            \
            v[c] = (T)(i & 255) * (T)1e-3 + (T)0.25 * c;                                         \
        for (int q = 0; q < k; q++) {                                                            \
            _Pragma("unroll") for (int c = 0; c < ELEMENTARY_CHAINS; c++)                        \
                v[c] = elementary_round(v[c]);                                                   \
        }                                                                                        \
        _Pragma("unroll") for (int c = 0; c < ELEMENTARY_CHAINS; c++) t += v[c];                 \
        sink[i] = t;                                                                             \
    }
ELEMENTARY(elementary_f32, float)
ELEMENTARY(elementary_f64, double)

// ------------------------------------------------------------------ shared memory (T_ldst)

// Each thread loads a neighbour's word and stores its own, k times: 2k shared accesses of 4 B.
// blockDim.x is a power of two and mask = blockDim.x - 1.
extern "C" __global__ void local_ldst(int k, int mask, float *sink)
{
    extern __shared__ float lm[];
    int lid = threadIdx.x;
    lm[lid] = (float)lid;
    __syncthreads();
    float v = 0.0f;
    for (int q = 0; q < k; q++) {
        v += lm[(lid + q + 1) & mask];
        lm[lid] = v;
    }
    __syncthreads();
    sink[blockIdx.x * blockDim.x + threadIdx.x] = lm[(lid + 1) & mask];
}

// ------------------------------------------------------------------ intensity sweep

/* Launch latency: a kernel doing nothing. */
extern "C" __global__ void empty(float *sink)
{
    if (blockIdx.x * blockDim.x + threadIdx.x == 0xffffffffu) sink[0] = 0.0f;  /* never true */
}

/* Work-group cost: no thread does anything, so a launch's time is the launch and the starting of its blocks. */
extern "C" __global__ void no_work(float *sink)
{
}

extern "C" __global__ void mix_f32(float *x, int k, float a, float b)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float v = x[i];
    for (int q = 0; q < k; q++) v = fmaf(v, a, b);
    x[i] = v;
}

// ------------------------------------------------------------------ integer divisions

// DIVISION_CHAINS independent int32 quotients per thread, k rounds: each divides every value by d (an argument:
// no multiply in its place) and adds big back, as bench.cl's int_division. A GPU has no divider; the compiler's
// sequence is what a kernel dividing by its size runs.
extern "C" __global__ void int_division(int k, int d, int big, int *sink)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    int v[DIVISION_CHAINS], t = 0;
#pragma unroll
    for (int c = 0; c < DIVISION_CHAINS; c++) v[c] = big + (int)i + c;
    for (int q = 0; q < k; q++) {
#pragma unroll
        for (int c = 0; c < DIVISION_CHAINS; c++) v[c] = v[c] / d + big;
    }
#pragma unroll
    for (int c = 0; c < DIVISION_CHAINS; c++) t ^= v[c];
    sink[i] = t;
}
