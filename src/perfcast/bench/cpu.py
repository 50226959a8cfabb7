"""The native CPU backend: C micro-benchmarks (gcc, OpenMP) on every core, then one core, vector and scalar."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfcast.bench.accelerator import ProgressSteps
from perfcast.bench.suite import (
    MixPoint,
    Progress,
    Sample,
    SuiteResult,
    SweepPoint,
    cache_plateaus,
    calibrated_rate,
)
from perfcast.devices.schema import Device
from perfcast.kernels.native import DEFAULT_FLAGS, NativeLibrary, VectorIsa, build_library, native_flags, vector_isa

__all__ = ["CHAIN_LENGTH", "NativeCpuBackend", "compute_rate", "register_blocks", "scalar_flags", "triad_rate"]

SOURCE = Path(__file__).parent / "kernels" / "bench.c"

_D = ctypes.POINTER(ctypes.c_double)
_F = ctypes.POINTER(ctypes.c_float)
_I64 = ctypes.POINTER(ctypes.c_int64)
_L, _I = ctypes.c_long, ctypes.c_int
CHAIN_LENGTH = 256  # operations on each register-resident value per pass of a compute kernel


def register_blocks() -> tuple[VectorIsa, VectorIsa]:
    """Return the register blocks of the vector build and of the scalar build (4-byte values, same registers)."""
    isa = vector_isa()
    return isa, VectorIsa("scalar", 4, isa.registers)


def scalar_flags() -> tuple[str, ...]:
    """Return the flags of the scalar build: vectorisation off, a block that fits the scalar registers."""
    return (*DEFAULT_FLAGS, "-fno-tree-vectorize", "-fno-tree-slp-vectorize", *register_blocks()[1].defines())


_COMPUTE = {  # (precision, kind) -> (C function, ctypes scalar, numpy dtype, ops per step)
    ("fp32", "fma"): ("peak_f32_fma", ctypes.c_float, np.float32, 2),
    ("fp32", "add_mul"): ("peak_f32_add", ctypes.c_float, np.float32, 1),
    ("fp64", "fma"): ("peak_f64_fma", ctypes.c_double, np.float64, 2),
    ("fp64", "add_mul"): ("peak_f64_add", ctypes.c_double, np.float64, 1),
    ("int32", "fma"): ("peak_i32_fma", ctypes.c_uint32, np.uint32, 2),
    ("int32", "add_mul"): ("peak_i32_add", ctypes.c_uint32, np.uint32, 2),  # (v + b) ^ a
}


def compute_rate(
    lib: ctypes.CDLL, function: str, scalar: type, threads: int, block_bytes: int, repetitions: int, min_seconds: float,
    *, ops: int = 2, operands: tuple[float, float] = (0.999, 1e-3),
) -> Sample:
    """Return the rate (op/s) of compute kernel `function` on `threads` threads.

    Each thread chains `ops`-op steps over `block_bytes` of register-resident values: the block the library
    was built with.
    """
    sink = ctypes.create_string_buffer(ctypes.sizeof(scalar) * max(64, threads))  # one result per thread
    kernel = getattr(lib, function)
    x, y = scalar(operands[0]), scalar(operands[1])
    per_pass = threads * (block_bytes // ctypes.sizeof(scalar)) * CHAIN_LENGTH * ops
    return calibrated_rate(
        lambda passes: kernel(passes, CHAIN_LENGTH, threads, x, y, ctypes.cast(sink, ctypes.POINTER(scalar))),
        per_pass, repetitions, min_seconds,
    )


def triad_rate(
    lib: ctypes.CDLL, arrays: tuple[np.ndarray, np.ndarray, np.ndarray], n: int, threads: int, repetitions: int,
    min_seconds: float,
) -> Sample:
    """Return the triad bandwidth (B/s, STREAM counting: 24 B per element) over the first `n` of `arrays`."""
    a, b, c = arrays
    return calibrated_rate(
        lambda passes: lib.mem_triad(_ptr(a, _D), _ptr(b, _D), _ptr(c, _D), 3.0, n, passes, threads),
        24 * n, repetitions, min_seconds,
    )


def _declare(library: NativeLibrary) -> ctypes.CDLL:
    """Return the library handle with every benchmark's C signature declared."""
    lib = library.handle
    signatures = {
        "mem_read": [_D, _L, _L, _I, _D],
        "mem_write": [_D, _L, _L, _I],
        "mem_copy": [_D, _D, _L, _L, _I],
        "mem_triad": [_D, _D, _D, ctypes.c_double, _L, _L, _I],
        "mem_strided": [_D, _L, _L, _L, _I, _D],
        "mem_random": [_D, _I64, _L, _L, _I, _D],
        "mix_f32": [_F, _L, _I, ctypes.c_float, ctypes.c_float, _L, _I],
    }
    for function, scalar, _, _ in _COMPUTE.values():
        signatures[function] = [_L, _I, _I, scalar, scalar, ctypes.POINTER(scalar)]
    for name, arguments in signatures.items():
        getattr(lib, name).argtypes = arguments
        getattr(lib, name).restype = ctypes.c_double
    return lib


