"""The boat hull model (Nugteren & Corporaal 2012): spec §2.3–2.5.

Execution time of a primitive from its class variables and 3–4 processor
figures, as a range [max(c0, m0), max(c0, m0, floors)], vectorised over the
operator complexity f (ops per operator application). Times in s, rates in
op/s and B/s, element size in B.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "ASSUMPTIONS",
    "ApplicationPrediction",
    "ClassVariables",
    "CpuFigures",
    "GpuFigures",
    "ELEMENTARY_OPS",
    "ONCHIP_LOADS",
    "HullPrediction",
    "issue_floor",
    "predict_application",
    "predict_cpu",
    "predict_gpu",
    "priced_complexity",
    "transfer_time",
    "with_conversions",
]

Origin = Literal["reference", "derived"]

# Which floors each user assumption rules out, per processor kind.
GPU_ASSUMPTIONS: dict[str, tuple[str, ...]] = {"fma": ("c1",), "coalesced": ("m1",), "registers": ("i1",)}
CPU_ASSUMPTIONS: dict[str, tuple[str, ...]] = {"vectorised": ("c1", "c3"), "multithreaded": ("c2", "c3")}
ASSUMPTIONS = frozenset(GPU_ASSUMPTIONS) | frozenset(CPU_ASSUMPTIONS)
CPU_FLOORS = ("c1", "c2", "c3")

# Ops a species' f gives one elementary-function call (exp, log, sin, ...): `perfcast classify`'s count, near
# a GPU's special-function cost and far below a CPU's, where a call runs a library routine.
ELEMENTARY_OPS = 8

# On-chip operand loads one operator application issues where the i1 floor applies (a neighbourhood class: each
# application reads one neighbour from the tile staged in local memory).
ONCHIP_LOADS = 1.0


def priced_complexity(f: float, calls: float, extra_ops_per_call: float) -> float:
    """Return f (ops) with each of its `calls` elementary calls costing `extra_ops_per_call` more than ELEMENTARY_OPS.

    A device whose calls cost less than f counts them at (extra < 0) can take f below zero: that is an error.
    """
    priced = f + calls * extra_ops_per_call
    if priced < 0:
        raise ValueError(f"f = {f:g} counts fewer ops than its {calls:g} elementary calls at {ELEMENTARY_OPS} ops "
                         "each")
    return priced


def with_conversions(f: float, conversions: float, ops_per_conversion: float) -> float:
    """Return f (ops) with `conversions` int/float conversions per application, each `ops_per_conversion` ops.

    A conversion displaces P_compute / (conversions per second) of the peak's ops: 8 to 16 on NVIDIA GPUs, whose
    conversion unit runs at a quarter or an eighth of the FP32 lanes, 2 to 4 on AMD's (a full-rate instruction; 4
    where the peak counts RDNA 3's dual issue).
    """
    if conversions < 0 or not math.isfinite(conversions):
        raise ValueError(f"conversions per application must be a finite, non-negative number: got {conversions!r}")
    if not ops_per_conversion > 0 or not math.isfinite(ops_per_conversion):
        raise ValueError(f"a conversion's cost must be a finite, positive number of ops: got {ops_per_conversion!r}")
    priced = f + conversions * ops_per_conversion
    if not math.isfinite(priced):
        raise ValueError(f"f = {f!r} with {conversions:g} conversions of {ops_per_conversion:g} ops is not a finite "
                         "number of ops")
    return priced


@dataclass(frozen=True)
class ClassVariables:
    """w, m, o, d, c, u of a bound species (counts of work units, operator applications, ops and elements)."""

    w: float  # parallel work units
    m: float  # operator applications per work unit
    o: float  # overhead ops per work unit (a power of two)
    d: float  # elements read plus elements written
    c: float  # compulsory coalesced off-chip element accesses
    u: float  # compulsory uncoalesced off-chip element accesses
    floors: tuple[str, ...]  # GPU floors that apply to the class: c1, m1, i1
    origin: Origin = "reference"
    name: str = ""  # the reference row's example (e.g. "2D convolution"), or how it was derived

    def __post_init__(self) -> None:
        for label in ("w", "m", "o", "d", "c", "u"):
            value = _finite_number(f"class variable {label}", getattr(self, label))
            if value < 0:
                raise ValueError(f"class variable {label} must be finite and non-negative, got {value!r}")
        unknown = set(self.floors) - {"c1", "m1", "i1"}
        if unknown:
            raise ValueError(f"unknown GPU floor(s) {sorted(unknown)}")


def _finite_number(name: str, value: object) -> float:
    """Return `value` as a finite float, or raise ValueError naming it (huge integers and non-numbers too)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{name} is too large to compute with ({value!r})") from None
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return number


