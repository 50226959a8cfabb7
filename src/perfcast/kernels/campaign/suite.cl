/* The campaign's kernel suite, OpenCL C. suite.cu holds the same algorithms in CUDA C, with the same
 * names, arguments and work per work-item; perfcast/kernels/campaign/__init__.py describes each one
 * (species, work, traffic) and how it is launched.
 *
 * Every kernel computes only the work-items it is launched with, so a reduced NDRange (Oclgrind
 * profiling) does the same work per work-item as the full one. TILE, the local tile of sgemm_tiled and
 * the work-group size of the local-memory kernels, comes in as -DTILE. */

#ifndef TILE
#define TILE 16
#endif
#define GROUP (TILE * TILE)

/* STREAM triad: a = b + s c */
__kernel void triad(__global float *restrict a, __global const float *restrict b,
                    __global const float *restrict c, float s, int n)
{
    int i = get_global_id(0);
    if (i < n) a[i] = b[i] + s * c[i];
}

/* 3D 7-point stencil on an n^3 grid; boundary points copied. */
__kernel void stencil7(__global float *restrict out, __global const float *restrict in, int n, float c0, float c1)
{
    int i = get_global_id(0);
    int nn = n * n;
    if (i >= nn * n) return;
    int z = i / nn, y = (i / n) % n, x = i % n;
    if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) {
        out[i] = in[i];
        return;
    }
    float s = in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + in[i - nn] + in[i + nn];
    out[i] = c0 * in[i] + c1 * s;
}

/* One colour of a red-black SOR sweep of the 2D Poisson equation on an n x n grid (n even). Work-item i
 * updates the i-th interior point of colour `colour`. */
__kernel void sor_redblack(__global float *u, __global const float *restrict f, int n, int colour, float omega,
                           float h2)
{
    int i = get_global_id(0);
    int per_row = (n - 2) / 2;
    if (i >= (n - 2) * per_row) return;
    int row = 1 + i / per_row;
    int col = 1 + 2 * (i % per_row) + ((row + colour) & 1);
    int k = row * n + col;
    float gs = 0.25f * (u[k - 1] + u[k + 1] + u[k - n] + u[k + n] - h2 * f[k]);
    u[k] = (1.0f - omega) * u[k] + omega * gs;
}

/* C = A B, one output per work-item, straight from global memory. */
__kernel void sgemm_naive(__global float *restrict C, __global const float *restrict A,
                          __global const float *restrict B, int n)
{
    int col = get_global_id(0), row = get_global_id(1);
    if (row >= n || col >= n) return;
    float s = 0.0f;
    for (int k = 0; k < n; k++)
        s += A[row * n + k] * B[k * n + col];
    C[row * n + col] = s;
}

/* C = A B with TILE x TILE tiles of A and B staged in local memory (n a multiple of TILE). */
__kernel void sgemm_tiled(__global float *restrict C, __global const float *restrict A,
                          __global const float *restrict B, int n)
{
    __local float As[TILE][TILE];
    __local float Bs[TILE][TILE];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float s = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        As[ty][tx] = A[row * n + t + tx];
        Bs[ty][tx] = B[(t + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; k++)
            s += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = s;
}

/* 256-bin histogram of bytes: a local histogram per work-group, merged into the global one with atomics. */
__kernel void histogram256(__global uint *bins, __global const uchar *restrict data, int n)
{
    __local uint local_bins[256];
    int lid = get_local_id(0);
    for (int b = lid; b < 256; b += get_local_size(0)) local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int i = get_global_id(0);
    if (i < n) atomic_inc(&local_bins[data[i]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < 256; b += get_local_size(0))
        if (local_bins[b]) atomic_add(&bins[b], local_bins[b]);
}

/* Tree reduction: each work-group sums GROUP floats in local memory and writes one partial sum. */
__kernel void reduce_sum(__global float *partial, __global const float *restrict x, int n)
{
    __local float buffer[GROUP];
    int lid = get_local_id(0), i = get_global_id(0);
    buffer[lid] = i < n ? x[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = GROUP / 2; stride > 0; stride >>= 1) {
        if (lid < stride) buffer[lid] += buffer[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0)] = buffer[0];
}

/* A map heavy in special functions: exp, log, sin, sqrt and a division per element. */
__kernel void transcendental(__global float *restrict y, __global const float *restrict x, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float v = x[i];
    y[i] = exp(-v) * log(v + 2.0f) + sin(v) * sqrt(v + 1.0f) + 1.0f / (v + 3.0f);
}

/* All-pairs gravitational acceleration of n bodies (x, y, z, mass) with softening. */
__kernel void nbody(__global float4 *restrict acc, __global const float4 *restrict body, int n, float eps2)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float4 p = body[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; j++) {
        float4 q = body[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float r2 = dx * dx + dy * dy + dz * dz + eps2;
        float inv = rsqrt(r2);
        float s = q.w * inv * inv * inv;
        ax += s * dx;
        ay += s * dy;
        az += s * dz;
    }
    acc[i] = (float4)(ax, ay, az, 0.0f);
}

/* y = A x for a CSR matrix, one row per work-item. */
__kernel void spmv_csr(__global float *restrict y, __global const int *restrict row_start,
                       __global const int *restrict cols, __global const float *restrict vals,
                       __global const float *restrict x, int rows)
{
    int r = get_global_id(0);
    if (r >= rows) return;
    float s = 0.0f;
    for (int k = row_start[r]; k < row_start[r + 1]; k++)
        s += vals[k] * x[cols[k]];
    y[r] = s;
}

/* Integer-only work: `rounds` rounds of a multiply-xorshift hash per element. */
__kernel void hash_int(__global uint *restrict out, __global const uint *restrict in, int n, int rounds)
{
    int i = get_global_id(0);
    if (i >= n) return;
    uint v = in[i];
    for (int r = 0; r < rounds; r++) {
        v ^= v >> 16;
        v *= 0x7feb352du;
        v ^= v >> 15;
        v += (uint)r;
    }
    out[i] = v;
}

#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
/* fp64: a degree-16 polynomial by Horner's rule per element. */
__kernel void horner_fp64(__global double *restrict y, __global const double *restrict x, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    double v = x[i], s = 1.0;
    for (int k = 0; k < 16; k++)
        s = s * v + 0.5;
    y[i] = s;
}
#endif
