/* y = a x + 1, ITEMS consecutive elements per work-item: a kernel to tune with `perfcast tune kernel`. */
__kernel void scale(__global const float *x, __global float *y, float a)
{
    size_t base = get_global_id(0) * ITEMS;
    for (int i = 0; i < ITEMS; i++) y[base + i] = a * x[base + i] + 1.0f;
}
