"""Local memory on PoCL: a barrier region's own cost, and the programs' local accesses per region.

    python scripts/local_regions.py probe [--rounds 25]
    python scripts/local_regions.py programs docs/validation/programs/zen3-avx2-launches

`probe` times, on the first PoCL device, work-items that each load 1,024 words of local memory in R barrier
regions (1,024 / R loads a region), summed in one chain (each add waits for the last, as bench.cl's local_ldst
does) or in four independent sums. Each launch is timed by its events (start to end); the variants alternate
launch by launch, rotated each round; medians and the middle half over the rounds. Per work-item and per core
(the time x the cores / the work-items), a load costs c + r / (loads a region): r is what a region costs a
work-item beyond its loads. perfcast bench's barrier_regions and barrier_context (bench.cl) cross 1 to 256
barriers a work-item with one or eight values live across each: the slope of their time is what a crossing costs
with that many values.

`programs` reads, from each program archive under a campaign folder, Oclgrind's raw instruction counts
(raw/profile-*/oclgrind.txt: `load local`, `store local`, `call _Z7barrierj()`, and `ret`, once per work-item)
and prints each local-memory kernel's local accesses per work-item per region beside the quantitative model's
median predicted / measured time in the program's report (report.md). Nothing is timed.
"""
from __future__ import annotations

import argparse
import re
import statistics
import zipfile
from collections import defaultdict
from pathlib import Path

SOURCE = r"""
__kernel void chained(__global float *out, __local float *lm, int regions, int per_region) {
    int lid = get_local_id(0); int mask = get_local_size(0) - 1;
    float v = (float)lid;
    lm[lid] = v;
    for (int r = 0; r < regions; r++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int a = 0; a < per_region; a++) v += lm[(lid + a + r + 1) & mask];
        barrier(CLK_LOCAL_MEM_FENCE);
        lm[lid] = v;
    }
    out[get_global_id(0)] = v;
}
__kernel void independent(__global float *out, __local float *lm, int regions, int per_region) {
    int lid = get_local_id(0); int mask = get_local_size(0) - 1;
    float v0 = (float)lid, v1 = 0.0f, v2 = 0.0f, v3 = 0.0f;
    lm[lid] = v0;
    for (int r = 0; r < regions; r++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int a = 0; a < per_region; a += 4) {
            v0 += lm[(lid + a + r + 1) & mask]; v1 += lm[(lid + a + r + 2) & mask];
            v2 += lm[(lid + a + r + 3) & mask]; v3 += lm[(lid + a + r + 4) & mask];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        lm[lid] = v0 + v1 + v2 + v3;
    }
    out[get_global_id(0)] = v0 + v1 + v2 + v3;
}
"""
LOADS = 1024
CROSSINGS = (1, 64, 256)  # barriers a work-item of perfcast bench's barrier_regions and barrier_context crosses
LIVE = {"barrier_regions": 1, "barrier_context": 8}  # values each keeps live across a barrier
PER_REGION = (4, 8, 16, 64, 256, 1024)


