/* The campaign's kernel suite in C with OpenMP, for `perfcast campaign run --backend cpu`: the algorithms of
 * suite.cl and suite.cu, with the same names, arguments and work per work-item (a work-item's index arithmetic
 * included: its Oclgrind counts are the OpenCL twin's). One call is one launch: it
 * does every work-item of the NDRange the OpenCL suite is launched with (perfcast/kernels/campaign/__init__.py)
 * on every OpenMP thread, and returns its wall time in seconds.
 *
 * Where the OpenCL kernel works per work-group (the tiled SGEMM, the histogram, the reduction), the C one works
 * per block of the same size: TILE x TILE tiles, GROUP-element partial sums, a GROUP-element local histogram
 * merged with atomics. Built with gcc -O3 -march=native -fopenmp -DTILE=... (kernels/native.py). */

#include <math.h>
#include <omp.h>
#include <stdint.h>

#ifndef TILE
#define TILE 16
#endif
#define GROUP (TILE * TILE)

typedef struct {
    float x, y, z, w;
} float4;

double triad(float *restrict a, const float *restrict b, const float *restrict c, float s, int n)
{
    double start = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) a[i] = b[i] + s * c[i];
    return omp_get_wtime() - start;
}

double stencil7(float *restrict out, const float *restrict in, int n, float c0, float c1)
{
    double start = omp_get_wtime();
    int nn = n * n;
    /* One iteration per work-item, which finds its point by dividing its index as suite.cl's does: the
     * divisions are part of the work the Oclgrind counts of the OpenCL twin price (docs/models.md, §3.2). */
#pragma omp parallel for schedule(static)
    for (int i = 0; i < nn * n; i++) {
        int z = i / nn, y = (i / n) % n, x = i % n;
        if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) {
            out[i] = in[i];
            continue;
        }
        float s = in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + in[i - nn] + in[i + nn];
        out[i] = c0 * in[i] + c1 * s;
    }
    return omp_get_wtime() - start;
}

/* One colour: its points only read the other colour's, so the update is free of races, as on a GPU. Work-item i
 * updates the i-th interior point of the colour, its row and column found by a division as in suite.cl. */
double sor_redblack(float *u, const float *restrict f, int n, int colour, float omega, float h2)
{
    double start = omp_get_wtime();
    int per_row = (n - 2) / 2;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < (n - 2) * per_row; i++) {
        int row = 1 + i / per_row;
        int col = 1 + 2 * (i % per_row) + ((row + colour) & 1);
        long k = (long)row * n + col;
        float gs = 0.25f * (u[k - 1] + u[k + 1] + u[k - n] + u[k + n] - h2 * f[k]);
        u[k] = (1.0f - omega) * u[k] + omega * gs;
    }
    return omp_get_wtime() - start;
}

/* One output at a time, its dot product walking a column of B. */
double sgemm_naive(float *restrict C, const float *restrict A, const float *restrict B, int n)
{
    double start = omp_get_wtime();
#pragma omp parallel for collapse(2) schedule(static)
    for (int row = 0; row < n; row++)
        for (int col = 0; col < n; col++) {
            float s = 0.0f;
            for (int k = 0; k < n; k++) s += A[(long)row * n + k] * B[(long)k * n + col];
            C[(long)row * n + col] = s;
        }
    return omp_get_wtime() - start;
}

/* TILE x TILE blocks of C, each accumulated over TILE x TILE blocks of A and B (n a multiple of TILE). */
double sgemm_tiled(float *restrict C, const float *restrict A, const float *restrict B, int n)
{
    double start = omp_get_wtime();
#pragma omp parallel for collapse(2) schedule(static)
    for (int r0 = 0; r0 < n; r0 += TILE)
        for (int c0 = 0; c0 < n; c0 += TILE) {
            float acc[TILE][TILE] = {{0.0f}};
            for (int t = 0; t < n; t += TILE)
                for (int r = 0; r < TILE; r++)
                    for (int k = 0; k < TILE; k++) {
                        float a = A[(long)(r0 + r) * n + t + k];
                        for (int c = 0; c < TILE; c++) acc[r][c] += a * B[(long)(t + k) * n + c0 + c];
                    }
            for (int r = 0; r < TILE; r++)
                for (int c = 0; c < TILE; c++) C[(long)(r0 + r) * n + c0 + c] = acc[r][c];
        }
    return omp_get_wtime() - start;
}

