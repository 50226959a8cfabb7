"""SHOC md's in-core reading (§3.5) per build: what llvm-mca says of each compiled `compute_lj_force`.

    python scripts/md_incore_by_build.py [--md /tmp/programs/shoc/build/MD] [--cpu skylake-avx512] [--clock 2.97e9]

A program campaign's in-core record keeps a kernel where every build PoCL compiled of it gives the same cycles
within 10 % (`perfcast.profiles.incore.analyse_pocl_kernels`). md builds its kernel in single and in double
precision under one name; the record kept neither until 2026-11-27 and now keeps each precision apart. This runs
md's profile command once on PoCL with -g and once under Oclgrind's block counts, as the campaign does, then
prints each build's reading (cycles a work-item, its loops) and what it gives for one launch of 12,288 work-items
on the device's cores at `--clock`. The block counts are per kernel name: both builds' launches are summed in
them, which holds here because the two builds run the same blocks the same number of times. A build whose reading
is empty has its loops printed with llvm-mca's cycles and why the reading left them out.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from perfcast.campaign.incore_evidence import _run
from perfcast.profiles.incore import (
    BLOCKS_PLUGIN_SOURCE,
    _vector,
    debug_lines,
    group_items,
    innermost_loops,
    kernel_incore,
    mca_cycles,
    mca_tool,
    objdump_function,
    read_blocks,
    with_lines,
)
from perfcast.profiles.trace_plugin import build_oclgrind_plugin


def main() -> None:
    """Print the in-core reading of each build of md's kernel."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--md", type=Path, default=Path("/tmp/programs/shoc/build/MD"))
    parser.add_argument("--cpu", default="skylake-avx512", help="the CPU llvm-mca models (PoCL's device names it)")
    parser.add_argument("--clock", type=float, default=2.97e9, help="Hz under load")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--items", type=int, default=12288, help="work-items of one timed launch")
    args = parser.parse_args()
    if not args.md.is_file():
        parser.error(f"{args.md}: no such file (SHOC's MD, built by scripts/third_party_programs.py)")
    command = [str(args.md), "-s", "1", "--passes", "1", "--iterations", "1"]
    folder = Path(tempfile.mkdtemp(prefix="perfcast-md-incore-"))
    cache = folder / "cache"
    _run(command, {**os.environ, "POCL_CACHE_DIR": str(cache), "POCL_KERNEL_CACHE": "1",
                   "POCL_EXTRA_BUILD_FLAGS": "-g"}, "md on PoCL with -g", cwd=args.md.parent)
    counts = folder / "blocks.tsv"
    _run(["oclgrind", "--plugins", str(build_oclgrind_plugin(BLOCKS_PLUGIN_SOURCE)), *command],
         {**os.environ, "PERFCAST_BLOCKS_FILE": str(counts)}, "md under Oclgrind's block counts", cwd=args.md.parent)
    blocks = read_blocks(counts.read_text())
    tool = mca_tool()
    for shared in sorted(cache.rglob("*.so")):
        kernel = shared.stem
        counted = blocks.get(kernel)
        items = group_items(kernel, counted) if counted else None
        instructions = objdump_function(shared, f"_pocl_kernel_{kernel}")
        table = debug_lines(shared)
        if not counted or not items or not instructions or not table:
            print(f"{shared}: no block counts, code or line table")
            continue
        loops = [loop for loop in innermost_loops(with_lines(instructions, table)) if loop.lines]
        costs = {(loop.start, loop.end): mca_cycles(loop.body, args.cpu, tool) for loop in loops}
        reading = kernel_incore(args.cpu, counted, loops, items, costs)
        code = " ".join(str(instruction) for instruction in instructions)
        precision = "double" if "divsd" in code else "single" if "divss" in code else "?"
        launch = reading.cycles_per_item * args.items / args.cores / args.clock
        build = shared.relative_to(cache).parts[1][:10]  # PoCL's directory of the build
        print(f"{kernel} ({precision} precision, build {build}): {reading.cycles_per_item:.1f} "
              f"cycles a work-item, {reading.instructions_per_item:.1f} instructions; one launch "
              f"{launch * 1e3:.2f} ms on {args.cores} cores at {args.clock / 1e9:.3g} GHz")
        if not reading.loops:
            # The reading skips a loop whose body uses 256- or 512-bit registers, taking it for PoCL's vectorised
            # work-item loop: a kernel's own double4 is moved in them too.
            for loop in loops:
                wide = "taken for a loop over vectors of work-items, skipped" if _vector(loop.body) else "not matched to a block"
                print(f"    loop over lines {tuple(sorted(loop.lines))}: {costs[(loop.start, loop.end)][0]:.3g} cycles an "
                      f"iteration by llvm-mca; {wide}")
        for loop in reading.loops:
            print(f"    loop over lines {loop.lines}: {loop.cycles:.3g} cycles an iteration, "
                  f"{loop.executions_per_item:g} iterations a work-item, {loop.instructions} instructions")


if __name__ == "__main__":
    main()
