"""The code a CPU ran for each suite kernel, and its inner loops' cycles: a campaign's `incore` record (§3.5).

Two runs of the suite's driver, one work-group of each kernel at the timed work per work-item:

* on PoCL, with a fresh kernel cache and `-g` added to every build (POCL_EXTRA_BUILD_FLAGS), so that PoCL
  compiles every kernel with a line table and keeps it in the cache;
* under Oclgrind with perfcast's block-count plugin, for how many times each basic block ran.

`perfcast.profiles.incore` then gives each kernel its cycles a work-item. llvm-mca models the host's core as LLVM
names it (`modelled_core`): PoCL's code runs there, though a distribution's PoCL compiles it for the generic variant
its device name gives (`pthread-haswell-...` on a Zen 3), which is recorded beside it (`target`) and modelled only
where LLVM has no model of the host's core. A platform other than PoCL records nothing.

The C suite (`run_gcc_incore`) is read the same way with gcc's tools in PoCL's and Oclgrind's place: its code built
again with `-g` (the timed build's flags otherwise), and a `--coverage` build without OpenMP called once at the
timed sizes for gcov's line counts (`perfcast.profiles.incore_gcc`); the CPU is the host's, as LLVM names it.
"""

from __future__ import annotations

import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from perfcast.errors import ToolError
from perfcast.profiles.incore import (
    BLOCKS_PLUGIN_SOURCE,
    analyse_pocl_kernels,
    debug_lines,
    disassembly,
    function_code,
    listed_functions,
    llvm_cpus,
    llvm_host_cpu,
    mca_cycles,
    mca_tool,
    modelled_core,
    pocl_llvm_cpu,
    read_blocks,
    with_lines,
)
from perfcast.profiles.incore_gcc import c_kernel_incore, read_gcov_lines
from perfcast.profiles.trace_plugin import build_oclgrind_plugin

__all__ = ["pocl_cpu_device", "run_gcc_incore", "run_pocl_incore", "run_program_incore"]

INCORE_TIMEOUT = 900  # s, one run of the suite's driver under Oclgrind (the campaign's profile runs take as long)


