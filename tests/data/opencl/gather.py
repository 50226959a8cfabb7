"""OpenCL gathers that do, and do not, take their addresses from loaded values (the trace's indirect flag).

python gather.py N: three launches of N work-items over a vector of N floats:
  1. indexed(a, idx, out)  out[i] = a[idx[i]]: each load of `a` waits for its index (indirect), idx's do not;
  2. hashed(a, out)        out[i] = a[hash(i) mod N]: random lines at computed addresses (none indirect);
  3. chased(next, out)     two hops down a permutation, next[next[i]]: the second hop is indirect;
  4. vloaded(a, idx, out)  the index read by vload2, a[vload2(i, idx).x]: the load of `a` is indirect.
"""

import sys

import numpy as np
import pyopencl as cl

SOURCE = """
__kernel void indexed(__global const float* a, __global const int* idx, __global float* out) {
    size_t i = get_global_id(0);
    out[i] = a[idx[i]];
}
__kernel void hashed(__global const float* a, uint n, __global float* out) {
    uint i = get_global_id(0);
    out[i] = a[(uint)(((ulong)(i * 2654435761u) * n) >> 32)];
}
__kernel void chased(__global const int* next, __global int* out) {
    size_t i = get_global_id(0);
    out[i] = next[next[i]];
}
__kernel void vloaded(__global const float* a, __global const int* idx, __global float* out) {
    size_t i = get_global_id(0);
    out[i] = a[vload2(i / 2, idx).x];
}
"""


def main(argv: list[str]) -> None:
    n = int(argv[0])
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    program = cl.Program(context, SOURCE).build()
    indexed, hashed, chased, vloaded = (cl.Kernel(program, name) for name in ("indexed", "hashed", "chased", "vloaded"))
    flags = cl.mem_flags
    permutation = np.random.default_rng(0).permutation(n).astype(np.int32)
    a = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=np.ones(n, dtype=np.float32))
    idx = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=permutation)
    out = cl.Buffer(context, flags.READ_WRITE, size=4 * n)
    indexed(queue, (n,), (64,), a, idx, out)
    hashed(queue, (n,), (64,), a, np.uint32(n), out)
    chased(queue, (n,), (64,), idx, out)
    vloaded(queue, (n,), (64,), a, idx, out)
    queue.finish()


if __name__ == "__main__":
    main(sys.argv[1:])
