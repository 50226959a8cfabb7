"""Rodinia nw's small launches on PoCL: what a kernel's first launch and a block on rows not touched before cost.

    python scripts/nw_cold_blocks.py NW_CL [--trials 8] [--blocks 7]

nw (n = 8192) launches `nw_kernel1` once per anti-diagonal of 16x16 blocks: its first launches run one, two,
three blocks, each on rows of the two 268 MB matrices no launch has touched before (a block's 16 rows lie 32 KiB
apart, a page each). Profiled at n = 128, the same launches find their rows in L2. This runs `nw_kernel1` as nw
does (16 work-items a group, nw's arguments) on one block, back to back in one queue:

* the kernel's first launch (a program built afresh each trial), then the same block again;
* then `--blocks` times: a block moved 16 rows and columns down the diagonal (rows not touched before), then that
  block again;

with the matrices in host memory given to PoCL (CL_MEM_USE_HOST_PTR), advised for 4 KiB pages in one trial and
for 2 MiB pages (transparent huge pages) in the next, alternating. It prints, per page size, the median (and
quartiles) over the trials of each kind of launch, and the huge pages the process held (AnonHugePages).
"""

from __future__ import annotations

import argparse
import mmap
import statistics
from pathlib import Path

import numpy as np

N = 8192 + 1  # nw's matrices at its timed size: (8192 + 1)^2 ints
HUGE = 2 << 20


def matrix(huge: bool, rng: np.random.Generator) -> tuple[mmap.mmap, np.ndarray]:
    """Return an anonymous mapping advised for 2 MiB or 4 KiB pages and the 2 MiB-aligned int32 matrix in it."""
    size = N * N * 4
    mapping = mmap.mmap(-1, size + 2 * HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    mapping.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
    raw = np.frombuffer(mapping, np.uint8)
    start = (-raw.ctypes.data) % HUGE
    values = raw[start:start + size].view(np.int32)
    values[:] = rng.integers(-10, 10, N * N, dtype=np.int32)
    return mapping, values


def quartiles(values: list[float]) -> str:
    """Return 'median (q1–q3)' in µs."""
    q1, q2, q3 = statistics.quantiles(values, n=4)
    return f"{q2:.1f} µs ({q1:.1f}–{q3:.1f})"


def main() -> None:
    """Time nw_kernel1's first launch, repeats, and blocks on new rows, on 4 KiB and 2 MiB pages alternately."""
    import pyopencl as cl

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="Rodinia's opencl/nw/nw.cl")
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--blocks", type=int, default=7)
    args = parser.parse_args()
    if not args.source.is_file():
        parser.error(f"{args.source}: no such file (Rodinia's opencl/nw/nw.cl)")
    if args.trials < 2 or args.blocks < 1:
        parser.error("--trials must be at least 2 (quartiles) and --blocks at least 1")
    source = args.source.read_text()
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    rng = np.random.default_rng(0)
    kept = {huge: [matrix(huge, rng), matrix(huge, rng)] for huge in (False, True)}
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR
    buffers = {huge: [cl.Buffer(context, flags, hostbuf=values) for _, values in pair] for huge, pair in kept.items()}
    out = cl.Buffer(context, cl.mem_flags.READ_WRITE, 4)
    times: dict[bool, dict[str, list[float]]] = {huge: {} for huge in (False, True)}
    for trial in range(2 * args.trials):
        huge = bool(trial % 2)
        reference, items = buffers[huge]
        program = cl.Program(context, source).build(options=["-DBLOCK_SIZE=16"])
        launches = []
        # Offsets in rows and columns: block 0 twice, then each new block twice; a trial never reuses another's rows.
        base = 16 * (args.blocks + 1) * trial
        for step in range(args.blocks + 1):
            for again in (False, True):
                kernel = cl.Kernel(program, "nw_kernel1")
                offset = base + 16 * step
                kernel.set_args(reference, items, out, cl.LocalMemory(4 * 17 * 17), cl.LocalMemory(4 * 16 * 16),
                                np.int32(N), np.int32(10), np.int32(1), np.int32(512), np.int32(N - 1),
                                np.int32(offset), np.int32(offset))
                kind = ("first launch" if step == 0 else "new rows") if not again else "same block again"
                launches.append((kind, kernel, cl.enqueue_nd_range_kernel(queue, kernel, (16, 1), (16, 1))))
        queue.finish()
        for kind, _, event in launches:
            times[huge].setdefault(kind, []).append((event.profile.end - event.profile.start) * 1e-3)
    held = next((line.split()[1] for line in Path("/proc/self/smaps_rollup").read_text().splitlines()
                 if line.startswith("AnonHugePages")), "?")
    device = context.devices[0]
    print(f"{device.name.strip()} ({device.platform.version.strip()}), {device.max_compute_units} compute units; "
          f"{args.trials} trials per page size, alternating; AnonHugePages {held} kB")
    print("| pages | first launch | same block again | block on new rows |")
    print("|---|---|---|---|")
    for huge in (False, True):
        found = times[huge]
        print(f"| {'2 MiB' if huge else '4 KiB'} | {quartiles(found['first launch'])} | "
              f"{quartiles(found['same block again'])} | {quartiles(found['new rows'])} |")


if __name__ == "__main__":
    main()
