"""What PoCL made of the suite's kernels, and what reduce_sum's barrier stages cost (docs/validation/campaign-pocl).

    python scripts/pocl_kernel_anatomy.py code      # per kernel: gathers, scatters, vector registers in PoCL's code
    python scripts/pocl_kernel_anatomy.py stages    # reduce_sum at 16, 64 and 256 work-items a group, alternated
    python scripts/pocl_kernel_anatomy.py mca [--cpu skylake-avx512]   # llvm-mca on each kernel's innermost loops
    python scripts/pocl_kernel_anatomy.py blocks [--listing K=N,...]    # Oclgrind: executions of each basic block

`code` builds suite.cl on the first OpenCL device with a fresh PoCL kernel cache (POCL_CACHE_DIR in a temporary
folder), launches each kernel once so that PoCL compiles its work-group function, and counts instructions in the
disassembly (objdump) of each `_workgroup_fast` function: a gather or scatter is a vector instruction that moves
each lane on its own, which Oclgrind's per-work-item counts cannot tell from a vector load. Static counts: an
instruction in a loop counts once.

`stages` times reduce_sum (log2 of the group size barrier stages a group) with event timestamps, the three group
sizes alternated, 7 rounds, the first dropped; medians and (max - min) / median.

`blocks` runs the campaign's Oclgrind driver (one work-group of each kernel, the work per work-item of the timed
size) under perfcast's block-count plugin (`src/perfcast/profiles/oclgrind_blocks.cpp`) and prints each kernel's
basic blocks with their executions and source lines: the iterations of each loop. A campaign on PoCL now records
the same (docs/models.md §3.5); this prints it.

Needs pyopencl, PoCL (its kernel cache), objdump, llvm-mca, and for `blocks` Oclgrind's plugin headers. Nothing
here is perfcast's API: it is the experiment behind the README's section, kept so that anyone can rerun it on
another machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

SUITE = Path(__file__).resolve().parents[1] / "src" / "perfcast" / "kernels" / "campaign" / "suite.cl"
PATTERNS = {"gathers": r"\bvgather", "scatters": r"\bvscatter", "zmm": r"%zmm", "ymm": r"%ymm",
            "scalar fp": r"\b[a-z]+s[sd]\s", "integer multiplies": r"\bimul"}


def _context():
    import pyopencl as cl

    platform = cl.get_platforms()[0]
    return cl, cl.Context(platform.get_devices()[:1])


def _compiled_kernels() -> Path:
    """Return a fresh PoCL kernel cache holding every suite kernel PoCL compiled for one launch of it."""
    if shutil.which("objdump") is None:
        sys.exit("objdump is not on PATH (apt-get install binutils)")
    cache = Path(tempfile.mkdtemp(prefix="pocl-cache-"))
    os.environ["POCL_CACHE_DIR"], os.environ["POCL_KERNEL_CACHE"] = str(cache), "1"
    cl, ctx = _context()
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, SUITE.read_text()).build(options=["-DTILE=16", "-DUSE_FP64"])
    n, m = 1 << 16, 64

    def buf(count: int = n):  # zeros: spmv's rows are then empty, and every index stays in bounds
        return cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.zeros(4 * count,
                                                                                                    np.float32))

    i, f = np.int32, np.float32
    launches = {
        "triad": ((n,), (256,), (buf(), buf(), buf(), f(1), i(n))),
        "stencil7": ((n,), (256,), (buf(), buf(), i(40), f(1), f(1))),
        "sor_redblack": ((n,), (256,), (buf(), buf(), i(256), i(0), f(1.5), f(1))),
        "sgemm_naive": ((m, m), (16, 16), (buf(m * m), buf(m * m), buf(m * m), i(m))),
        "sgemm_tiled": ((m, m), (16, 16), (buf(m * m), buf(m * m), buf(m * m), i(m))),
        "histogram256": ((n,), (256,), (buf(256), buf(), i(n))),
        "reduce_sum": ((n,), (256,), (buf(n // 256), buf(), i(n))),
        "transcendental": ((n,), (256,), (buf(), buf(), i(n))),
        "nbody": ((1024,), (256,), (buf(), buf(), i(1024), f(1e-3))),
        "spmv_csr": ((n,), (256,), (buf(), buf(), buf(), buf(), buf(), i(n))),
        "hash_int": ((n,), (256,), (buf(), buf(), i(n), i(16))),
        "horner_fp64": ((n,), (256,), (buf(), buf(), i(n))),
    }
    for name, (global_size, local_size, args) in launches.items():
        try:
            getattr(program, name)(queue, global_size, local_size, *args)
        except cl.Error as error:  # a signature this table got wrong: say it, count the others
            print(f"{name}: not launched ({error})")
    queue.finish()
    return cache


def _work_group_function(shared: Path) -> list[tuple[int, str]]:
    """Return (address, instruction) of the `_workgroup_fast` function in a compiled kernel, AT&T syntax."""
    from perfcast.profiles.incore import objdump_function

    return objdump_function(shared, f"_pocl_kernel_{shared.stem}_workgroup_fast")


def code() -> None:
    """Print per kernel the counts of PATTERNS in PoCL's compiled work-group function."""
    cache = _compiled_kernels()
    print("kernel          " + "  ".join(f"{label:>18s}" for label in PATTERNS))
    for shared in sorted(cache.rglob("*.so")):
        body = "\n".join(text for _, text in _work_group_function(shared))
        counts = [len(re.findall(pattern, body)) for pattern in PATTERNS.values()]
        print(f"{shared.stem:15s} " + "  ".join(f"{count:18d}" for count in counts))
    shutil.rmtree(cache, ignore_errors=True)


