"""Measure the cache levels of PoCL's CPU device, which `perfcast bench` leaves at estimates, and write them as a profile.

    python scripts/cache_levels_pocl.py BASE.yaml OUT.yaml [--repetitions 5]

`perfcast bench --backend opencl` on a CPU cannot time its triad sweep inside the caches: a launch there lasts a
few microseconds, as long as launching it, so the profile keeps L1, L2 and L3 bandwidths estimated from the ISA and
the clock (2 cores x clock x 128, 64 and 32 B a clock). This experiment measures them on the OpenCL device itself:
each work-item runs a triad over a contiguous chunk of its own, many passes in one launch (64 MiB moved), so the
chunks together are a working set that stays in the caches that hold it, and the loop over a chunk is the innermost
one, which PoCL's compiler vectorises as a C loop. Working sets: the first level at 1/8, 1/4 and 1/2 of its
capacity over the device's cores, each level after at 2, 3 and 4 times the capacity of the level before (at most
half its own); a level's figure is the median of its three points, each the median of `--repetitions` timed
launches (perfcast's `calibrated_rate`). Bytes count as perfcast's sweep counts them: 12 B an element, and past
L1 the store's line read in first, 16 B.

BASE is the device profile to copy (a campaign's `device.yaml`, or `perfcast bench -o`'s); OUT gets BASE with its
L1, L2 and L3 bandwidths replaced by the measured ones, each with its provenance. The device is the one
PYOPENCL_CTX selects (POCL_MAX_PTHREAD_COUNT=1 for one core). `scripts/rescore_quantitative_variants.py
caches=OUT ...` then scores committed archives with these figures in place of the estimates.

What it found on the developers' 2-core Xeon VM is in docs/validation/programs/README.md, the paragraph "The cache
levels of PoCL's device, measured": a triad in L1 and in L2 runs at the same element rate, so both figures are the
core's (its stores), not the caches', and with them in place of the estimates no score got better.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from perfcast.bench.detect import read_caches
from perfcast.bench.suite import calibrated_rate

SOURCE = r"""
__kernel void cache_triad(__global float *restrict a, __global const float *restrict b,
                          __global const float *restrict c, int chunk, int passes, float scalar)
{
    size_t first = get_global_id(0) * (size_t)chunk;
    __global float *x = a + first;
    __global const float *y = b + first, *z = c + first;
    for (int p = 0; p < passes; p++) {
        for (int i = 0; i < chunk; i++)
            x[i] = y[i] + scalar * z[i];
        scalar = -scalar;  /* no pass can be dropped */
    }
}
"""
ITEMS_PER_UNIT = 16  # work-items (each its own work-group) per core, so that PoCL's threads share them out evenly
MIN_CHUNK = 1024  # floats: fewer work-items where chunks would be shorter (a short loop times its own overhead)
LAUNCH_BYTES = 64 * 2**20
LINE_FLOATS = 16


def capacities(units: int) -> list[tuple[str, float]]:
    """Return (level, B over the instances `units` cores use) of this host's data caches, innermost first."""
    found = {}
    for cache in read_caches(Path("/sys/devices/system/cpu/cpu0")):
        if cache.level in (1, 2, 3):
            found[f"L{cache.level}"] = float(cache.size) * -(-units // max(1, cache.shared_by))
    return sorted(found.items())


def working_sets(levels: list[tuple[str, float]]) -> list[tuple[str, list[int]]]:
    """Return the working sets (B) of each level: sets it holds and the level before it does not."""
    found, previous = [], 0.0
    for level, capacity in levels:
        if previous == 0.0:
            sets = [capacity / 8, capacity / 4, capacity / 2]
        elif 2 * previous <= capacity / 2:
            sets = [min(capacity / 2, k * previous) for k in (2, 3, 4)]
        else:
            sets = []
        if sets:
            found.append((level, sorted({int(s) for s in sets})))
        previous = capacity
    return found


def main() -> None:
    """Measure each cache level of the OpenCL device and write BASE with the measured bandwidths to OUT."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()
    if not args.base.is_file():
        parser.error(f"{args.base}: no such device profile")
    if args.repetitions < 1:
        parser.error("--repetitions must be at least 1")
    data = yaml.safe_load(args.base.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("memory"), list):
        parser.error(f"{args.base}: not a device profile (no memory levels)")
    import pyopencl as cl

    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    device = context.devices[0]
    units = device.max_compute_units
    kernel = cl.Kernel(cl.Program(context, SOURCE).build(), "cache_triad")
    levels = capacities(units)
    first = levels[0][1]
    measured: dict[str, tuple[float, float, list[str]]] = {}
    for level, sets in working_sets(levels):
        rates, spreads, points = [], [], []
        for working_set in sets:
            per_unit = min(ITEMS_PER_UNIT, max(1, working_set // 12 // MIN_CHUNK // units))
            items = units * per_unit
            chunk = max(LINE_FLOATS, working_set // 12 // items // LINE_FLOATS * LINE_FLOATS)
            elements = chunk * items
            per_pass = elements * (16 if working_set > first else 12)
            passes = max(1, LAUNCH_BYTES // per_pass)
            buffers = [cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                                 hostbuf=np.full(elements, v, np.float32)) for v in (0.0, 1.0, 0.5)]
            kernel.set_args(*buffers, np.int32(chunk), np.int32(passes), np.float32(0.5))

            def run(launches: int, items: int = items) -> float:
                events = [cl.enqueue_nd_range_kernel(queue, kernel, (items,), (1,)) for _ in range(launches)]
                queue.finish()
                return sum((e.profile.end - e.profile.start) * 1e-9 for e in events)

            sample = calibrated_rate(run, per_pass * passes, args.repetitions, 0.02)
            rates.append(sample.value)
            spreads.append(sample.spread)
            points.append(f"{working_set / 2**10:.4g} KiB: {sample.value / 1e9:.4g} GB/s ({items} work-items)")
            print(f"{level} {points[-1]}", flush=True)
        measured[level] = (statistics.median(rates), max(spreads), points)
    today = _dt.date.today().isoformat()
    tool = (f"scripts/cache_levels_pocl.py ({device.platform.name.strip()} {device.platform.version.strip()}, "
            f"{units} compute units)")
    for entry in data.get("memory", []):
        if entry["level"] in measured:
            value, spread, points = measured[entry["level"]]
            entry["bandwidth"] = {"value": f"{value / 1e9:.6g} GB/s", "source": "measured", "tool": tool,
                                  "date": today, "repetitions": args.repetitions, "spread": round(spread, 4),
                                  "counts": "moved", "note": "triad passes over a working set it holds; " +
                                  "; ".join(points)}
    args.out.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    print(f"wrote {args.out} ({time.strftime('%H:%M:%S')})", file=sys.stderr)


if __name__ == "__main__":
    main()
