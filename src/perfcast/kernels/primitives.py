"""Synthetic primitives of known algorithmic species whose operator complexity f can be set: native C kernels."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfcast.kernels.native import DEFAULT_FLAGS, NativeLibrary, VectorIsa, build_library, vector_isa

__all__ = ["SyntheticPrimitive", "load_primitives", "primitive_flags", "neighbourhood", "elementwise", "reduction"]

SOURCE = Path(__file__).with_name("primitives.c")
_A, _B, _W = np.float32(0.999), np.float32(0.001), np.float32(0.04)


@dataclass(frozen=True)
class SyntheticPrimitive:
    """A runnable primitive: its species, the complexities it supports, and run(f) that executes it once."""

    name: str
    species: str
    complexities: tuple[int, ...]
    run: Callable[[int], object]
    result: Callable[[], np.ndarray | float]


# The most floats a block of primitives.c may hold. Its blocks are plain C arrays (perfcast classify reads the
# file as C), which gcc 12 keeps in registers only when it unrolls them whole: on an AVX-512 Zen 4 the
# 384-float block of three quarters of the registers stayed in memory (element-wise map and reduction at
# k = 64: 66 and 67 GFLOP/s), 256 floats unrolled (106 and 108), 192 the same (109, 110). 256 floats are
# 16 AVX-512 or 32 AVX2 registers' worth: no fewer independent chains than an FMA pipe's latency needs.
LANES_MAX = 256


def primitive_flags(isa: VectorIsa | None = None) -> tuple[str, ...]:
    """Return the primitives' build flags: LANES from the register block (this CPU's), at most LANES_MAX floats."""
    return (*DEFAULT_FLAGS, f"-DLANES={min((isa or vector_isa()).block_bytes // 4, LANES_MAX)}")


def load_primitives() -> NativeLibrary:
    """Return the compiled primitives library with its C signatures declared."""
    library = build_library(SOURCE, primitive_flags())
    c_float_p = ctypes.POINTER(ctypes.c_float)
    lib = library.handle
    lib.elementwise.argtypes = [c_float_p, c_float_p, ctypes.c_long, ctypes.c_int, ctypes.c_float, ctypes.c_float]
    lib.elementwise.restype = None
    lib.reduce_sum.argtypes = [c_float_p, ctypes.c_long, ctypes.c_int, ctypes.c_float, ctypes.c_float]
    lib.reduce_sum.restype = ctypes.c_float
    lib.neighbourhood.argtypes = [
        c_float_p, c_float_p, ctypes.c_long, ctypes.c_long, ctypes.c_int, ctypes.c_int,
        ctypes.c_float, ctypes.c_float, ctypes.c_float,
    ]
    lib.neighbourhood.restype = None
    return library


def _pointer(array: np.ndarray) -> ctypes._Pointer:
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


def _fill(count: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(count, dtype=np.float32)


def elementwise(library: NativeLibrary, n: int) -> SyntheticPrimitive:
    """Return `n|element -> n|element`: f = 1 (one add) or f = 2k (a chain of k FMAs) per element."""
    x, y = _fill(n, 1), np.zeros(n, dtype=np.float32)

    def run(f: int) -> None:
        if f != 1 and (f < 2 or f % 2):
            raise ValueError(f"elementwise supports f = 1 or an even f >= 2, not {f}")
        library.handle.elementwise(_pointer(x), _pointer(y), n, 0 if f == 1 else f // 2, _A, _B)

    return SyntheticPrimitive(
        "elementwise", f"{n}|element -> {n}|element", (1, 2, 8, 32, 128, 512, 1024), run, lambda: y
    )


def reduction(library: NativeLibrary, n: int) -> SyntheticPrimitive:
    """Return `n|element -> 1|shared` (a sum): f = 2k + 1 per element (k FMAs, then the accumulation)."""
    x = _fill(n, 2)
    last: list[float] = [0.0]

    def run(f: int) -> None:
        if f < 1 or f % 2 == 0:
            raise ValueError(f"reduction supports odd f >= 1, not {f}")
        last[0] = library.handle.reduce_sum(_pointer(x), n, (f - 1) // 2, _A, _B)

    return SyntheticPrimitive("reduction", f"{n}|element -> 1|shared", (1, 3, 9, 33, 129, 513, 1025), run, lambda: last[0])


def neighbourhood(library: NativeLibrary, rows: int, cols: int, size: int) -> SyntheticPrimitive:
    """Return `rows x cols|neighb(size x size) -> rows x cols|element`: f = 2k + 2 per neighbour."""
    if size < 1 or size % 2 == 0:
        raise ValueError("the neighbourhood size must be odd")
    padded = _fill((rows + size - 1) * (cols + size - 1), 3)
    out = np.zeros(rows * cols, dtype=np.float32)

    def run(f: int) -> None:
        if f < 2 or f % 2:
            raise ValueError(f"neighbourhood supports even f >= 2, not {f}")
        library.handle.neighbourhood(_pointer(padded), _pointer(out), rows, cols, size, (f - 2) // 2, _A, _B, _W)

    species = f"{rows}x{cols}|neighb({size}x{size}) -> {rows}x{cols}|element"
    return SyntheticPrimitive("neighbourhood", species, (2, 4, 10, 34, 130, 514), run, lambda: out)


def reference_chain(values: np.ndarray, k: int) -> np.ndarray:
    """Return k FMAs v = v*a + b applied to `values` in float32 (the numpy reference of the C operator)."""
    v = values.astype(np.float32).copy()
    for _ in range(k):
        v = v * _A + _B
    return v