/* Adds the histogram of `data` to `bins`, as each OpenCL launch does: per block of GROUP elements (a work-group),
 * a local histogram zeroed, each element counted into it with an atomic increment (suite.cl's atomic_inc on local
 * memory: PoCL emits the same locked add, not knowing that one thread runs the group), and its non-zero bins added
 * to the global ones with atomics. GROUP is 256, one bin per work-item to zero and to merge, as in suite.cl. */
#if GROUP != 256
#error "histogram256 zeroes and merges one bin per work-item: GROUP must be 256"
#endif
double histogram256(uint32_t *bins, const uint8_t *restrict data, int n)
{
    double start = omp_get_wtime();
    int groups = (n + GROUP - 1) / GROUP;
#pragma omp parallel for schedule(static)
    for (int g = 0; g < groups; g++) {
        uint32_t local_bins[256];
        for (int b = 0; b < 256; b++) local_bins[b] = 0;
        int end = (g + 1) * GROUP < n ? (g + 1) * GROUP : n;
        for (int i = g * GROUP; i < end; i++) __atomic_fetch_add(&local_bins[data[i]], 1u, __ATOMIC_RELAXED);
        for (int b = 0; b < 256; b++)
            if (local_bins[b]) __atomic_fetch_add(&bins[b], local_bins[b], __ATOMIC_RELAXED);
    }
    return omp_get_wtime() - start;
}

/* One partial sum per GROUP elements, as one per OpenCL work-group. */
double reduce_sum(float *partial, const float *restrict x, int n)
{
    double start = omp_get_wtime();
    int groups = (n + GROUP - 1) / GROUP;
#pragma omp parallel for schedule(static)
    for (int g = 0; g < groups; g++) {
        int end = (g + 1) * GROUP < n ? (g + 1) * GROUP : n;
        float s = 0.0f;
        for (int i = g * GROUP; i < end; i++) s += x[i];
        partial[g] = s;
    }
    return omp_get_wtime() - start;
}

double transcendental(float *restrict y, const float *restrict x, int n)
{
    double start = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        float v = x[i];
        y[i] = expf(-v) * logf(v + 2.0f) + sinf(v) * sqrtf(v + 1.0f) + 1.0f / (v + 3.0f);
    }
    return omp_get_wtime() - start;
}

double nbody(float4 *restrict acc, const float4 *restrict body, int n, float eps2)
{
    double start = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        float4 p = body[i];
        float ax = 0.0f, ay = 0.0f, az = 0.0f;
        for (int j = 0; j < n; j++) {
            float4 q = body[j];
            float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
            float r2 = dx * dx + dy * dy + dz * dz + eps2;
            float inv = 1.0f / sqrtf(r2);
            float s = q.w * inv * inv * inv;
            ax += s * dx;
            ay += s * dy;
            az += s * dz;
        }
        acc[i] = (float4){ax, ay, az, 0.0f};
    }
    return omp_get_wtime() - start;
}

double spmv_csr(float *restrict y, const int *restrict row_start, const int *restrict cols,
                const float *restrict vals, const float *restrict x, int rows)
{
    double start = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; r++) {
        float s = 0.0f;
        for (int k = row_start[r]; k < row_start[r + 1]; k++) s += vals[k] * x[cols[k]];
        y[r] = s;
    }
    return omp_get_wtime() - start;
}

double hash_int(uint32_t *restrict out, const uint32_t *restrict in, int n, int rounds)
{
    double start = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        uint32_t v = in[i];
        for (int r = 0; r < rounds; r++) {
            v ^= v >> 16;
            v *= 0x7feb352du;
            v ^= v >> 15;
            v += (uint32_t)r;
        }
        out[i] = v;
    }
    return omp_get_wtime() - start;
}

double horner_fp64(double *restrict y, const double *restrict x, int n)
{
    double start = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        double v = x[i], s = 1.0;
        for (int k = 0; k < 16; k++) s = s * v + 0.5;
        y[i] = s;
    }
    return omp_get_wtime() - start;
}