def _run(command: list[str], env: Mapping[str, str], what: str, cwd: Path | None = None) -> str:
    """Run a command to completion and return its output; ToolError with the tail of its stderr if it fails."""
    try:
        done = subprocess.run(command, env=dict(env), capture_output=True, text=True, timeout=INCORE_TIMEOUT,
                              check=False, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ToolError(f"{what}: {error}") from None
    if done.returncode != 0:
        raise ToolError(f"{what} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return done.stdout


def _read_code(command: list[str], env: Mapping[str, str], device_name: str, what: str) -> dict[str, Any]:
    """Return the `incore` record of the kernels `command` launches on PoCL's CPU device `device_name`."""
    tool = mca_tool()
    known = llvm_cpus(tool)
    target = pocl_llvm_cpu(device_name, known)
    try:
        host = llvm_host_cpu(tool)
    except ToolError:  # an LLVM that names no host CPU: PoCL's target is then the only name there is
        host = ""
    cpu = modelled_core(host, target, known)
    if cpu is None:
        raise ToolError(f"neither this machine's CPU nor PoCL's device {device_name!r} names a CPU that "
                        f"{Path(tool).name} models")
    with tempfile.TemporaryDirectory(prefix="perfcast-incore-") as folder:
        cache = Path(folder) / "pocl-cache"
        flags = " ".join(part for part in (env.get("POCL_EXTRA_BUILD_FLAGS", ""), "-g") if part)
        _run(command, {**env, "POCL_CACHE_DIR": str(cache), "POCL_KERNEL_CACHE": "1",
                       "POCL_EXTRA_BUILD_FLAGS": flags}, f"{what} on PoCL with -g")
        counts = Path(folder) / "blocks.tsv"
        simulated = {k: v for k, v in env.items() if k != "PYOPENCL_CTX"}  # Oclgrind is then the only platform
        _run(["oclgrind", "--plugins", str(build_oclgrind_plugin(BLOCKS_PLUGIN_SOURCE)), *command],
             {**simulated, "PERFCAST_BLOCKS_FILE": str(counts)}, f"{what} under Oclgrind's block counts")
        if not counts.is_file():
            raise ToolError("Oclgrind's block-count plugin wrote nothing (PERFCAST_BLOCKS_FILE)")
        found = analyse_pocl_kernels(cache, read_blocks(counts.read_text()), cpu)
    return {"cpu": cpu, "target": target, "tool": f"{Path(tool).name}, objdump, Oclgrind block counts, PoCL -g",
            "kernels": {name: estimate.as_record() for name, estimate in found.kernels.items()},
            "precisions": {name: {kind: estimate.as_record() for kind, estimate in split.items()}
                           for name, split in found.precisions.items()}}


def run_program_incore(command: list[str], device_name: str) -> dict[str, Any]:
    """Return a program campaign's `incore` record: its kernels as PoCL compiled them, read by running `command`.

    `command`: the program's smaller profile command (its work a work-item is the timed one's where the counts
    scale with the work-items); ToolError as `run_pocl_incore`.
    """
    record = _read_code(command, os.environ, device_name, "the program")
    record["command"] = shlex.join(command)
    return record


def pocl_cpu_device() -> tuple[int, int, str] | None:
    """Return the OpenCL (platform, device) indices and the name of PoCL's CPU device, or None where there is none."""
    try:
        import pyopencl as cl
    except ImportError:
        return None
    try:
        for p, platform in enumerate(cl.get_platforms()):
            if "portable computing language" in platform.name.lower():
                for d, device in enumerate(platform.get_devices()):
                    if device.type & cl.device_type.CPU:
                        return p, d, device.name
    except cl.Error:
        return None
    return None


def run_pocl_incore(sizes: Mapping[str, int], platform: int, device: int, device_name: str) -> dict[str, Any]:
    """Return the campaign's `incore` record: the CPU, the tools, and each kernel's cycles a work-item and loops.

    `sizes`: each kernel's problem size; `platform`, `device`: the OpenCL indices of the PoCL device; ToolError
    where a tool is missing or fails, or llvm-mca models neither this machine's CPU nor the one PoCL's device
    names. `-g` is added to the build flags PoCL is given (POCL_EXTRA_BUILD_FLAGS), not put in their place.
    """
    listing = ",".join(f"{name}={n}" for name, n in sizes.items())
    driver = [sys.executable, "-m", "perfcast.campaign.oclgrind_driver", "1", listing]
    record = _read_code(driver, {**os.environ, "PYOPENCL_CTX": f"{platform}:{device}"}, device_name, "the suite")
    record["kernels"] = {name: found for name, found in record["kernels"].items() if name in sizes}
    return record


def _gcov_tool(compiler: str) -> str:
    """Return the gcov that reads `compiler`'s counts (the formats change between gcc versions); ToolError if none.

    The compiler's own file is followed to its name (/usr/bin/gcc -> x86_64-linux-gnu-gcc-12, whose gcov is
    x86_64-linux-gnu-gcov-12), then gcov-MAJOR, then gcov; the first whose major version is the compiler's.
    """
    found = shutil.which(compiler)
    if found is None:
        raise ToolError(f"no compiler {compiler!r} on PATH")
    real = Path(found).resolve()
    major = _run([found, "-dumpversion"], os.environ, f"{compiler} -dumpversion").strip().split(".")[0]
    candidates = [str(real.with_name(real.name.replace("gcc", "gcov")))] if "gcc" in real.name else []
    for name in (*candidates, f"gcov-{major}", "gcov"):
        tool = name if Path(name).is_absolute() and Path(name).is_file() else shutil.which(name)
        if tool is None:
            continue
        said = _run([tool, "--version"], os.environ, f"{Path(tool).name} --version").splitlines()
        version = re.search(r"(\d+)\.\d+(?:\.\d+)?\s*$", said[0]) if said else None
        if version is not None and version[1] == major:
            return tool
    raise ToolError(f"no gcov of gcc {major} found (gcov-{major} or gcov on PATH) to read {compiler}'s counts")


def run_gcc_incore(source: Path, flags: Sequence[str], compiler: str, sizes: Mapping[str, int],
                   items: Mapping[str, int], widest_bytes: Mapping[str, int]) -> dict[str, Any]:
    """Return the C suite's `incore` record: each kernel's cycles a work-item as gcc compiled it (§3.5, C kernels).

    `flags`: the timed build's (compiler, source and output left out); `sizes`: each kernel's problem size;
    `items`: its work-items there; `widest_bytes`: the widest vector gcc's report gives a loop of it (0: none).
    ToolError where gcc, gcov, objdump or llvm-mca is missing or fails, or LLVM does not model this CPU.
    """
    if platform.machine().lower() not in ("x86_64", "amd64"):
        raise ToolError(f"the reading of compiled loops knows x86-64 code, not {platform.machine()}'s")
    tool = mca_tool()
    cpu = llvm_host_cpu(tool)
    if cpu in ("generic", "x86-64") or cpu.startswith("x86-64-") or cpu not in llvm_cpus(tool):
        raise ToolError(f"{Path(tool).name} names this CPU {cpu!r}: it has no model of its core")
    gcov = _gcov_tool(compiler)
    kept = [flag for flag in flags if not flag.startswith("-o")]
    # gcov leaves out the functions OpenMP outlines a parallel loop into (artificial ones): the counted build
    # compiles the pragmas away, which leaves each line's count as it was, and links libgomp for omp_get_wtime.
    serial = [flag for flag in kept if flag not in ("-fopenmp", "-qopenmp")]
    with tempfile.TemporaryDirectory(prefix="perfcast-incore-") as folder:
        code, counted = Path(folder) / "code.so", Path(folder) / "counted.so"
        # In the folder: some gcc versions write the coverage notes where they are run, not beside the output.
        _run([compiler, *kept, "-g", "-o", str(code), str(source.resolve())], os.environ,
             f"{compiler} -g of {source.name}", cwd=Path(folder))
        _run([compiler, *serial, "--coverage", "-o", str(counted), str(source.resolve()), "-lgomp"], os.environ,
             f"{compiler} --coverage of {source.name}", cwd=Path(folder))
        listing = ",".join(f"{name}={n}" for name, n in sizes.items())
        _run([sys.executable, "-m", "perfcast.campaign.native_driver", str(counted), listing],
             os.environ, "the C suite's --coverage build")
        data = sorted(Path(folder).glob("*.gcda"))
        if not data:
            raise ToolError(f"the --coverage build of {source.name} wrote no counts (.gcda)")
        counts = read_gcov_lines(_run([gcov, "--json-format", "--stdout", data[0].name], os.environ,
                                      f"{Path(gcov).name} --json-format --stdout", cwd=Path(folder)), source.name)
        table = debug_lines(code)
        if not table:
            raise ToolError(f"objdump found no line table in the -g build of {source.name}")
        listing = disassembly(code)  # once: every kernel's functions are cut from it
        names = listed_functions(listing)
        kernels = {}
        for name in sizes:
            functions = [with_lines(function_code(listing, f), table) for f in names
                         if f == name or f.startswith(f"{name}._omp_fn.")]
            if not any(functions) or not items.get(name):
                continue
            found = c_kernel_incore(cpu, functions, counts, items[name], lambda body: mca_cycles(body, cpu, tool),
                                    widest_bytes.get(name, 0))
            kernels[name] = found.as_record()
    return {"cpu": cpu, "tool": f"{Path(tool).name}, objdump, gcov line counts, {Path(compiler).name} -g",
            "vector_loops": True, "kernels": kernels}

