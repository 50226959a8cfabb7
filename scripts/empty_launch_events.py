"""How long the device says an empty kernel runs (event START to END) on the first OpenCL device, by NDRange.

    python scripts/empty_launch_events.py

Two tables: launches back to back (1 to 16,384 work-groups of 16 or 256 work-items, an empty kernel and one
that stores a word per work-item), and an empty launch of two work-groups after the host spins for 0 to 10 ms
between launches (a program's host code between its kernels). Each figure is the median of 300 launches after
300 to settle. docs/validation/programs/README.md reads it for the question: is a small launch's time its
runtime's fixed cost?
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import pyopencl as cl

SOURCE = """__kernel void empty(__global float *a) { }
__kernel void touch(__global float *a) { a[get_global_id(0)] = 0.0f; }"""
SHAPES = ((1, 1), (1, 16), (2, 16), (16, 16), (256, 16), (4096, 16), (2, 256), (64, 256), (1024, 256), (16384, 256))


def _event_us(queue: cl.CommandQueue, kernel: cl.Kernel, groups: int, local: int, pause: float = 0.0
              ) -> tuple[list[float], list[float]]:
    """Return 300 launches' START-to-END and QUEUED-to-START times (µs), after 300 launches to settle."""
    for _ in range(300):
        cl.enqueue_nd_range_kernel(queue, kernel, (groups * local,), (local,)).wait()
    ran, waited = [], []
    for _ in range(300):
        started = time.perf_counter()
        while time.perf_counter() - started < pause:
            pass
        event = cl.enqueue_nd_range_kernel(queue, kernel, (groups * local,), (local,))
        event.wait()
        ran.append((event.profile.end - event.profile.start) * 1e-3)
        waited.append((event.profile.start - event.profile.queued) * 1e-3)
    return ran, waited


def main() -> None:
    """Print both tables for the first OpenCL device."""
    try:
        context = cl.create_some_context(interactive=False)
    except cl.Error as error:
        sys.exit(f"no OpenCL device to measure: {error}")
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    program = cl.Program(context, SOURCE).build()
    sink = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=np.dtype(np.float32).itemsize * 16384 * 256)
    print(f"device: {context.devices[0].name} ({context.devices[0].platform.version})")
    print("kernel  groups  local  START->END median (p10-p90) us")
    kernels = {name: cl.Kernel(program, name) for name in ("empty", "touch")}
    for name, kernel in kernels.items():
        kernel.set_args(sink)
        for groups, local in SHAPES:
            ran, _ = _event_us(queue, kernel, groups, local)
            deciles = statistics.quantiles(ran, n=10)
            print(f"{name:6s} {groups:7d} {local:6d}  {statistics.median(ran):8.2f} ({deciles[0]:.2f}-{deciles[-1]:.2f})")
    print("host pause  START->END median us  QUEUED->START median us  (empty, 2 groups of 16)")
    for pause in (0.0, 20e-6, 100e-6, 1e-3, 10e-3):
        ran, waited = _event_us(queue, kernels["empty"], 2, 16, pause)
        print(f"{pause * 1e6:8.0f} us  {statistics.median(ran):10.2f}  {statistics.median(waited):10.2f}")


if __name__ == "__main__":
    main()
