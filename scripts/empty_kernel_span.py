#!/usr/bin/env python3
"""How long an empty kernel's launch lasts on an OpenCL device, as the launch log times it (event start to end).

A program campaign times each launch from its event's START to END: the device's dispatch of a launch counts
only in so far as it lies inside that span. This measures that span for an empty kernel at several NDRanges,
launched back to back and with the host idle between launches (as a program that computes between launches
leaves the device), so that a kernel's time can be set against what the launch alone costs.

    python scripts/empty_kernel_span.py [--device P:D] [--sizes 1 64 1536 8192 1048576] [--gaps 0 100 5000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyopencl as cl

SOURCE = "__kernel void empty(__global float *s) { if (get_global_id(0) == 0x7fffffff) s[0] = 1.0f; }"


def main() -> None:
    """Print the median, 10th and 90th percentile span (µs) per NDRange and host gap."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", help="PLATFORM:DEVICE indices (default: the first device)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1536, 8192, 1048576])
    parser.add_argument("--gaps", type=float, nargs="+", default=[0, 100, 5000], help="µs the host sleeps between launches")
    parser.add_argument("--launches", type=int, default=300)
    args = parser.parse_args()
    platform, device = (int(i) for i in (args.device or "0:0").split(":"))
    dev = cl.get_platforms()[platform].get_devices()[device]
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    kernel = cl.Program(ctx, SOURCE).build().empty
    sink = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096)  # kept referenced: a collected buffer aborts PoCL
    kernel.set_args(sink)
    print(f"device: {dev.name} ({dev.platform.version}), {dev.max_compute_units} compute units")
    print("| work-items | host gap | span median | 10th pct | 90th pct |")
    print("|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        for gap in args.gaps:
            spans = []
            for _ in range(args.launches):
                event = cl.enqueue_nd_range_kernel(queue, kernel, (size,), None)
                queue.finish()
                spans.append((event.profile.end - event.profile.start) * 1e-3)
                if gap:
                    time.sleep(gap * 1e-6)
            kept = np.array(spans[args.launches // 6:])  # the first launches build and warm up
            print(f"| {size} | {gap:g} µs | {np.median(kept):.2f} µs | {np.percentile(kept, 10):.2f} µs | "
                  f"{np.percentile(kept, 90):.2f} µs |")


if __name__ == "__main__":
    main()
