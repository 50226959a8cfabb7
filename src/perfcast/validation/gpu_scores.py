"""Every model scored on the GPU corpus: roofline bounds, boat hull ranges, cross-GPU projection, portability.

Inputs are the corpus (measured times per configuration and GPU), each kernel's work (`kernel_work`) and
the catalog's figures of each GPU; outputs are frozen dataclasses a report prints. Scoring follows spec §6:
a bound is violated when it is beaten by more than the measurement's spread, a range contains a time within
the spread, a point prediction has its absolute percentage error (APE).

A configuration that beats its compulsory-DRAM bound (every input read once, every output written once, at
the GPU's peak bandwidth) by more than `IMPLAUSIBLE` cannot have run the kernel the corpus says: its record is
counted as broken (apart from the violations), listed, and kept out of every other score; where most of a
space is broken, all of it is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from perfcast.devices.hull_view import conversion_ops, hull_inputs
from perfcast.devices.projection_view import projection_capabilities
from perfcast.devices.schema import Device, InstructionKind, Precision
from perfcast.models.boathull import GpuFigures, predict_gpu, with_conversions
from perfcast.models.projection import GpuMaxima, ProjectedKernel, issue_shares, project
from perfcast.tune.replay import StrategyReplay
from perfcast.validation.corpus import CorpusError, CorpusKernel
from perfcast.validation.kernel_work import KernelWork

__all__ = [
    "CorpusScores", "ScoredGpu", "HullScore", "IMPLAUSIBLE", "METHODS", "PairScore", "PortabilityScore",
    "REPLAY_COVERAGE", "ReplayScore", "RooflineScore", "gpu_figures", "hull_score", "pair_score", "replay_gap",
    "portability_score", "project_configuration", "replay_scores", "roofline_score", "score_corpus", "spearman"
]

REPLAY_COVERAGE = 0.5  # a GPU column with less of the space measured is not replayed: a tuner would walk holes
IMPLAUSIBLE = 2.0  # a time below the compulsory-DRAM bound / this is a broken record, not a fast kernel


@dataclass(frozen=True)
class ScoredGpu:
    """The figures of one GPU that the four scores read (op/s, B/s), from the catalog."""

    device: Device
    fma: float
    add_mul: float
    bandwidth: dict[str, float]  # L1, shared, L2, DRAM where the catalog gives them
    hull: GpuFigures
    maxima: GpuMaxima
    conversion_ops: float | None = None  # ops of P_compute one int/fp32 conversion displaces; None: no rate

    @property
    def vendor(self) -> str:
        """Return the vendor's name as the catalog writes it."""
        return self.device.vendor


def gpu_figures(device: Device, source: Device | None = None) -> ScoredGpu:
    """Return a GPU's fp32 peaks, level bandwidths, boat hull figures and projection maxima (op/s, B/s)."""
    kinds = device.peak.get(Precision.FP32, {})
    fma = device.peak_compute(Precision.FP32)  # NotFound, naming the device, where it has no fp32 peak
    add_mul_figure = kinds.get(InstructionKind.ADD_MUL)
    add_mul = add_mul_figure.value if add_mul_figure else fma / 2
    bandwidth: dict[str, float] = {level.level: level.bandwidth.value for level in device.memory
                                   if level.bandwidth is not None}
    hull = hull_inputs(device, Precision.FP32).figures
    assert isinstance(hull, GpuFigures)
    maxima = projection_capabilities(device, Precision.FP32, source=source).maxima()
    conversion = conversion_ops(device, Precision.FP32)
    return ScoredGpu(device, fma, add_mul, bandwidth, hull, maxima, conversion.ops if conversion else None)


def _measured_column(kernel: CorpusKernel, device: str) -> tuple[NDArray[np.bool_], NDArray[np.float64], NDArray[np.float64]]:
    """Return which rows ran on `device`, their times (s) and spreads (0 where unknown)."""
    column = kernel.column(device)
    ok = kernel.measured(device)
    spread = np.nan_to_num(kernel.spreads[:, column], nan=0.0)
    return ok, kernel.times[:, column], spread


