"""The suite as run through a kernel runtime (OpenCL, CUDA): one procedure, the runtimes behind a small interface.

bench.cl and bench.cu define the same kernels with the same arguments, so
only launching, timing and buffers differ between the two backends.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, NamedTuple, Protocol

import numpy as np

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
    highest,
    in_rounds,
    moved_bytes,
    rounds_at,
)
from perfcast.bench.timing import median_and_spread
from perfcast.devices.schema import GUARDED_ACCESSES, GUARDED_COPY, SCALAR_ACCESSES
from perfcast.errors import BackendUnavailable

__all__ = ["FIRST_TOUCH_BYTES", "KernelRuntime", "PeakShape", "ProgressSteps", "SetWalk", "SuiteShape",
           "RegionRates", "choose_peak_shapes", "first_touch_rate", "launch_and_group_rates", "local_region_rates",
           "measure_set_walks", "minor_faults",
           "random_working_set_doublings", "random_working_sets", "run_accelerator_suite", "set_walk_index",
           "set_walk_lines"]

PER_ITEM = 16  # elements per work-item in the reading kernels: bench.cl and bench.cu get it as -DPER_ITEM
# Bytes of one host-to-device copy. A copy's fixed costs must vanish beside its bytes: PoCL 3.1 on a 2-core Zen 4
# VM copied 85 MiB at 11.8 GB/s and 256 MiB at 13.9 GB/s (median of 5, alternating; clpeak 13.9 in the same run,
# which copies 256 MiB on a CPU device). Smaller where the device cannot allocate it (`host_link_bytes`).
UPLOAD_BYTES = 256 * 2**20
Timed = Callable[[int], float]
Setter = Callable[[Sample], None]  # stores a measured figure in the suite's result


class KernelRuntime(Protocol):
    """What the suite needs of a runtime: buffers, and a kernel launched `passes` times returning seconds."""

    group: int  # work-group / thread-block size, a power of two
    kernels: dict[str, Any]  # kernel name -> the compiled kernel `timed` launches (the peak shapes chosen replace theirs)

    def buffer(self, host: np.ndarray) -> Any:
        """Return a device buffer holding a copy of `host`."""
        ...

    def fresh_buffer(self, nbytes: int) -> Any:
        """Return a device buffer of `nbytes` created without data (nothing written to it yet)."""
        ...

    def timed(self, name: str, items: int, *args: Any) -> Timed:
        """Return run(passes) -> seconds for kernel `name` over `items` work-items."""
        ...

    def timed_local(self, items: int, k: int, sink: Any) -> Timed:
        """Return run(passes) -> seconds for the local/shared-memory kernel."""
        ...

    def timed_upload(self, target: Any, host: np.ndarray) -> Timed:
        """Return run(passes) -> seconds for host-to-device copies of `host` into `target`."""
        ...

    def launch_latencies(self, sink: Any, launches: int) -> list[float]:
        """Return the latency (s) of each of `launches` launches of the empty kernel, one at a time."""
        ...

    def launch_durations(self, sink: Any, groups: int, launches: int) -> list[float]:
        """Return the device time (s) of each of `launches` launches of the empty kernel over `groups` groups."""
        ...


@dataclass(frozen=True)
class SuiteShape:
    """Sizes of one run of the suite: bytes past the caches, sweep points, work per compute launch."""

    dram_bytes: int
    smallest_sweep: int
    sweep_points: int
    compute_items: int
    lanes_per_item: int  # independent values per work-item in the compute kernels
    chain: int  # operations per lane per launch
    stride: int  # floats between useful words in the strided kernel
    mix_steps: Sequence[int]
    cache_levels: Sequence[tuple[str, float]]  # (level, bytes) for the plateaus of the sweep
    has_fp64: bool
    read_widths: tuple[int, ...] = ()  # vector widths of mem_read_vN kernels to try beside mem_read (OpenCL)
    item_read_widths: tuple[int, ...] = ()  # and of mem_read_cN, consecutive vectors per work-item (OpenCL)
    stream_widths: tuple[int, ...] = ()  # widths of mem_write_vN, mem_copy_vN, mem_triad_vN beside the scalar ones
    peak_lanes: Mapping[str, int] = field(default_factory=dict)  # peak kernel -> its lanes, where not lanes_per_item
    upload_bytes: int = UPLOAD_BYTES  # one host-to-device copy
    l2_read_items: int = 0  # threads of the L2 read sweep (a full GPU); 0: the runtime has no mem_read_l2 kernel
    random_levels: Sequence[tuple[str, int]] = ()  # (level, working set B) of the random-load kernel per cache level
    random_sizes: Sequence[tuple[str, int]] = ()  # (level, working set B): the same kernel over larger sets in a level
    set_walk: SetWalk | None = None  # lines sharing one L1 set per cache level, for the same kernel (CPU devices)
    cpu_rates: bool = False  # measure what only a CPU device needs: scalar instructions (§3.3), atomics (§3.4)
    compute_rounds: int = COMPUTE_ROUNDS  # rounds of the core-bound figures, each kept at its best (Rounds)


@dataclass(frozen=True)
class SetWalk:
    """Random loads among lines that all fall in one L1 set: the lines' stride (B) and how many, per level past L1."""

    stride: int  # B between the lines: the L1's size over its ways, so every line has the same L1 set index
    levels: tuple[tuple[str, int], ...]  # (level, lines): the level holds them, the one before at most half


