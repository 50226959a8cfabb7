"""Rodinia srad's prepare_kernel on PoCL, alone and after kernels that may evict its data: what its time is not.

    python scripts/srad_prepare_alone.py [--rounds 40] [--between 0 4 11 32 128]

srad (-s 502 458) runs prepare_kernel once an iteration on 230,144 floats: it reads the image and writes two
arrays (2.76 MB touched), with four other kernels between its launches, two of which touch 5.5 MB each. The
program's launches took a median 131 µs, perfcast predicted 33 µs. This runs the same kernel (srad's source, its
NDRange: work-groups of 256) at that size, each launch after a kernel that reads and writes an array of X MB (X = 0:
prepare_kernel alone, its data hot in the caches), the sizes alternating round by round. It prints the median and
quartiles of prepare_kernel's launches (event start to end) per X, then the same with a single core
(POCL_MAX_PTHREAD_COUNT is read by PoCL at start: run the script again with it set).
"""

from __future__ import annotations

import argparse
import os
import statistics

import numpy as np

SOURCE = r"""
__kernel void prepare_kernel(long d_Ne, __global float *d_I, __global float *d_sums, __global float *d_sums2) {
    int bx = get_group_id(0), tx = get_local_id(0);
    int ei = (bx * 256) + tx;  /* srad's NUMBER_THREADS */
    if (ei < d_Ne) { d_sums[ei] = d_I[ei]; d_sums2[ei] = d_I[ei] * d_I[ei]; }
}
__kernel void between(__global float *a, int n) {
    int i = get_global_id(0);
    if (i < n) a[i] = a[i] * 0.5f + 1.0f;
}
"""
ELEMENTS = 230144  # srad -s 502 458


def main() -> None:
    """Print prepare_kernel's time per size of the kernel run before each of its launches."""
    import pyopencl as cl

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--between", type=float, nargs="+", default=[0, 4, 11, 32, 128], help="MB")
    args = parser.parse_args()
    if args.rounds < 2 or any(mb < 0 for mb in args.between):
        parser.error("--rounds must be at least 2 (quartiles) and --between sizes at least 0")
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    program = cl.Program(context, SOURCE).build()
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    image, sums, sums2 = (cl.Buffer(context, flags, hostbuf=np.random.default_rng(k).random(ELEMENTS, np.float32))
                          for k in range(3))
    prepare, between = cl.Kernel(program, "prepare_kernel"), cl.Kernel(program, "between")
    prepare.set_args(np.int64(ELEMENTS), image, sums, sums2)
    others = {mb: cl.Buffer(context, flags, hostbuf=np.ones(max(1, int(mb * 1e6 / 4)), np.float32))
              for mb in args.between}
    times: dict[float, list[float]] = {mb: [] for mb in args.between}
    groups = (ELEMENTS + 255) // 256 * 256
    for round_ in range(args.rounds + 1):
        for mb in args.between:
            items = int(mb * 1e6 / 4)
            if items:
                between.set_args(others[mb], np.int32(items))
                cl.enqueue_nd_range_kernel(queue, between, ((items + 255) // 256 * 256,), (256,))
            event = cl.enqueue_nd_range_kernel(queue, prepare, (groups,), (256,))
            event.wait()
            if round_:  # the first round warms up
                times[mb].append((event.profile.end - event.profile.start) * 1e-3)
    device = context.devices[0]
    threads = os.environ.get("POCL_MAX_PTHREAD_COUNT", "all")
    print(f"{device.name.strip()}, {device.max_compute_units} compute units (POCL_MAX_PTHREAD_COUNT={threads}); "
          f"{args.rounds} rounds")
    print("| MB touched before each launch | prepare_kernel, median (quartiles) |")
    print("|---:|---|")
    for mb, found in times.items():
        q1, q2, q3 = statistics.quantiles(found, n=4)
        print(f"| {mb:g} | {q2:.0f} µs ({q1:.0f}–{q3:.0f}) |")


if __name__ == "__main__":
    main()