def probe(rounds: int) -> None:
    """Time both kernels at every loads-per-region count and print ns a load and a region, per work-item and core."""
    import numpy as np
    import pyopencl as cl

    platforms = [p for p in cl.get_platforms() if "Portable" in p.name]
    if not platforms:
        raise SystemExit("no PoCL platform (pyopencl sees: " + ", ".join(p.name for p in cl.get_platforms()) + ")")
    device = platforms[0].get_devices()[0]
    context = cl.Context([device])
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    program = cl.Program(context, SOURCE).build()
    # The crossings: perfcast bench's own kernels, built as the bench builds bench.cl for a CPU device.
    from perfcast.bench.accelerator import PER_ITEM, chain_defines
    from perfcast.bench.opencl import SOURCE as BENCH_SOURCE

    bench = cl.Program(context, BENCH_SOURCE.read_text()).build(
        options=["-cl-mad-enable", f"-DPER_ITEM={PER_ITEM}", *chain_defines(), "-DCPU_RATES"])
    group = 256 if device.max_work_group_size >= 256 else device.max_work_group_size
    cores = device.max_compute_units
    items = group * 16 * cores
    out = cl.Buffer(context, cl.mem_flags.WRITE_ONLY, 4 * items)
    variants = [(name, per) for name in ("chained", "independent") for per in PER_REGION]
    # The crossings kernels: `per` is the barriers a work-item crosses (one or eight values live across each).
    variants += [(name, count) for name in LIVE for count in CROSSINGS]
    kernels = {name: cl.Kernel(program, name) for name in ("chained", "independent")}
    kernels.update({name: cl.Kernel(bench, name) for name in LIVE})
    times: dict[tuple[str, int], list[float]] = {v: [] for v in variants}
    for turn in range(rounds):
        for name, per in variants[turn % len(variants):] + variants[:turn % len(variants)]:
            kernel = kernels[name]
            if name in LIVE:
                kernel.set_args(np.int32(per), out)
            else:
                kernel.set_args(out, cl.LocalMemory(4 * group), np.int32(LOADS // per), np.int32(per))
            event = cl.enqueue_nd_range_kernel(queue, kernel, (items,), (group,))
            event.wait()
            times[(name, per)].append((event.profile.end - event.profile.start) * 1e-9)
    print(f"{device.name}: {cores} compute units, {items} work-items in groups of {group}, {LOADS} local loads each, "
          f"{rounds} rounds")
    print("| sums | loads a region | regions | median time | middle half | ns a load (core) | ns a region (core) |")
    print("|---|---|---|---|---|---|---|")
    for (name, per), values in times.items():
        if name in LIVE:
            continue
        median = statistics.median(values)
        low, _, high = statistics.quantiles(values, n=4) if len(values) >= 4 else (min(values), 0, max(values))
        core_ns = median * cores / items * 1e9
        print(f"| {name} | {per} | {LOADS // per} | {median * 1e3:.3f} ms | {low * 1e3:.3f}–{high * 1e3:.3f} ms | "
              f"{core_ns / LOADS:.3f} | {core_ns / (LOADS // per):.2f} |")
    print()
    print_crossings(times, items, cores)


def print_crossings(times: dict[tuple[str, int], list[float]], items: int, cores: int) -> None:
    """Print the crossings kernels' medians and each one's cost of a crossing (ns, per work-item and core)."""
    print("| values live across a barrier | barriers a work-item | median time | middle half | ns a crossing (core) |")
    print("|---|---|---|---|---|")
    for name, live in LIVE.items():
        medians = {count: statistics.median(times[(name, count)]) for count in CROSSINGS}
        for count in CROSSINGS:
            values = times[(name, count)]
            low, _, high = statistics.quantiles(values, n=4) if len(values) >= 4 else (min(values), 0, max(values))
            slope = (medians[count] - medians[CROSSINGS[0]]) / (count - CROSSINGS[0]) if count > CROSSINGS[0] else None
            cost = "—" if slope is None else f"{slope * cores / items * 1e9:.3f}"
            print(f"| {live} | {count} | {medians[count] * 1e3:.3f} ms | {low * 1e3:.3f}–{high * 1e3:.3f} ms | {cost} |")


def _seconds(text: str) -> float:
    number, unit = text.split()
    return float(number) * {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}[unit]


def local_kernels(archive: Path) -> dict[str, list[tuple[float, float]]]:
    """Return kernel -> (local accesses, barriers) per work-item of each launch Oclgrind ran, from its raw counts."""
    found: dict[str, list[tuple[float, float]]] = defaultdict(list)
    with zipfile.ZipFile(archive) as zf:
        for name in zf.namelist():
            if not name.endswith("oclgrind.txt"):
                continue
            text = zf.read(name).decode(errors="replace")
            for block in text.split("Instructions executed for kernel '")[1:]:
                kernel = block.split("'")[0]
                counts = {m.group(2).split(" (")[0].strip(): int(m.group(1))
                          for m in re.finditer(r"^\s+(\d+) - (.+)$", block, re.M)}
                items = counts.get("ret", 0)  # every work-item returns once
                local = counts.get("load local", 0) + counts.get("store local", 0)
                if items and local:
                    found[kernel].append((local / items, counts.get("call _Z7barrierj()", 0) / items))
    return found


def report_ratios(report: Path) -> dict[str, list[float]]:
    """Return kernel -> predicted / measured of each group of a program report's table (quantitative)."""
    row = re.compile(r"\| ([^|\[(]+?)(?:\[[^|]*\])?(?: \(-D[^|)]*\))?(?: \(×\d+\))? \| ([\d.]+ [µmn]?s) \| .*\| "
                     r"([\d.]+ [µmn]?s) \| [\d.]+% \|\s*$")
    ratios: dict[str, list[float]] = defaultdict(list)
    for line in report.read_text().splitlines():
        match = row.match(line)
        if match:
            ratios[match.group(1).strip()].append(_seconds(match.group(3)) / _seconds(match.group(2)))
    return ratios


def programs(folder: Path) -> None:
    """Print each local-memory kernel's accesses per region beside its median predicted / measured time."""
    print("| program | kernel | local accesses a work-item | barriers a work-item | accesses a region | "
          "predicted / measured (groups) |")
    print("|---|---|---|---|---|---|")
    for archive in sorted(folder.glob("*/*.zip")):
        ratios = report_ratios(archive.parent / "report.md")
        for kernel, launches in local_kernels(archive).items():
            accesses = statistics.median(a for a, _ in launches)
            barriers = statistics.median(b for _, b in launches)
            found = ratios.get(kernel, [])
            ratio = f"{statistics.median(found):.2f} ({len(found)})" if found else "— (not timed with a profile)"
            print(f"| {archive.parent.name} | {kernel} | {accesses:.1f} | {barriers:.1f} | "
                  f"{accesses / (barriers + 1):.1f} | {ratio} |")


def main() -> None:
    """Parse the command line and run one of the two parts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="part", required=True)
    timing = sub.add_parser("probe", help="time the region and the load on the first PoCL device")
    timing.add_argument("--rounds", type=int, default=25)
    reading = sub.add_parser("programs", help="accesses per region of a campaign folder's programs")
    reading.add_argument("folder", type=Path)
    args = parser.parse_args()
    if args.part == "probe":
        probe(args.rounds)
    else:
        programs(args.folder)


if __name__ == "__main__":
    main()
