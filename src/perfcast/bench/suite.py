"""What a benchmark backend measures, how cache plateaus are read off a size sweep, and the measured profile.

Backends (native CPU, OpenCL, CUDA) fill a SuiteResult; `measured_device`
turns it into a Device with every figure marked measured (tool, date,
repetitions, spread), so a measured profile is read by every model exactly
like a catalog entry.
"""

from __future__ import annotations

import copy
import csv
import datetime as _dt
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from perfcast.bench.timing import median_and_spread
from perfcast.devices.schema import COUNTED_RATES, CountedRate, Device, Figure, InstructionKind, Precision, Provenance
from perfcast.errors import BackendUnavailable
from perfcast.output_files import replaced

__all__ = [
    "BackendUnavailable",
    "BaseDescription",
    "BenchBackend",
    "COMPUTE_ROUNDS",
    "MixPoint",
    "Rounds",
    "Sample",
    "SuiteResult",
    "SweepPoint",
    "best_of_runs",
    "cache_plateaus",
    "calibrated_rate",
    "compute_rounds_note",
    "highest",
    "in_rounds",
    "rounds_at",
    "measured_device",
    "self_checks",
    "write_suite_csv",
]



Progress = Callable[[str, float], None]  # (what is being measured, fraction of the suite done)


@dataclass(frozen=True)
class Sample:
    """A measured rate (B/s or op/s): median over repetitions and spread = (max - min) / median."""

    value: float
    spread: float
    repetitions: int

    def __post_init__(self) -> None:
        if not math.isfinite(self.value) or self.value <= 0:
            raise ValueError(f"a measured rate must be positive and finite, got {self.value!r}")


@dataclass(frozen=True)
class SweepPoint:
    """One point of the memory sweep: kernel (read, write, copy, triad), working set in B, bandwidth."""

    kernel: str
    working_set: int
    bandwidth: Sample


@dataclass(frozen=True)
class MixPoint:
    """One point of the intensity sweep: arithmetic intensity (op/B) and attained performance (op/s)."""

    intensity: float
    performance: Sample


@dataclass
class SuiteResult:
    """Everything a backend measured on one device."""

    backend: str
    tool: str  # how it was measured: backend, compiler and flags or runtime and driver
    repetitions: int
    sweep: list[SweepPoint] = field(default_factory=list)
    dram: dict[str, Sample] = field(default_factory=dict)  # read, write, copy, triad far past the caches
    levels: dict[str, Sample] = field(default_factory=dict)  # L1, L2, L3 / shared plateaus
    level_methods: dict[str, str] = field(default_factory=dict)  # level -> how, where not the triad sweep's plateau
    compute: dict[tuple[str, str], Sample] = field(default_factory=dict)  # (precision, fma|add_mul)
    compute_ceilings: dict[str, Sample] = field(default_factory=dict)  # fp32 FMA rate lacking something
    elementary: dict[str, Sample] = field(default_factory=dict)  # precision -> exp/log/sin calls per second
    random_loads: dict[str, Sample] = field(default_factory=dict)  # L2, L3, DRAM -> random loads per second
    set_walk_loads: dict[str, Sample] = field(default_factory=dict)  # L2, L3 -> the same, lines in one L1 set
    # L2, L3 -> working set (B) -> random loads per second: the level's own set and doublings of it in the level
    random_loads_by_size: dict[str, dict[int, Sample]] = field(default_factory=dict)
    # The same sets with each address computed from the indices rather than read from an index array
    random_loads_computed: dict[str, dict[int, Sample]] = field(default_factory=dict)
    int_divisions: Sample | None = None  # int32 divisions per second, every core or SM
    scalar_instructions: Sample | None = None  # instructions per second of code left scalar, every core (a CPU)
    atomics: Sample | None = None  # atomic increments per second into a local histogram, every core (a CPU)
    first_touches: Sample | None = None  # 4 KiB pages a kernel touches first per second, every core (a CPU)
    launches: Sample | None = None  # empty one-group launches per second, device time (a CPU's runtime)
    work_groups: Sample | None = None  # empty work-groups per second past a launch's first, every core (a CPU)
    local_loads: Sample | None = None  # local accesses per second in independent chains, every core (a CPU)
    barriers: Sample | None = None  # work-item barrier crossings per second, one value live, every core (a CPU)
    barrier_values: Sample | None = None  # values live across a barrier, saved and restored per second (a CPU)
    bandwidth_ceilings: dict[str, Sample] = field(default_factory=dict)  # B/s lacking something
    host_link: Sample | None = None
    launch_latency: Sample | None = None  # s per kernel launch (accelerator backends); value is seconds here
    mix: list[MixPoint] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Stores read their lines first (CPU caches allocate on a write miss): every bandwidth above counts those
    # reads, the bytes that move (STREAM would count 24 B of a triad element that moves 32 B).
    write_allocate: bool = False


