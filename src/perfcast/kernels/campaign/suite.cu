/* The campaign's kernel suite, CUDA C: the algorithms of suite.cl with the same names, arguments and work per
 * thread. Launch shapes are those perfcast/kernels/campaign/__init__.py gives (blockDim = the OpenCL
 * work-group size); TILE comes in as -DTILE. extern "C" keeps the names as CuPy and ncu see them. */

#ifndef TILE
#define TILE 16
#endif
#define GROUP (TILE * TILE)

#define GID (blockIdx.x * blockDim.x + threadIdx.x)

extern "C" __global__ void triad(float *__restrict__ a, const float *__restrict__ b, const float *__restrict__ c,
                                 float s, int n)
{
    int i = GID;
    if (i < n) a[i] = b[i] + s * c[i];
}

extern "C" __global__ void stencil7(float *__restrict__ out, const float *__restrict__ in, int n, float c0, float c1)
{
    int i = GID;
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

extern "C" __global__ void sor_redblack(float *u, const float *__restrict__ f, int n, int colour, float omega, float h2)
{
    int i = GID;
    int per_row = (n - 2) / 2;
    if (i >= (n - 2) * per_row) return;
    int row = 1 + i / per_row;
    int col = 1 + 2 * (i % per_row) + ((row + colour) & 1);
    int k = row * n + col;
    float gs = 0.25f * (u[k - 1] + u[k + 1] + u[k - n] + u[k + n] - h2 * f[k]);
    u[k] = (1.0f - omega) * u[k] + omega * gs;
}

extern "C" __global__ void sgemm_naive(float *__restrict__ C, const float *__restrict__ A, const float *__restrict__ B,
                                       int n)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= n || col >= n) return;
    float s = 0.0f;
    for (int k = 0; k < n; k++)
        s += A[row * n + k] * B[k * n + col];
    C[row * n + col] = s;
}

extern "C" __global__ void sgemm_tiled(float *__restrict__ C, const float *__restrict__ A, const float *__restrict__ B,
                                       int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int col = blockIdx.x * TILE + tx, row = blockIdx.y * TILE + ty;
    float s = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        As[ty][tx] = A[row * n + t + tx];
        Bs[ty][tx] = B[(t + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            s += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = s;
}

extern "C" __global__ void histogram256(unsigned int *bins, const unsigned char *__restrict__ data, int n)
{
    __shared__ unsigned int local_bins[256];
    int lid = threadIdx.x;
    for (int b = lid; b < 256; b += blockDim.x) local_bins[b] = 0;
    __syncthreads();
    int i = GID;
    if (i < n) atomicAdd(&local_bins[data[i]], 1u);
    __syncthreads();
    for (int b = lid; b < 256; b += blockDim.x)
        if (local_bins[b]) atomicAdd(&bins[b], local_bins[b]);
}

extern "C" __global__ void reduce_sum(float *partial, const float *__restrict__ x, int n)
{
    __shared__ float buffer[GROUP];
    int lid = threadIdx.x, i = GID;
    buffer[lid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = GROUP / 2; stride > 0; stride >>= 1) {
        if (lid < stride) buffer[lid] += buffer[lid + stride];
        __syncthreads();
    }
    if (lid == 0) partial[blockIdx.x] = buffer[0];
}

extern "C" __global__ void transcendental(float *__restrict__ y, const float *__restrict__ x, int n)
{
    int i = GID;
    if (i >= n) return;
    float v = x[i];
    y[i] = expf(-v) * logf(v + 2.0f) + sinf(v) * sqrtf(v + 1.0f) + 1.0f / (v + 3.0f);
}

extern "C" __global__ void nbody(float4 *__restrict__ acc, const float4 *__restrict__ body, int n, float eps2)
{
    int i = GID;
    if (i >= n) return;
    float4 p = body[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; j++) {
        float4 q = body[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float r2 = dx * dx + dy * dy + dz * dz + eps2;
        float inv = rsqrtf(r2);
        float s = q.w * inv * inv * inv;
        ax += s * dx;
        ay += s * dy;
        az += s * dz;
    }
    acc[i] = make_float4(ax, ay, az, 0.0f);
}

extern "C" __global__ void spmv_csr(float *__restrict__ y, const int *__restrict__ row_start, const int *__restrict__ cols,
                                    const float *__restrict__ vals, const float *__restrict__ x, int rows)
{
    int r = GID;
    if (r >= rows) return;
    float s = 0.0f;
    for (int k = row_start[r]; k < row_start[r + 1]; k++)
        s += vals[k] * x[cols[k]];
    y[r] = s;
}

extern "C" __global__ void hash_int(unsigned int *__restrict__ out, const unsigned int *__restrict__ in, int n,
                                    int rounds)
{
    int i = GID;
    if (i >= n) return;
    unsigned int v = in[i];
    for (int r = 0; r < rounds; r++) {
        v ^= v >> 16;
        v *= 0x7feb352du;
        v ^= v >> 15;
        v += (unsigned int)r;
    }
    out[i] = v;
}

extern "C" __global__ void horner_fp64(double *__restrict__ y, const double *__restrict__ x, int n)
{
    int i = GID;
    if (i >= n) return;
    double v = x[i], s = 1.0;
    for (int k = 0; k < 16; k++)
        s = s * v + 0.5;
    y[i] = s;
}