def set_walk_lines(caches: Sequence[tuple[str, float, int | None, int | None]]) -> SetWalk | None:
    """Return the lines of a walk through one L1 set that each cache level past L1 serves; None without L1's ways.

    `caches`: (level, bytes one core's loads can find there, ways, line B). Lines `stride` apart share every
    set-index bit below the stride in every level, so a level holds ways x max(1, its set span / stride) of them
    (a walk fills its sets that far, however physical pages are placed). A level's walk takes eight times the
    lines the level before holds (so that level serves an eighth of them at most), at most half its own; a level
    that holds fewer than four times the one before is left out.
    """
    ordered = sorted(caches, key=lambda item: item[1])
    if not ordered:
        return None
    _, l1_size, l1_ways, l1_line = ordered[0]
    if not l1_ways or not l1_line or l1_size % (l1_ways * l1_line):
        return None
    stride = int(l1_size) // l1_ways
    held = [float(l1_ways)]
    levels = []
    for level, size, ways, _ in ordered[1:]:
        span = size / ways if ways else size
        holds = (ways or 1) * max(1.0, span / stride)
        lines = int(min(8 * held[-1], holds / 2))
        if lines >= 2 * held[-1]:
            levels.append((level, lines))
        held.append(holds)
    return SetWalk(stride, tuple(levels)) if levels else None


