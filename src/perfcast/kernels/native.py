"""Compiling and loading native C kernels: gcc -O3 -march=native -fopenmp, cached by source and flags."""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_FLAGS", "NativeBuildError", "NativeLibrary", "build_executable", "build_library", "cache_dir"]

# 512-bit vectors where the CPU has them: GCC prefers 256 on some AVX-512 cores, which halves the peak.
DEFAULT_FLAGS = ("-O3", "-march=native", "-mprefer-vector-width=512", "-fopenmp", "-fPIC", "-shared")


class NativeBuildError(RuntimeError):
    """A native kernel that could not be compiled (no compiler, or a compile error with its output)."""


@dataclass(frozen=True)
class NativeLibrary:
    """A compiled shared library, its path, the compiler command line and the compiler's version."""

    path: Path
    handle: ctypes.CDLL
    command: tuple[str, ...]
    compiler: str


def cache_dir() -> Path:
    """Return the folder compiled kernels are cached in ($PERFCAST_CACHE or ~/.cache/perfcast)."""
    root = os.environ.get("PERFCAST_CACHE") or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "perfcast"
    return Path(root) / "native"


def _compile(source: Path, flags: tuple[str, ...], compiler: str, suffix: str) -> tuple[Path, tuple[str, ...], str]:
    """Return (output path, command line, compiler version) of `source` built with `flags`, cached by content."""
    executable = shutil.which(compiler)
    if executable is None:
        raise NativeBuildError(
            f"no C compiler {compiler!r} on PATH: the native CPU kernels need one (e.g. apt-get install gcc)"
        )
    version = subprocess.run([executable, "--version"], capture_output=True, text=True, check=False).stdout
    version = version.splitlines()[0] if version else compiler
    key = hashlib.sha256(source.read_bytes() + "\0".join((version, *flags)).encode()).hexdigest()[:16]
    target = cache_dir() / f"{source.stem}-{key}{suffix}"
    command = (executable, *flags, "-o", str(target), str(source))
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        build = (executable, *flags, "-o", str(partial), str(source))
        result = subprocess.run(build, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise NativeBuildError(f"compiling {source.name} failed:\n{' '.join(command)}\n{result.stderr.strip()}")
        partial.replace(target)  # atomic: a concurrent build never loads half a file
    return target, command, version


def build_library(source: Path, flags: tuple[str, ...] = DEFAULT_FLAGS, compiler: str = "gcc") -> NativeLibrary:
    """Return `source` compiled into a shared library and loaded, re-using a cached build of the same source and flags."""
    target, command, version = _compile(source, flags, compiler, ".so")
    return NativeLibrary(target, ctypes.CDLL(str(target)), command, version)


def build_executable(source: Path, flags: tuple[str, ...], compiler: str = "gcc") -> tuple[Path, tuple[str, ...], str]:
    """Return (program path, command line, compiler version) of `source` compiled into a program, cached."""
    return _compile(source, flags, compiler, "")
