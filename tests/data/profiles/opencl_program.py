"""A small OpenCL program for the Oclgrind tests: three kernels (fp32, fp64 with a builtin and local memory, int).

Usage: python opencl_program.py N   (N work-items per launch, a multiple of 64). Runs on the first OpenCL
device, which under `oclgrind` is Oclgrind's simulator.
"""

import sys

import numpy as np
import pyopencl as cl

SOURCE = """
__kernel void saxpy(__global float *y, __global const float *x, float a)
{
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void dexp(__global double *out, __global const double *in)
{
    __local double tile[64];
    size_t i = get_global_id(0), l = get_local_id(0);
    tile[l] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    double v = tile[63 - l];
    out[i] = exp(v) / (v + 2.0);
}

__kernel void hash(__global uint *h, uint rounds)
{
    uint v = (uint)get_global_id(0);
    for (uint r = 0; r < rounds; r++)
        v = (v ^ (v >> 16)) * 0x45d9f3bu + r;
    h[get_global_id(0)] = v;
}
"""


def main() -> None:
    n = int(sys.argv[1])
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    program = cl.Program(context, SOURCE).build()
    flags = cl.mem_flags
    x = cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=np.ones(n, np.float32))
    y = cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=np.ones(n, np.float32))
    d_in = cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=np.full(n, 0.5))
    d_out = cl.Buffer(context, flags.READ_WRITE, 8 * n)
    h = cl.Buffer(context, flags.READ_WRITE, 4 * n)
    saxpy, dexp, hash_ = cl.Kernel(program, "saxpy"), cl.Kernel(program, "dexp"), cl.Kernel(program, "hash")
    for _ in range(2):  # two launches of saxpy: a profile sums them
        saxpy(queue, (n,), (64,), y, x, np.float32(2))
    dexp(queue, (n,), (64,), d_out, d_in)
    hash_(queue, (n,), (64,), h, np.uint32(8))
    result = np.empty(n, np.float32)
    cl.enqueue_copy(queue, result, y)
    print(f"saxpy: y[0] = {result[0]:g}")


if __name__ == "__main__":
    main()
