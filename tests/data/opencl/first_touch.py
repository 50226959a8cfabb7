"""OpenCL launches over buffers that are, or are not, written before (for the first-touch page counts).

python first_touch.py PAGES: five launches over buffers of PAGES 4 KiB pages each:
  1. fill(fresh)          a buffer created without data: every page stored first;
  2. fill(fresh)          the same buffer again: no page is fresh;
  3. fill(partly)         a fresh buffer whose first page the host wrote: PAGES - 1 stored first;
  4. copy(given, fresh2)  from a buffer created with data into a fresh one: PAGES stored first, none loaded first;
  5. total(unwritten)     reads a fresh buffer no one wrote: every page loaded first.
"""

import sys

import numpy as np
import pyopencl as cl

SOURCE = """
__kernel void fill(__global float* a) { a[get_global_id(0)] = 1.0f; }
__kernel void copy(__global const float* a, __global float* b) { b[get_global_id(0)] = a[get_global_id(0)]; }
__kernel void total(__global const float* a, __global float* out) {
    if (get_global_id(0) == 0) out[0] = 0.0f;
    if (a[get_global_id(0)] > 1.0f) out[0] = 1.0f;
}
"""


def main(argv: list[str]) -> None:
    pages = int(argv[0])
    n = pages * 1024  # floats
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    program = cl.Program(context, SOURCE).build()
    fill, copy, total = (cl.Kernel(program, name) for name in ("fill", "copy", "total"))
    flags = cl.mem_flags
    fresh = cl.Buffer(context, flags.READ_WRITE, size=4 * n)
    fill(queue, (n,), (64,), fresh)
    fill(queue, (n,), (64,), fresh)
    partly = cl.Buffer(context, flags.READ_WRITE, size=4 * n)
    cl.enqueue_copy(queue, partly, np.zeros(1024, dtype=np.float32))
    fill(queue, (n,), (64,), partly)
    given = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=np.ones(n, dtype=np.float32))
    fresh2 = cl.Buffer(context, flags.READ_WRITE, size=4 * n)
    copy(queue, (n,), (64,), given, fresh2)
    unwritten = cl.Buffer(context, flags.READ_WRITE, size=4 * n)
    out = cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=np.zeros(1, dtype=np.float32))
    total(queue, (n,), (64,), unwritten, out)
    queue.finish()


if __name__ == "__main__":
    main(sys.argv[1:])
