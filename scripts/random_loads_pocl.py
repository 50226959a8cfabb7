"""Random loads on an OpenCL device: through an index array (the bench's mem_random) against computed addresses.

    .venv/bin/python scripts/random_loads_pocl.py          # the first OpenCL device (PYOPENCL_CTX picks another)

For each working set (16 KiB to 64 MiB) it prints loads per second of two kernels over 2^24 loads, 16 a
work-item: `indirect` reads a[idx[i + r * step]] as perfcast bench's random-load kernel does (idx drawn at
random in the set); `computed` reads a[hash(i + r * step) mod set] with the address computed from the indices
(a mask: power-of-two sets); `scaled` the same hash scaled to the set in 64 bits, as perfcast bench's
mem_random_computed does; `scaled_mul_hi` with OpenCL's mul_hi, slower than the loads on PoCL 3.1.
The median of five launches after two. Why: on PoCL the indirect kernel's rate over a set L1 holds is its code's
limit, and a level whose rate is no lower says nothing of that level (docs/validation/programs/zen3-avx2-divides).
"""

from __future__ import annotations

import numpy as np
import pyopencl as cl

SOURCE = """
__kernel void indirect(__global const float *a, __global const int *idx, __global float *sink)
{
    size_t i = get_global_id(0), step = get_global_size(0);
    float s = 0.0f;
    for (int r = 0; r < PER_ITEM; r++) s += a[idx[i + r * step]];
    sink[i] = s;
}
__kernel void computed(__global const float *a, uint mask, __global float *sink)
{
    uint i = get_global_id(0), step = get_global_size(0);
    float s = 0.0f;
    for (uint r = 0; r < PER_ITEM; r++) s += a[(((i + r * step) * 2654435761u) >> 7) & mask];
    sink[i] = s;
}
__kernel void scaled(__global const float *a, uint count, __global float *sink)
{
    uint i = get_global_id(0), step = get_global_size(0);
    float s = 0.0f;
    for (uint r = 0; r < PER_ITEM; r++) s += a[(uint)(((ulong)((i + r * step) * 2654435761u) * count) >> 32)];
    sink[i] = s;
}
__kernel void scaled_mul_hi(__global const float *a, uint count, __global float *sink)
{
    uint i = get_global_id(0), step = get_global_size(0);
    float s = 0.0f;
    for (uint r = 0; r < PER_ITEM; r++) s += a[mul_hi((i + r * step) * 2654435761u, count)];
    sink[i] = s;
}
"""
PER_ITEM = 16
LOADS = 1 << 24


def rate(queue: cl.CommandQueue, kernel: cl.Kernel, *args: object) -> float:
    """Return loads per second: the median of five launches after two."""
    kernel.set_args(*args)
    times = []
    for _ in range(7):
        event = cl.enqueue_nd_range_kernel(queue, kernel, (LOADS // PER_ITEM,), None)
        event.wait()
        times.append((event.profile.end - event.profile.start) * 1e-9)
    return LOADS / float(np.median(times[2:]))


def main() -> None:
    """Print both kernels' rates at each working set."""
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    program = cl.Program(context, SOURCE).build(options=[f"-DPER_ITEM={PER_ITEM}"])
    flags = cl.mem_flags
    a = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=np.ones(LOADS, np.float32))
    sink = cl.Buffer(context, flags.READ_WRITE, 4 * LOADS // PER_ITEM)
    indirect, computed = cl.Kernel(program, "indirect"), cl.Kernel(program, "computed")
    scaled, mul_hi = cl.Kernel(program, "scaled"), cl.Kernel(program, "scaled_mul_hi")
    print(f"device: {context.devices[0].name}")
    for size in (16 << 10, 64 << 10, 128 << 10, 256 << 10, 2 << 20, 16 << 20, 64 << 20):
        drawn = np.random.default_rng(1).integers(0, size // 4, LOADS, dtype=np.int32)
        idx = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=drawn)
        through = rate(queue, indirect, a, idx, sink)
        hashed = rate(queue, computed, a, np.uint32(size // 4 - 1), sink)
        wide = rate(queue, scaled, a, np.uint32(size // 4), sink)
        high = rate(queue, mul_hi, a, np.uint32(size // 4), sink)
        print(f"{size / 1024:8.0f} KiB  indirect {through / 1e9:.2f}  computed {hashed / 1e9:.2f}  "
              f"scaled {wide / 1e9:.2f}  mul_hi {high / 1e9:.2f} G loads/s")


if __name__ == "__main__":
    main()