STREAM_ARRAYS = {"read": (1, 0), "write": (0, 1), "copy": (1, 1), "triad": (2, 1)}  # arrays read, written


def moved_bytes(kernel: str, elements: int, element_bytes: int, write_allocate: bool) -> float:
    """Return the bytes a STREAM kernel moves over `elements`: reads, writes, and the write-allocate reads."""
    reads, writes = STREAM_ARRAYS[kernel]
    return float(elements * element_bytes * (reads + writes * (2 if write_allocate else 1)))


class BenchBackend(Protocol):
    """A way of running the suite on a device: native CPU code, OpenCL, CUDA."""

    name: str

    def run(self, quick: bool, progress: Progress) -> SuiteResult:
        """Return every measurement of the suite on this backend's device."""
        ...


def calibrated_rate(
    run: Callable[[int], float], work_per_pass: float, repetitions: int, min_seconds: float
) -> Sample:
    """Return the median rate (work/s) of `run(passes)`, which returns seconds, with passes grown to `min_seconds`.

    One untimed call warms caches and clocks; passes grow until a call
    lasts `min_seconds`, then `repetitions` calls are timed. Each calibration
    step keeps the faster of two calls: on a shared machine one call stalled
    by the scheduler would otherwise stop the growth at a pass count whose
    timings measure the stall and the thread start-up, not the kernel (the
    quick suite's L1 once came out at 0.004 GB/s that way).
    """
    passes = 1
    run(1)
    while True:
        seconds = min(run(passes), run(passes))
        if seconds >= min_seconds or passes >= 1 << 30:
            break
        passes *= 2 if seconds <= 0 else max(2, min(64, int(math.ceil(min_seconds / seconds))))
    rates = []
    for _ in range(repetitions):
        seconds = run(passes)
        if seconds <= 0:
            raise RuntimeError("a benchmark returned a non-positive time")
        rates.append(work_per_pass * passes / seconds)
    return Sample(*median_and_spread(rates), repetitions)


COMPUTE_ROUNDS = 3  # rounds of the suite's core-bound figures (peaks, calls, divisions, scalar issue, atomics)


class Rounds:
    """Figures measured one round at a time, at points a suite spreads over its run; each kept at its best round.

    The repetitions of one calibrated_rate follow one another within a tenth of a second, so a burst of other
    work on a shared host (a neighbour's job on the same physical cores) lowers all of them together and the
    median with them: the PoCL scalar-issue rate of a 2-core Zen 3 VM read 1.34e10 instructions/s (spread 1 %)
    inside one run of the suite and 2.65e10 a second later, in the same process. A round taken at the start
    of a suite, one in its middle and one near its end see different spells of the host, and `best` keeps the
    round the host left alone.
    """

    def __init__(self, measurements: Mapping[str, Callable[[], Sample]],
                 before: Callable[[str], None] | None = None) -> None:
        self.measurements = dict(measurements)
        self.before = before  # called with each label before its measurement (progress)
        self.samples: dict[str, list[Sample]] = {label: [] for label in measurements}

    def measure_round(self) -> None:
        """Measure every figure once, in turn."""
        for label, measure in self.measurements.items():
            if self.before is not None:
                self.before(label)
            self.samples[label].append(measure())

    def best(self) -> dict[str, Sample]:
        """Return each figure's highest sample (rate/s) over the rounds measured so far."""
        return {label: highest(samples) for label, samples in self.samples.items()}

    def finish(self, rounds: int, keep: Mapping[str, Callable[[Sample], None]], notes: list[str]) -> None:
        """Take `rounds` more rounds, hand each figure's best (rate/s) to its `keep`, and add the rounds' note."""
        for _ in range(rounds):
            self.measure_round()
        for label, sample in self.best().items():
            keep[label](sample)
        note = compute_rounds_note(self.samples)
        if note:
            notes.append(note)


