"""The native CPU backend: C micro-benchmarks (gcc, OpenMP) on every core, then one core, vector and scalar."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from perfcast.bench.accelerator import (
    ATOMIC_ROUNDS,
    DIVISION_ARGUMENTS,
    DIVISION_CHAINS,
    ELEMENTARY_CALLS,
    ELEMENTARY_KERNELS,
    SCALAR_INSTRUCTIONS,
    SCALAR_ROUNDS,
    ProgressSteps,
    SetWalk,
    chain_defines,
    measure_set_walks,
    random_working_set_doublings,
    random_working_sets,
    set_walk_lines,
)
from perfcast.bench.suite import (
    COMPUTE_ROUNDS,
    MixPoint,
    Progress,
    Rounds,
    Sample,
    SuiteResult,
    SweepPoint,
    cache_plateaus,
    calibrated_rate,
    moved_bytes,
    rounds_at,
)
from perfcast.devices.schema import Device
from perfcast.kernels.native import DEFAULT_FLAGS, NativeLibrary, VectorIsa, build_library, native_flags, vector_isa

__all__ = [
    "CHAIN_LENGTH", "NativeCpuBackend", "aligned_full", "atomic_rate", "bench_build", "bench_library", "compute_rate",
    "division_rate", "elementary_rate", "on_page", "placed_arrays", "register_blocks", "scalar_flags",
    "scalar_issue_rate", "streaming_arrays", "triad_rate",
]

SOURCE = Path(__file__).parent / "kernels" / "bench.c"

_D = ctypes.POINTER(ctypes.c_double)
_F = ctypes.POINTER(ctypes.c_float)
_I64 = ctypes.POINTER(ctypes.c_int64)
_L, _I = ctypes.c_long, ctypes.c_int
CHAIN_LENGTH = 256  # operations on each register-resident value per pass of a compute kernel
PAGE = 4096  # B: arrays start on a page, as likwid-bench's and STREAM's do


def _page_empty(count: int, dtype: np.dtype | type) -> np.ndarray:
    """Return `count` uninitialised elements of `dtype` whose first one starts a 4 KiB page."""
    size = count * np.dtype(dtype).itemsize
    raw = np.empty(size + PAGE, dtype=np.uint8)
    start = -raw.ctypes.data % PAGE
    array: np.ndarray = raw[start:start + size].view(dtype)
    return array


def aligned_full(count: int, value: float, dtype: type = np.float64) -> np.ndarray:
    """Return `count` elements equal to `value`, starting on a 4 KiB page.

    numpy's large arrays start 16 B past a page (the allocator's header), so
    every other 32-byte vector load of a kernel straddles two cache lines:
    that alone held the L1 triad at two thirds of its aligned rate on an AVX2
    core (198 against 286 GB/s on one thread).
    """
    array = _page_empty(count, dtype)
    array.fill(value)
    return array


def on_page(array: np.ndarray) -> np.ndarray:
    """Return a copy of `array` (same shape and type) whose first element starts a 4 KiB page.

    A kernel that reads a row of 16 floats as two 32-byte vectors reads one cache line where the row starts on
    a line, two where numpy's allocation put it 16-48 B past one (and splits each load at 16 or 48 B): that
    alone moved the C suite's tiled SGEMM between 70 and 157 ms from one allocation to the next on a Zen 3
    core. OpenCL buffers start aligned.
    """
    placed = _page_empty(array.size, array.dtype).reshape(array.shape)
    placed[...] = array
    return placed


def streaming_arrays(lib: ctypes.CDLL, n: int, threads: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the triad's arrays (1, 2, 0.5) for up to `n` elements on up to `threads` threads.

    Each is as long as the C kernels' page-spaced thread shares need
    (`spaced_extent` in bench.c, the one place that lays them out).
    """
    extent = lib.spaced_extent(n, threads)
    return aligned_full(extent, 1.0), aligned_full(extent, 2.0), aligned_full(extent, 0.5)


def register_blocks() -> tuple[VectorIsa, VectorIsa]:
    """Return the register blocks of the vector build and of the scalar build (4-byte values, same registers)."""
    isa = vector_isa()
    return isa, VectorIsa("scalar", 4, isa.registers)


def scalar_flags() -> tuple[str, ...]:
    """Return the flags of the scalar build: vectorisation off, a block that fits the scalar registers."""
    return (*DEFAULT_FLAGS, "-fno-tree-vectorize", "-fno-tree-slp-vectorize", *register_blocks()[1].defines())


