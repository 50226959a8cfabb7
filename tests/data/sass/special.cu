extern "C" __global__ void special(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  y[i] = expf(v) + logf(v + 2.0f) + sinf(v) + sqrtf(v) + 1.0f / (v + 3.0f);
}
