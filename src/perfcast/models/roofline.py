"""The roofline model (Williams, Waterman, Patterson 2009): spec §1.

Pure functions, vectorised over numpy arrays. Units: work in op, traffic in
B, rates in op/s and B/s, intensity in op/B, time in s. A scalar input gives
a float back; array inputs broadcast and give arrays back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "Ceiling",
    "HierarchicalBound",
    "KernelBound",
    "LocalityWall",
    "Roofline",
    "analyze_kernel",
    "attainable_performance",
    "bound_kind",
    "ceiling_performance",
    "effective_roofs",
    "execution_time",
    "hierarchical_roofline",
    "locality_walls",
    "ridge_point",
]

Number = float | NDArray[np.float64]
COMPUTE = "compute"


def _array(name: str, value: ArrayLike, *, allow_zero: bool = True, allow_inf: bool = False) -> NDArray[np.float64]:
    """Return `value` as a float array, rejecting NaN, negatives and (optionally) zeros or infinities."""
    if value is None or isinstance(value, (str, bytes, bool, np.bool_)):
        raise ValueError(f"{name} must be a number or an array of numbers, got {value!r}")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a number or an array of numbers, got {value!r}") from None
    if np.asarray(value).dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a number or an array of numbers, got {value!r}")
    if np.isnan(array).any():
        raise ValueError(f"{name} contains NaN")
    if (array < 0).any():
        raise ValueError(f"{name} must not be negative (got {array[array < 0].flat[0]:g})")
    if not allow_zero and (array == 0).any():
        raise ValueError(f"{name} must be positive")
    if not allow_inf and np.isinf(array).any():
        raise ValueError(f"{name} must be finite")
    return array


def _out(array: NDArray[np.float64]) -> Number:
    """Return a 0-d array as a float, anything else unchanged."""
    return float(array) if array.ndim == 0 else array


def attainable_performance(intensity: ArrayLike, peak: ArrayLike, bandwidth: ArrayLike) -> Number:
    """Return P(I) = min(π, β·I) in op/s for intensity I (op/B), peak π (op/s), bandwidth β (B/s)."""
    intensity = _array("intensity", intensity, allow_inf=True)
    peak = _array("peak", peak, allow_zero=False)
    bandwidth = _array("bandwidth", bandwidth, allow_zero=False)
    return _out(np.minimum(peak, bandwidth * intensity))


def ridge_point(peak: ArrayLike, bandwidth: ArrayLike) -> Number:
    """Return the ridge point π/β in op/B: the intensity where memory and compute bounds meet."""
    peak = _array("peak", peak, allow_zero=False)
    bandwidth = _array("bandwidth", bandwidth, allow_zero=False)
    return _out(peak / bandwidth)


def bound_kind(intensity: ArrayLike, peak: ArrayLike, bandwidth: ArrayLike) -> NDArray[np.str_] | str:
    """Return 'memory' where I <= π/β, else 'compute' (a str for scalar input, else an array)."""
    intensity = _array("intensity", intensity, allow_inf=True)
    ridge = np.asarray(ridge_point(peak, bandwidth))
    kinds = np.where(intensity <= ridge, "memory", COMPUTE)
    return str(kinds) if kinds.ndim == 0 else kinds


def execution_time(work: ArrayLike, traffic: ArrayLike, peak: ArrayLike, bandwidth: ArrayLike) -> Number:
    """Return T = max(W/π, Q/β) in s for work W (op) and traffic Q (B)."""
    work = _array("work", work)
    traffic = _array("traffic", traffic)
    peak = _array("peak", peak, allow_zero=False)
    bandwidth = _array("bandwidth", bandwidth, allow_zero=False)
    return _out(np.maximum(work / peak, traffic / bandwidth))


def _intensity(work: NDArray[np.float64], traffic: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    """Return W/Q in op/B; infinite where Q = 0 (no traffic) and an error where W = Q = 0."""
    if ((work == 0) & (traffic == 0)).any():
        raise ValueError(f"a kernel with zero work and zero {what} has no intensity")
    with np.errstate(divide="ignore"):
        return work / traffic


@dataclass(frozen=True)
class Ceiling:
    """A lowered roof: a compute rate in op/s or a bandwidth in B/s, named after what is missing."""

    name: str
    value: float

    def __post_init__(self) -> None:
        if not np.isfinite(self.value) or self.value <= 0:
            raise ValueError(f"ceiling {self.name!r} must be a positive finite number, got {self.value!r}")


@dataclass(frozen=True)
class LocalityWall:
    """A vertical line at the intensity (op/B) a kernel really has once extra traffic is counted."""

    name: str
    intensity: float


@dataclass(frozen=True)
class Roofline:
    """A machine as the roofline sees it: peak π (op/s), bandwidth β (B/s) and ceilings below them."""

    peak: float
    bandwidth: float
    compute_ceilings: tuple[Ceiling, ...] = ()
    bandwidth_ceilings: tuple[Ceiling, ...] = ()
    label: str = ""

    def __post_init__(self) -> None:
        for name, value in (("peak", self.peak), ("bandwidth", self.bandwidth)):
            if not np.isfinite(value) or value <= 0:
                raise ValueError(f"roofline {name} must be a positive finite number, got {value!r}")
        # One namespace for both kinds: a kernel names the ceilings it lacks.
        names = [ceiling.name for ceiling in (*self.compute_ceilings, *self.bandwidth_ceilings)]
        if len(set(names)) != len(names):
            raise ValueError(f"ceiling names must be unique, got {names}")
        for kind, roof, ceilings in (
            ("compute", self.peak, self.compute_ceilings),
            ("bandwidth", self.bandwidth, self.bandwidth_ceilings),
        ):
            for ceiling in ceilings:
                if ceiling.value > roof * (1 + 1e-12):
                    raise ValueError(
                        f"{kind} ceiling {ceiling.name!r} ({ceiling.value:g}) lies above the roof ({roof:g})"
                    )

    @property
    def ridge(self) -> float:
        """Return the ridge point π/β in op/B."""
        return self.peak / self.bandwidth


def effective_roofs(roofline: Roofline, lacking: Iterable[str]) -> tuple[float, float]:
    """Return (op/s, B/s): the lowest compute and bandwidth ceilings among `lacking`, else π and β."""
    lacking = set(lacking)
    known = {c.name for c in (*roofline.compute_ceilings, *roofline.bandwidth_ceilings)}
    unknown = sorted(lacking - known)
    if unknown:
        raise ValueError(f"unknown ceiling(s) {unknown}; this roofline has: {sorted(known)}")
    compute = min([roofline.peak] + [c.value for c in roofline.compute_ceilings if c.name in lacking])
    bandwidth = min([roofline.bandwidth] + [c.value for c in roofline.bandwidth_ceilings if c.name in lacking])
    return compute, bandwidth


def ceiling_performance(roofline: Roofline, intensity: ArrayLike, lacking: Iterable[str] = ()) -> Number:
    """Return the attainable op/s under the lowest ceilings named in `lacking` (optimisations a kernel lacks)."""
    compute, bandwidth = effective_roofs(roofline, lacking)
    return attainable_performance(intensity, compute, bandwidth)


def locality_walls(
    work: float,
    compulsory: float,
    *,
    capacity: float = 0.0,
    conflict: float = 0.0,
    write_allocate: float = 0.0,
) -> tuple[LocalityWall, ...]:
    """Return the walls (op/B) for compulsory traffic, then adding each non-zero extra miss traffic in turn."""
    work_a = _array("work", work, allow_zero=False)
    traffic = float(_array("compulsory traffic", compulsory, allow_zero=False))
    walls = [LocalityWall("compulsory", float(work_a / traffic))]
    for name, extra in (("+capacity", capacity), ("+conflict", conflict), ("+write allocate", write_allocate)):
        extra = float(_array(f"{name[1:]} traffic", extra))
        if extra > 0:
            traffic += extra
            walls.append(LocalityWall(name, float(work_a / traffic)))
    return tuple(walls)


@dataclass(frozen=True)
class KernelBound:
    """What the roofline says of one kernel (or array of kernels): intensity op/B, op/s, bound, time s."""

    work: Number
    traffic: Number
    intensity: Number
    attainable: Number
    bound: NDArray[np.str_] | str
    time: Number
    ridge: float


def analyze_kernel(
    roofline: Roofline, work: ArrayLike, traffic: ArrayLike, lacking: Iterable[str] = ()
) -> KernelBound:
    """Return the roofline bound of kernels doing `work` op over `traffic` B, under the ceilings `lacking`."""
    compute, bandwidth = effective_roofs(roofline, lacking)
    work_a = _array("work", work)
    traffic_a = _array("traffic", traffic)
    intensity = _intensity(work_a, traffic_a, "traffic")
    return KernelBound(
        work=_out(work_a),
        traffic=_out(traffic_a),
        intensity=_out(intensity),
        attainable=attainable_performance(intensity, compute, bandwidth),
        bound=bound_kind(intensity, compute, bandwidth),
        time=execution_time(work_a, traffic_a, compute, bandwidth),
        ridge=compute / bandwidth,
    )


@dataclass(frozen=True)
class HierarchicalBound:
    """The hierarchical roofline of a kernel: per-level intensity (op/B) and bound (op/s), the binding level."""

    intensities: dict[str, Number]
    level_bounds: dict[str, Number]
    attainable: Number
    binding: NDArray[np.str_] | str
    time: Number
    levels: tuple[str, ...]


def hierarchical_roofline(
    work: ArrayLike,
    traffic: Mapping[str, ArrayLike],
    peak: float,
    bandwidths: Mapping[str, float],
) -> HierarchicalBound:
    """Return P <= min(π, min_l β_l·I_l) with I_l = W/Q_l per memory level, and the binding level (or 'compute').

    `traffic` maps each level to the bytes that cross it; every such level
    needs a bandwidth. A level with zero traffic never binds.
    """
    if not traffic:
        raise ValueError("hierarchical roofline needs traffic for at least one memory level")
    missing = [level for level in traffic if level not in bandwidths]
    if missing:
        raise ValueError(f"no bandwidth for memory level(s) {missing}; known: {sorted(bandwidths)}")
    if COMPUTE in traffic:
        raise ValueError(f"{COMPUTE!r} is reserved and cannot name a memory level")
    peak_a = _array("peak", peak, allow_zero=False)
    work_a = _array("work", work)
    levels = tuple(traffic)
    traffic_a = [_array(f"traffic at {level}", traffic[level]) for level in levels]
    intensities = [_intensity(work_a, q, f"traffic at {level}") for level, q in zip(levels, traffic_a)]
    rates = [_array(f"bandwidth of {level}", bandwidths[level], allow_zero=False) for level in levels]
    bounds = [rate * i for rate, i in zip(rates, intensities)]
    stacked = np.stack(np.broadcast_arrays(*bounds))
    lowest_index = np.argmin(stacked, axis=0)
    lowest = np.min(stacked, axis=0)
    attainable = np.minimum(peak_a, lowest)
    names = np.asarray(levels)[lowest_index]
    binding = np.where(lowest <= peak_a, names, COMPUTE)
    # T = max(W/π, max_l Q_l/β_l): the same model as a time.
    times = [q / rate for rate, q in zip(rates, traffic_a)]
    time = np.maximum(work_a / peak_a, np.max(np.stack(np.broadcast_arrays(*times)), axis=0))
    return HierarchicalBound(
        intensities={level: _out(i) for level, i in zip(levels, intensities)},
        level_bounds={level: _out(b) for level, b in zip(levels, bounds)},
        attainable=_out(attainable),
        binding=str(binding) if binding.ndim == 0 else binding,
        time=_out(time),
        levels=levels,
    )