def _ptr(array: np.ndarray, kind: type) -> ctypes._Pointer:
    return array.ctypes.data_as(kind)


@dataclass
class NativeCpuBackend:
    """Measures this machine's CPU with C kernels; `device` supplies its structure (cores, caches)."""

    device: Device
    repetitions: int = 5
    name: str = "cpu"

    def _libraries(self) -> tuple[NativeLibrary, NativeLibrary]:
        return build_library(SOURCE, native_flags()), build_library(SOURCE, scalar_flags())

    def _cache_capacities(self) -> list[tuple[str, float]]:
        """Return (level, aggregate bytes over all cores) for the data caches, smallest first."""
        capacities = []
        for level in self.device.memory:
            if level.level in ("L1", "L2", "L3") and level.size is not None:
                copies = self.device.compute_units if level.scope == "per_core" else 1
                capacities.append((level.level, level.size.value * copies))
        return sorted(capacities, key=lambda item: item[1])

    def run(self, quick: bool, progress: Progress) -> SuiteResult:
        """Return the CPU suite: memory sweep, DRAM kernels, strided/random, peaks, floors, intensity sweep."""
        vector, scalar = self._libraries()
        lib, lib_scalar = _declare(vector), _declare(scalar)
        threads = self.device.threads
        reps = 3 if quick else self.repetitions
        min_seconds = 0.004 if quick else 0.02
        isa, scalar_isa = register_blocks()
        tool = (f"perfcast bench (cpu backend, {vector.compiler}, {' '.join(vector.command[1:-3])}; "
                f"{isa.name}, {isa.block_bytes} B register blocks)")
        suite = SuiteResult(backend="cpu", tool=tool, repetitions=reps)
        capacities = self._cache_capacities()
        largest = max((c for _, c in capacities), default=32 * 2**20)
        # Far past the last-level cache, so that no level of it holds a measurable share of the data.
        dram_bytes = int(max((4 if quick else 8) * largest, 64 * 2**20))
        dram_elements = dram_bytes // 8 // 3  # triad: three arrays in the working set
        a, b, c = (np.full(dram_elements, value) for value in (1.0, 2.0, 0.5))
        sink = np.zeros(max(64, threads), dtype=np.float64)

        def kernel_run(kernel: str, n: int, t: int, library: ctypes.CDLL = lib):
            calls = {
                "read": lambda passes: library.mem_read(_ptr(a, _D), n, passes, t, _ptr(sink, _D)),
                "write": lambda passes: library.mem_write(_ptr(a, _D), n, passes, t),
                "copy": lambda passes: library.mem_copy(_ptr(c, _D), _ptr(a, _D), n, passes, t),
                "triad": lambda passes: library.mem_triad(_ptr(a, _D), _ptr(b, _D), _ptr(c, _D), 3.0, n, passes, t),
            }
            arrays = {"read": 1, "write": 1, "copy": 2, "triad": 3}[kernel]
            return calls[kernel], 8 * n * arrays

        # 1. Working-set sweep from well inside L1 to past the last-level cache (triad, every core).
        sizes = np.unique(np.geomspace(16 * 2**10, dram_bytes, 12 if quick else 22).astype(np.int64))
        tick = ProgressSteps(progress, len(sizes) + 4 + 3 + len(_COMPUTE) + 2 + 10)

        for size in sizes:
            tick(f"memory sweep {size / 2**20:.3g} MiB")
            n = max(threads * 64, int(size) // 24)
            suite.sweep.append(SweepPoint("triad", 24 * n, triad_rate(lib, (a, b, c), n, threads, reps, min_seconds)))
        suite.levels = cache_plateaus(suite.sweep, capacities)
        # 2. DRAM: the four STREAM kernels far past the caches.
        for kernel in ("read", "write", "copy", "triad"):
            tick(f"DRAM {kernel}")
            run, moved = kernel_run(kernel, dram_elements, threads)
            suite.dram[kernel] = calibrated_rate(run, moved, reps, min_seconds)
        # 3. Bandwidth floors: one thread; strided and random (uncoalesced) reads, counting useful bytes.
        tick("DRAM triad, one thread")
        run, moved = kernel_run("triad", dram_elements, 1)
        suite.bandwidth_ceilings["single thread"] = calibrated_rate(run, moved, reps, min_seconds)
        tick("strided reads")
        stride = 8  # one double per 64-byte line
        suite.bandwidth_ceilings["strided"] = calibrated_rate(
            lambda passes: lib.mem_strided(_ptr(a, _D), dram_elements, stride, passes, threads, _ptr(sink, _D)),
            8 * (dram_elements // stride), reps, min_seconds,
        )
        tick("random reads")
        gathered = dram_elements // 8
        index = np.random.default_rng(0).permutation(dram_elements)[:gathered].astype(np.int64)
        suite.bandwidth_ceilings["uncoalesced"] = calibrated_rate(
            lambda passes: lib.mem_random(_ptr(a, _D), _ptr(index, _I64), gathered, passes, threads, _ptr(sink, _D)),
            8 * gathered, reps, min_seconds,
        )
        # 4. Peaks per precision and instruction kind, from registers, every core.
        for (precision, kind), (function, scalar_type, dtype, ops) in _COMPUTE.items():
            tick(f"peak {precision} {kind}")
            operands = (1, 3) if dtype == np.uint32 else (0.999, 1e-3)
            suite.compute[(precision, kind)] = compute_rate(
                lib, function, scalar_type, threads, isa.block_bytes, reps, min_seconds, ops=ops, operands=operands
            )
        # 5. The floors of §2.4: single-threaded vector, multi-threaded scalar (fp32 FMA).
        for label, library, t, block in (("single thread", lib, 1, isa), ("no SIMD", lib_scalar, threads, scalar_isa)):
            tick(f"fp32 FMA, {label}")
            suite.compute_ceilings[label] = compute_rate(
                library, "peak_f32_fma", ctypes.c_float, t, block.block_bytes, reps, min_seconds
            )
        # 6. Intensity sweep (mixbench): k FMAs per fp32 element between its load and store.
        x = np.ones(dram_bytes // 4, dtype=np.float32)
        for k_mix in (0, 1, 2, 4, 8, 16, 32, 64, 128, 256):
            tick(f"intensity sweep k={k_mix}")
            lanes = isa.block_bytes // 4
            moved_bytes = 8 * (x.size // lanes) * lanes
            rate = calibrated_rate(
                lambda passes, kk=k_mix: lib.mix_f32(_ptr(x, _F), x.size, kk, 0.999, 1e-3, passes, threads),
                moved_bytes, reps, min_seconds,
            )
            if k_mix:
                suite.mix.append(MixPoint(2 * k_mix / 8, Sample(rate.value * 2 * k_mix / 8, rate.spread, reps)))
        tick.finish()
        suite.notes.append(
            f"Memory kernels on {threads} threads over {dram_bytes / 2**20:.0f} MiB of triad working set; "
            f"cache plateaus from the triad sweep; peaks from register-resident chains of {CHAIN_LENGTH} operations."
        )
        return suite