def in_rounds(measurements: Mapping[str, Callable[[], Sample]], rounds: int,
              before: Callable[[str], None] | None = None) -> dict[str, list[Sample]]:
    """Return each measurement's samples (rate/s) of `rounds` rounds taken one after another (see Rounds)."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    taken = Rounds(measurements, before)
    for _ in range(rounds):
        taken.measure_round()
    return taken.samples


def rounds_at(rounds: int, spots: Sequence[str]) -> dict[str, int]:
    """Return how many of `rounds` rounds a suite takes at each of its `spots` (in the suite's order).

    One round goes to the last spot, the next to the first, then to those in between; any rounds past the spots
    go to the last too, so that the figures always have a round as late as the suite can take one.
    """
    if rounds < 1 or not spots:
        raise ValueError(f"need at least one round and one spot, got {rounds} and {list(spots)}")
    order = [spots[-1], *spots[:-1]]
    count = {spot: 0 for spot in spots}
    for index in range(rounds):
        count[order[index] if index < len(order) else spots[-1]] += 1
    return count


def highest(samples: Sequence[Sample]) -> Sample:
    """Return the sample with the highest rate: a ceiling is the best rate the device was seen to reach."""
    if not samples:
        raise ValueError("no samples to take the highest of")
    return max(samples, key=lambda sample: sample.value)


def compute_rounds_note(samples: Mapping[str, Sequence[Sample]], apart: float = 0.10) -> str | None:
    """Return the note that says how the core-bound figures were kept, naming those whose rounds lie `apart` or more.

    None with one round. The rounds' rates are listed for each figure whose highest is at least (1 + apart)
    times its lowest, so a reader sees how much the host disturbed the run.
    """
    rounds = max((len(values) for values in samples.values()), default=0)
    if rounds < 2:
        return None
    note = (f"Peaks and core-bound rates: each the best of {rounds} rounds spread over the suite (a burst of other "
            "work on a shared host lowers a round, never raises one)")
    moved = []
    for label, values in samples.items():
        rates = [sample.value for sample in values]
        if max(rates) >= (1 + apart) * min(rates):
            moved.append(f"{label} " + ", ".join(f"{rate:.3g}" for rate in rates))
    if moved:
        note += f"; rounds {apart:.0%} or more apart: " + "; ".join(moved) + " (per second)"
    return note + "."


def cache_plateaus(
    points: Sequence[SweepPoint], capacities: Sequence[tuple[str, float]], kernel: str = "triad"
) -> dict[str, Sample]:
    """Return the bandwidth plateau of each cache level: the median over sweep points that fit it comfortably.

    `capacities` lists (level, aggregate bytes) from the smallest level up; a
    point belongs to a level when its working set is above twice the previous
    level's capacity and at most half of this one's.
    """
    chosen = sorted((p for p in points if p.kernel == kernel), key=lambda p: p.working_set)
    plateaus: dict[str, Sample] = {}
    previous = 0.0
    for level, capacity in capacities:
        inside = [p for p in chosen if 2 * previous < p.working_set <= capacity / 2]
        if not inside:
            inside = [p for p in chosen if previous < p.working_set <= capacity]
        if inside:
            values = [p.bandwidth.value for p in inside]
            spread = max(p.bandwidth.spread for p in inside)
            plateaus[level] = Sample(float(np.median(values)), spread, inside[0].bandwidth.repetitions)
        previous = capacity
    return plateaus


def _figure(sample: Sample, tool: str, today: str, counts: Literal["moved", "program"] | None = None
            ) -> dict[str, Any]:
    """Return a measured sample as a device-file figure (`counts`: how a bandwidth counted its bytes)."""
    return Figure.measured(sample.value, tool, today, repetitions=sample.repetitions, spread=sample.spread,
                           counts=counts).fields()


@dataclass(frozen=True)
class BaseDescription:
    """What a measured profile is built on: the device's structure, and its full description where there is one.

    The structure is a device-file mapping that may lack the figures a suite measures (as an OpenCL or CUDA
    query gives); the full description (this CPU detected, a catalog GPU) is what measurements are compared with.
    """

    structure: dict[str, Any]
    known: Device | None = None

    @classmethod
    def of(cls, device: Device) -> BaseDescription:
        """Return the base of a full description."""
        return cls(device.model_dump(mode="json"), device)

    def before(self) -> Device | None:
        """Return the description measurements are compared with: the known one, else the structure if complete."""
        if self.known is not None:
            return self.known
        try:
            return Device.from_mapping(self.structure) if "peak" in self.structure else None
        except ValueError:
            return None


SPREAD_LIMIT = 0.20  # a measurement whose repetitions spread more than this is flagged
# An intensity-sweep point may pass its roof by this much beyond its spread: the roof and the sweep both count
# the bytes that move (the in-place sweep has no write-allocate read, the triad's is counted), so what is
# left is clock and placement noise between two measurements.
ROOF_TOLERANCE = 1.10


def self_checks(suite: SuiteResult, before: Device | None = None) -> list[str]:
    """Return what looks wrong in `suite`, one warning each, for the output and the profile's notes.

    Peaks below half their estimate, intensity-sweep points above their roof, L1 below L2, rates of divisions,
    scalar instructions and atomics higher than the peaks allow, and spreads above SPREAD_LIMIT.
    """
    warnings: list[str] = []
    for (precision, kind), sample in suite.compute.items():
        if before is None:
            break
        estimate = before.peak.get(Precision(precision), {}).get(InstructionKind(kind))
        if estimate is not None and estimate.provenance.source != "measured" and sample.value < estimate.value / 2:
            warnings.append(
                f"peak {precision} {kind}: measured {sample.value / 1e9:.4g} GFLOP/s, below half the "
                f"{estimate.provenance.source} {estimate.value / 1e9:.4g} GFLOP/s (a kernel that spills, "
                "or a busy machine)"
            )
    peak = suite.compute.get(("fp32", "fma"))
    bandwidth = max((s.value for s in suite.dram.values()), default=None)
    if peak is not None and bandwidth is not None:
        for point in suite.mix:
            roof = min(peak.value, bandwidth * point.intensity)
            if point.performance.value > roof * ROOF_TOLERANCE * (1 + point.performance.spread):
                warnings.append(
                    f"intensity sweep at {point.intensity:g} op/B: {point.performance.value / 1e9:.4g} GFLOP/s is "
                    f"above its roof {roof / 1e9:.4g} GFLOP/s (a peak or bandwidth measured too low)"
                )
    if "L1" in suite.levels and "L2" in suite.levels and suite.levels["L1"].value < suite.levels["L2"].value:
        warnings.append(
            f"L1 bandwidth {suite.levels['L1'].value / 1e9:.4g} GB/s is below L2's "
            f"{suite.levels['L2'].value / 1e9:.4g} GB/s (the L1 plateau is not measured well here)"
        )
    warnings += _rate_checks(suite)
    # The empty launches' rounds spread by design, not by noise: a launch finds the runtime's threads awake or
    # asleep (1 or 15-20 µs on PoCL 3.1), so their figures are medians of rounds and their spread is not checked.
    # Nor the barrier regions': each round solves two times for two costs, so a round's noise reaches both.
    unchecked = {rate.label for rate in COUNTED_RATES
                 if rate.name in ("launches", "work_groups", "local_loads", "barriers", "barrier_values")}
    spread = [(name, sample) for name, sample in _named_samples(suite)
              if sample.spread > SPREAD_LIMIT and name not in unchecked]
    if spread:
        listed = ", ".join(f"{name} {sample.spread:.0%}" for name, sample in spread[:8])
        more = f" and {len(spread) - 8} more" if len(spread) > 8 else ""
        warnings.append(f"spread above {SPREAD_LIMIT:.0%} (a noisy machine; rerun when it is quiet): {listed}{more}")
    return warnings


# A divider is never within this factor of the integer multiply-add peak (0.9 G div/s against 79 G op/s on PoCL on
# the Xeon VM; a GPU's division is a sequence of tens of instructions): a rate above it is a kernel whose
# compiler divided by a constant it saw.
DIVIDER_MARGIN = 8


def _rate_checks(suite: SuiteResult) -> list[str]:
    """Return the warnings of rates that cannot be: divisions, scalar instructions, atomics, local accesses (§3.2–§3.9)."""
    warnings = []
    fma, adds = suite.compute.get(("int32", "fma")), suite.compute.get(("int32", "add_mul"))
    if suite.int_divisions is not None and fma is not None and suite.int_divisions.value > fma.value / DIVIDER_MARGIN:
        warnings.append(f"int32 divisions: {suite.int_divisions.value / 1e9:.4g} G div/s, within {DIVIDER_MARGIN}x of "
                        f"the int32 multiply-add peak {fma.value / 1e9:.4g} GOP/s (a divisor the compiler knew?)")
    scalar = suite.scalar_instructions
    if scalar is not None and adds is not None and scalar.value > adds.value:
        warnings.append(f"scalar instructions: {scalar.value / 1e9:.4g} G inst/s, above the int32 add peak "
                        f"{adds.value / 1e9:.4g} GOP/s of every vector lane (a vectorised kernel, or a peak measured "
                        "too low)")
    shared = suite.levels.get("shared")
    if suite.local_loads is not None and shared is not None and suite.local_loads.value < shared.value / 4 / 2:
        warnings.append(f"local accesses in independent chains: {suite.local_loads.value / 1e9:.4g} G/s, below half "
                        f"the one chain's {shared.value / 4e9:.4g} G/s of the local-memory kernel (a busy machine?)")
    if suite.atomics is not None and scalar is not None and suite.atomics.value > scalar.value:
        warnings.append(f"atomic increments: {suite.atomics.value / 1e9:.4g} G/s, above the scalar instructions' "
                        f"{scalar.value / 1e9:.4g} G inst/s (a compiler that dropped the atomics?)")
    return warnings


def _counted_rates(suite: SuiteResult) -> list[tuple[CountedRate, Sample]]:
    """Return each of COUNTED_RATES the suite measured, with its sample (op/s)."""
    return [(rate, sample) for rate in COUNTED_RATES if (sample := getattr(suite, rate.name)) is not None]


def _named_samples(suite: SuiteResult) -> list[tuple[str, Sample]]:
    """Return every summary figure of a suite with a name (the raw sweep points are left out)."""
    named: list[tuple[str, Sample]] = [(f"DRAM {k}", s) for k, s in suite.dram.items()]
    named += [(f"{level}", s) for level, s in suite.levels.items()]
    named += [(f"peak {p} {k}", s) for (p, k), s in suite.compute.items()]
    named += [(f"fp32 FMA {label}", s) for label, s in suite.compute_ceilings.items()]
    named += [(f"{precision} elementary functions", s) for precision, s in suite.elementary.items()]
    named += [(f"bandwidth {label}", s) for label, s in suite.bandwidth_ceilings.items()]
    named += [(f"random loads in {level}", s) for level, s in suite.random_loads.items()]
    named += [(f"set-walk loads in {level}", s) for level, s in suite.set_walk_loads.items()]
    named += [(rate.label, sample) for rate, sample in _counted_rates(suite)]
    if suite.host_link is not None:
        named.append(("host link", suite.host_link))
    return named


def latency_note(suite: SuiteResult) -> str | None:
    """Return the launch latency as a line for a profile's notes, or None when the backend has none."""
    sample = suite.launch_latency
    if sample is None:
        return None
    return (f"Kernel launch latency {sample.value * 1e6:.3g} µs (median of the medians of batches of launches, "
            f"{sample.repetitions} launches one at a time after a warm-up; (max - min) / median of the batches "
            f"{sample.spread:.0%}).")


def _keep_maxima_not_measured_here(data: dict[str, Any], measured_levels: set[str]) -> None:
    """Drop from a profile's mapping the base's maxima this suite measured again, or that its figures rule out.

    The base's maxima were another machine's (the catalog's H100 carries a lent H100's). A compute maximum gives
    way to the peaks measured here, which the projection reads as maxima; a level's bandwidth maximum gives way
    where the suite measured that level, or where it exceeds the level's figure in this profile by over 5 % (a
    slower card than the catalog's). The rest stay: an L1 rate from a published STREAM run beats an estimated
    peak.
    """
    maxima = data.get("maxima")
    if not maxima:
        return
    maxima.pop("compute", None)
    figures = {level["level"]: level.get("bandwidth") for level in data.get("memory", [])}
    kept = {}
    for level, figure in (maxima.get("bandwidth") or {}).items():
        here = figures.get(level)
        if level in measured_levels or here is None:
            continue
        if float(figure["value"]) <= float(here["value"]) * 1.05:
            kept[level] = figure
    maxima["bandwidth"] = kept


def measured_device(
    base: BaseDescription | Device, suite: SuiteResult, *, name: str | None = None, today: str | None = None,
    warnings: Sequence[str] | None = None,
) -> Device:
    """Return `base` (its structure: cores, caches, SIMD width) with every measured figure of `suite` put in.

    `warnings` are the suite's self-checks when the caller has run them already; they go into the notes.
    """
    today = today or _dt.date.today().isoformat()
    if "triad" not in suite.dram:
        raise ValueError("a measured profile needs the DRAM triad bandwidth")
    base = BaseDescription.of(base) if isinstance(base, Device) else base
    data = copy.deepcopy(base.structure)
    base_name, base_source = data["name"], data["provenance"]["source"]
    data["name"] = name or f"{base_name}-{suite.backend}"
    # Every figure keeps its own provenance; the default one now says this is a measured profile.
    data["provenance"] = Provenance.measured(
        f"{suite.tool}; structure (cores, caches) from {base_name} ({base_source})", today
    ).fields()
    data["full_name"] = f"{data['full_name'].removesuffix(' (measured)')} (measured)"
    peak: dict[str, dict[str, dict[str, Any]]] = {}
    for (precision, kind), sample in suite.compute.items():
        peak.setdefault(precision, {})[kind] = _figure(sample, suite.tool, today)
    for precision, kinds in peak.items():
        fma, add = kinds.get("fma"), kinds.get("add_mul")
        # A measured add rate above the FMA rate (integer multiply is slow) is real; keep both honest.
        if precision.startswith("fp") and fma and add and add["value"] > fma["value"]:
            add["value"] = fma["value"]
            add["note"] = "capped at the FMA rate: the add kernel measured higher, within noise"
    data["peak"] = peak
    memory = []
    for level in data.get("memory", []):
        name_ = level["level"]
        if name_ == "DRAM":
            level["bandwidth"] = _figure(suite.dram["triad"], f"{suite.tool}, triad", today, "moved")
        elif name_ in suite.levels:
            method = suite.level_methods.get(name_, "triad plateau")
            level["bandwidth"] = _figure(suite.levels[name_], f"{suite.tool}, {method}", today, "moved")
        memory.append(level)
    for name_, sample in suite.levels.items():
        if not any(level["level"] == name_ for level in memory):
            memory.append({"level": name_, "bandwidth": _figure(sample, suite.tool, today, "moved")})
    data["memory"] = memory
    _keep_maxima_not_measured_here(data, {"DRAM", *suite.levels})
    dram = suite.dram["triad"].value
    data["bandwidth_ceilings"] = {
        label: _figure(sample, suite.tool, today)
        for label, sample in suite.bandwidth_ceilings.items()
        if sample.value < dram
    }
    top = max((s.value for (p, _), s in suite.compute.items() if p == "fp32"), default=math.inf)
    data["compute_ceilings"] = {
        label: _figure(sample, suite.tool, today)
        for label, sample in suite.compute_ceilings.items()
        if sample.value < top
    }
    if suite.elementary:
        data["elementary"] = {precision: _figure(sample, f"{suite.tool}, exp/log/sin calls", today)
                              for precision, sample in suite.elementary.items()}
    if suite.random_loads:
        data["random_loads"] = {level: _figure(sample, f"{suite.tool}, independent loads to random lines", today)
                                for level, sample in suite.random_loads.items()}
    for key, curves, how in (("random_loads_by_size", suite.random_loads_by_size, ""),
                             ("random_loads_computed", suite.random_loads_computed, " at computed addresses")):
        if curves:
            data[key] = {
                level: {size: _figure(sample, f"{suite.tool}, independent loads to random lines of "
                                      f"{size / 2**20:.4g} MiB{how}", today) for size, sample in sorted(sizes.items())}
                for level, sizes in curves.items()}
    if suite.set_walk_loads:
        data["set_walk_loads"] = {
            level: _figure(sample, f"{suite.tool}, independent loads to random lines that share one L1 set", today)
            for level, sample in suite.set_walk_loads.items()}
    for rate, sample in _counted_rates(suite):
        data[rate.name] = _figure(sample, f"{suite.tool}, {rate.method}", today)
    if suite.host_link is not None and data.get("host_link"):
        data["host_link"]["bandwidth"] = _figure(suite.host_link, suite.tool, today)
    elif suite.host_link is not None and data["kind"] == "gpu":
        data["host_link"] = {"name": "host to device copy", "bandwidth": _figure(suite.host_link, suite.tool, today)}
    if warnings is None:
        warnings = self_checks(suite, base.before())
    checks = [f"{SELF_CHECK}{warning}." for warning in warnings]
    notes = [data.get("notes") or "", f"Measured by perfcast bench ({suite.backend}) on {today}.", *suite.notes,
             latency_note(suite) or "", *checks]
    data["notes"] = " ".join(note for note in notes if note).strip()
    return Device.from_mapping(data)


def write_suite_csv(suite: SuiteResult, path: Path) -> Path:
    """Write every raw point of a suite to CSV: what, x (working set B or intensity op/B), value, spread."""
    with replaced(path) as partial, partial.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["measurement", "x", "x_unit", "value", "unit", "spread", "repetitions"])
        for p in suite.sweep:
            writer.writerow([f"sweep {p.kernel}", p.working_set, "B", p.bandwidth.value, "B/s", p.bandwidth.spread,
                             p.bandwidth.repetitions])
        for kernel, sample in suite.dram.items():
            writer.writerow([f"dram {kernel}", "", "", sample.value, "B/s", sample.spread, sample.repetitions])
        for level, sample in suite.levels.items():
            writer.writerow([f"level {level}", "", "", sample.value, "B/s", sample.spread, sample.repetitions])
        for label, sample in suite.bandwidth_ceilings.items():
            writer.writerow([f"bandwidth {label}", "", "", sample.value, "B/s", sample.spread, sample.repetitions])
        for (precision, kind), sample in suite.compute.items():
            writer.writerow([f"peak {precision} {kind}", "", "", sample.value, "op/s", sample.spread, sample.repetitions])
        for label, sample in suite.compute_ceilings.items():
            writer.writerow([f"compute {label}", "", "", sample.value, "op/s", sample.spread, sample.repetitions])
        for precision, sample in suite.elementary.items():
            writer.writerow([f"elementary {precision}", "", "", sample.value, "call/s", sample.spread,
                             sample.repetitions])
        for level, sample in suite.random_loads.items():
            writer.writerow([f"random loads {level}", "", "", sample.value, "load/s", sample.spread,
                             sample.repetitions])
        for level, sample in suite.set_walk_loads.items():
            writer.writerow([f"set-walk loads {level}", "", "", sample.value, "load/s", sample.spread,
                             sample.repetitions])
        for curves, how in ((suite.random_loads_by_size, ""), (suite.random_loads_computed, " at computed addresses")):
            for level, sizes in curves.items():
                for size, sample in sorted(sizes.items()):
                    writer.writerow([f"random loads {level}{how}", size, "B", sample.value, "load/s", sample.spread,
                                     sample.repetitions])
        for rate, s in _counted_rates(suite):
            writer.writerow([rate.label, "", "", s.value, rate.unit, s.spread, s.repetitions])
        if suite.host_link is not None:
            s = suite.host_link
            writer.writerow(["host link", "", "", s.value, "B/s", s.spread, s.repetitions])
        if suite.launch_latency is not None:
            s = suite.launch_latency
            writer.writerow(["kernel launch latency", "", "", s.value, "s", s.spread, s.repetitions])
        for mix in suite.mix:
            writer.writerow(["intensity sweep", mix.intensity, "op/B", mix.performance.value, "op/s",
                             mix.performance.spread, mix.performance.repetitions])
    return path


