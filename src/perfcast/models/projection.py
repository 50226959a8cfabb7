"""Cross-GPU projection with a hierarchical roofline and kernel-specific ceilings (Van Lanker et al.): spec §4.

Pure functions. A kernel profiled on a source GPU (`ProjectedKernel`: FP instruction counts by kind, active
threads per warp instruction, bytes that hit in each memory level, shared-memory bytes and how efficiently they
moved, FLOP, measured time) gets, on each GPU (`GpuMaxima`: measured FMA-only and ADD/MUL-only rates and
per-level bandwidths), its kernel-specific compute ceiling and bandwidth ceilings (`kernel_ceilings`). The
projection (`project`) scales the measured performance on the source by the ratio of the target's roofline to
the source's at each level and reports the interval, its middle and the times. Between two CPUs a caller may
give each device's core-bound time, a further ceiling on every level (perfcast's extension, docs/models.md §4).
Units: instructions, B, FLOP, op/s, B/s, s. A level the kernel never touches, or one the profile has no byte
count for (`hits` lacks it), is left out, named in `left_out`, never divided by.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from perfcast.models.numbers import non_negative, positive

__all__ = ["LEVELS", "GpuMaxima", "KernelCeilings", "Projection", "ProjectedKernel", "issue_factor", "issue_shares",
           "kernel_ceilings", "project", "target_maxima"]

LEVELS = ("L1", "L2", "DRAM")  # the roofline levels of §4; shared memory folds into the L1 ceiling
SHARED_BYTES_PER_CLOCK = 128  # N_max^ShM_pc: 32 banks x 4 B


@dataclass(frozen=True)
class GpuMaxima:
    """A GPU's measured maxima: FMA-only and ADD/MUL-only rates (op/s), and bandwidths (B/s) of L1, L2, DRAM, shared.

    A cache or shared-memory bandwidth may be unknown (None): a kernel whose bytes hit that level cannot be
    projected on the device, and says so; a kernel that never touches it needs none.
    """

    fma: float
    add_mul: float
    l1: float | None
    l2: float | None
    dram: float
    shared: float | None
    # The share of instruction issues FP instructions must fill to reach `fma` (the catalog's fp32_issue_share):
    # 1 where the peak counts lanes every other instruction displaces, 0.5 where half the issues are spare. None:
    # unknown, and the kernel's share of FP instructions does not enter the ceiling.
    fp_issue_share: float | None = None

    def __post_init__(self) -> None:
        for name in ("fma", "add_mul", "l1", "l2", "dram", "shared"):
            if getattr(self, name) is not None or name in ("fma", "add_mul", "dram"):
                positive(name, getattr(self, name))
        if self.fp_issue_share is not None and not 0 < self.fp_issue_share <= 1:
            raise ValueError(f"fp_issue_share must be in (0, 1], got {self.fp_issue_share!r}")

    def bandwidth(self, level: str) -> float:
        """Return the bandwidth (B/s) of L1, L2, DRAM or shared; ValueError when it is unknown."""
        value = {"L1": self.l1, "L2": self.l2, "DRAM": self.dram, "shared": self.shared}[level]
        if value is None:
            raise ValueError(f"the kernel moves bytes through {level}, whose bandwidth the device does not give")
        return value


def target_maxima(source_maxima: GpuMaxima, source_peaks: GpuMaxima, target_peaks: GpuMaxima) -> GpuMaxima:
    """Return a target's maxima estimated from its peaks at the source's efficiency: Max_t = Peak_t Max_s / Peak_s.

    A figure unknown on any of the three stays unknown.
    """
    def scaled(name: str) -> float | None:
        t, m, p = (getattr(g, name) for g in (target_peaks, source_maxima, source_peaks))
        return None if None in (t, m, p) else t * m / p

    figures = {n: scaled(n) for n in ("fma", "add_mul", "l1", "l2", "dram", "shared")}
    # The issue share is the target's design, not an efficiency: it carries over unscaled.
    return GpuMaxima(**figures, fp_issue_share=target_peaks.fp_issue_share)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ProjectedKernel:
    """A kernel as profiled on the source: what the projection reads.

    n_fma, n_add, n_mul: FP instructions by kind; active_threads: mean active threads per warp instruction (of
    warp_size); hits: bytes that hit in L1, L2 and DRAM; shared_bytes and shared_efficiency (achieved shared
    bytes per clock / 128, lowered by bank conflicts); flop: FLOP on the source; time: measured on the source (s);
    fp_issue_share: the FP instructions' share of the warp instructions issued (phi), None where not profiled.
    """

    n_fma: float
    n_add: float
    n_mul: float
    active_threads: float
    hits: dict[str, float]
    shared_bytes: float
    shared_efficiency: float
    flop: float
    time: float
    warp_size: int = 32
    fp_issue_share: float | None = None

    def __post_init__(self) -> None:
        for name in ("n_fma", "n_add", "n_mul", "shared_bytes"):
            non_negative(name, getattr(self, name))
        if self.fp_issue_share is not None and not 0 < self.fp_issue_share <= 1:
            raise ValueError(f"the FP share of issued instructions must be in (0, 1], got {self.fp_issue_share!r}")
        positive("flop", self.flop)
        positive("time", self.time)
        positive("warp_size", self.warp_size)
        if not 0 < self.active_threads <= self.warp_size:
            raise ValueError(f"active threads per warp instruction must be in (0, {self.warp_size}], "
                             f"got {self.active_threads!r}")
        if self.shared_bytes and not 0 < self.shared_efficiency <= 1:
            raise ValueError(f"shared_efficiency must be in (0, 1], got {self.shared_efficiency!r}")
        unknown = set(self.hits) - set(LEVELS)
        if unknown:
            raise ValueError(f"unknown memory level(s) {sorted(unknown)}; the levels are {', '.join(LEVELS)}")
        for level, value in self.hits.items():
            non_negative(f"bytes hitting {level}", value)
        if self.n_fma + self.n_add + self.n_mul == 0:
            raise ValueError("the kernel has no FMA, ADD or MUL instruction (FP, or int32 for an integer kernel): "
                             "the projection scales arithmetic")


@dataclass(frozen=True)
class KernelCeilings:
    """The kernel-specific ceilings of §4 on one GPU, every intermediate kept."""

    perf_mix: float  # op/s
    perf_ceil: float  # op/s
    times: dict[str, float]  # s per level (L1, shared, L2, DRAM), levels with bytes only
    bandwidth_ceilings: dict[str, float]  # B/s per roofline level
    intensities: dict[str, float]  # FLOP / B traversing each roofline level
    rooflines: dict[str, float]  # op/s per roofline level
    left_out: dict[str, str] = field(default_factory=dict)  # roofline level -> why
    issue_factor: float = 1.0  # min(1, phi / the GPU's fp_issue_share): the share of Perf_mix issue allows
    perf_core: float | None = None  # op/s: FLOP / the kernel's core-bound time on this device (CPUs), None: none


def issue_factor(fp_share: float | None, gpu_share: float | None) -> float:
    """Return the share of a GPU's FP peak its instruction issue lets a kernel reach: min(1, phi / s) (1 if unknown)."""
    if fp_share is None or gpu_share is None:
        return 1.0
    return min(1.0, fp_share / gpu_share)