# The elementary-function kernels have the accelerator suites' names and make their calls a round (bench.c).
_ELEMENTARY = {precision: (name, {"fp32": ctypes.c_float, "fp64": ctypes.c_double}[precision])
               for precision, name in ELEMENTARY_KERNELS.items()}
_ELEMENTARY_ROUNDS = 64  # rounds per pass and thread
_DIVISION_ROUNDS = 256  # rounds per pass and thread of the division kernel: a division takes tens of cycles
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


def elementary_rate(lib: ctypes.CDLL, precision: str, threads: int, repetitions: int, min_seconds: float) -> Sample:
    """Return the C library's exp/log/sin calls per second in `precision` (fp32/fp64) on `threads` threads."""
    function, scalar = _ELEMENTARY[precision]
    kernel = getattr(lib, function)
    sink = (scalar * max(64, threads))()  # one result per thread
    return calibrated_rate(lambda passes: kernel(passes, _ELEMENTARY_ROUNDS, threads, sink),
                           threads * _ELEMENTARY_ROUNDS * ELEMENTARY_CALLS, repetitions, min_seconds)


def division_rate(lib: ctypes.CDLL, threads: int, repetitions: int, min_seconds: float) -> Sample:
    """Return int32 divisions per second by a run-time divisor on `threads` threads (div/s)."""
    sink = (ctypes.c_int * max(64, threads))()  # one result per thread
    divisor, big = DIVISION_ARGUMENTS
    return calibrated_rate(lambda passes: lib.int_division(passes, _DIVISION_ROUNDS, threads, divisor, big, sink),
                           threads * _DIVISION_ROUNDS * DIVISION_CHAINS, repetitions, min_seconds)


def scalar_issue_rate(lib_scalar: ctypes.CDLL, threads: int, repetitions: int, min_seconds: float) -> Sample:
    """Return the instructions per second (inst/s) code left scalar issues on `threads` threads, as Oclgrind counts.

    `lib_scalar` is the scalar build (-fno-tree-vectorize); its scalar_issue kernel runs bench.cl's, whose round
    Oclgrind counts as SCALAR_INSTRUCTIONS instructions.
    """
    sink = (ctypes.c_uint32 * max(64, threads))()  # one result per thread
    return calibrated_rate(lambda passes: lib_scalar.scalar_issue(passes, SCALAR_ROUNDS, threads, sink),
                           threads * SCALAR_ROUNDS * SCALAR_INSTRUCTIONS, repetitions, min_seconds)


def atomic_rate(lib: ctypes.CDLL, threads: int, repetitions: int, min_seconds: float) -> Sample:
    """Return the atomic increments per second (atomic/s) into each thread's own 256-bin histogram on `threads` threads."""
    sink = (ctypes.c_uint32 * 256)()  # the bins every thread adds its own to
    return calibrated_rate(lambda passes: lib.atomic_increments(passes, ATOMIC_ROUNDS, threads, sink),
                           threads * ATOMIC_ROUNDS, repetitions, min_seconds)


def triad_rate(
    lib: ctypes.CDLL, arrays: tuple[np.ndarray, np.ndarray, np.ndarray], n: int, threads: int, repetitions: int,
    min_seconds: float, write_allocate: bool = False,
) -> Sample:
    """Return the triad bandwidth (B/s) over `n` elements: STREAM's 24 B per element, or with `write_allocate` 32 B.

    STREAM and the peers count the bytes the program reads and writes; with `write_allocate` the bytes that
    move, the stored line's fill included.
    """
    a, b, c = arrays
    if min(a.size, b.size, c.size) < lib.spaced_extent(n, threads):
        raise ValueError(f"triad arrays too short for {n} elements on {threads} threads: use streaming_arrays")
    return calibrated_rate(
        lambda passes: lib.mem_triad(_ptr(a, _D), _ptr(b, _D), _ptr(c, _D), 3.0, n, passes, threads),
        moved_bytes("triad", n, 8, write_allocate), repetitions, min_seconds,
    )


def placed_arrays(
    lib: ctypes.CDLL, n: int, threads: int, probe_elements: int, min_seconds: float, candidates: int = 3,
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], list[float]]:
    """Return the fastest of `candidates` placements of the triad's arrays (for up to `n` elements), and each one's rate (B/s).

    Each placement is a fresh allocation, timed briefly with a triad over
    `probe_elements` (a working set inside L1). Where cache-resident arrays
    lie in virtual memory matters on some cores: on an AVX2 EPYC one
    placement in twelve halved the L1 triad (236 against 411 GB/s), the
    same for every later measurement on those arrays. The chosen placement
    measures the cache; the others measured the placement.
    """
    placements = [streaming_arrays(lib, n, threads) for _ in range(candidates)]  # all alive: distinct addresses
    rates = [triad_rate(lib, arrays, probe_elements, threads, 3, min_seconds).value for arrays in placements]
    return placements[int(np.argmax(rates))], rates


