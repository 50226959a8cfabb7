"""What the compiler did with each suite kernel on a CPU: the SIMD lanes it used, read from its own report.

The boat hull's CPU floors (spec §2.4) stand for code that uses no SIMD (c1) or one thread (c2, c3). For its
own kernels a campaign can ask the compiler instead of assuming the worst:

* gcc says which loops it vectorised and with what vector size (`-fopt-info-vec-optimized`: "FILE:LINE:COL:
  optimized: loop vectorized using 64 byte vectors"); each loop belongs to the function whose definition
  precedes its line;
* PoCL's kernel compiler says the width at which LLVM's loop vectoriser vectorised the loop over a work-group's
  work-items (`POCL_VECTORIZER_REMARKS=1`: "vectorized loop (vectorization width: 8, ...)"), after the remark
  that inlines `_pocl_kernel_NAME` into its work-group function.

A kernel takes the widest vector any of its loops was given, in lanes of its element size; a kernel whose
loops were all left scalar takes 1. Without a report (another compiler, another OpenCL platform) nothing is
known and the spec's floors stay. The readers are pure; the two `run_` functions call the compilers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from perfcast.errors import ToolError

__all__ = ["gcc_vector_bytes", "pocl_vector_lanes", "run_gcc_report", "run_pocl_report"]

_GCC_LOOP = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):\d+: optimized: loop vectorized using (?P<bytes>\d+) byte "
                       r"vectors", re.M)
# A C function definition at the start of a line: a return type, the name, its parameters (maybe over lines).
_C_FUNCTION = re.compile(r"^(?!static\s+inline\b)[A-Za-z_][\w \t\*]*?\b(?P<name>[A-Za-z_]\w*)\s*\([^;{]*\)\s*\{",
                         re.M)
_WORKGROUP = re.compile(r"'_pocl_kernel_(?P<name>\w+?)' inlined into '_pocl_kernel_(?P=name)_workgroup")
_INLINED_INTO = re.compile(r"inlined into '(?P<name>\w+)'")
_WIDTH = re.compile(r"vectorized loop \(vectorization width: (?P<width>\d+)")
REPORT_TIMEOUT = 600  # s, one run of the compiler or of the suite under PoCL


def gcc_vector_bytes(report: str, source: str) -> dict[str, int]:
    """Return, per function defined in C `source`, the widest vector (B) gcc's report gives one of its loops (0: none)."""
    starts = sorted((source.count("\n", 0, m.start()) + 1, m.group("name")) for m in _C_FUNCTION.finditer(source))
    widest = {name: 0 for _, name in starts}
    for match in _GCC_LOOP.finditer(report):
        line = int(match.group("line"))
        owner = next((name for start, name in reversed(starts) if start <= line), None)
        if owner is not None:
            widest[owner] = max(widest[owner], int(match.group("bytes")))
    return widest


def pocl_vector_lanes(remarks: str, kernels: Iterable[str]) -> dict[str, int]:
    """Return, per kernel PoCL compiled, the widest vectorisation of its work-group loop in lanes (1: left scalar).

    `remarks` is the output of a process that compiled the kernels with POCL_VECTORIZER_REMARKS=1; a kernel
    whose work-group function never appears there is left out (not compiled, or not PoCL).
    """
    names = set(kernels)
    lanes: dict[str, int] = {}
    current: str | None = None
    for remark in re.split(r"<unknown>:0:0: |\n", remarks):
        group = _WORKGROUP.search(remark)
        if group and group.group("name") in names:
            current = group.group("name")
            lanes.setdefault(current, 1)
            continue
        inlined = _INLINED_INTO.search(remark)
        if inlined and inlined.group("name") in names:
            current = None  # the next kernel's own body is being compiled: its loops are not a work-group's
            continue
        width = _WIDTH.search(remark)
        if width and current is not None:
            lanes[current] = max(lanes[current], int(width.group("width")))
    return lanes


def run_gcc_report(source: Path, flags: Sequence[str], compiler: str = "gcc") -> str:
    """Return gcc's vectorisation report of `source` compiled with `flags` (objects thrown away, nothing linked)."""
    kept = [f for f in flags if f not in ("-shared",) and not f.startswith(("-l", "-o"))]
    command = [compiler, *kept, "-fopt-info-vec-optimized", "-c", str(source), "-o", os.devnull]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=REPORT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ToolError(f"{compiler} could not report its vectorisation of {source.name}: {error}") from None
    if done.returncode != 0:
        raise ToolError(f"{compiler} failed to compile {source.name} for its vectorisation report: "
                        f"{done.stderr.strip()[-400:]}")
    return done.stderr


def run_pocl_report(sizes: Mapping[str, int], platform: int, device: int) -> str:
    """Return PoCL's vectoriser remarks for the suite's kernels, each built afresh and launched once on one group.

    `sizes` gives each kernel's problem size; `platform` and `device` are the OpenCL indices of the PoCL device
    (PYOPENCL_CTX). A fresh kernel cache makes PoCL compile, and so remark on, every kernel.
    """
    with tempfile.TemporaryDirectory(prefix="perfcast-pocl-") as cache:
        env = {**os.environ, "POCL_VECTORIZER_REMARKS": "1", "POCL_CACHE_DIR": cache,
               "PYOPENCL_CTX": f"{platform}:{device}"}
        listing = ",".join(f"{name}={n}" for name, n in sizes.items())
        command = [sys.executable, "-m", "perfcast.campaign.oclgrind_driver", "1", listing]
        try:  # PoCL prints its remarks on stdout, the driver nothing: both are read
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=REPORT_TIMEOUT, env=env, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ToolError(f"PoCL's vectoriser remarks could not be read: {error}") from None
    if done.returncode != 0:
        raise ToolError(f"the suite under PoCL with its vectoriser remarks failed ({done.returncode}): "
                        f"{done.stdout.strip()[-400:]}")
    return done.stdout