def _positive(name: str, value: float) -> None:
    if _finite_number(name, value) <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


@dataclass(frozen=True)
class GpuFigures:
    """P_compute (op/s, vendor peak incl. FMA), P_coalesced and P_uncoalesced (B/s), B_bus (B/s, or None).

    `issue_share` (perfcast's addition, a plain number in (0, 1] or None): the share of the instruction issues
    FMA instructions must fill to reach P_compute (the catalog's fp32_issue_share; 1 where the peak needs every
    issue, 0.5 where half are spare). Without it the i1 floor is not computed.
    """

    p_compute: float
    p_coalesced: float
    p_uncoalesced: float
    b_bus: float | None = None
    issue_share: float | None = None

    def __post_init__(self) -> None:
        _positive("P_compute", self.p_compute)
        _positive("P_coalesced", self.p_coalesced)
        _positive("P_uncoalesced", self.p_uncoalesced)
        if self.b_bus is not None:
            _positive("B_bus", self.b_bus)
        if self.issue_share is not None:
            _positive("the issue share", self.issue_share)
            if self.issue_share > 1:
                raise ValueError(f"the issue share is a share of the issues, at most 1: got {self.issue_share!r}")


@dataclass(frozen=True)
class CpuFigures:
    """P_compute (op/s, vector + all threads), P_memory (B/s), N_threads, W_vector (bits)."""

    p_compute: float
    p_memory: float
    n_threads: int
    w_vector_bits: int

    def __post_init__(self) -> None:
        _positive("P_compute", self.p_compute)
        _positive("P_memory", self.p_memory)
        if self.n_threads < 1 or self.w_vector_bits < 8:
            raise ValueError("N_threads must be >= 1 and W_vector >= 8 bits")

    def lanes(self, element_bytes: float) -> float:
        """Return L = max(1, W_vector / (8 s)): the SIMD lanes of elements of `element_bytes` B."""
        return max(1.0, self.w_vector_bits / (8 * element_bytes))


@dataclass(frozen=True)
class HullPrediction:
    """Predicted time range (s) per complexity f, every term, and which term binds each end."""

    f: NDArray[np.float64]
    terms: dict[str, NDArray[np.float64]]
    floors: tuple[str, ...]  # floors in the upper end: applicable and not ruled out
    ruled_out: tuple[str, ...]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    lower_term: NDArray[np.str_]
    upper_term: NDArray[np.str_]
    transfer: float = 0.0  # t0 included in both ends (s)
    ignored_assumptions: tuple[str, ...] = field(default=())
    unpriced: tuple[str, ...] = field(default=())  # floors of the class the device has no figure for


def _complexity(f: ArrayLike) -> NDArray[np.float64]:
    f = np.atleast_1d(np.asarray(f, dtype=np.float64))
    if f.ndim != 1:
        raise ValueError("f must be a number or a one-dimensional sequence")
    if not np.isfinite(f).all() or (f < 0).any():
        raise ValueError("the complexity f must be finite and non-negative")
    return f


def _check_element_bytes(element_bytes: float) -> None:
    _positive("element size", element_bytes)


def _assumptions(assume: Iterable[str], own: dict[str, tuple[str, ...]]) -> tuple[set[str], tuple[str, ...]]:
    """Return (floors ruled out, assumptions that mean nothing on this kind of processor)."""
    names = [name.strip().lower().replace("vectorized", "vectorised") for name in assume if name.strip()]
    unknown = sorted(set(names) - ASSUMPTIONS)
    if unknown:
        raise ValueError(f"unknown assumption(s) {unknown}; known: {sorted(ASSUMPTIONS)}")
    ruled = {floor for name in names if name in own for floor in own[name]}
    ignored = tuple(sorted({name for name in names if name not in own}))
    return ruled, ignored