# Keys that name what a list entry is (a memory level, a link): entries of two profiles are merged when they
# name the same thing, wherever they stand in the list.
_IDENTITY_KEYS = ("level", "name")


def _is_measured_figure(node: Any) -> bool:
    return (isinstance(node, dict) and isinstance(node.get("value"), (int, float))
            and isinstance(node.get("provenance"), dict) and node["provenance"].get("source") == "measured")


def _best_node(nodes: list[Any]) -> Any:
    """Return the first node with every measured figure in it replaced by the highest of the nodes' (see best_of_runs).

    A run that lacks a figure (None: a profile written before the bench measured it) leaves the choice to those
    that have it.
    """
    nodes = [n for n in nodes if n is not None] or nodes
    first = nodes[0]
    if all(_is_measured_figure(n) for n in nodes):
        if all(n["value"] == first["value"] for n in nodes):
            return first  # the same in every run (a cache size from /proc): nothing to choose or say
        best = max(nodes, key=lambda n: n["value"])
        others = sorted(n["value"] / best["value"] for n in nodes if n is not best)
        kept = (f"best of {len(nodes)} runs of perfcast bench; the other{'s' if len(others) > 1 else ''} gave "
                + ", ".join(f"{ratio:.2f}" for ratio in others) + " of it")
        note = best["provenance"].get("note")
        return {**best, "provenance": {**best["provenance"], "note": f"{note}; {kept}" if note else kept}}
    if isinstance(first, dict) and all(isinstance(n, dict) for n in nodes):
        if any(n.get(key) != first.get(key) for key in _IDENTITY_KEYS for n in nodes):
            return first
        return {key: _best_node([n[key] for n in nodes]) if all(key in n for n in nodes) else value
                for key, value in first.items()}
    if isinstance(first, list) and all(isinstance(n, list) for n in nodes):
        key = next((k for k in _IDENTITY_KEYS if first and all(isinstance(e, dict) and k in e for e in first)), None)
        if key is not None:  # entries that name what they are: matched by name, wherever they stand
            return [_best_node([entry, *(e for other in nodes[1:] for e in other
                                          if isinstance(e, dict) and e.get(key) == entry[key])]) for entry in first]
        if all(len(n) == len(first) for n in nodes):
            return [_best_node(list(entries)) for entries in zip(*nodes)]
    return first