def bench_build(scalar: bool = False) -> NativeLibrary:
    """Return bench.c compiled for this CPU (vectorised, or the scalar build), with every -D it takes from Python."""
    return build_library(SOURCE, (*(scalar_flags() if scalar else native_flags()), *chain_defines()))


def bench_library() -> ctypes.CDLL:
    """Return the vectorised bench.c, compiled and with its C signatures declared (for the peers and references)."""
    return _declare(bench_build())


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
        "int_division": [_L, _L, _I, _I, _I, ctypes.POINTER(ctypes.c_int)],
        "scalar_issue": [_L, _L, _I, ctypes.POINTER(ctypes.c_uint32)],
        "atomic_increments": [_L, _L, _I, ctypes.POINTER(ctypes.c_uint32)],
    }
    for function, scalar, _, _ in _COMPUTE.values():
        signatures[function] = [_L, _I, _I, scalar, scalar, ctypes.POINTER(scalar)]
    for function, scalar in _ELEMENTARY.values():
        signatures[function] = [_L, _L, _I, ctypes.POINTER(scalar)]
    for name, arguments in signatures.items():
        getattr(lib, name).argtypes = arguments
        getattr(lib, name).restype = ctypes.c_double
    lib.spaced_extent.argtypes = [_L, _I]
    lib.spaced_extent.restype = _L
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
        return bench_build(), bench_build(scalar=True)

    def _cache_capacities(self) -> list[tuple[str, float]]:
        """Return (level, aggregate bytes over all cores) for the data caches, smallest first."""
        capacities = []
        for level in self.device.memory:
            if level.level in ("L1", "L2", "L3") and level.size is not None:
                copies = self.device.compute_units if level.scope == "per_core" else 1
                capacities.append((level.level, level.size.value * copies))
        return sorted(capacities, key=lambda item: item[1])

    def _set_walk(self) -> SetWalk | None:
        """Return the walk through one L1 set of this device's caches, None where their ways are unknown."""
        return set_walk_lines([(level.level, level.size.value, level.ways, level.line) for level in self.device.memory
                               if level.level in ("L1", "L2", "L3") and level.size is not None])

    def _cache_reach(self) -> list[tuple[str, float]]:
        """Return (level, bytes one core's loads can find there) for the data caches: a private level's one copy."""
        return [(level.level, level.size.value) for level in self.device.memory
                if level.level in ("L1", "L2", "L3") and level.size is not None]

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
        # A CPU's caches read a line before a store writes part of it: the bandwidths count those reads.
        suite = SuiteResult(backend="cpu", tool=tool, repetitions=reps, write_allocate=True)
        capacities = self._cache_capacities()
        largest = max((c for _, c in capacities), default=32 * 2**20)
        # Far past the last-level cache, so that no level of it holds a measurable share of the data.
        dram_bytes = int(max(8 * largest, 64 * 2**20))  # the same in the quick suite: its figures must agree
        dram_elements = dram_bytes // 8 // 3  # triad: three arrays in the working set
        a, b, c = streaming_arrays(lib, dram_elements, threads)
        sink = np.zeros(max(64, threads), dtype=np.float64)

        def kernel_run(kernel: str, n: int, t: int, library: ctypes.CDLL = lib):
            calls = {
                "read": lambda passes: library.mem_read(_ptr(a, _D), n, passes, t, _ptr(sink, _D)),
                "write": lambda passes: library.mem_write(_ptr(a, _D), n, passes, t),
                "copy": lambda passes: library.mem_copy(_ptr(c, _D), _ptr(a, _D), n, passes, t),
                "triad": lambda passes: library.mem_triad(_ptr(a, _D), _ptr(b, _D), _ptr(c, _D), 3.0, n, passes, t),
            }
            return calls[kernel], moved_bytes(kernel, n, 8, write_allocate=True)

        # 1. Working-set sweep from well inside L1 to past the last-level cache (triad, every core), with a
        # quarter and a half of every cache level among its points, so that the quick and the full sweep take
        # each plateau from the same working sets. Working sets within the caches below the last level run
        # on the best of three placements of their arrays (placed_arrays).
        sizes = np.unique(np.r_[np.geomspace(16 * 2**10, dram_bytes, 12 if quick else 22),
                                [cap * share for _, cap in capacities for share in (0.25, 0.5)]].astype(np.int64))
        private = capacities[-2][1] if len(capacities) > 1 else 0.0
        probe = int(capacities[0][1] if capacities else 32 * 2**10) // 2 // 24  # a triad in half of L1
        small, placement_rates = placed_arrays(lib, max(int(private) // 24 + 1, probe), threads, probe, min_seconds)
        suite.notes.append(
            "Working sets within the caches below the last level: the best of three placements of their arrays "
            f"(L1 triad {', '.join(f'{rate / 1e9:.0f}' for rate in placement_rates)} GB/s)."
        )
        random_sets = random_working_sets(self._cache_reach()) + random_working_set_doublings(self._cache_reach())
        walk = self._set_walk()
        tick = ProgressSteps(progress, len(sizes) + 4 + 3 + (len(_COMPUTE) + len(_ELEMENTARY) + 3 + 2) * COMPUTE_ROUNDS
                             + 10 + len(random_sets) + (len(walk.levels) if walk else 0))

        # The core-bound figures, in rounds at the start, after the DRAM kernels and after the random loads,
        # seconds apart (Rounds: each kept at its best round): peaks per precision and instruction kind from
        # registers, every core; the elementary functions (exp, log, sin of the C library), calls per second;
        # integer divisions by a run-time divisor (§3.2); instructions of code left scalar, as Oclgrind counts
        # them (§3.3's issue floor); atomic increments into a histogram of each core's own (§3.4); and the
        # floors of §2.4, single-threaded vector and multi-threaded scalar fp32 FMA.
        core: dict[str, tuple[Callable[[], Sample], Callable[[Sample], None]]] = {}
        for (precision, kind), (function, scalar_type, dtype, ops) in _COMPUTE.items():
            operands = (1, 3) if dtype == np.uint32 else (0.999, 1e-3)
            core[f"peak {precision} {kind}"] = (
                lambda f=function, t=scalar_type, o=ops, v=operands: compute_rate(
                    lib, f, t, threads, isa.block_bytes, reps, min_seconds, ops=o, operands=v),
                lambda sample, key=(precision, kind): suite.compute.__setitem__(key, sample))
        for precision in _ELEMENTARY:
            core[f"elementary functions {precision}"] = (
                lambda p=precision: elementary_rate(lib, p, threads, reps, min_seconds),
                lambda sample, p=precision: suite.elementary.__setitem__(p, sample))
        core["integer divisions"] = (lambda: division_rate(lib, threads, reps, min_seconds),
                                     lambda sample: setattr(suite, "int_divisions", sample))
        core["scalar instructions"] = (lambda: scalar_issue_rate(lib_scalar, threads, reps, min_seconds),
                                       lambda sample: setattr(suite, "scalar_instructions", sample))
        core["atomic increments"] = (lambda: atomic_rate(lib, threads, reps, min_seconds),
                                     lambda sample: setattr(suite, "atomics", sample))
        for label, library, t, block in (("single thread", lib, 1, isa), ("no SIMD", lib_scalar, threads, scalar_isa)):
            core[f"fp32 FMA, {label}"] = (
                lambda library=library, t=t, block=block: compute_rate(
                    library, "peak_f32_fma", ctypes.c_float, t, block.block_bytes, reps, min_seconds),
                lambda sample, label=label: suite.compute_ceilings.__setitem__(label, sample))
        core_rounds = Rounds({label: measure for label, (measure, _) in core.items()}, tick)
        spots = rounds_at(COMPUTE_ROUNDS, ("start", "middle", "end"))
        for _ in range(spots["start"]):
            core_rounds.measure_round()

        for size in sizes:
            tick(f"memory sweep {size / 2**20:.3g} MiB")
            n = max(threads * 64, int(size) // 24)
            arrays = small if size <= private else (a, b, c)
            # Past L1 every stored line is read in first (the write-allocate fill): those bytes move too.
            spills = size > (capacities[0][1] if capacities else 0)
            suite.sweep.append(SweepPoint("triad", 24 * n, triad_rate(lib, arrays, n, threads, reps, min_seconds,
                                                                      write_allocate=spills)))
        suite.levels = cache_plateaus(suite.sweep, capacities)
        # 2. DRAM: the four STREAM kernels far past the caches.
        for kernel in ("read", "write", "copy", "triad"):
            tick(f"DRAM {kernel}")
            run, moved = kernel_run(kernel, dram_elements, threads)
            suite.dram[kernel] = calibrated_rate(run, moved, reps, min_seconds)
        for _ in range(spots["middle"]):
            core_rounds.measure_round()
        # 3. Bandwidth floors: one thread; strided and random (uncoalesced) reads, counting useful bytes.
        tick("DRAM triad, one thread")
        run, moved = kernel_run("triad", dram_elements, 1)
        suite.bandwidth_ceilings["single thread"] = calibrated_rate(run, moved, reps, min_seconds)
        # Over one array of the whole DRAM working set (the intensity sweep's, read as doubles): a triad
        # array is a third of it, small enough that the last-level cache served part of the strided and
        # random reads (the quick suite's strided figure came out 46 % above the full one's).
        x = aligned_full(dram_bytes // 4, 1.0, np.float32)
        reads, read_elements = x.view(np.float64), x.size // 2
        tick("strided reads")
        stride = 8  # one double per 64-byte line
        suite.bandwidth_ceilings["strided"] = calibrated_rate(
            lambda passes: lib.mem_strided(_ptr(reads, _D), read_elements, stride, passes, threads, _ptr(sink, _D)),
            8 * (read_elements // stride), reps, min_seconds,
        )
        tick("random reads")
        gathered = read_elements // 8
        # Drawn with replacement: a permutation of the whole array took 2 of the quick suite's 5 s.
        index = np.random.default_rng(0).integers(0, read_elements, gathered, dtype=np.int64)
        suite.bandwidth_ceilings["uncoalesced"] = calibrated_rate(
            lambda passes: lib.mem_random(_ptr(reads, _D), _ptr(index, _I64), gathered, passes, threads,
                                          _ptr(sink, _D)),
            8 * gathered, reps, min_seconds,
        )
        # The same gathers, every core, over working sets that one cache level holds: loads per second where a
        # gather finds its line in L2 or L3 (DRAM: the figure above, per load).
        dram = suite.bandwidth_ceilings["uncoalesced"]
        suite.random_loads["DRAM"] = replace(dram, value=dram.value / 8)
        for level, working_set in random_sets:
            tick(f"random loads in {level} ({working_set / 2**20:.3g} MiB)")
            if working_set > 8 * read_elements:
                suite.notes.append(f"Random loads in {level} over {working_set / 2**20:.3g} MiB reach past the "
                                   f"suite's {8 * read_elements / 2**20:.3g} MiB array; not measured.")
                continue
            drawn = np.random.default_rng(1).integers(0, max(1, working_set // 8), gathered, dtype=np.int64)
            sample = calibrated_rate(
                lambda passes, drawn=drawn: lib.mem_random(_ptr(reads, _D), _ptr(drawn, _I64), gathered, passes,
                                                           threads, _ptr(sink, _D)),
                gathered, reps, min_seconds,
            )
            suite.random_loads.setdefault(level, sample)  # the level's own figure: its first, smallest set's
            suite.random_loads_by_size.setdefault(level, {})[working_set] = sample
        measure_set_walks(walk, 8 * read_elements, 8, gathered, tick, suite, lambda index: calibrated_rate(
            lambda passes: lib.mem_random(_ptr(reads, _D), _ptr(index, _I64), gathered, passes, threads,
                                          _ptr(sink, _D)),
            gathered, reps, min_seconds,
        ))
        # 4. The core-bound figures' last rounds (they were defined, and their first rounds taken, above).
        core_rounds.finish(spots["end"], {label: keep for label, (_, keep) in core.items()}, suite.notes)
        # 5. Intensity sweep (mixbench): k FMAs per fp32 element between its load and store. Past twice the
        # ridge a point is compute bound wherever its data lives, so its array shrinks to do the work of the
        # point at twice the ridge (as the accelerator suite does): the full-size sweep took 6 of the quick
        # suite's seconds.
        far = 2 * suite.compute[("fp32", "fma")].value / suite.dram["triad"].value  # op/B
        lanes = isa.block_bytes // 4
        for k_mix in (0, 1, 2, 4, 8, 16, 32, 64, 128, 256):
            tick(f"intensity sweep k={k_mix}")
            intensity = 2 * k_mix / 8
            blocks = x.size // lanes
            if intensity > far:
                blocks = max(threads, int(blocks * far / intensity))
            rate = calibrated_rate(
                lambda passes, kk=k_mix, n=blocks * lanes: lib.mix_f32(_ptr(x, _F), n, kk, 0.999, 1e-3, passes,
                                                                       threads),
                8 * blocks * lanes, reps, min_seconds,
            )
            if k_mix:
                suite.mix.append(MixPoint(intensity, Sample(rate.value * intensity, rate.spread, reps)))
        tick.finish()
        suite.notes.append(
            f"Memory kernels on {threads} threads over {dram_bytes / 2**20:.0f} MiB of triad working set; "
            f"cache plateaus from the triad sweep; peaks from register-resident chains of {CHAIN_LENGTH} operations."
        )
        return suite