def _range(
    f: NDArray[np.float64],
    terms: dict[str, NDArray[np.float64]],
    applicable: Sequence[str],
    ruled: set[str],
    transfer: float,
    ignored: tuple[str, ...],
    unpriced: tuple[str, ...] = (),
) -> HullPrediction:
    """Return the prediction range: lower max(c0, m0), upper max over those and the floors kept."""
    kept = tuple(floor for floor in applicable if floor not in ruled and floor not in unpriced)
    for name, values in terms.items():
        if not np.isfinite(values).all():
            worst = f[~np.isfinite(values)][0]
            raise ValueError(f"the {name} term overflows at f = {worst:g}: the predicted time is not a finite "
                             "number of seconds (a smaller f or smaller sizes)")
    lower_names = ("c0", "m0")
    upper_names = lower_names + kept
    lower_stack = np.stack([terms[name] for name in lower_names])
    upper_stack = np.stack([terms[name] for name in upper_names])
    return HullPrediction(
        f=f,
        terms=terms,
        floors=kept,
        ruled_out=tuple(floor for floor in applicable if floor in ruled),
        lower=lower_stack.max(axis=0) + transfer,
        upper=upper_stack.max(axis=0) + transfer,
        lower_term=np.asarray(lower_names)[lower_stack.argmax(axis=0)],
        upper_term=np.asarray(upper_names)[upper_stack.argmax(axis=0)],
        transfer=transfer,
        ignored_assumptions=ignored,
        unpriced=tuple(floor for floor in applicable if floor in unpriced and floor not in ruled),
    )