def _compute_ceiling(work: KernelWork, gpu: ScoredGpu) -> NDArray[np.float64]:
    """Return Perf_mix (op/s) per row: FMA-only and ADD/MUL-only rates weighted by the kernel's FP instructions."""
    n_fp = work.n_fma + work.n_add + work.n_mul
    with np.errstate(invalid="ignore", divide="ignore"):
        mix = (gpu.fma * work.n_fma + gpu.add_mul * (work.n_add + work.n_mul)) / n_fp
    return np.where(n_fp > 0, mix, gpu.fma)


@dataclass(frozen=True)
class RooflineScore:
    """The roofline bounds of one kernel on one GPU against every configuration measured there."""

    kernel: str
    device: str
    n: int
    naive_violations: int  # plausible configurations faster than max(FLOP / peak, DRAM / bandwidth) beyond their spread
    hierarchical_violations: int  # ... than the hierarchical bound (compute ceiling and every level)
    implausible: NDArray[np.int64]  # rows beating the DRAM bound by more than IMPLAUSIBLE: broken records
    best_row: int  # the fastest plausible configuration
    best_time: float  # s
    naive_fraction: float  # naive bound / best time
    hierarchical_fraction: float
    binding_level: str  # what binds the hierarchical bound of the best configuration
    worst_violations: list[tuple[int, float, str]] = field(default_factory=list)  # (row, bound / time, level)

    def plausible(self, kernel: CorpusKernel) -> NDArray[np.bool_]:
        """Return which rows ran and are plausible on this GPU."""
        ok = kernel.measured(self.device).copy()
        ok[self.implausible] = False
        return ok


def roofline_score(kernel: CorpusKernel, work: KernelWork, device: str, gpu: ScoredGpu) -> RooflineScore:
    """Return the roofline's violations and the best configuration's fraction of the bound on `device`."""
    ok, times, spread = _measured_column(kernel, device)
    if not ok.any():
        raise CorpusError(f"{kernel.name}: no configuration ran correctly on {device}")
    dram_time = work.dram / gpu.bandwidth["DRAM"]
    naive = np.maximum(work.flop / gpu.fma, dram_time)
    terms = {"compute": work.flop / _compute_ceiling(work, gpu), "DRAM": dram_time}
    if "L2" in gpu.bandwidth:
        terms["L2"] = work.l2 / gpu.bandwidth["L2"]
    if "L1" in gpu.bandwidth:
        # NVIDIA's L1 and shared memory are one array behind one datapath: their bytes add up. AMD's LDS is
        # apart from the vector L1, so each is bounded alone.
        together = gpu.vendor.upper() == "NVIDIA"
        terms["L1"] = (work.l1 + work.shared if together else work.l1) / gpu.bandwidth["L1"]
    if "shared" in gpu.bandwidth:
        terms["shared"] = work.shared / gpu.bandwidth["shared"]
    stack = np.stack(list(terms.values()))
    hierarchical = stack.max(axis=0)
    level = np.asarray(list(terms))[stack.argmax(axis=0)]
    limit = times * (1 + spread)
    implausible = np.where(ok & (times * IMPLAUSIBLE < dram_time))[0]
    if len(implausible) > ok.sum() / 2:
        # Most of the space beats physics: the records are not this kernel's (the rest cannot be trusted either).
        implausible = np.where(ok)[0]
    plausible = ok.copy()
    plausible[implausible] = False
    naive_bad = plausible & (naive > limit)  # broken records are counted apart
    hier_bad = plausible & (hierarchical > limit)
    if not plausible.any():
        best = int(np.argmin(np.where(ok, times, np.inf)))
    else:
        best = int(np.argmin(np.where(plausible, times, np.inf)))
    worst = sorted(((int(r), float(hierarchical[r] / times[r]), str(level[r])) for r in np.where(hier_bad)[0]),
                   key=lambda item: -item[1])[:5]
    return RooflineScore(kernel.name, device, int(ok.sum()), int(naive_bad.sum()), int(hier_bad.sum()), implausible,
                         best, float(times[best]), float(naive[best] / times[best]),
                         float(hierarchical[best] / times[best]), str(level[best]), worst)