def kernel_ceilings(kernel: ProjectedKernel, gpu: GpuMaxima, flop: float | None = None,
                    core_time: float | None = None) -> KernelCeilings:
    """Return Perf_mix, Perf_ceil, per-level times, bandwidth ceilings, intensities and rooflines (§4) on `gpu`.

    perfcast's extensions of §4: Perf_ceil is also multiplied by min(1, phi / s), phi the kernel's FP share of
    issued instructions and s the GPU's (`issue_factor`); with either unknown the factor is 1, §4 as written.
    `core_time` (s): the kernel's core-bound time on this device (the quantitative model's with unlimited
    bandwidth, `perfcast.models.quantitative.core_time`); Perf_core = FLOP / core_time then caps every level's
    roofline, as Perf_ceil does. None: no such ceiling, §4 as written.
    """
    flop = kernel.flop if flop is None else positive("flop", flop)
    perf_core = None if core_time is None else flop / positive("core-bound time", core_time)
    n_fp = kernel.n_fma + kernel.n_add + kernel.n_mul
    perf_mix = gpu.fma * kernel.n_fma / n_fp + gpu.add_mul * (kernel.n_add + kernel.n_mul) / n_fp
    issue = issue_factor(kernel.fp_issue_share, gpu.fp_issue_share)
    perf_ceil = kernel.active_threads / kernel.warp_size * perf_mix * issue
    n = {level: kernel.hits.get(level, 0.0) for level in LEVELS}
    times = {level: n[level] / gpu.bandwidth(level) for level in LEVELS if n[level] > 0}
    if kernel.shared_bytes > 0:
        times["shared"] = kernel.shared_bytes / (kernel.shared_efficiency * gpu.bandwidth("shared"))
    # Bytes and time at and below each level: L1 takes everything (shared memory included), L2 what reaches it.
    below = {"L1": ("L1", "shared", "L2", "DRAM"), "L2": ("L2", "DRAM"), "DRAM": ("DRAM",)}
    traversing = {"L1": n["L1"] + kernel.shared_bytes + n["L2"] + n["DRAM"], "L2": n["L2"] + n["DRAM"],
                  "DRAM": n["DRAM"]}
    ceilings, intensities, rooflines, left_out = {}, {}, {}, {}
    for level in LEVELS:
        spent = sum(times.get(part, 0.0) for part in below[level])
        if level not in kernel.hits:
            left_out[level] = "the profile has no byte count for this level"
            continue
        if traversing[level] == 0 or spent == 0:
            left_out[level] = "no bytes traverse this level"
            continue
        ceilings[level] = traversing[level] / spent
        intensities[level] = flop / traversing[level]
        rooflines[level] = min(ceilings[level] * intensities[level], perf_ceil,
                               math.inf if perf_core is None else perf_core)
    if not rooflines:
        raise ValueError("the kernel moves no bytes through any level: no roofline to project on")
    return KernelCeilings(perf_mix, perf_ceil, times, ceilings, intensities, rooflines, left_out, issue, perf_core)