def mca(cpu: str) -> None:
    """Print each innermost loop of each kernel's work-group function with llvm-mca's cycles per iteration on `cpu`.

    The loops and the cycles are perfcast's own reading (`perfcast.profiles.incore`: a loop head to its last
    backward jump, no loop inside it; llvm-mca runs the body, its closing jump left out, and reports the steady
    state, dependencies carried from one iteration to the next included, and the ports alone).
    """
    from perfcast.errors import ToolError
    from perfcast.profiles.incore import innermost_loops, mca_cycles, mca_tool

    try:
        tool = mca_tool()
    except ToolError as error:
        sys.exit(str(error))
    cache = _compiled_kernels()
    print(f"llvm-mca ({tool}) -mcpu={cpu}")
    for shared in sorted(cache.rglob("*.so")):
        # No line table here (a plain build): every instruction's line is 0.
        code = [(address, text, 0) for address, text in _work_group_function(shared)]
        for loop in innermost_loops(code):
            try:
                cycles, ports = mca_cycles(loop.body, cpu, tool)
            except ToolError as error:
                print(f"{shared.stem:15s} loop {loop.start:x}-{loop.end:x}: {error}")
                continue
            print(f"{shared.stem:15s} loop {loop.start:x}-{loop.end:x}: {len(loop.body) + 1:3d} instructions, "
                  f"{cycles:6.2f} cycles an iteration (ports alone: {ports})")
    shutil.rmtree(cache, ignore_errors=True)


def stages() -> None:
    """Print reduce_sum's median time per work-item and per group at 16, 64 and 256 work-items a group."""
    cl, ctx = _context()
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    n = 1 << 25
    x = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.ones(n, np.float32))
    kernels = {}
    for tile in (4, 8, 16):
        group = tile * tile
        program = cl.Program(ctx, SUITE.read_text()).build(options=[f"-DTILE={tile}"])
        kernels[group] = (program.reduce_sum, cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * (n // group)))
    times: dict[int, list[float]] = {group: [] for group in kernels}
    for _ in range(7):
        for group, (kernel, partial) in kernels.items():
            event = kernel(queue, (n,), (group,), partial, x, np.int32(n))
            event.wait()
            times[group].append((event.profile.end - event.profile.start) * 1e-9)
    print(f"{n} floats on {ctx.devices[0].name}")
    for group, seconds in times.items():
        kept = seconds[1:]
        middle = statistics.median(kept)
        stage_count = group.bit_length() - 1
        print(f"group {group:4d} ({stage_count} stages): {middle * 1e3:7.2f} ms, {middle / n * 1e9:.3f} ns a work-item, "
              f"{middle / n / stage_count * 1e9:.3f} ns a work-item and stage, spread {(max(kept) - min(kept)) / middle:.2f}")


# The committed PoCL archive's profile listing (docs/validation/campaign-pocl/xeon-avx512-issue): kernel=size.
LISTING = ("triad=1048576,stencil7=128,sor_redblack=1024,sgemm_naive=1024,sgemm_tiled=1024,histogram256=1048576,"
           "reduce_sum=1048576,transcendental=1048576,nbody=32768,spmv_csr=262144,hash_int=1048576,horner_fp64=1048576")


def blocks(listing: str) -> None:
    """Print each kernel's basic blocks, most executed first, with their executions and source lines."""
    from perfcast.profiles.incore import BLOCKS_PLUGIN_SOURCE, read_blocks
    from perfcast.profiles.trace_plugin import build_oclgrind_plugin

    plugin = build_oclgrind_plugin(BLOCKS_PLUGIN_SOURCE)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "blocks.tsv"
        subprocess.run(["oclgrind", "--plugins", str(plugin), sys.executable, "-m", "perfcast.campaign.oclgrind_driver",
                        "1", listing], env={**os.environ, "PERFCAST_BLOCKS_FILE": str(out)}, check=True,
                       stdout=subprocess.DEVNULL)
        found = read_blocks(out.read_text())
    for kernel, kernel_blocks in found.items():
        print(kernel)
        for block in sorted(kernel_blocks, key=lambda b: -b.executions):
            print(f"    {block.name:28s} {block.executions:12d}  lines {','.join(map(str, sorted(block.lines)))}")


def main() -> None:
    """Run the experiment named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=("code", "stages", "mca", "blocks"))
    parser.add_argument("--listing", default=LISTING, help="blocks: the kernels and sizes, as the driver takes them")
    parser.add_argument("--cpu", default="skylake-avx512", help="llvm-mca's -mcpu (PoCL names its own in the device)")
    arguments = parser.parse_args()
    if arguments.experiment == "mca":
        mca(arguments.cpu)
    elif arguments.experiment == "blocks":
        blocks(arguments.listing)
    else:
        {"code": code, "stages": stages}[arguments.experiment]()


if __name__ == "__main__":
    main()