@dataclass(frozen=True)
class HullScore:
    """The boat hull's range for one kernel on one GPU against its best measured time."""

    kernel: str
    device: str
    species: str
    lower: float  # s
    upper: float
    measured: float  # s, the best plausible configuration
    spread: float
    contained: bool
    width: float  # upper / lower
    miss: float  # 1 when contained, else how far outside: measured / upper or lower / measured (> 1)
    lower_term: str
    upper_term: str


def hull_score(kernel: CorpusKernel, work: KernelWork, device: str, gpu: ScoredGpu, best_row: int) -> HullScore:
    """Return the boat hull's predicted range (spec §2.3) and whether the best measured time lies in it."""
    hull = work.hull
    f = hull.f
    if hull.conversions:
        if gpu.conversion_ops is None:
            raise CorpusError(f"{kernel.name}: {device} has no conversions figure in the catalog, and the boat hull "
                              f"prices the class's {hull.conversions:g} conversions per application with it")
        f = with_conversions(f, hull.conversions, gpu.conversion_ops)
    prediction = predict_gpu(hull.variables, gpu.hull, [f], element_bytes=hull.element_bytes, assume=hull.assume)
    lower, upper = float(prediction.lower[0]), float(prediction.upper[0])
    column = kernel.column(device)
    measured = float(kernel.times[best_row, column])
    spread = float(np.nan_to_num(kernel.spreads[best_row, column], nan=0.0))
    contained = lower * (1 - spread) <= measured <= upper * (1 + spread)
    miss = 1.0 if contained else (measured / upper if measured > upper else lower / measured)
    return HullScore(kernel.name, device, hull.species, lower, upper, measured, spread, contained, upper / lower, miss,
                     str(prediction.lower_term[0]), str(prediction.upper_term[0]))


