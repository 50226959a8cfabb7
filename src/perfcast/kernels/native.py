"""Compiling and loading native C kernels: gcc -O3 -march=native -fopenmp, cached by source and flags."""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shutil
import stat
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from perfcast.errors import ToolError

__all__ = [
    "DEFAULT_FLAGS",
    "NativeBuildError",
    "NativeLibrary",
    "VectorIsa",
    "build_executable",
    "build_library",
    "build_shared_object",
    "cache_dir",
    "cpu_flags",
    "native_flags",
    "vector_isa",
]

# 512-bit vectors where the CPU has them: GCC prefers 256 on some AVX-512 cores, which halves the peak.
# -lm: the benchmarks call the C library's elementary functions (expf, logf, sinf).
DEFAULT_FLAGS = ("-O3", "-march=native", "-mprefer-vector-width=512", "-fopenmp", "-fPIC", "-shared", "-lm")


class NativeBuildError(ToolError):
    """A native kernel that could not be compiled (no compiler, or a compile error with its output)."""


@dataclass(frozen=True)
class NativeLibrary:
    """A compiled shared library, its path, the compiler command line and the compiler's version."""

    path: Path
    handle: ctypes.CDLL
    command: tuple[str, ...]
    compiler: str


@dataclass(frozen=True)
class VectorIsa:
    """The vector registers the compiler targets on this CPU: their name, width in B and how many there are."""

    name: str
    vector_bytes: int
    registers: int

    @property
    def block_bytes(self) -> int:
        """Return the B of independent values a register-resident kernel keeps per thread.

        Three quarters of the vector registers: enough independent chains to cover the FMA latency on every
        current core, and room left for the constants and the compiler's temporaries. A block larger than the
        register file spills every operation through L1 (a 1 KiB block on AVX2's sixteen 32-byte registers
        measured 0.41 of the fp32 peak; 384 B, 0.99).
        """
        return self.vector_bytes * (3 * self.registers // 4)

    def defines(self) -> tuple[str, ...]:
        """Return the -D flags every register-blocked kernel (bench.c, primitives.c, peakflops.c) is built with."""
        return (
            f"-DREGISTER_BYTES={self.block_bytes}",
            f"-DLANES={self.block_bytes // 4}",
            f"-DCHAINS={3 * self.registers // 4}",
        )


def vector_isa(flags: Iterable[str] | None = None, machine: str | None = None) -> VectorIsa:
    """Return the vector ISA -march=native gives on a CPU with these /proc/cpuinfo `flags` (this CPU's by default)."""
    if flags is None:
        flags = cpu_flags()
    names = set(flags)
    machine = machine or platform.machine()
    if "avx512f" in names:
        return VectorIsa("AVX-512", 64, 32)
    if "avx2" in names or "avx" in names:
        return VectorIsa("AVX2" if "avx2" in names else "AVX", 32, 16)
    if machine.startswith(("aarch64", "arm64")) or "asimd" in names:
        return VectorIsa("NEON" if "sve" not in names else "NEON (SVE vectors not used)", 16, 32)
    return VectorIsa("SSE2", 16, 16)


@functools.cache
def _cpuinfo_lines() -> tuple[str, ...]:
    """Return the lines of /proc/cpuinfo, read once per process (empty where there is none)."""
    try:
        return tuple(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return ()


def cpu_flags() -> list[str]:
    """Return this CPU's feature flags from /proc/cpuinfo ('flags' on x86, 'Features' on ARM); empty if unknown."""
    for line in _cpuinfo_lines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return value.split()
    return []


def native_flags() -> tuple[str, ...]:
    """Return DEFAULT_FLAGS with this CPU's register-block sizes (the one place those constants come from)."""
    return (*DEFAULT_FLAGS, *vector_isa().defines())


def cache_dir() -> Path:
    """Return the folder compiled kernels are cached in ($PERFCAST_CACHE, else $XDG_CACHE_HOME or ~/.cache, /perfcast).

    An empty or relative $XDG_CACHE_HOME is ignored, as the XDG base-directory spec says: a relative cache
    would make perfcast load whatever library sits in the working directory.
    """
    explicit = os.environ.get("PERFCAST_CACHE")
    if explicit:
        return Path(explicit).absolute() / "native"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "perfcast" / "native"


def _private_folder(folder: Path) -> Path:
    """Create `folder` (mode 0700) if needed; refuse one another user owns or others may write into."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    _check_private(folder, "cache folder")
    return folder


def _check_private(path: Path, what: str) -> None:
    """Raise NativeBuildError unless `path` belongs to this user and no one else may write it."""
    info = path.stat()
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise NativeBuildError(
            f"refusing the {what} {path}: it belongs to user id {info.st_uid}, not to you; "
            "set PERFCAST_CACHE to a folder of your own"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise NativeBuildError(
            f"refusing the {what} {path}: others may write to it (mode {stat.filemode(info.st_mode)}); "
            f"chmod go-w {path} or set PERFCAST_CACHE to a private folder"
        )


def _cpu_identity() -> str:
    """Return what -march=native depends on: the CPU model and its feature flags (the machine where unknown)."""
    wanted = ("model name", "flags", "Features", "CPU implementer", "CPU part")
    lines: list[str] = []
    for line in _cpuinfo_lines():
        key = line.split(":", 1)[0].strip()
        if key in wanted and line not in lines:
            lines.append(line)
    return "\n".join(lines) or platform.machine()


def _compile(source: Path, flags: tuple[str, ...], compiler: str, suffix: str) -> tuple[Path, tuple[str, ...], str]:
    """Return (output path, command line, compiler version) of `source` built with `flags`, cached by content.

    The cache key holds the source, the compiler's version, the flags and the CPU (for -march=native).
    """
    executable = shutil.which(compiler)
    if executable is None:
        raise NativeBuildError(
            f"no C compiler {compiler!r} on PATH: the native CPU kernels need one (e.g. apt-get install gcc)"
        )
    version = subprocess.run([executable, "--version"], capture_output=True, text=True, check=False).stdout
    version = version.splitlines()[0] if version else compiler
    identity = "\0".join((executable, version, *flags, _cpu_identity()))
    key = hashlib.sha256(source.read_bytes() + b"\0" + identity.encode()).hexdigest()[:16]
    target = _private_folder(cache_dir()) / f"{source.stem}-{key}{suffix}"
    command = (executable, *flags, "-o", str(target), str(source))
    if target.exists():
        _check_private(target, "cached build")
    else:
        _build(source, target, executable, flags, command)
    return target, command, version


def _build(source: Path, target: Path, executable: str, flags: tuple[str, ...], command: tuple[str, ...]) -> None:
    """Compile `source` into `target` through a private temporary file renamed into place."""
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    build = (executable, *flags, "-o", str(partial), str(source))
    result = subprocess.run(build, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        partial.unlink(missing_ok=True)
        raise NativeBuildError(f"compiling {source.name} failed:\n{' '.join(command)}\n{result.stderr.strip()}")
    partial.chmod(0o700)
    partial.replace(target)  # atomic: a concurrent build never loads half a file


def build_library(source: Path, flags: tuple[str, ...] = DEFAULT_FLAGS, compiler: str = "gcc") -> NativeLibrary:
    """Return `source` compiled into a shared library and loaded, re-using a cached build of the same source and flags."""
    target, command, version = _compile(source, flags, compiler, ".so")
    try:
        handle = ctypes.CDLL(str(target))
    except OSError:
        # A truncated or foreign file under the cache's name: build it again, once.
        target.unlink(missing_ok=True)
        target, command, version = _compile(source, flags, compiler, ".so")
        try:
            handle = ctypes.CDLL(str(target))
        except OSError as error:
            raise NativeBuildError(f"cannot load {target}: {error}") from None
    return NativeLibrary(target, handle, command, version)


def build_shared_object(source: Path, flags: tuple[str, ...], compiler: str = "g++") -> tuple[Path, tuple[str, ...], str]:
    """Return (library path, command line, compiler version) of `source` compiled, cached, and not loaded here.

    For libraries another program loads (an Oclgrind plugin): `flags` must hold -shared and -fPIC.
    """
    return _compile(source, flags, compiler, ".so")


def build_executable(source: Path, flags: tuple[str, ...], compiler: str = "gcc") -> tuple[Path, tuple[str, ...], str]:
    """Return (program path, command line, compiler version) of `source` compiled into a program, cached."""
    return _compile(source, flags, compiler, "")
