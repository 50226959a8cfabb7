"""The suite's triad against the bench's on PoCL's CPU device: same body, one with `if (i < n)`, timed side by side.

    python scripts/guarded_triad.py [N] [ROUNDS]

The campaign suite's `triad` guards its store with `if (i < n)` (an int index), as most kernels do; the bench's
`mem_triad`, whose rate is the device profile's DRAM figure, has no guard (a size_t index). Both are built from the
repository's sources, launched over the same three buffers of N floats in groups of 256, and timed alternately:
each round times ten launches of each by their profiling events (median) and ten back to back (span). It then
counts the vector memory instructions in each compiled kernel (PoCL's cache, objdump): on AVX2 the guard becomes
masked loads and stores (`vmaskmovps`), which AVX-512 does with its mask registers instead.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "src" / "perfcast" / "kernels" / "campaign" / "suite.cl"
BENCH = ROOT / "src" / "perfcast" / "bench" / "kernels" / "bench.cl"
GROUP = 256


def kernel_text(path: Path, name: str) -> str:
    """Return one kernel's source (its definition to its first closing brace: both triads are one statement)."""
    text = path.read_text()
    start = text.index(f"__kernel void {name}(")
    return text[start:text.index("}", start) + 1]


def vector_memory(cache: Path, name: str) -> Counter[str]:
    """Return the counts of vector loads and stores (vmov*, vmaskmov*, gathers) in PoCL's build of kernel `name`."""
    found: Counter[str] = Counter()
    for library in cache.rglob(f"{name}.so"):
        listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library)], capture_output=True,
                                 text=True, check=True).stdout
        for mnemonic in re.findall(r"^\s+[0-9a-f]+:\s+(v(?:p?maskmov|movu|mova|gather)\w*)\s+.*\(", listing, re.M):
            found[mnemonic] += 1
    return found


def main() -> None:
    """Time both triads alternately and print their medians, rates and compiled memory instructions."""
    parser = argparse.ArgumentParser(description="The suite's guarded triad against the bench's, side by side.")
    parser.add_argument("n", nargs="?", type=int, default=1 << 24, help="floats per array (a multiple of 256)")
    parser.add_argument("rounds", nargs="?", type=int, default=5, help="alternating rounds of ten launches each")
    args = parser.parse_args()
    n, rounds = args.n, args.rounds
    if n <= 0 or n % GROUP or rounds < 1:
        parser.error(f"N must be a positive multiple of {GROUP}, ROUNDS at least 1")
    cache = Path(tempfile.mkdtemp(prefix="guarded-triad-"))
    os.environ["POCL_CACHE_DIR"] = str(cache)  # before PoCL loads: a fresh build we can read
    import pyopencl as cl

    platform = next((p for p in cl.get_platforms() if "portable computing language" in p.name.lower()), None)
    if platform is None:
        sys.exit("no PoCL platform")
    device = platform.get_devices(cl.device_type.CPU)[0]
    context = cl.Context([device])
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    rng = np.random.default_rng(0)
    flags = cl.mem_flags
    b, c = (cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=rng.random(n, np.float32)) for _ in "bc")
    a = cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=np.zeros(n, np.float32))
    guarded = cl.Program(context, kernel_text(SUITE, "triad")).build().triad
    guarded.set_args(a, b, c, np.float32(3), np.int32(n))
    plain = cl.Program(context, kernel_text(BENCH, "mem_triad")).build().mem_triad
    plain.set_args(a, b, c, np.float32(3))
    kernels = {"suite triad (if (i < n))": (guarded, "triad"), "bench mem_triad (no guard)": (plain, "mem_triad")}

    def event(kernel: object) -> float:
        done = cl.enqueue_nd_range_kernel(queue, kernel, (n,), (GROUP,))
        done.wait()
        return (done.profile.end - done.profile.start) * 1e-9

    def span(kernel: object, launches: int = 10) -> float:
        queue.finish()
        start = time.perf_counter()
        for _ in range(launches):
            cl.enqueue_nd_range_kernel(queue, kernel, (n,), (GROUP,))
        queue.finish()
        return (time.perf_counter() - start) / launches

    for kernel, _ in kernels.values():  # warm: pages mapped, code loaded
        event(kernel)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in kernels}
    for _ in range(rounds):
        for name, (kernel, _) in kernels.items():
            times[name].append((statistics.median(event(kernel) for _ in range(10)), span(kernel)))
    print(f"{device.name}, PoCL {platform.version}; N = {n} floats, groups of {GROUP}, {rounds} alternating rounds")
    for name, runs in times.items():
        events, spans = [r[0] for r in runs], [r[1] for r in runs]
        moved = 16.0 * n  # b, c read, a written and (write-allocate) read
        print(f"{name}: event {1e3 * statistics.median(events):.2f} ms ({1e3 * min(events):.2f}-"
              f"{1e3 * max(events):.2f}), span {1e3 * statistics.median(spans):.2f} ms; "
              f"{moved / statistics.median(events) / 1e9:.1f} GB/s moved; vector memory instructions: "
              + (", ".join(f"{m} {k}" for m, k in sorted(vector_memory(cache, kernels[name][1]).items()))
                 or "none found"))
    ratio = statistics.median(r[0] for r in times["suite triad (if (i < n))"]) / statistics.median(
        r[0] for r in times["bench mem_triad (no guard)"])
    print(f"suite / bench, event medians: {ratio:.2f}")


if __name__ == "__main__":
    main()