def issue_shares(kernel_share: float | None, source_share: float | None,
                 target_share: float | None) -> tuple[float | None, tuple[float | None, ...]]:
    """Return the FP issue share phi a projection takes for its point, and the shares its interval spans.

    Only where both GPUs give their share s: a share known on one side alone would scale one ceiling and not
    the other, so phi is then left out (None), §4 as written. Measured (a profile's phi), it is the one share.
    Unknown, between GPUs that differ in s (one reaches its FP peak only when every issue is FP, the other with
    half to spare), the point takes phi = sqrt(min s · max s) and the interval spans phi = min s and max s:
    where the kernel is compute bound on both GPUs, those ends bound the ratio of their ceilings. A kernel
    memory bound on one GPU and compute bound on the other can lie outside them when its phi is below min s
    (its source ceiling falls further): the interval does not cover that case. Unknown between GPUs of equal
    s, phi is left out: the shares cancel where the kernel is compute bound on both.
    """
    if source_share is None or target_share is None:
        return None, (None,)
    if kernel_share is not None:
        return kernel_share, (kernel_share,)
    if source_share == target_share:
        return None, (None,)
    low, high = sorted((source_share, target_share))
    return math.sqrt(low * high), (low, high)


@dataclass(frozen=True)
class Projection:
    """A kernel projected from a source GPU onto a target: per-level performance (op/s), interval, middle, times (s).

    The interval [lower, upper] spans the levels and, where the kernel's FP issue share is unknown, the shares it
    may have (`issue_shares`); the middle is the middle of the levels' interval at the share taken for the point.
    """

    source: KernelCeilings
    target: KernelCeilings
    measured_performance: float  # op/s on the source
    source_time: float  # s, measured on the source
    flop_target: float
    per_level: dict[str, float]  # op/s on the target per level
    lower: float  # op/s
    upper: float
    middle: float
    time: float  # s, at the middle
    time_range: tuple[float, float]  # s: (at the upper performance, at the lower)
    left_out: dict[str, str]
    fp_issue_share: float | None = None  # phi taken for the point (None: left out)
    fp_issue_measured: bool = False  # phi came with the kernel (a profile), not the middle of its possible range


def project(kernel: ProjectedKernel, source: GpuMaxima, target: GpuMaxima, flop_ratio: float = 1.0,
            on_target_kernel: ProjectedKernel | None = None,
            core_times: tuple[float, float] | None = None) -> Projection:
    """Return the projection (§4) of a kernel measured on `source` onto `target`; `flop_ratio` scales its FLOP there.

    `core_times`: the kernel's core-bound time (s) on the source and on the target, each device's Perf_core
    (`kernel_ceilings`); both or neither, since a ceiling on one side alone would scale one roofline and not the
    other.

    `flop_ratio` is FLOP_t / FLOP_s from the SASS comparison of special functions (1 when they compile alike).
    `on_target_kernel` is the kernel as it runs on the target where that differs from the profile in its active
    threads per warp instruction and warp size (a work-group of 32 fills a 32-wide warp but half a 64-wide
    wavefront); its counts and bytes must be the profile's, as §4 assumes equal traffic. The ceilings take the
    kernel's FP issue share as `issue_shares` says.
    """
    positive("flop_ratio", flop_ratio)
    measured = kernel.flop / kernel.time
    flop_target = kernel.flop * flop_ratio
    if on_target_kernel is not None:
        differ = [name for name in ("n_fma", "n_add", "n_mul", "hits", "shared_bytes", "flop", "fp_issue_share")
                  if getattr(on_target_kernel, name) != getattr(kernel, name)]
        if differ:
            raise ValueError(f"the kernel on the target must keep the profile's {', '.join(differ)}")
    there = on_target_kernel or kernel
    point, span = issue_shares(kernel.fp_issue_share, source.fp_issue_share, target.fp_issue_share)

    core_source, core_target = core_times or (None, None)

    def at(share: float | None) -> tuple[KernelCeilings, KernelCeilings, dict[str, float]]:
        on_source = kernel_ceilings(replace(kernel, fp_issue_share=share), source, core_time=core_source)
        on_target = kernel_ceilings(replace(there, fp_issue_share=share), target, flop_target, core_target)
        per_level = {level: measured / on_source.rooflines[level] * on_target.rooflines[level]
                     for level in LEVELS if level in on_source.rooflines and level in on_target.rooflines}
        return on_source, on_target, per_level

    on_source, on_target, per_level = at(point)
    left_out = {**on_source.left_out, **on_target.left_out}
    lower, upper = min(per_level.values()), max(per_level.values())
    middle = (lower + upper) / 2
    spanned = [value for share in span if share != point for value in at(share)[2].values()]
    low, high = min([lower, *spanned]), max([upper, *spanned])
    return Projection(on_source, on_target, measured, kernel.time, flop_target, per_level, low, high, middle,
                      flop_target / middle, (flop_target / high, flop_target / low), left_out, point,
                      kernel.fp_issue_share is not None)