def best_of_runs(runs: Sequence[Device]) -> Device:
    """Return the first of several measured profiles of one device with each measured figure the highest of the runs.

    Every measured figure of a profile is a rate (op/s, B/s, calls/s, Hz) or a size, and a ceiling is the best
    rate the device was seen to reach: on a shared host one run of the suite can fall in a slow spell (a 2-core
    VM's DRAM triad read 50 GB/s in one run and 27 GB/s in the next, minutes apart). Each kept figure's note
    says how the other runs compared. Figures that are not measured or the same in every run, and list entries
    naming different things, stay the first run's, and so do the notes, but for the self-checks: those of every
    run are listed under the run that raised them, since a warning about one run's figure may not hold for the
    figure kept.
    """
    if not runs:
        raise ValueError("no measured profiles to take the best of")
    if len({run.name for run in runs}) > 1:
        raise ValueError("the runs are of different devices: " + ", ".join(sorted({run.name for run in runs})))
    if len(runs) == 1:
        return runs[0]
    merged = _best_node([run.model_dump() for run in runs])
    notes = [_without_self_checks(runs[0].notes or "")[0],
             f"Each measured figure is the best of {len(runs)} runs of perfcast bench (the campaign measures the "
             "device before and after timing its kernels)."]
    for number, run in enumerate(runs, 1):
        notes += [f"Run {number} of {len(runs)} warned: {check}." for check in _without_self_checks(run.notes or "")[1]]
    merged["notes"] = "\n".join(note for note in notes if note)
    return Device.model_validate(merged)


