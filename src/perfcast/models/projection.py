"""Cross-GPU projection with a hierarchical roofline and kernel-specific ceilings (Van Lanker et al.): spec §4.

Pure functions. A kernel profiled on a source GPU (`ProjectedKernel`: FP instruction counts by kind, active
threads per warp instruction, bytes that hit in each memory level, shared-memory bytes and how efficiently they
moved, FLOP, measured time) gets, on each GPU (`GpuMaxima`: measured FMA-only and ADD/MUL-only rates and
per-level bandwidths), its kernel-specific compute ceiling and bandwidth ceilings (`kernel_ceilings`). The
projection (`project`) scales the measured performance on the source by the ratio of the target's roofline to
the source's at each level and reports the interval, its middle and the times. Units: instructions, B, FLOP,
op/s, B/s, s. A level the kernel never touches, or one the profile has no byte count for (`hits` lacks it), is
left out, named in `left_out`, never divided by.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from perfcast.models.numbers import non_negative, positive

__all__ = ["LEVELS", "GpuMaxima", "KernelCeilings", "Projection", "ProjectedKernel", "kernel_ceilings", "project",
           "target_maxima"]

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

    def __post_init__(self) -> None:
        for name in ("fma", "add_mul", "l1", "l2", "dram", "shared"):
            if getattr(self, name) is not None or name in ("fma", "add_mul", "dram"):
                positive(name, getattr(self, name))

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

    return GpuMaxima(*(scaled(n) for n in ("fma", "add_mul", "l1", "l2", "dram", "shared")))  # type: ignore[arg-type]


@dataclass(frozen=True)
class ProjectedKernel:
    """A kernel as profiled on the source: what the projection reads.

    n_fma, n_add, n_mul: FP instructions by kind; active_threads: mean active threads per warp instruction (of
    warp_size); hits: bytes that hit in L1, L2 and DRAM; shared_bytes and shared_efficiency (achieved shared
    bytes per clock / 128, lowered by bank conflicts); flop: FLOP on the source; time: measured on the source (s).
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

    def __post_init__(self) -> None:
        for name in ("n_fma", "n_add", "n_mul", "shared_bytes"):
            non_negative(name, getattr(self, name))
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
            raise ValueError("the kernel has no FMA, ADD or MUL instruction: the projection needs floating point")


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


def kernel_ceilings(kernel: ProjectedKernel, gpu: GpuMaxima, flop: float | None = None) -> KernelCeilings:
    """Return Perf_mix, Perf_ceil, per-level times, bandwidth ceilings, intensities and rooflines (§4) on `gpu`."""
    flop = kernel.flop if flop is None else positive("flop", flop)
    n_fp = kernel.n_fma + kernel.n_add + kernel.n_mul
    perf_mix = gpu.fma * kernel.n_fma / n_fp + gpu.add_mul * (kernel.n_add + kernel.n_mul) / n_fp
    perf_ceil = kernel.active_threads / kernel.warp_size * perf_mix
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
        rooflines[level] = min(ceilings[level] * intensities[level], perf_ceil)
    if not rooflines:
        raise ValueError("the kernel moves no bytes through any level: no roofline to project on")
    return KernelCeilings(perf_mix, perf_ceil, times, ceilings, intensities, rooflines, left_out)


@dataclass(frozen=True)
class Projection:
    """A kernel projected from a source GPU onto a target: per-level performance (op/s), interval, middle, times (s)."""

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


def project(kernel: ProjectedKernel, source: GpuMaxima, target: GpuMaxima, flop_ratio: float = 1.0,
            on_target_kernel: ProjectedKernel | None = None) -> Projection:
    """Return the projection (§4) of a kernel measured on `source` onto `target`; `flop_ratio` scales its FLOP there.

    `flop_ratio` is FLOP_t / FLOP_s from the SASS comparison of special functions (1 when they compile alike).
    `on_target_kernel` is the kernel as it runs on the target where that differs from the profile in its active
    threads per warp instruction and warp size (a work-group of 32 fills a 32-wide warp but half a 64-wide
    wavefront); its counts and bytes must be the profile's, as §4 assumes equal traffic.
    """
    positive("flop_ratio", flop_ratio)
    measured = kernel.flop / kernel.time
    flop_target = kernel.flop * flop_ratio
    on_source = kernel_ceilings(kernel, source)
    if on_target_kernel is not None:
        differ = [name for name in ("n_fma", "n_add", "n_mul", "hits", "shared_bytes", "flop")
                  if getattr(on_target_kernel, name) != getattr(kernel, name)]
        if differ:
            raise ValueError(f"the kernel on the target must keep the profile's {', '.join(differ)}")
    on_target = kernel_ceilings(on_target_kernel or kernel, target, flop_target)
    per_level = {level: measured / on_source.rooflines[level] * on_target.rooflines[level]
                 for level in LEVELS if level in on_source.rooflines and level in on_target.rooflines}
    left_out = {**on_source.left_out, **on_target.left_out}
    lower, upper = min(per_level.values()), max(per_level.values())
    middle = (lower + upper) / 2
    return Projection(on_source, on_target, measured, kernel.time, flop_target, per_level, lower, upper, middle,
                      flop_target / middle, (flop_target / upper, flop_target / lower), left_out)