def _compute_term(
    cls: ClassVariables, f: ArrayLike, element_bytes: float, p_compute: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return (f as an array, c0 = w·(f·m + o) / P_compute in s), after checking f and the element size."""
    f = _complexity(f)
    _check_element_bytes(element_bytes)
    with np.errstate(over="ignore"):  # an overflow is reported as an error by _range, not as a warning
        return f, cls.w * (f * cls.m + cls.o) / p_compute


def transfer_time(elements: float, element_bytes: float, bus: float) -> float:
    """Return t0 = s·d / B_bus in s: copying `elements` of `element_bytes` B over a bus of `bus` B/s."""
    _check_element_bytes(element_bytes)
    _positive("B_bus", bus)
    if _finite_number("the transfer size (elements)", elements) < 0:
        raise ValueError("the transfer size (elements) must not be negative")
    seconds = element_bytes * elements / bus
    if not math.isfinite(seconds):
        raise ValueError(f"the transfer time of {elements!r} elements overflows")
    return seconds


def predict_gpu(
    cls: ClassVariables,
    figures: GpuFigures,
    f: ArrayLike,
    *,
    element_bytes: float = 4,
    assume: Iterable[str] = (),
    transfers: bool = False,
) -> HullPrediction:
    """Return the GPU time range (s) for complexity `f`: terms c0, m0, c1, m1, i1 and t0 (spec §2.3)."""
    f, c0 = _compute_term(cls, f, element_bytes, figures.p_compute)
    s = element_bytes
    m0 = np.full_like(f, s * cls.c / figures.p_coalesced + s * cls.u / figures.p_uncoalesced)
    ruled, ignored = _assumptions(assume, GPU_ASSUMPTIONS)
    with np.errstate(over="ignore"):
        terms = {"c0": c0, "m0": m0, "c1": 2 * c0, "m1": np.full_like(f, s * cls.d / figures.p_uncoalesced)}
        # i1 prices a neighbourhood's loads from its staged tile: a class without such loads has no such term
        if figures.issue_share is not None and "i1" in cls.floors:
            terms["i1"] = issue_floor(cls, f, figures.p_compute, figures.issue_share, fma="c1" in ruled)
    transfer = 0.0
    if figures.b_bus is not None:
        t0 = transfer_time(cls.d, s, figures.b_bus)
        terms["t0"] = np.full_like(f, t0)
        transfer = t0 if transfers else 0.0
    elif transfers:
        raise ValueError("transfers requested but the device has no host link bandwidth (B_bus)")
    unpriced = ("i1",) if figures.issue_share is None else ()
    return _range(f, terms, cls.floors, ruled, transfer, ignored, unpriced)


def issue_floor(cls: ClassVariables, f: NDArray[np.float64], p_compute: float, share: float, *,
                fma: bool) -> NDArray[np.float64]:
    """Return i1 (s): the issue time of the operator's instructions and its on-chip operand loads.

    At P_compute a GPU issues P_compute / (2 · share) instructions per second (FMA instructions fill `share` of
    its issues). An application is f / 2 FMA instructions (f without FMA, `fma` False) and ONCHIP_LOADS loads;
    the overhead o is issued likewise: i1 = share · w · (m · (k·f + 2·loads) + k·o) / P_compute, k = 1 with FMA,
    2 without.
    """
    k = 1.0 if fma else 2.0
    return share * cls.w * (cls.m * (k * f + 2 * ONCHIP_LOADS) + k * cls.o) / p_compute


def predict_cpu(
    cls: ClassVariables,
    figures: CpuFigures,
    f: ArrayLike,
    *,
    element_bytes: float = 4,
    assume: Iterable[str] = (),
    vector_lanes: float | None = None,
) -> HullPrediction:
    """Return the multi-core CPU time range (s) for complexity `f`: terms c0, m0, c1, c2, c3 (spec §2.4).

    `vector_lanes` (perfcast's refinement): the lanes the compiler is known to have used, l. The floors without
    SIMD then become the code's own: c1 = (L / l)·c0 and c3 = (L / l)·N_threads·c0 (l = 1: the spec's scalar
    floors; l = L: c1 = c0). None: unknown, the spec's floors.
    """
    f, c0 = _compute_term(cls, f, element_bytes, figures.p_compute)
    s = element_bytes
    lanes = figures.lanes(s)
    if vector_lanes is not None:
        if not (math.isfinite(vector_lanes) and vector_lanes >= 1):
            raise ValueError(f"the lanes the compiler used must be at least 1, got {vector_lanes!r}")
        lanes = max(1.0, lanes / vector_lanes)
    with np.errstate(over="ignore"):
        terms = {
            "c0": c0,
            "m0": np.full_like(f, s * cls.c / figures.p_memory),
            "c1": lanes * c0,
            "c2": figures.n_threads * c0,
            "c3": lanes * figures.n_threads * c0,
        }
    ruled, ignored = _assumptions(assume, CPU_ASSUMPTIONS)
    return _range(f, terms, CPU_FLOORS, ruled, 0.0, ignored)


@dataclass(frozen=True)
class ApplicationPrediction:
    """An application's predicted time (s): per primitive range, transfers, and the total range."""

    primitives: tuple[tuple[str, HullPrediction], ...]
    transfers: tuple[tuple[str, float], ...]
    lower: float
    upper: float


def predict_application(
    primitives: Sequence[tuple[str, HullPrediction]], transfers: Sequence[tuple[str, float]] = ()
) -> ApplicationPrediction:
    """Return the total range (s): the sum of the primitives' ranges plus transfers, no overlap (spec §2.5)."""
    for name, prediction in primitives:
        if prediction.f.shape != (1,):
            raise ValueError(f"primitive {name!r}: an application needs one complexity f per primitive")
    for name, seconds in transfers:
        if not np.isfinite(seconds) or seconds < 0:
            raise ValueError(f"transfer {name!r}: time must be finite and non-negative")
    moved = float(sum(seconds for _, seconds in transfers))
    return ApplicationPrediction(
        primitives=tuple(primitives),
        transfers=tuple(transfers),
        lower=float(sum(p.lower[0] for _, p in primitives)) + moved,
        upper=float(sum(p.upper[0] for _, p in primitives)) + moved,
    )
