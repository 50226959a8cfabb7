"""A copy kernel with and without a guard, over buffers from cache-sized to DRAM-sized, on an OpenCL CPU device.

    python scripts/guarded_copy_sizes.py [MIB ...]        # default: 2 8 16 24 48 (MiB per buffer)

Why. PolyBench/GPU's time-stepped stencils copy one array back into another between steps, under a guard
(`if (i >= 1 && i < n - 1) A[i] = B[i]`), and perfcast predicted those copies 3-7x too fast: their arrays were
taken to stay in L3, where the model prices them at the cache's rate, while the guarded triad's bandwidth, which
the model gives kernels whose compiled code masks its accesses (docs/models.md §3.6), applied to DRAM bytes only.
This times whether a guard's cost depends on where the data are: the same copy, guarded and not, over two buffers
of each size, back and forth as a stencil's copy-back goes.

What. For each size and each kernel, 15 rounds; each round copies A to B and B to A twice and keeps the last two
launches' profiling-event times (the data then sit where a loop of copies leaves them). Sizes and kernels are
alternated round by round (reversed every other round) so that a slow spell touches them alike. It prints the
median bytes read and written per second and the spread (max - min over the median) per size and kernel.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

SOURCE = """
__kernel void copy_plain(__global const float *a, __global float *b, int n) { size_t i = get_global_id(0); b[i] = a[i]; }
__kernel void copy_guarded(__global const float *a, __global float *b, int n)
{
    int i = get_global_id(0);
    if (i >= 1 && i < n - 1) b[i] = a[i];
}
"""


def main() -> None:
    """Time both copies at every size, alternated; print GB/s per size and kernel."""
    import pyopencl as cl

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[2, 8, 16, 24, 48], help="MiB per buffer")
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args()
    device = cl.get_platforms()[0].get_devices()[0]
    context = cl.Context([device])
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    program = cl.Program(context, SOURCE).build()
    kernels = {"plain": program.copy_plain, "guarded": program.copy_guarded}
    buffers = {}
    for mib in options.sizes:
        pair = tuple(cl.Buffer(context, cl.mem_flags.READ_WRITE, mib << 20) for _ in range(2))
        for value, buffer in zip((1.0, 2.0), pair, strict=True):
            cl.enqueue_fill_buffer(queue, buffer, np.float32(value), 0, mib << 20)
        buffers[mib] = pair
    queue.finish()
    rates: dict[tuple[int, str], list[float]] = {(m, k): [] for m in options.sizes for k in kernels}
    for round_ in range(options.rounds):
        order = [(m, k) for m in options.sizes for k in kernels]
        for mib, name in order if round_ % 2 == 0 else order[::-1]:
            a, b = buffers[mib]
            n = (mib << 20) // 4
            for step in range(4):
                source, target = (a, b) if step % 2 == 0 else (b, a)
                event = kernels[name](queue, (n,), (256,), source, target, np.int32(n))
                event.wait()
                if step >= 2:
                    rates[(mib, name)].append(2 * (mib << 20) / ((event.profile.end - event.profile.start) * 1e-9))
    print(f"device: {device.name} ({device.platform.version})")
    for mib in options.sizes:
        cells = []
        for name in kernels:
            values = rates[(mib, name)]
            median = statistics.median(values)
            cells.append(f"{name} {median / 1e9:6.1f} GB/s (spread {(max(values) - min(values)) / median:.0%})")
        print(f"{mib:4d} MiB a buffer ({2 * mib:4d} MiB both): " + ", ".join(cells))


if __name__ == "__main__":
    main()