def spearman(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Return Spearman's rank correlation of two samples (NaN-free, at least 3 points; else NaN)."""
    if len(a) < 3:
        return math.nan
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


@dataclass(frozen=True)
class PairScore:
    """One kernel projected from a source GPU onto a target: errors of perfcast and of the naive baselines."""

    kernel: str
    source: str
    target: str
    same_vendor: bool
    n: int  # configurations measured (plausibly) on both
    best_row: int  # the target's best configuration
    best_ape: dict[str, float]  # method -> APE of the target's best configuration projected from its source time
    mape: dict[str, float]  # method -> MAPE over every shared configuration
    median_ape: dict[str, float]
    rank_correlation: float  # Spearman of projected against measured target times over the configurations
    projected: NDArray[np.float64]  # s, perfcast's projection of every shared row (NaN elsewhere)
    tuned_ape: dict[str, float] = field(default_factory=dict)  # method -> APE of the source's optimum projected
    # onto the target, against the target's optimum (each GPU tuned on its own)
    left_out: tuple[str, ...] = ()  # how levels without a bandwidth on either GPU were treated
    best_contained: bool = False  # the target's best time lies in its projected interval [min_l, max_l]
    contained: float = math.nan  # fraction of the configurations whose target time lies in their interval
    best_ratio: dict[str, float] = field(default_factory=dict)  # method -> projected / measured, best configuration
    tuned_ratio: dict[str, float] = field(default_factory=dict)  # method -> projected source optimum / target optimum
    issue_shares: tuple[float | None, float | None] = (None, None)  # the source's and the target's fp32 issue share
    # The target's best configuration on the source, over the source's optimum (>= 1): how much of the source
    # time the projection starts from is the source's own inefficiency at that configuration.
    source_penalty: float = math.nan


# "§4 as written": perfcast's projection without the GPUs' issue shares (docs/models.md, §4), beside it.
METHODS = ("perfcast", "§4 as written", "bandwidth ratio", "FLOP ratio", "max ratio")


def pair_score(kernel: CorpusKernel, work: KernelWork, source: str, target: str, on_source: ScoredGpu,
               on_target: ScoredGpu, plausible: Mapping[str, NDArray[np.bool_]],
               rows: Sequence[int] | None = None) -> PairScore:
    """Return the §4 projection of every configuration measured on both GPUs against the target's times.

    `rows` limits the configurations projected (a reduced corpus); the target's best is always among them.
    """
    ts, tt = kernel.times[:, kernel.column(source)], kernel.times[:, kernel.column(target)]
    both = plausible[source] & plausible[target]
    if rows is not None:
        keep = np.zeros_like(both)
        keep[np.asarray(rows, dtype=np.int64)] = True
        best_target = int(np.argmin(np.where(plausible[target], tt, np.inf)))
        keep[best_target] = True
        both &= keep
    index = np.where(both)[0]
    projected = np.full(len(tt), np.nan)
    fastest, slowest = np.full(len(tt), np.nan), np.full(len(tt), np.nan)  # the projected interval (s)
    left_out = _left_out(_known_levels(on_source, on_target))

    def projection_of(r: int) -> tuple[float, tuple[float, float]]:
        return project_configuration(work, r, float(ts[r]), on_source, on_target)

    plain_source, plain_target = without_issue_share(on_source), without_issue_share(on_target)
    # The corpus has no profiles, so phi is unknown: where the two shares leave it out, perfcast is §4 as written.
    shares_differ = issue_shares(None, on_source.maxima.fp_issue_share, on_target.maxima.fp_issue_share)[0] is not None
    for r in index:
        projected[r], (fastest[r], slowest[r]) = projection_of(int(r))
    as_written = np.full(len(tt), np.nan) if shares_differ else projected
    for r in index if shares_differ else ():
        as_written[r] = project_configuration(work, int(r), float(ts[r]), plain_source, plain_target)[0]
    bw = on_source.bandwidth["DRAM"] / on_target.bandwidth["DRAM"]
    fl = on_source.fma / on_target.fma
    predictions = {"perfcast": projected, "§4 as written": as_written, "bandwidth ratio": ts * bw,
                   "FLOP ratio": ts * fl, "max ratio": ts * max(bw, fl)}
    best = int(index[np.argmin(tt[index])]) if len(index) else -1
    best_ape, mape, median, best_ratio = {}, {}, {}, {}
    for method, values in predictions.items():
        ape = np.abs(values[index] - tt[index]) / tt[index]
        mape[method] = float(ape.mean()) if len(ape) else math.nan
        median[method] = float(np.median(ape)) if len(ape) else math.nan
        best_ape[method] = float(abs(values[best] - tt[best]) / tt[best]) if best >= 0 else math.nan
        best_ratio[method] = float(values[best] / tt[best]) if best >= 0 else math.nan
    # Tuned to tuned: the source's optimum (whether or not it runs on the target) projected, against the
    # target's optimum: the question of a user who tunes on both.
    best_source = int(np.argmin(np.where(plausible[source], ts, np.inf)))
    optimum = float(np.min(np.where(plausible[target], tt, np.inf)))
    tuned_time = projected[best_source] if np.isfinite(projected[best_source]) else projection_of(best_source)[0]
    written_time = (tuned_time if not shares_differ else as_written[best_source] if np.isfinite(as_written[best_source])
                    else project_configuration(work, best_source, float(ts[best_source]), plain_source, plain_target)[0])
    tuned_ratio = {"perfcast": float(tuned_time / optimum), "§4 as written": float(written_time / optimum)}
    tuned = {method: abs(ratio - 1) for method, ratio in tuned_ratio.items()}
    tuned.update({m: float(abs(v[best_source] - optimum) / optimum) for m, v in predictions.items()
                  if m not in tuned})
    same = on_source.vendor == on_target.vendor
    spread = np.nan_to_num(kernel.spreads[:, kernel.column(target)], nan=0.0)
    inside = (fastest * (1 - spread) <= tt) & (tt <= slowest * (1 + spread))
    contained = float(inside[index].mean()) if len(index) else math.nan
    penalty = float(ts[best] / np.min(np.where(plausible[source], ts, np.inf))) if best >= 0 else math.nan
    return PairScore(kernel.name, source, target, same, len(index), best, best_ape, mape, median,
                     spearman(projected[index], tt[index]), projected, tuned, left_out,
                     bool(inside[best]) if best >= 0 else False, contained, best_ratio, tuned_ratio,
                     (on_source.maxima.fp_issue_share, on_target.maxima.fp_issue_share), penalty)


def without_issue_share(gpu: ScoredGpu) -> ScoredGpu:
    """Return a GPU's figures (op/s, B/s) with its fp32 issue share left out: the projection as spec §4 writes it."""
    return replace(gpu, maxima=replace(gpu.maxima, fp_issue_share=None))


def _known_levels(on_source: ScoredGpu, on_target: ScoredGpu) -> dict[str, bool]:
    """Return, per cache level, whether both GPUs of a pair give it a bandwidth (else its bytes are charged elsewhere)."""
    return {level: all(_has_bandwidth(g.maxima, level) for g in (on_source, on_target))
            for level in ("L1", "L2", "shared")}


def project_configuration(work: KernelWork, row: int, source_time: float, on_source: ScoredGpu,
                          on_target: ScoredGpu) -> tuple[float, tuple[float, float]]:
    """Return the §4 projected time (s) of configuration `row`, measured at `source_time` s, and its interval (s)."""
    hits, shared = _charged(work.hits(row), float(work.shared[row]), _known_levels(on_source, on_target))
    counts = (float(work.n_fma[row]), float(work.n_add[row]), float(work.n_mul[row]))
    source_warp, target_warp = (g.device.warp_size or 32 for g in (on_source, on_target))
    measured = ProjectedKernel(*counts, work.active_threads(row, source_warp), hits, shared, 1.0,
                               float(work.flop[row]), source_time, source_warp)
    there = ProjectedKernel(*counts, work.active_threads(row, target_warp), hits, shared, 1.0,
                            float(work.flop[row]), source_time, target_warp)
    projection = project(measured, on_source.maxima, on_target.maxima, on_target_kernel=there)
    return projection.time, projection.time_range


def _left_out(known: Mapping[str, bool]) -> tuple[str, ...]:
    """Return how the pair's rooflines treat the levels without a bandwidth on either GPU, in words."""
    notes = []
    for level in ("L2", "shared"):
        if not known[level]:
            notes.append(f"{level} charged to L1" if known["L1"] else f"{level} left out")
    if not known["L1"]:
        notes.append("L1 left out")
    return tuple(notes)


def _charged(hits: Mapping[str, float], shared: float, known: Mapping[str, bool]) -> tuple[dict[str, float], float]:
    """Return the bytes per level (B) and shared bytes the pair's rooflines take.

    A level without a bandwidth on either GPU is charged to L1, which its bytes cross too, at L1's bandwidth
    (optimistic for those bytes); without L1 it is left out with L1, whose roofline the model then does not
    draw (spec §4: a level without a byte count is not divided by). L2's and DRAM's rooflines keep their own
    bytes either way.
    """
    charged = dict(hits)
    if not known["L2"]:
        moved = charged.pop("L2")
        if known["L1"]:
            charged["L1"] += moved
    if not known["shared"]:
        if known["L1"]:
            charged["L1"] += shared
        shared = 0.0
    if not known["L1"]:
        charged.pop("L1")
    return charged, shared


def _has_bandwidth(maxima: GpuMaxima, level: str) -> bool:
    """Return whether the projection's figures give `level` a bandwidth."""
    try:
        maxima.bandwidth(level)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class PortabilityScore:
    """How well the source's tuning serves the target: its best configuration, and the projection's top k."""

    kernel: str
    source: str
    target: str
    best_carried: float  # target optimum / target time of the source's best (0 when it fails there, NaN unmeasured)
    projected_top: dict[int, float]  # k -> target optimum / best target time among the k best projected


def portability_score(kernel: CorpusKernel, source: str, target: str, plausible: Mapping[str, NDArray[np.bool_]],
                      projected: NDArray[np.float64], ks: Sequence[int] = (1, 3, 5)) -> PortabilityScore:
    """Return the fraction of the target's optimum reached by the source's best and by the top-k projected."""
    ts, tt = kernel.times[:, kernel.column(source)], kernel.times[:, kernel.column(target)]
    # A target that measured part of the space (a lent GPU's search) says nothing of the rest: an unmeasured
    # configuration is unknown there, not failed, and the projection ranks only those the target measured.
    measured = kernel.status[:, kernel.column(target)] != "absent"
    optimum = float(np.min(np.where(plausible[target], tt, np.inf)))
    best_source = int(np.argmin(np.where(plausible[source], ts, np.inf)))
    if not measured[best_source]:
        carried = math.nan
    else:
        carried = optimum / float(tt[best_source]) if plausible[target][best_source] else 0.0
    ranked = np.where(measured & np.isfinite(projected), projected, np.inf)
    order = np.argsort(ranked)
    finite = int(np.isfinite(ranked).sum())
    top = {}
    for k in ks:
        chosen = order[:min(k, finite)]
        reached = [optimum / float(tt[r]) for r in chosen if plausible[target][r]]
        top[k] = max(reached, default=0.0)
    return PortabilityScore(kernel.name, source, target, carried, top)


@dataclass(frozen=True)
class CorpusScores:
    """Every score of the corpus: per (kernel, GPU) roofline and hull, per ordered pair projection and portability."""

    roofline: list[RooflineScore]
    hull: list[HullScore]
    pairs: list[PairScore]
    portability: list[PortabilityScore]
    caveats: dict[str, tuple[str, ...]]  # kernel -> the work count's assumptions
    skipped: list[str]  # (kernel, GPU) or pairs left out, with why
    quick: bool
    usable: dict[str, list[str]] = field(default_factory=dict)  # kernel -> GPUs with plausible records
    replays: list[ReplayScore] = field(default_factory=list)

    def broken(self) -> dict[str, dict[str, list[int]]]:
        """Return the broken records' rows, kernel -> GPU -> rows (kept out of every score)."""
        found: dict[str, dict[str, list[int]]] = {}
        for score in self.roofline:
            found.setdefault(score.kernel, {})[score.device] = score.implausible.tolist()
        return found


QUICK_STRIDE = 25  # a reduced corpus projects every 25th configuration (and each GPU's best)


def score_corpus(kernels: Sequence[CorpusKernel], works: Mapping[str, KernelWork], devices: Mapping[str, Device],
                 quick: bool = False, progress: Callable[[str], None] | None = None) -> CorpusScores:
    """Return every score over `kernels` on the catalog `devices` (a reduced sample of configurations with `quick`)."""
    roofline, hull, pairs, portability, skipped = [], [], [], [], []
    usable_spaces: dict[str, list[str]] = {}
    own = {name: gpu_figures(device) for name, device in devices.items()}
    for kernel in kernels:
        work = works[kernel.name]
        present = [d for d in kernel.devices if d in devices]
        skipped += [f"{kernel.name} on {d}: not in the device catalog" for d in kernel.devices if d not in devices]
        plausible: dict[str, NDArray[np.bool_]] = {}
        for device in present:
            if not kernel.measured(device).any():
                skipped.append(f"{kernel.name} on {device}: no configuration ran correctly")
                plausible[device] = kernel.measured(device)
                continue
            score = roofline_score(kernel, work, device, own[device])
            roofline.append(score)
            plausible[device] = score.plausible(kernel)
            if not plausible[device].any():
                skipped.append(f"{kernel.name} on {device}: no plausible configuration "
                               f"({len(score.implausible)} of {score.n} beat the compulsory-DRAM bound "
                               f"by more than {IMPLAUSIBLE:g}x)")
                continue
            hull.append(hull_score(kernel, work, device, own[device], int(score.best_row)))
        usable = [d for d in present if plausible[d].any()]
        usable_spaces[kernel.name] = usable
        rows = range(0, len(kernel.configs), QUICK_STRIDE) if quick else None
        for source in usable:
            for target in usable:
                if source == target:
                    continue
                if progress:
                    progress(f"{kernel.name}: {source} -> {target}")
                on_target = gpu_figures(devices[target], source=devices[source])
                pair = pair_score(kernel, work, source, target, own[source], on_target, plausible, rows)
                pairs.append(pair)
                portability.append(portability_score(kernel, source, target, plausible, pair.projected))
    return CorpusScores(roofline, hull, pairs, portability, {k.name: works[k.name].caveats for k in kernels},
                        skipped, quick, usable_spaces)


@dataclass(frozen=True)
class ReplayScore:
    """perfcast's strategies replayed on one (kernel, GPU) space of the corpus: evaluations to reach the optimum."""

    kernel: str
    device: str
    configurations: int
    within: dict[float, int]  # fraction -> configurations within it of the optimum (how easy the space is)
    replays: list[StrategyReplay]




def replay_gap(kernel: CorpusKernel, device: str) -> str:
    """Return why `device`'s column of `kernel` is not replayed ('' where it is): too little of its space measured."""
    measured = int((kernel.status[:, kernel.column(device)] != "absent").sum())
    if measured >= REPLAY_COVERAGE * len(kernel.configs):
        return ""
    return (f"{kernel.name} on {device}: tuning not replayed, {measured} of its {len(kernel.configs)} configurations "
            "measured (a strategy would ask for the others)")


def replay_scores(kernels: Sequence[CorpusKernel], usable: Mapping[str, Sequence[str]], seeds: int, budget: int,
                  progress: Callable[[str], None] | None = None,
                  broken: Mapping[str, Mapping[str, Sequence[int]]] | None = None) -> list[ReplayScore]:
    """Return the hierarchical method and random search replayed on every usable (kernel, GPU) space.

    The hierarchical method is deterministic: it is replayed once; random search `seeds` times with `budget`.
    `broken` (kernel -> GPU -> rows) names records kept out: they are replayed as failed configurations. A column
    measuring less than REPLAY_COVERAGE of the space is left out (`replay_gap` says why).
    """
    broken = broken or {}
    from perfcast.tune.replay import replay

    found = []
    for kernel in kernels:
        for device in usable.get(kernel.name, ()):
            if replay_gap(kernel, device):
                continue
            if progress:
                progress(f"tuning replay: {kernel.name} on {device}")
            space = kernel.recorded_space(device, broken.get(kernel.name, {}).get(device, ()))
            optimum = space.optimum().time or math.inf
            times = np.array([r.time for r in space.valid()], dtype=np.float64)
            within = {f: int((optimum / times >= f).sum()) for f in (0.90, 0.97, 0.99)}
            group = [p for p in kernel.work_group if p in kernel.parameters] or None
            runs = (replay(space, ["hierarchical"], 1, group=group)
                    + replay(space, ["random"], seeds, group=group, budget=budget))
            found.append(ReplayScore(kernel.name, device, len(space.records), within, runs))
    return found