def set_walk_index(walk: SetWalk, lines: int, count: int, element_bytes: int, seed: int = 2) -> np.ndarray:
    """Return `count` element indices, each of a random one of `lines` lines `walk.stride` B apart (int64)."""
    if walk.stride % element_bytes:
        raise ValueError(f"a set walk's stride of {walk.stride} B is not a whole number of {element_bytes}-byte elements")
    drawn = np.random.default_rng(seed).integers(0, lines, count, dtype=np.int64)
    return drawn * (walk.stride // element_bytes)


def measure_set_walks(walk: SetWalk | None, array_bytes: int, element_bytes: int, count: int,
                      tick: Callable[[str], None], suite: SuiteResult,
                      gathers: Callable[[np.ndarray], Sample]) -> None:
    """Measure each level's loads to lines of one L1 set (load/s) into `suite.set_walk_loads`.

    The same gathers as the random loads, to lines that all share one L1 set (a walk down a matrix column whose
    rows are the L1's set span apart): each line's miss must take a way of that one set, fewer than a core has
    misses. `gathers(index)` times `count` loads of the `array_bytes` array at those element indices (of
    `element_bytes` each). A level whose lines reach past the array is said in the notes, not measured.
    """
    for level, lines in walk.levels if walk is not None else ():
        assert walk is not None  # for the type checker: no levels without a walk
        tick(f"set-walk loads in {level} ({lines} lines {walk.stride} B apart)")
        if lines * walk.stride > array_bytes:
            suite.notes.append(f"Set-walk loads in {level}: {lines} lines {walk.stride} B apart reach past the "
                               f"suite's {array_bytes / 2**20:.3g} MiB array; not measured.")
            continue
        suite.set_walk_loads[level] = gathers(set_walk_index(walk, lines, count, element_bytes))


def random_working_set_doublings(caches: Sequence[tuple[str, float]]) -> list[tuple[str, int]]:
    """Return (level, B) working sets past each level's random working set: doublings of it up to half the level.

    `caches` as `random_working_sets`. A level's random loads slow down within it (its TLB's reach, the share of a
    shared cache others leave): these sets measure how, for the latency floor's rate at a kernel's own set.
    """
    sizes = dict(caches)
    found = []
    for level, working_set in random_working_sets(caches):
        size = 2 * working_set
        while size <= sizes[level] / 2:
            found.append((level, int(size)))
            size *= 2
    return found


def random_working_sets(caches: Sequence[tuple[str, float]]) -> list[tuple[str, int]]:
    """Return (level, B) working sets for random loads that each cache past the first holds and the one before does not.

    `caches`: (level, bytes one core's loads can find there: a private level's one instance, a shared level's
    whole). A level's working set is four times the level before it, at most half its own size; a level less
    than four times the one before it has no such size and is left out.
    """
    ordered = sorted(caches, key=lambda item: item[1])
    found = []
    for (_, inner), (level, size) in zip(ordered, ordered[1:]):
        if 2 * inner <= size / 2:
            found.append((level, int(min(size / 2, 4 * inner))))
    return found


def host_link_bytes(max_allocation: int) -> int:
    """Return the bytes (B) of one host-to-device copy: UPLOAD_BYTES, or less on a device that allocates less.

    Less: the largest power of two <= half of `max_allocation` (B, the device's largest buffer).
    """
    if max_allocation < 8:
        raise ValueError(f"a largest allocation of {max_allocation} B leaves no room for a host-to-device copy")
    return min(UPLOAD_BYTES, 1 << ((max_allocation // 2).bit_length() - 1))


def upload_run(runtime: KernelRuntime, shape: SuiteShape) -> tuple[Timed, float]:
    """Return run(passes) of one host-to-device copy of `shape.upload_bytes` and its bytes (B)."""
    n = shape.upload_bytes // 4
    return runtime.timed_upload(runtime.buffer(np.zeros(n, np.float32)), np.ones(n, np.float32)), 4.0 * n


class ProgressSteps:
    """Reports progress as the fraction of a known number of steps done."""

    def __init__(self, progress: Progress, steps: int) -> None:
        self.progress, self.steps, self.done = progress, max(1, steps), 0

    def __call__(self, label: str) -> None:
        """Report that the step called `label` starts."""
        self.progress(label, min(self.done / self.steps, 0.99))
        self.done += 1

    def finish(self) -> None:
        """Report that every step is done."""
        self.progress("done", 1.0)


# Each fresh buffer of the first-touch rate: past glibc's largest mmap threshold (32 MiB on 64-bit), so that a
# runtime that allocates with malloc gets new pages from the system each time, never pages freed before.
FIRST_TOUCH_BYTES = 64 * 2**20
PAGE_BYTES = 4096


def minor_faults() -> int:
    """Return this process's minor page faults so far (count): a CPU device's runtime runs in the process."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def first_touch_rate(runtime: KernelRuntime, rounds: int, nbytes: int = FIRST_TOUCH_BYTES,
                     faults: Callable[[], int] = minor_faults) -> Sample | None:
    """Return the pages a kernel's stores touch first per second (page/s), or None where they cost nothing.

    Each round creates a buffer without data and launches `touch_pages` (one store a 4 KiB page) on it three
    times: the first launch waits for the operating system to map every page, the faster of the two after it
    stores to pages mapped. The difference is the pages' cost (§3.7); the launches' own cost cancels. A page is
    what the operating system faults on (`faults`, counted around the first launch): a 4 KiB page, or a 2 MiB
    one where transparent huge pages are always on, so that the rate prices the launch log's fault counts in
    the same unit; where fewer are counted than one per 2 MiB (a runtime in another process), the 4 KiB pages
    stored. A runtime that maps a buffer's pages when it creates it (a GPU's) gives no difference: None.
    """
    pages = nbytes // PAGE_BYTES
    rates = []
    for _ in range(rounds):
        buffer = runtime.fresh_buffer(nbytes)
        run = runtime.timed("touch_pages", pages, buffer)
        before = faults()
        first = run(1)
        faulted = faults() - before
        again = min(run(1), run(1))
        if first > again:
            # Fewer faults than one per 2 MiB are the host's own (a runtime in another process): the pages count.
            rates.append((faulted if faulted >= pages // 1024 else pages) / (first - again))
        del buffer, run
    if len(rates) <= rounds // 2:  # most rounds saw no cost: the pages were mapped before the kernel ran
        return None
    return Sample(*median_and_spread(rates), len(rates))


# The empty launches' work-groups: one, then enough that their slope, not the launch, decides the largest's time
# (4,096 groups took 20 us against 1 us for one group on the developers' 2-core Zen 3 VM, PoCL 3.1).
EMPTY_GROUP_COUNTS = (1, 16, 256, 4096)
EMPTY_LAUNCHES = 30  # launches of each count a round; their median is the round's time of that count


def launch_and_group_rates(runtime: KernelRuntime, rounds: int, counts: Sequence[int] = EMPTY_GROUP_COUNTS,
                           launches: int = EMPTY_LAUNCHES) -> tuple[Sample | None, Sample | None]:
    """Return the empty kernel's launches per second (one work-group) and work-groups per second past the first.

    Each round launches the empty kernel one at a time, `launches` times at each of `counts` work-groups (the
    counts in a rotated order, so that no count always runs first), and takes each count's median device time. A
    round's launch rate is 1 / its one-group time, its work-group rate 1 / the least-squares slope of time over
    work-groups (§3.8's figures, docs/models.md). A runtime whose slope is not positive (work-groups cost nothing
    measurable, as a GPU's hardware scheduler) gives no work-group rate; one whose launches take no time gives
    neither (§3.8 reads the work-groups' rate only beside the launches').
    """
    sink = runtime.buffer(np.zeros(runtime.group, np.float32))
    ordered = sorted(set(counts))
    if ordered[0] != 1 or len(ordered) < 2:
        raise ValueError(f"the empty launches need one work-group and at least one larger count, not {counts}")
    launch_rates, group_rates = [], []
    for round_index in range(rounds):
        order = ordered[round_index % len(ordered):] + ordered[:round_index % len(ordered)]
        medians = {groups: float(np.median(runtime.launch_durations(sink, groups, launches))) for groups in order}
        if medians[1] > 0:
            launch_rates.append(1.0 / medians[1])
        slope = float(np.polyfit(np.array(ordered, float), np.array([medians[g] for g in ordered]), 1)[0])
        if slope > 0:
            group_rates.append(1.0 / slope)
    if 2 * len(launch_rates) <= rounds:
        return None, None
    launch = Sample(*median_and_spread(launch_rates), len(launch_rates))
    groups = Sample(*median_and_spread(group_rates), len(group_rates)) if 2 * len(group_rates) > rounds else None
    return launch, groups


# Local loads a work-item makes in one barrier region, and the barriers it crosses in the other kernels' longer
# launches (PoCL 3.1 on the developers' 2-core Zen 3 VM, 2026-11-29: 0.12-0.25 ns a local access, about 0.08 ns a
# crossing and 0.04 ns a further live value, each per work-item over the device; scripts/local_regions.py probe
# has regions of several shapes).
REGION_LOADS = 1024
BARRIER_COUNTS = (1, 256)
REGION_PASSES = 5
CONTEXT_VALUES = 8  # values barrier_context keeps live across each barrier; barrier_regions keeps one


class RegionRates(NamedTuple):
    """§3.9's three figures (each None where not measured): local accesses, crossings and live values per second."""

    local_loads: Sample | None
    barriers: Sample | None
    barrier_values: Sample | None


def local_region_rates(runtime: KernelRuntime, items: int, rounds: int) -> RegionRates:
    """Return the local accesses, barrier crossings and values carried across barriers per second (§3.9).

    Each round times, over `items` work-items, `local_loads` (1 + REGION_LOADS local accesses a work-item in one
    region), and `barrier_regions` (one value live across each barrier) and `barrier_context` (CONTEXT_VALUES of
    them) at each of BARRIER_COUNTS barriers a work-item, the five in an order rotated from round to round. A
    round's crossing costs the slope of barrier_regions' time over its barriers; a live value the difference of
    the two kernels' slopes over the CONTEXT_VALUES - 1 more values; an access, local_loads' time less its one
    crossing over its accesses. Each figure is the median of the rounds that gave it a positive cost (at least a
    thousandth of an access's); None where most did not. The kernels are PoCL's CPU device's (bench.cl, CPU_RATES),
    and their local array holds 1024 words.
    """
    if runtime.group > 1024:
        return RegionRates(None, None, None)
    sink = runtime.buffer(np.zeros(items, np.float32))
    runs: dict[tuple[str, int], Timed] = {
        ("local_loads", 1): runtime.timed("local_loads", items, np.int32(REGION_LOADS), np.int32(runtime.group - 1),
                                          sink)}
    for name in ("barrier_regions", "barrier_context"):
        runs.update({(name, count): runtime.timed(name, items, np.int32(count), sink) for count in BARRIER_COUNTS})
    shapes, (low, high) = list(runs), BARRIER_COUNTS
    rates: tuple[list[float], list[float], list[float]] = ([], [], [])
    for round_index in range(rounds):
        order = shapes[round_index % len(shapes):] + shapes[:round_index % len(shapes)]
        per_item = {shape: runs[shape](REGION_PASSES) / REGION_PASSES / items for shape in order}
        slopes = {name: (per_item[(name, high)] - per_item[(name, low)]) / (high - low)
                  for name in ("barrier_regions", "barrier_context")}
        crossing = slopes["barrier_regions"]
        value = (slopes["barrier_context"] - crossing) / (CONTEXT_VALUES - 1)
        access = (per_item[("local_loads", 1)] - max(crossing, 0.0)) / (1 + REGION_LOADS)
        if access > 0:
            for found, cost in zip(rates, (access, crossing, value), strict=True):
                if cost > 1e-3 * access:  # below a thousandth of an access: rounding, not a cost
                    found.append(1.0 / cost)
    return RegionRates(*(Sample(*median_and_spread(found), len(found)) if 2 * len(found) > rounds else None
                         for found in rates))


def launch_latency(
    runtime: KernelRuntime, launches: int, batches: int = 8, settle: float = 1.0, limit: float = 3.0
) -> Sample | None:
    """Return the launch latency (s) of the empty kernel: the median of `batches` batch medians once it has settled.

    Settled: batches of 50 launches, back to back, until no batch has been
    5 % faster than the best before it for `settle` s (at most `limit` s). On
    the developers' 2-core VM (PoCL 3.1) the latency starts at 21-24 us,
    after heavy kernels or an idle pause alike, and falls to 7-8 us after
    0.3-2 s of launches; clpeak, measuring right after its other tests,
    reports 9-10 us. A few hundred launches (milliseconds) are not enough.
    """
    sink = runtime.buffer(np.zeros(runtime.group, np.float32))
    start = improved = time.perf_counter()
    best = float("inf")
    while True:
        batch = float(np.median(runtime.launch_latencies(sink, 50)))
        now = time.perf_counter()
        if batch < 0.95 * best:
            best, improved = batch, now
        elif now - improved >= settle:
            break
        if now - start >= limit:
            break
    medians = [float(np.median(runtime.launch_latencies(sink, launches))) for _ in range(batches)]
    middle = float(np.median(medians))
    if middle <= 0:
        return None
    return Sample(middle, (max(medians) - min(medians)) / middle, batches * launches)


# The peak kernels of bench.cl / bench.cu: (precision, kind) -> (kernel, element type, ops per lane and step).
PEAK_KERNELS: dict[tuple[str, str], tuple[str, Any, int]] = {
    ("fp32", "fma"): ("peak_f32_fma", np.float32, 2), ("fp32", "add_mul"): ("peak_f32_add", np.float32, 1),
    ("int32", "fma"): ("peak_i32_fma", np.uint32, 2), ("int32", "add_mul"): ("peak_i32_add", np.uint32, 2),
    ("fp64", "fma"): ("peak_f64_fma", np.float64, 2), ("fp64", "add_mul"): ("peak_f64_add", np.float64, 1),
}


# The elementary-function kernels (bench.cl, bench.cu, bench.c): precision -> kernel; each work-item or thread
# makes ELEMENTARY_CALLS calls a round: exp, log and sin on ELEMENTARY_CHAINS independent values, a number every
# source takes from here as -D (`chain_defines`).
ELEMENTARY_KERNELS = {"fp32": "elementary_f32", "fp64": "elementary_f64"}
ELEMENTARY_CHAINS = 4  # enough to overlap a library call's latency on a CPU and a special-function unit's on a GPU
ELEMENTARY_CALLS = 3 * ELEMENTARY_CHAINS
ELEMENTARY_ROUNDS = 16  # rounds per launch: a call takes hundreds of FMAs' time on a CPU, so a launch stays short
# The integer-division kernels (int_division in bench.cl, bench.cu, bench.c): DIVISION_CHAINS independent quotients
# per work-item or thread, DIVISION_ROUNDS rounds a launch, each a division by an argument (docs/models.md, §3.2).
DIVISION_CHAINS = 4  # a divider's latency is a few of its issue intervals: four chains keep one busy
DIVISION_ROUNDS = 64
DIVISION_ARGUMENTS = (3, 1 << 30)  # the divisor and the value added back: quotients stay in (2^30, 2^31)
# The scalar-issue kernel (scalar_issue in bench.cl and bench.c; PoCL's CPU device and the C backend): eight chains
# (one reads another's value) of two integer operations a round, SCALAR_ROUNDS rounds a launch (docs/models.md §3.3).
SCALAR_ROUNDS = 1024
ATOMIC_ROUNDS = 1024  # atomic increments per work-item or thread and launch (atomic_increments; CPU devices, §3.4)
SCALAR_INSTRUCTIONS = 20  # a round's instructions as Oclgrind counts them: 16 operations, the add, compare and two branches


@dataclass(frozen=True)
class PeakShape:
    """A shape of the compute kernels: `chains` independent values per work-item, each a vector of `width` lanes."""

    chains: int
    width: int = 1  # OpenCL vector width; 1 on CUDA, whose threads are scalar

    @property
    def lanes(self) -> int:
        """Return the independent lanes per work-item (count)."""
        return self.chains * self.width

    @property
    def label(self) -> str:
        """Return the short name used in notes, e.g. '8 x 16-wide'."""
        return f"{self.chains} x {self.width}-wide"

    def describe(self) -> str:
        """Return the shape in words, e.g. '8 chains of 16-wide vectors'."""
        return f"{self.chains} chains of {self.width}-wide vectors" if self.width > 1 else f"{self.chains} scalar chains"


def choose_peak_shapes(
    runtime: KernelRuntime,
    shape: SuiteShape,
    candidates: Mapping[str, Sequence[PeakShape]],
    build: Callable[[PeakShape], Mapping[str, Any]],
    context: Mapping[str, str] | None = None,
) -> tuple[SuiteShape, list[str]]:
    """Try each precision's candidate shapes briefly; keep the fastest fma/add kernels in the runtime; return notes.

    `candidates` maps a precision (fp32, int32, fp64) to its shapes; `build`
    returns the compiled kernels of one shape by name, or raises
    BackendUnavailable when the compiler rejects that shape (the others still
    run). `context` adds a remark per precision to its note (e.g. the native
    vector width the shapes came from). The choice is made from measurement
    because the best shape depends on compiler and hardware in ways no device
    query tells (register pressure, latency, issue width).
    """
    lanes: dict[str, int] = {}
    notes = []
    results = runtime.buffer(np.zeros(shape.compute_items, np.float64))

    def trial(candidate: PeakShape, kernels: dict[str, Any], precision: str, fma: str) -> Sample:
        runtime.kernels.update(kernels)
        tried_shape = replace(shape, peak_lanes={**shape.peak_lanes, fma: candidate.lanes})
        return calibrated_rate(*peak_run(runtime, tried_shape, precision, "fma", results), 3, 0.005)

    for precision, shapes in candidates.items():
        fma, add = (PEAK_KERNELS[(precision, kind)][0] for kind in ("fma", "add_mul"))
        built_shapes: dict[PeakShape, dict[str, Any]] = {}
        failed = []
        for candidate in shapes:
            try:
                built = build(candidate)
            except BackendUnavailable:
                failed.append(candidate.label)
                continue
            built_shapes[candidate] = {name: built[name] for name in (fma, add)}
        # The candidates in turn, three rounds back to back, each kept at its best: with one trial each, the
        # first candidate tried read lowest in every run of a 2-core VM (57-60 against 64-100 GOP/s), and a
        # burst of other work during one candidate's trial decided the shape.
        rounds = in_rounds({c.label: partial(trial, c, kernels, precision, fma) for c, kernels in built_shapes.items()},
                           shape.compute_rounds)
        tried = {c: (highest(rounds[c.label]).value, kernels) for c, kernels in built_shapes.items()}
        if not tried:
            raise BackendUnavailable(f"no {precision} compute kernel built (tried {', '.join(failed)})")
        best = max(tried, key=lambda key: tried[key][0])
        runtime.kernels.update(tried[best][1])
        lanes.update({fma: best.lanes, add: best.lanes})
        remark = (context or {}).get(precision)
        notes.append(f"{precision} compute kernels: {best.describe()} (kept {best.label}; tried "
                     + ", ".join(f"{c.label} {rate / 1e9:.3g} GOP/s" for c, (rate, _) in tried.items())
                     + (f"; {remark}" if remark else "")
                     + (f"; {', '.join(failed)} did not build" if failed else "") + ").")
    return replace(shape, peak_lanes=lanes), notes


def chain_defines() -> tuple[str, ...]:
    """Return the -D options that give every bench source its elementary and division kernels' values per thread."""
    return (f"-DELEMENTARY_CHAINS={ELEMENTARY_CHAINS}", f"-DDIVISION_CHAINS={DIVISION_CHAINS}")


LAUNCH_BOUND = 10.0  # a sweep point whose launch lasts under this many launch latencies times launches, not a cache


def launch_free(points: Sequence[SweepPoint], latency: Sample | None, launch_bytes: float | None = None
                ) -> list[SweepPoint]:
    """Return the sweep points whose launches last at least LAUNCH_BOUND launch latencies (s per launch).

    On a GPU a 4 MiB triad runs in under a microsecond in L2, a launch costs several: those points measure the
    launch rate (the H200's L2 came out at 0.42 TB/s that way, docs/validation/gpu-h200). A launch moves its
    point's working set, or `launch_bytes` (B) where it reads its set many times over.
    """
    if latency is None or latency.value <= 0:
        return list(points)
    return [p for p in points
            if (launch_bytes or p.working_set) / p.bandwidth.value >= LAUNCH_BOUND * latency.value]


L2_READ_LAUNCH_BYTES = 2**30  # B one launch of the L2 read sweep reads: about 0.1 ms at 10 TB/s, many launch costs
L2_READ_POINTS = 5  # working sets from 1/32 to 1/2 of the L2, geometrically spaced


def l2_read_sweep(runtime: KernelRuntime, shape: SuiteShape, capacity: float, repetitions: int, min_seconds: float,
                  latency: Sample | None, tick: Callable[[str], None]) -> tuple[list[SweepPoint], Sample | None]:
    """Return the L2 read sweep's points and its plateau (B/s), or None where every point timed the launches.

    `mem_read_l2` reads a working set of 2**k floats many times over in one launch, with loads cached at L2
    only, from `shape.l2_read_items` threads: the bandwidth of the L2 itself, which a triad per launch cannot
    reach on a GPU (its launches last less than launching them costs). Working sets from 1/32 to 1/2 of
    `capacity` (B), each a power of two; the plateau is their median, as for the other levels.
    """
    items = max(runtime.group, shape.l2_read_items // runtime.group * runtime.group)
    per_pass = 4 * items * PER_ITEM
    passes = max(1, -(-L2_READ_LAUNCH_BYTES // per_pass))
    words = sorted({max(1, 2 ** int(np.floor(np.log2(size / 4))))
                    for size in np.geomspace(capacity / 32, capacity / 2, L2_READ_POINTS)})
    data = runtime.buffer(np.ones(words[-1], np.float32))
    sink = runtime.buffer(np.zeros(items, np.float32))
    points = []
    for count in words:
        tick(f"L2 read sweep {4 * count / 2**20:.3g} MiB")
        run = runtime.timed("mem_read_l2", items, data, np.int32(count - 1), np.int32(passes), sink)
        points.append(SweepPoint("read-l2", 4 * count, calibrated_rate(run, per_pass * passes, repetitions,
                                                                        min_seconds)))
    plateaus = cache_plateaus(launch_free(points, latency, per_pass * passes), (("L2", capacity),), kernel="read-l2")
    return points, plateaus.get("L2")


def suite_elements(shape: SuiteShape, group: int) -> int:
    """Return the floats per global-memory array: a third of the DRAM bytes, whole work-groups for every kernel."""
    chunk = group * PER_ITEM * max((*shape.read_widths, *shape.item_read_widths, *shape.stream_widths), default=1)
    return max(chunk, (shape.dram_bytes // 4 // 3) // chunk * chunk)


def peak_run(runtime: KernelRuntime, shape: SuiteShape, precision: str, kind: str, results: Any) -> tuple[Timed, float]:
    """Return run(passes) of the (precision, kind) peak kernel and the work (op) of one pass."""
    name, dtype, ops = PEAK_KERNELS[(precision, kind)]
    x, y = (dtype(1), dtype(3)) if dtype == np.uint32 else (dtype(0.999), dtype(1e-3))
    run = runtime.timed(name, shape.compute_items, np.int32(shape.chain), x, y, results)
    return run, shape.compute_items * shape.peak_lanes.get(name, shape.lanes_per_item) * shape.chain * ops


def read_runs(runtime: KernelRuntime, shape: SuiteShape, n: int, a: Any, sink: Any) -> dict[str, Timed]:
    """Return run(passes) of each global read over `n` floats, by label (mem_read, mem_read_vN, mem_read_cN)."""
    runs = {"1-wide": runtime.timed("mem_read", n // PER_ITEM, a, sink)}
    for width in shape.read_widths:
        runs[f"{width}-wide"] = runtime.timed(f"mem_read_v{width}", n // PER_ITEM // width, a, sink)
    for width in shape.item_read_widths:
        runs[f"{width}-wide consecutive"] = runtime.timed(f"mem_read_c{width}", n // PER_ITEM // width, a, sink)
    return runs


def core_measurements(runtime: KernelRuntime, shape: SuiteShape, suite: SuiteResult, results: Any,
                      measure: Callable[[Timed, float], Sample]) -> dict[str, tuple[Callable[[], Sample], Setter]]:
    """Return the suite's core-bound figures by label: how to measure each (a rate/s) and where its value goes.

    The peaks, the elementary calls, the integer divisions and, on a CPU device, the scalar instructions and
    atomics: figures of the cores alone, measured in rounds (`Rounds`) and kept at their best.
    """
    figures: dict[str, tuple[Callable[[], Sample], Setter]] = {}
    items = shape.compute_items

    def timed(name: str, work: float, *args: Any) -> Callable[[], Sample]:
        return lambda: measure(runtime.timed(name, items, *args, results), work)

    def into(mapping: dict[Any, Sample], key: Any) -> Setter:
        return lambda sample: mapping.__setitem__(key, sample)

    for precision, kind in PEAK_KERNELS:
        if precision == "fp64" and not shape.has_fp64:
            continue
        figures[f"peak {precision} {kind}"] = (
            lambda p=precision, k=kind: measure(*peak_run(runtime, shape, p, k, results)),
            into(suite.compute, (precision, kind)))
    for precision, name in ELEMENTARY_KERNELS.items():
        if precision == "fp64" and not shape.has_fp64:
            continue
        figures[f"elementary functions {precision}"] = (
            timed(name, items * ELEMENTARY_ROUNDS * ELEMENTARY_CALLS, np.int32(ELEMENTARY_ROUNDS)),
            into(suite.elementary, precision))
    figures["integer divisions"] = (
        timed("int_division", items * DIVISION_ROUNDS * DIVISION_CHAINS, np.int32(DIVISION_ROUNDS),
              *(np.int32(v) for v in DIVISION_ARGUMENTS)),
        lambda sample: setattr(suite, "int_divisions", sample))
    if shape.cpu_rates:
        figures["scalar instructions"] = (
            timed("scalar_issue", items * SCALAR_ROUNDS * SCALAR_INSTRUCTIONS, np.int32(SCALAR_ROUNDS)),
            lambda sample: setattr(suite, "scalar_instructions", sample))
        figures["atomic increments"] = (
            timed("atomic_increments", items * ATOMIC_ROUNDS, np.int32(ATOMIC_ROUNDS)),
            lambda sample: setattr(suite, "atomics", sample))
    return figures


def run_accelerator_suite(
    runtime: KernelRuntime, shape: SuiteShape, suite: SuiteResult, progress: Progress, min_seconds: float
) -> None:
    """Fill `suite` with the sweep, global-memory kernels, strided/random reads, host link, peaks, local memory, mix."""
    reps = suite.repetitions
    group = runtime.group
    suite.launch_latency = launch_latency(runtime, 25, batches=8 if reps > 3 else 4, settle=1.0 if reps > 3 else 0.3,
                                          limit=3.0 if reps > 3 else 1.0)
    n = suite_elements(shape, group)
    a, b, c = (runtime.buffer(np.full(n, v, np.float32)) for v in (1.0, 2.0, 0.5))
    sink = runtime.buffer(np.zeros(n, np.float32))
    sizes = np.unique(np.geomspace(shape.smallest_sweep, shape.dram_bytes, shape.sweep_points).astype(np.int64))
    l2 = dict(shape.cache_levels).get("L2") if shape.l2_read_items else None

    def measure(run: Timed, work: float) -> Sample:
        return calibrated_rate(run, work, reps, min_seconds)

    results = runtime.buffer(np.zeros(shape.compute_items, np.float64))
    core = core_measurements(runtime, shape, suite, results, measure)
    # Steps: the sizes, reads and writes, strided and random reads, host copy, each round of the core-bound
    # figures, the guarded triad and copy, first touches, empty launches and local accesses and barriers (a CPU device),
    # local memory, the sweep, the L2 points, the random loads per level and working set, and the set-walk loads
    # per level (each one step, measured or skipped).
    tick = ProgressSteps(progress, len(sizes) + 4 + 3 + len(core) * shape.compute_rounds + 5 * int(shape.cpu_rates) + 1
                         + len(shape.mix_steps) + (L2_READ_POINTS if l2 else 0) + len(shape.random_levels)
                         + len(shape.random_sizes) + (len(shape.set_walk.levels) if shape.set_walk else 0))
    # The core-bound figures' rounds: before the sweep, after the stream kernels and after the host copy, seconds
    # apart, so that no one spell of a shared host's other work covers them all.
    core_rounds = Rounds({label: run for label, (run, _) in core.items()}, tick)
    spots = rounds_at(shape.compute_rounds, ("start", "middle", "end"))
    for _ in range(spots["start"]):
        core_rounds.measure_round()

    # On a CPU device past its first cache, a stored line is read in first: the bytes that move count it.
    first_cache = min((capacity for _, capacity in shape.cache_levels), default=0.0)
    for size in sizes:
        tick(f"memory sweep {size / 2**20:.3g} MiB")
        m = int(min(n, max(group, int(size) // 12 // group * group)))
        moved = moved_bytes("triad", m, 4, suite.write_allocate and size > first_cache)
        suite.sweep.append(SweepPoint("triad", 12 * m, measure(runtime.timed("mem_triad", m, a, b, c, np.float32(3)),
                                                               moved)))
    suite.levels.update(cache_plateaus(launch_free(suite.sweep, suite.launch_latency), shape.cache_levels))
    if l2:
        points, plateau = l2_read_sweep(runtime, shape, l2, reps, min_seconds, suite.launch_latency, tick)
        suite.sweep += points
        if plateau is not None:
            triad = suite.levels.get("L2")
            suite.levels["L2"] = plateau
            suite.level_methods["L2"] = "L2 read plateau (loads cached at L2 only, many passes per launch)"
            if triad is not None:
                suite.notes.append(f"L2: read plateau {plateau.value / 1e12:.3g} TB/s kept; the triad sweep gave "
                                   f"{triad.value / 1e12:.3g} TB/s.")
    unmeasured = [level for level in cache_plateaus(suite.sweep, shape.cache_levels) if level not in suite.levels]
    if unmeasured and suite.launch_latency is not None:
        suite.notes.append(
            f"{', '.join(unmeasured)} bandwidth not measured: every sweep point that fits it lasted under "
            f"{LAUNCH_BOUND:g} launch latencies ({suite.launch_latency.value * 1e6:.3g} µs) per launch, so the sweep "
            "timed launches, not the cache (the profile keeps the structure's figure).")
    wa = suite.write_allocate
    stream = {
        "write": ("mem_write", n, (a, np.float32(1)), moved_bytes("write", n, 4, wa)),
        "copy": ("mem_copy", n, (c, a), moved_bytes("copy", n, 4, wa)),
        "triad": ("mem_triad", n, (a, b, c, np.float32(3)), moved_bytes("triad", n, 4, wa)),
    }
    # Reads, with vector loads per work-item too: each width the runtime offers is tried, the best kept and said.
    def fastest(kind: str, runs: dict[str, Timed], work: float) -> dict[str, Sample]:
        """Measure each width's run, keep the fastest as suite.dram[kind], say every width's rate; return them all."""
        rates = {width: measure(run, work) for width, run in runs.items()}
        best = max(rates, key=lambda width: rates[width].value)
        suite.dram[kind] = rates[best]
        if len(rates) > 1:
            suite.notes.append(f"Global {kind}: " + ", ".join(f"{width} {s.value / 1e9:.3g} GB/s"
                                                            for width, s in rates.items()) + f"; kept {best}.")
        return rates

    tick("global memory read")
    fastest("read", read_runs(runtime, shape, n, a, sink), 4 * n)
    for label, (name, items, args, moved) in stream.items():
        tick(f"global memory {label}")
        widths = {"1-wide": runtime.timed(name, items, *args)}
        widths.update({f"{w}-wide": runtime.timed(f"{name}_v{w}", items // w, *args) for w in shape.stream_widths})
        rates = fastest(label, widths, moved)
        if label == "triad" and suite.dram[label] is not rates["1-wide"]:
            # The profile's DRAM figure is the fastest width's; kernels whose threads access one float at a time
            # meet the scalar rate, a ceiling below it.
            suite.bandwidth_ceilings[SCALAR_ACCESSES] = rates["1-wide"]
    if shape.cpu_rates:
        # The same triad written as kernels are, guarded: where the compiler masks the guarded accesses (AVX2 has
        # no mask registers) the masked loads and stores bound it in the cores, below the DRAM figure.
        tick("global memory triad, guarded")
        guarded = measure(runtime.timed("mem_triad_guarded", n, a, b, c, np.float32(3), np.int32(n)),
                          stream["triad"][3])
        # The guarded copy beside it: two loads an element against one tell a masked load's cost from a store's.
        tick("global memory copy, guarded")
        if guarded.value < suite.dram["triad"].value:  # a ceiling below the roof; else the guard costs nothing here
            suite.bandwidth_ceilings[GUARDED_ACCESSES] = guarded
            copy = measure(runtime.timed("mem_copy_guarded", n, c, a, np.int32(n)), stream["copy"][3])
            if copy.value < suite.dram["triad"].value:  # the profile keeps no ceiling above its roof
                suite.bandwidth_ceilings[GUARDED_COPY] = copy
            else:
                suite.notes.append(f"Global copy, guarded: {copy.value / 1e9:.3g} GB/s, not below the DRAM triad: "
                                   "kept out, so masked loads and stores are priced by B_mem alone (§3.6).")
        else:
            suite.notes.append(f"Global triad, guarded (if (i < n)): {guarded.value / 1e9:.3g} GB/s, not below the "
                               "unguarded one: the guard costs nothing measurable here.")
    for _ in range(spots["middle"]):
        core_rounds.measure_round()
    tick("strided reads")
    strided = max(group, n // shape.stride // PER_ITEM // group * group)
    suite.bandwidth_ceilings["strided"] = measure(
        runtime.timed("mem_strided", strided, a, np.int32(shape.stride), sink), 4 * strided * PER_ITEM
    )
    tick("random reads")
    index = runtime.buffer(np.random.default_rng(0).permutation(n).astype(np.int32))
    suite.bandwidth_ceilings["uncoalesced"] = measure(runtime.timed("mem_random", n // PER_ITEM, a, index, sink), 4 * n)
    if shape.random_levels:
        # The same gathers over working sets that a cache level holds: loads per second where a gather finds its
        # line in L2 or L3 (the DRAM figure is the one above, per load).
        dram = suite.bandwidth_ceilings["uncoalesced"]
        suite.random_loads["DRAM"] = replace(dram, value=dram.value / 4)
        for level, working_set in (*shape.random_levels, *shape.random_sizes):
            tick(f"random loads in {level} ({working_set / 2**20:.3g} MiB), gathered and at computed addresses")
            if working_set > 4 * n:
                suite.notes.append(f"Random loads in {level} over {working_set / 2**20:.3g} MiB reach past the suite's "
                                   f"{4 * n / 2**20:.3g} MiB array; not measured.")
                continue
            drawn = np.random.default_rng(1).integers(0, max(1, working_set // 4), n, dtype=np.int32)
            sample = measure(runtime.timed("mem_random", n // PER_ITEM, a, runtime.buffer(drawn), sink), n)
            suite.random_loads.setdefault(level, sample)  # the level's own figure: its first, smallest set's
            suite.random_loads_by_size.setdefault(level, {})[working_set] = sample
            # The same set at computed addresses: the gather above also waits for each index and streams the
            # index array (n ints) past every cache; on PoCL it ran 3x below these loads even over a set L1 holds.
            computed = measure(runtime.timed("mem_random_computed", n // PER_ITEM, a,
                                             np.uint32(max(1, working_set // 4)), sink), n)
            suite.random_loads_computed.setdefault(level, {})[working_set] = computed
    measure_set_walks(shape.set_walk, 4 * n, 4, n, tick, suite, lambda index: measure(
        runtime.timed("mem_random", n // PER_ITEM, a, runtime.buffer(index.astype(np.int32)), sink), n))
    tick("host to device copy")
    suite.host_link = measure(*upload_run(runtime, shape))
    core_rounds.finish(spots["end"], {label: keep for label, (_, keep) in core.items()}, suite.notes)
    if shape.cpu_rates:
        tick("first-touched pages")
        suite.first_touches = first_touch_rate(runtime, max(3, reps))
        if suite.first_touches is None:
            suite.notes.append("First touches: a fresh buffer's pages cost nothing measurable (mapped at its "
                               "creation?); §3.7 prices none on this device.")
        tick("empty launches and work-groups")
        suite.launches, suite.work_groups = launch_and_group_rates(runtime, max(3, reps))
        if suite.work_groups is None:
            suite.notes.append("Empty work-groups: an empty launch took no longer over 4,096 work-groups than over "
                               "one; §3.8 prices the launch alone on this device.")
        tick("local accesses and barriers")
        # Four times the compute kernels' work-items: a launch then lasts milliseconds on a 2-core CPU device.
        # More rounds than the empty launches': a crossing is a difference of two times (on the 2-core Zen 3 VM a
        # round's access cost fell at 0.15 or 0.28 ns, the guest's two paces).
        suite.local_loads, suite.barriers, suite.barrier_values = local_region_rates(
            runtime, 4 * shape.compute_items, max(15, 3 * reps))
        if suite.barriers is None:
            suite.notes.append("Barrier crossings: 256 barriers a work-item took no longer than one (or the "
                               "work-groups are above 1,024 work-items); §3.9 prices no barrier on this device.")
        elif suite.barrier_values is None:
            suite.notes.append("Values kept across barriers: eight live values cost a crossing no more than one; "
                               "§3.9 prices a kernel's crossings, not their values, on this device.")
    tick("local memory")
    k_local = 1024
    suite.levels["shared"] = measure(runtime.timed_local(shape.compute_items, k_local, results),
                                     shape.compute_items * 2 * k_local * 4)
    # Past the ridge a point is compute bound wherever its data lives (in cache it is only more so): beyond twice
    # the ridge the array shrinks so that a pass does the work of the point at twice the ridge (the sweep took 70
    # of 81 s on PoCL 3.1 on the developers' 2-core AVX2 VM before).
    far = 2 * suite.compute[("fp32", "fma")].value / suite.dram["triad"].value  # op/B
    for k_mix in shape.mix_steps:
        tick(f"intensity sweep k={k_mix}")
        intensity = 2 * k_mix / 8
        items = n if intensity <= far else max(group, int(n * far / intensity) // group * group)
        run = runtime.timed("mix_f32", items, a, np.int32(k_mix), np.float32(0.999), np.float32(1e-3))
        rate = measure(run, 8 * items)
        suite.mix.append(MixPoint(intensity, Sample(rate.value * intensity, rate.spread, reps)))
    tick.finish()
    suite.notes.append(
        f"Work-groups of {group}; global-memory kernels over {12 * n / 2**20:.0f} MiB of float arrays; local memory "
        "as 4-byte loads + stores per second x 4 B."
    )
