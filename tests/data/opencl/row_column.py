"""Three OpenCL kernels that read one matrix in different orders (for the traffic simulation tests).

python row_column.py N [KERNEL...]: by_rows (each work-item sums its row), by_cols (each sums its column), and
tiled (each work-group stages its part in local memory and writes it reversed); all three unless named.
"""

import sys

import numpy as np
import pyopencl as cl

SOURCE = """
__kernel void by_rows(__global const float* a, __global float* out, int n) {
    int i = get_global_id(0); float s = 0;
    for (int j = 0; j < n; j++) s += a[i * n + j];
    out[i] = s;
}
__kernel void by_cols(__global const float* a, __global float* out, int n) {
    int i = get_global_id(0); float s = 0;
    for (int j = 0; j < n; j++) s += a[j * n + i];
    out[i] = s;
}
__kernel void tiled(__global const float* a, __global float* out, __local float* t) {
    int l = get_local_id(0);
    t[l] = a[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[get_local_size(0) - 1 - l];
}
"""


def main(argv: list[str]) -> None:
    n = int(argv[0])
    chosen = argv[1:] or ["by_rows", "by_cols", "tiled"]
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    program = cl.Program(context, SOURCE).build()
    matrix = np.random.default_rng(0).random(n * n, dtype=np.float32)
    a = cl.Buffer(context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=matrix)
    out = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=4 * n * n)
    for name in chosen:
        if name == "tiled":
            program.tiled(queue, (n * n,), (64,), a, out, cl.LocalMemory(4 * 64))
        else:
            getattr(program, name)(queue, (n,), (64,), a, out, np.int32(n))
    queue.finish()


if __name__ == "__main__":
    main(sys.argv[1:])
