"""Device time of a small launch after the host paused: whether PoCL charges a launch for waking its threads.

    .venv/bin/python scripts/launch_pause_pocl.py          # the first OpenCL device (PYOPENCL_CTX picks another)

For each pause (0 to 10 ms of the host spinning between launches) and NDRange (256, 1,536, 65,536 work-items of
one add each), the median and quartiles of 180 launches' event time (end - start), after 20. Why: Rodinia
gaussian's Fan1 takes 13 us for 1,536 work-items between its host's own work (docs/validation/programs/
zen3-avx2-divides).
"""

from __future__ import annotations

import time

import numpy as np
import pyopencl as cl


def main() -> None:
    """Print the event times of small launches after each pause."""
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    program = cl.Program(context, "__kernel void add(__global float *a) { a[get_global_id(0)] += 1.0f; }").build()
    buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE, 4 * 65536)
    kernel = cl.Kernel(program, "add")
    kernel.set_args(buffer)
    print(f"device: {context.devices[0].name}")
    for pause in (0.0, 20e-6, 100e-6, 1e-3, 10e-3):
        for items in (256, 1536, 65536):
            times = []
            for _ in range(200):
                start = time.perf_counter()
                while time.perf_counter() - start < pause:  # spin: a sleep's own wake-up would blur the pause
                    pass
                event = cl.enqueue_nd_range_kernel(queue, kernel, (items,), None)
                event.wait()
                times.append((event.profile.end - event.profile.start) * 1e-3)
            kept = np.array(times[20:])
            print(f"pause {pause * 1e6:6.0f} us  items {items:6d}  median {np.median(kept):6.2f} us  "
                  f"quartiles {np.percentile(kept, 25):6.2f}-{np.percentile(kept, 75):6.2f} us")


if __name__ == "__main__":
    main()
