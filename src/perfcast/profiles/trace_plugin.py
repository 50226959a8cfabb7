"""Building perfcast's Oclgrind plugin (`oclgrind_trace.cpp`) and running a program under it.

The plugin is C++ against Oclgrind's plugin API (Debian: liboclgrind-dev), whose headers include the OpenCL
headers (opencl-c-headers) and LLVM's (the llvm-N-dev that Oclgrind was built with). It is compiled once per
source, compiler and Oclgrind, and cached with perfcast's other native builds. Oclgrind is built without
RTTI, so the plugin is too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from perfcast.errors import ToolError
from perfcast.kernels.native import build_shared_object

__all__ = ["PLUGIN_SOURCE", "TraceSampling", "build_oclgrind_plugin", "build_trace_plugin", "trace_environment"]

PLUGIN_SOURCE = Path(__file__).with_name("oclgrind_trace.cpp")
_INSTALL = "apt-get install liboclgrind-dev opencl-c-headers llvm-dev"


@dataclass(frozen=True)
class TraceSampling:
    """Which work-groups of each launch are recorded: windows of `window` groups every `stride` (0: all).

    `max_mb` caps one launch's records (24 B each), `total_mb` all launches'; groups past a cap are run but
    not recorded, and counted.
    """

    window: int = 0
    stride: int = 0
    max_mb: int = 512
    total_mb: int = 4096

    def __post_init__(self) -> None:
        if self.window < 0 or self.stride < 0 or self.max_mb < 1 or self.total_mb < 1:
            raise ToolError(f"trace sampling needs window, stride >= 0 and max_mb >= 1, not {self}")
        if bool(self.window) != bool(self.stride):
            raise ToolError("trace sampling needs a window and a stride together (or neither: every work-group)")
        if self.window and self.stride and self.window > self.stride:
            raise ToolError(f"a trace window of {self.window} work-groups cannot exceed its stride {self.stride}")

    def describe(self) -> str:
        """Return the sampling in words."""
        if not self.window or not self.stride:
            return "every work-group"
        return f"windows of {self.window} work-groups every {self.stride}"


def _oclgrind_prefix() -> Path:
    """Return the installation prefix of the oclgrind on PATH (/usr for Debian's)."""
    executable = shutil.which("oclgrind")
    if executable is None:
        raise ToolError("oclgrind is not on PATH (apt-get install oclgrind)")
    return Path(executable).resolve().parent.parent


def _llvm_include(prefix: Path) -> Path:
    """Return the LLVM include folder of the LLVM that liboclgrind links against."""
    found = [*prefix.glob("lib*/liboclgrind.so*"), *prefix.glob("lib*/*/liboclgrind.so*")]
    library = sorted(found)[0] if found else None
    wanted = None
    if library is not None and shutil.which("ldd"):
        linked = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=False).stdout
        match = re.search(r"libLLVM-(\d+)", linked)
        wanted = match[1] if match else None
    candidates = sorted(Path("/usr/lib").glob("llvm-*/include/llvm/ADT/StringRef.h"))
    for header in candidates:
        if wanted is None or header.parts[3] == f"llvm-{wanted}":
            return header.parents[2]
    needed = f"llvm-{wanted}-dev" if wanted else "llvm-dev"
    raise ToolError(f"the LLVM headers Oclgrind's plugin API needs are not installed (apt-get install {needed})")


def build_trace_plugin() -> Path:
    """Return the compiled trace plugin (built on first use, then cached); ToolError naming what is missing."""
    return build_oclgrind_plugin(PLUGIN_SOURCE)


def build_oclgrind_plugin(source: Path) -> Path:
    """Return the Oclgrind plugin compiled from C++ `source` (built on first use, then cached); ToolError if not."""
    prefix = _oclgrind_prefix()
    include = prefix / "include"
    if not (include / "oclgrind" / "Plugin.h").is_file():
        raise ToolError(f"Oclgrind's plugin headers are not installed ({_INSTALL})")
    if not any((folder / "CL" / "cl.h").is_file() for folder in (include, Path("/usr/include"))):
        raise ToolError(f"the OpenCL headers are not installed ({_INSTALL})")
    flags = ("-O2", "-std=c++17", "-fno-rtti", "-shared", "-fPIC", "-DCL_TARGET_OPENCL_VERSION=300",
             f"-I{include}", f"-I{_llvm_include(prefix)}", f"-L{prefix / 'lib'}", "-loclgrind")
    if shutil.which("g++") is None:
        raise ToolError("no C++ compiler (g++) on PATH: the Oclgrind plugin needs one (apt-get install g++)")
    path, _command, _version = build_shared_object(source, flags, "g++")
    return path


def trace_environment(trace: Path, sampling: TraceSampling) -> dict[str, str]:
    """Return the environment variables that point the plugin at `trace` with `sampling`."""
    return {"PERFCAST_TRACE_FILE": str(trace), "PERFCAST_TRACE_WINDOW": str(sampling.window),
            "PERFCAST_TRACE_STRIDE": str(sampling.stride), "PERFCAST_TRACE_MAX_MB": str(sampling.max_mb),
            "PERFCAST_TRACE_TOTAL_MB": str(sampling.total_mb)}
