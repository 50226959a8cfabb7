"""Time bench.cl's local-memory kernel against loads alone on PoCL: is its figure a chain of stores and loads.

    python scripts/local_memory_variants.py

Times bench.cl's kernel against two variants on the first PoCL device, alternated, three rounds, each the best
of five launches (event start to end): local_ldst, per step a load of a neighbour's word and a store of one's
own (2k accesses a work-item); local_read, the load alone (k); local_read4, the loads into four accumulators.
The kernels are copied here so that the experiment stays what it was if bench.cl changes.
"""
import numpy as np
import pyopencl as cl

SRC = """
__kernel void local_ldst(int k, int mask, __global float *sink, __local float *lm)
{ int lid = get_local_id(0); lm[lid] = (float)lid; barrier(CLK_LOCAL_MEM_FENCE); float v = 0.0f;
  for (int q = 0; q < k; q++) { v += lm[(lid + q + 1) & mask]; lm[lid] = v; }
  barrier(CLK_LOCAL_MEM_FENCE); sink[get_global_id(0)] = lm[(lid + 1) & mask]; }
__kernel void local_read(int k, int mask, __global float *sink, __local float *lm)
{ int lid = get_local_id(0); lm[lid] = (float)lid; barrier(CLK_LOCAL_MEM_FENCE); float v = 0.0f;
  for (int q = 0; q < k; q++) v += lm[(lid + q + 1) & mask];
  sink[get_global_id(0)] = v; }
__kernel void local_read4(int k, int mask, __global float *sink, __local float *lm)
{ int lid = get_local_id(0); lm[lid] = (float)lid; barrier(CLK_LOCAL_MEM_FENCE);
  float a = 0.0f, b = 0.0f, c = 0.0f, d = 0.0f;
  for (int q = 0; q < k; q += 4) { a += lm[(lid + q + 1) & mask]; b += lm[(lid + q + 2) & mask];
                                   c += lm[(lid + q + 3) & mask]; d += lm[(lid + q + 4) & mask]; }
  sink[get_global_id(0)] = a + b + c + d; }
"""
ctx = cl.Context([p for p in cl.get_platforms() if "Portable" in p.name][0].get_devices())
dev = ctx.devices[0]
queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
prg = cl.Program(ctx, SRC).build()
group = 256 if dev.max_work_group_size >= 256 else dev.max_work_group_size
items = dev.max_compute_units * group * 4
sink = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * items)
k = 1024
print(dev.name, dev.max_compute_units, "units, group", group, "items", items)
kernels = {name: cl.Kernel(prg, name) for name in ("local_ldst", "local_read", "local_read4")}
for rnd in range(3):
    for name, per in (("local_ldst", 2), ("local_read", 1), ("local_read4", 1)):
        kern = kernels[name]
        best = 1e9
        for _ in range(5):
            kern.set_args(np.int32(k), np.int32(group - 1), sink, cl.LocalMemory(4 * group))
            e = cl.enqueue_nd_range_kernel(queue, kern, (items,), (group,))
            e.wait()
            best = min(best, (e.profile.end - e.profile.start) * 1e-9)
        accesses = items * per * k
        print(f"round {rnd}: {name:12s} {accesses / best / 1e9:6.2f} G accesses/s ({4 * accesses / best / 1e9:6.1f} GB/s)")
