"""Kernel metrics in: one reader per profiler format, and perfcast's own profile files.

READERS is the registry (format name -> what it reads, detector, reader); `perfcast profile` and `perfcast predict`
take their choices from it and a test runs over each.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from perfcast.profiles.ncu import looks_like_ncu, read_ncu
from perfcast.profiles.nvprof import looks_like_nvprof, read_nvprof
from perfcast.profiles.oclgrind import looks_like_oclgrind, read_oclgrind
from perfcast.profiles.profile import (
    PROFILE_FORMAT,
    KernelProfile,
    ProfileError,
    ProfileSet,
    ProfileSource,
    load_profile,
)

__all__ = ["READERS", "KernelProfile", "ProfileError", "ProfileSet", "ProfileSource", "read_profile"]

Reader = Callable[..., ProfileSet]
READERS: dict[str, tuple[str, Callable[[str], bool], Reader]] = {
    "ncu": ("Nsight Compute CSV, raw or details page (ncu --csv [--page raw])", looks_like_ncu, read_ncu),
    "nvprof": ("nvprof metric CSV (nvprof --csv --metrics ...)", looks_like_nvprof, read_nvprof),
    "oclgrind": ("Oclgrind instruction histograms (oclgrind --inst-counts)", looks_like_oclgrind, read_oclgrind),
}


def read_profile(path: str | Path, tool: str | None = None, **options: Any) -> ProfileSet:
    """Return the kernels of a profile file: perfcast's own YAML, or a profiler's output (format sniffed or named)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ProfileError(f"cannot read {path}: {error.strerror or error}") from None
    if len(data) > 256 * 2**20:
        raise ProfileError(f"{path}: {len(data) / 2**20:.0f} MiB is too large for a profile")
    text = _decoded(data, path)
    if tool is None and f"format: {PROFILE_FORMAT}" in text[:4096]:
        return load_profile(path)
    if tool is not None:
        if tool not in READERS:
            raise ProfileError(f"unknown profile format {tool!r}; choose one of {', '.join(READERS)}")
        return READERS[tool][2](text, raw=str(path), **options)
    for _, looks_like, reader in READERS.values():
        if looks_like(text):
            return reader(text, raw=str(path), **options)
    raise ProfileError(f"{path}: not a perfcast profile nor the output of {', '.join(READERS)} (formats: "
                       + "; ".join(about for about, _, _ in READERS.values()) + ")")


def _decoded(data: bytes, path: Path) -> str:
    """Return a profiler output as text: UTF-8 (a byte-order mark dropped) or UTF-16 with its mark.

    Windows tools and editors save CSV with a byte-order mark or as UTF-16; read as UTF-8, the header then
    starts with invisible bytes and every column looked missing.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise ProfileError(f"{path}: marked as UTF-16 but not valid UTF-16 text") from None
    if data[:200].count(b"\x00") > 20:
        raise ProfileError(f"{path}: looks like UTF-16 without a byte-order mark; save it as UTF-8")
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")
