"""The code a CPU ran for each suite kernel, and its inner loops' cycles: a campaign's `incore` record (§3.5).

Two runs of the suite's driver, one work-group of each kernel at the timed work per work-item:

* on PoCL, with a fresh kernel cache and `-g` added to every build (POCL_EXTRA_BUILD_FLAGS), so that PoCL
  compiles every kernel with a line table and keeps it in the cache;
* under Oclgrind with perfcast's block-count plugin, for how many times each basic block ran.

`perfcast.profiles.incore` then gives each kernel its cycles a work-item; the CPU llvm-mca models is the one PoCL
names in its device name (`pthread-skylake-avx512-...`). A platform other than PoCL records nothing.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perfcast.errors import ToolError
from perfcast.profiles.incore import (
    BLOCKS_PLUGIN_SOURCE,
    analyse_pocl_kernels,
    llvm_cpus,
    mca_tool,
    pocl_llvm_cpu,
    read_blocks,
)
from perfcast.profiles.trace_plugin import build_oclgrind_plugin

__all__ = ["run_pocl_incore", "run_program_incore"]

INCORE_TIMEOUT = 900  # s, one run of the suite's driver under Oclgrind (the campaign's profile runs take as long)


def _run(command: list[str], env: Mapping[str, str], what: str) -> None:
    """Run a command to completion; ToolError with the tail of its stderr if it fails."""
    try:
        done = subprocess.run(command, env=dict(env), capture_output=True, text=True, timeout=INCORE_TIMEOUT,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ToolError(f"{what}: {error}") from None
    if done.returncode != 0:
        raise ToolError(f"{what} failed ({done.returncode}): {done.stderr.strip()[-400:]}")


def _read_code(command: list[str], env: Mapping[str, str], device_name: str, what: str) -> dict[str, Any]:
    """Return the `incore` record of the kernels `command` launches on PoCL's CPU device `device_name`."""
    tool = mca_tool()
    cpu = pocl_llvm_cpu(device_name, llvm_cpus(tool))
    if cpu is None:
        raise ToolError(f"PoCL's device {device_name!r} names no CPU that {Path(tool).name} models")
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
    return {"cpu": cpu, "tool": f"{Path(tool).name}, objdump, Oclgrind block counts, PoCL -g",
            "kernels": {name: estimate.as_record() for name, estimate in found.items()}}


def run_program_incore(command: list[str], device_name: str) -> dict[str, Any]:
    """Return a program campaign's `incore` record: its kernels as PoCL compiled them, read by running `command`.

    `command`: the program's smaller profile command (its work a work-item is the timed one's where the counts
    scale with the work-items); ToolError as `run_pocl_incore`.
    """
    record = _read_code(command, os.environ, device_name, "the program")
    record["command"] = shlex.join(command)
    return record


def run_pocl_incore(sizes: Mapping[str, int], platform: int, device: int, device_name: str) -> dict[str, Any]:
    """Return the campaign's `incore` record: the CPU, the tools, and each kernel's cycles a work-item and loops.

    `sizes`: each kernel's problem size; `platform`, `device`: the OpenCL indices of the PoCL device; ToolError
    where a tool is missing or fails, or PoCL's device names no CPU llvm-mca knows. `-g` is added to the build
    flags PoCL is given (POCL_EXTRA_BUILD_FLAGS), not put in their place.
    """
    listing = ",".join(f"{name}={n}" for name, n in sizes.items())
    driver = [sys.executable, "-m", "perfcast.campaign.oclgrind_driver", "1", listing]
    record = _read_code(driver, {**os.environ, "PYOPENCL_CTX": f"{platform}:{device}"}, device_name, "the suite")
    record["kernels"] = {name: found for name, found in record["kernels"].items() if name in sizes}
    return record
