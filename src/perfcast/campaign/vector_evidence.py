"""What the compiler did with each suite kernel on a CPU: the SIMD lanes it used, read from its own report.

The boat hull's CPU floors (spec §2.4) stand for code that uses no SIMD (c1) or one thread (c2, c3). For its
own kernels a campaign can ask the compiler instead of assuming the worst:

* gcc says which loops it vectorised and with what vector size (`-fopt-info-vec-optimized`: "FILE:LINE:COL:
  optimized: loop vectorized using 64 byte vectors"); each loop belongs to the function whose body holds its
  line, the functions read by perfcast's C reader (`species.c_source`, pycparser);
* PoCL's kernel compiler says the width at which LLVM's loop vectoriser vectorised the loop over a work-group's
  work-items (`POCL_VECTORIZER_REMARKS=1`: "vectorized loop (vectorization width: 8, ...)"), after the remark
  that inlines `_pocl_kernel_NAME` into its work-group function.

A kernel takes the widest vector gcc gave one of its loops, in lanes of its element size (none vectorised:
1); on PoCL, its work-group loop's width, or 1 where a loop of its own stayed scalar. Without a report
(another compiler, another OpenCL platform) nothing is known and the spec's floors stay. The readers are
pure; the two `run_` functions call the compilers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from pycparser import c_ast

from perfcast.errors import ToolError
from perfcast.species.c_source import ParsedSource

__all__ = ["c_function_lines", "gcc_item_vector_bytes", "gcc_vector_bytes", "pocl_device", "pocl_remark_environment",
           "pocl_tool", "pocl_vector_lanes", "run_gcc_report", "run_pocl_report"]

_GCC_LOOP = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):\d+: optimized: loop vectorized using (?P<bytes>\d+) byte "
                       r"vectors", re.M)
_WORKGROUP = re.compile(r"'_pocl_kernel_(?P<name>\w+?)' inlined into '_pocl_kernel_(?P=name)_workgroup")
_INLINED_INTO = re.compile(r"inlined into '(?P<name>\w+)'")
_WIDTH = re.compile(r"vectorized loop \(vectorization width: (?P<width>\d+)")
_NOT_VECTORISED = "loop not vectorized"
REPORT_TIMEOUT = 600  # s, one run of the compiler or of the suite under PoCL


def _lines(node: c_ast.Node) -> Iterator[int]:
    """Yield the source line of a node and of everything under it."""
    if node.coord is not None:
        yield node.coord.line
    for _, child in node.children():
        yield from _lines(child)


def c_function_lines(source: ParsedSource) -> dict[str, tuple[int, int]]:
    """Return each function the parsed C file defines with its lines (1-based): from its name to its last statement."""
    here = Path(source.path).name
    return {node.decl.name: (node.decl.coord.line, max(_lines(node)))
            for node in source.ast.ext
            if isinstance(node, c_ast.FuncDef) and Path(node.decl.coord.file).name == here}


def _gcc_loops(report: str, source: ParsedSource) -> Iterator[tuple[str, int, int]]:
    """Yield (function, line, vector bytes) of each loop gcc's report vectorised in the parsed file's functions.

    Only the report's lines about that file count (an included header's loops are not its functions').
    """
    spans = c_function_lines(source)
    for match in _GCC_LOOP.finditer(report):
        if Path(match.group("file")).name != Path(source.path).name:
            continue
        line = int(match.group("line"))
        owner = next((name for name, (first, last) in spans.items() if first <= line <= last), None)
        if owner is not None:
            yield owner, line, int(match.group("bytes"))


def gcc_vector_bytes(report: str, source: ParsedSource) -> dict[str, int]:
    """Return, per function the parsed C file defines, the widest vector (B) gcc's report gives one of its loops (0: none)."""
    widest = dict.fromkeys(c_function_lines(source), 0)
    for owner, _, width in _gcc_loops(report, source):
        widest[owner] = max(widest[owner], width)
    return widest


def _stores_per_iteration(loop: c_ast.For) -> bool:
    """Return whether a loop's body assigns to memory (an array element or through a pointer), not only to scalars."""
    def found(node: c_ast.Node) -> bool:
        if isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ArrayRef | c_ast.UnaryOp):
            return True
        return any(found(child) for _, child in node.children())

    return loop.stmt is not None and found(loop.stmt)


def gcc_item_vector_bytes(report: str, source: ParsedSource) -> dict[str, int]:
    """Return, per function, the widest vector (B) gcc gave one of its loops that stores an element per iteration.

    Such a loop spreads work-items (one output each) over the vector's lanes, as PoCL's work-group loop does. A
    vectorised loop that only accumulates into scalars (the naive SGEMM's dot product, SpMV's row) runs inside
    one work-item: its work-items still go one at a time, which is what the traffic simulation's order needs.
    """
    here = Path(source.path).name
    loops: list[tuple[int, int, c_ast.For]] = []  # (first line, last line, loop), outer loops before inner ones

    def collect(node: c_ast.Node) -> None:
        if isinstance(node, c_ast.For) and node.coord is not None and Path(node.coord.file).name == here:
            loops.append((node.coord.line, max(_lines(node)), node))
        for _, child in node.children():
            collect(child)

    collect(source.ast)
    widest = dict.fromkeys(c_function_lines(source), 0)
    for owner, line, width in _gcc_loops(report, source):
        # gcc names a loop by its header's line or by its body's first statement's: the innermost loop there.
        loop = next((found for first, last, found in reversed(loops) if first <= line <= last), None)
        if loop is not None and _stores_per_iteration(loop):
            widest[owner] = max(widest[owner], width)
    return widest