SELF_CHECK = "Self-check: "  # how measured_device writes each warning into the notes, after everything else
RUN_WARNED = re.compile(r"^Run (\d+) of \d+ warned: (.*)$", re.MULTILINE)


def profile_warnings(device: Device) -> list[str]:
    """Return the self-check warnings a measured profile's notes hold ("run N: ..." where runs were merged)."""
    notes = device.notes or ""
    merged = [f"run {m[1]}: {m[2].removesuffix('.')}" for m in RUN_WARNED.finditer(notes)]
    if merged:
        return merged
    checks = _without_self_checks(notes)[1]
    # Profiles merged before the warnings were listed per run kept the first run's.
    return [f"run 1: {check}" for check in checks] if "is the best of" in notes else checks


def _without_self_checks(notes: str) -> tuple[str, list[str]]:
    """Return a measured profile's notes up to its self-check warnings, and the warnings (without their final dot)."""
    at = notes.find(SELF_CHECK)
    if at < 0:
        return notes, []
    end = notes.find("\n", at)  # the warnings close their run's line; a later line is another note
    end = len(notes) if end < 0 else end
    checks = [part.strip().removesuffix(".") for part in notes[at:end].split(SELF_CHECK) if part.strip()]
    return notes[:at].rstrip() + notes[end:], checks