def pocl_vector_lanes(remarks: str, kernels: Iterable[str]) -> dict[str, int]:
    """Return, per kernel PoCL compiled, the lanes of its work-group loop: its vector width, 1 if any loop stayed scalar.

    `remarks` is the output of a process that compiled the kernels with POCL_VECTORIZER_REMARKS=1. A kernel's
    remarks run from the one that inlines `_pocl_kernel_NAME` into its work-group function to the next
    inlining into anything else. LLVM vectorises innermost loops only: a kernel with a loop of its own that
    stayed scalar ("loop not vectorized") runs its work-items scalar in that loop, however wide another of
    its loops went (hash_int's copy for zero rounds), so it counts 1. A kernel whose work-group function never
    appears (not compiled, or not PoCL) is left out.
    """
    names = set(kernels)
    widths: dict[str, list[int]] = {}
    scalar: set[str] = set()
    current: str | None = None
    for remark in re.split(r"<unknown>:0:0: |\n", remarks):
        group = _WORKGROUP.search(remark)
        if group:
            current = group.group("name") if group.group("name") in names else None
            if current is not None:
                widths.setdefault(current, [])
            continue
        inlined = _INLINED_INTO.search(remark)
        if inlined and not (current and inlined.group("name").startswith(f"_pocl_kernel_{current}_workgroup")):
            current = None  # another function is being compiled: its loops are not this work-group's
            continue
        if current is None:
            continue
        width = _WIDTH.search(remark)
        if width:
            widths[current].append(int(width.group("width")))
        elif remark.startswith(_NOT_VECTORISED):
            scalar.add(current)
    return {name: 1 if name in scalar or not found else max(found) for name, found in widths.items()}


def _output(command: Sequence[str], what: str, env: Mapping[str, str] | None = None) -> str:
    """Return what `command` printed (stdout and stderr together, in order), or raise ToolError naming `what`."""
    try:
        done = subprocess.run(list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=REPORT_TIMEOUT, env=None if env is None else dict(env), check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ToolError(f"{what} could not be read: {error}") from None
    if done.returncode != 0:
        raise ToolError(f"{what} failed (exit status {done.returncode}): {done.stdout.strip()[-400:]}")
    return done.stdout


def run_gcc_report(source: Path, flags: Sequence[str], compiler: str = "gcc") -> str:
    """Return gcc's vectorisation report of `source` compiled with `flags` (objects thrown away, nothing linked)."""
    kept = [f for f in flags if f not in ("-shared",) and not f.startswith(("-l", "-o"))]
    command = [compiler, *kept, "-fopt-info-vec-optimized", "-c", str(source), "-o", os.devnull]
    return _output(command, f"{compiler}'s vectorisation report of {source.name}")


def pocl_tool(platform_version: str) -> str:
    """Return the name a report of PoCL's remarks goes by, from its platform version ('PoCL 3.1+debian vectoriser remarks')."""
    version = re.search(r"PoCL [\w.+~-]+", platform_version)  # "OpenCL 3.0 PoCL 3.1+debian  Linux, ..."
    return f"{version.group(0) if version else 'PoCL'} vectoriser remarks"


def pocl_remark_environment(cache: str) -> dict[str, str]:
    """Return the variables that make PoCL remark on its vectoriser, compiling every kernel afresh into `cache`."""
    return {"POCL_VECTORIZER_REMARKS": "1", "POCL_CACHE_DIR": cache}


def pocl_device(name: str) -> tuple[str, int] | None:
    """Return the report's tool name and the compute units of the OpenCL device named `name`, if PoCL runs it.

    None where no OpenCL platform is found, or another platform than PoCL has a device of that name (its
    compiler gives no such remarks).
    """
    try:
        import pyopencl as cl
    except ImportError:
        return None
    try:
        for found in cl.get_platforms():
            if "portable computing language" not in found.name.lower():
                continue
            for device in found.get_devices():
                if device.name.strip() == name.strip():
                    return pocl_tool(found.version), int(device.max_compute_units)
    except cl.Error:
        return None
    return None


def run_pocl_report(sizes: Mapping[str, int], platform: int, device: int) -> str:
    """Return PoCL's vectoriser remarks for the suite's kernels, each built afresh and launched once on one group.

    `sizes` gives each kernel's problem size; `platform` and `device` are the OpenCL indices of the PoCL device
    (PYOPENCL_CTX). A fresh kernel cache makes PoCL compile, and so remark on, every kernel. PoCL prints its
    remarks on stdout.
    """
    with tempfile.TemporaryDirectory(prefix="perfcast-pocl-") as cache:
        env = {**os.environ, **pocl_remark_environment(cache), "PYOPENCL_CTX": f"{platform}:{device}"}
        listing = ",".join(f"{name}={n}" for name, n in sizes.items())
        command = [sys.executable, "-m", "perfcast.campaign.oclgrind_driver", "1", listing]
        return _output(command, "PoCL's vectoriser remarks on the suite", env)
