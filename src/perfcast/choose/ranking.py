"""Ranking devices for one workload: time, cost per run, energy per run, and where two cannot be told apart.

Pure functions over numbers: each device comes as an `Estimate` (a model's predicted time in s and the
interval a validated error band puts around it), its TDP (W) and a price (USD per unit or per hour). Out
comes the ranking with each device's cost (USD) and energy (J) of one run, the devices whose intervals
overlap (the models cannot order them), and the Pareto front of time against cost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "SECONDS_PER_YEAR",
    "Band",
    "Estimate",
    "PriceQuote",
    "Ranked",
    "kendall_tau",
    "pareto_front",
    "rank",
    "run_cost",
    "time_tiers",
]

SECONDS_PER_YEAR = 365.25 * 24 * 3600
Order = Literal["time", "cost", "energy"]


@dataclass(frozen=True)
class Band:
    """A validated error band: measured / predicted time fell in [low, high] for `coverage` of `n` cases.

    `high` is inf where the validation saw errors so large that no upper limit holds (an APE of 100 % or more).
    """

    model: str
    scope: str  # the device class the cases come from: 'gpu', 'cpu', 'same vendor', 'across vendors'
    low: float
    high: float
    n: int
    coverage: float  # the fraction of the validated cases inside [low, high]
    mape: float  # mean absolute percentage error of those cases (a fraction)
    source: str  # the committed report the cases come from
    devices: tuple[str, ...] = ()  # the devices the validated cases ran on: how far the band's evidence reaches

    def __post_init__(self) -> None:
        if not 0 < self.low <= self.high:
            raise ValueError(f"band [{self.low}, {self.high}] is not a positive interval")
        if self.n < 1:
            raise ValueError("a band needs at least one validated case")

    def interval(self, time: float) -> tuple[float, float]:
        """Return the interval (s) where the measured time of a prediction `time` (s) is expected to fall."""
        return time * self.low, time * self.high

    def describe(self) -> str:
        """Return the band in words: its ratios, coverage and cases."""
        high = "no upper limit" if math.isinf(self.high) else f"{self.high:.3g}x"
        on = f"; on {len(self.devices)} device(s): {', '.join(self.devices)}" if self.devices else ""
        return (f"measured/predicted {self.low:.3g}x to {high} in {self.coverage:.0%} of {self.n} validated cases "
                f"({self.model}, {self.scope}; MAPE {self.mape:.0%}{on})")


@dataclass(frozen=True)
class PriceQuote:
    """A price in USD: per unit (a list or street price) or per device-hour (a rental quote), with its origin."""

    kind: Literal["list", "street", "rental"]
    usd: float
    reference: str
    date: str

    @property
    def per_hour(self) -> bool:
        """Return True for a rental quote (USD per device-hour)."""
        return self.kind == "rental"


@dataclass(frozen=True)
class Estimate:
    """One device's predicted time (s) for the workload by one model, with its band and the device's power and price."""

    device: str
    kind: str  # cpu or gpu
    vendor: str
    model: str
    time: float  # s
    band: Band | None
    detail: str = ""  # the bound, or what the model read
    tdp: float | None = None  # W
    price: PriceQuote | None = None
    measured: float | None = None  # s, where a measurement of the workload on this device is known
    is_measurement: bool = False  # the time is the measurement itself (the device a space was tuned on)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.time) and self.time > 0):
            raise ValueError(f"{self.device}: predicted time {self.time!r} s is not a positive number")

    @property
    def interval(self) -> tuple[float, float] | None:
        """Return the band's interval (s) around the time (the time itself for a measurement), or None without a band."""
        if self.is_measurement:
            return self.time, self.time
        return self.band.interval(self.time) if self.band else None


@dataclass(frozen=True)
class Ranked:
    """A device's place in the ranking, its cost (USD) and energy (J) of one run, and whom it cannot be told from."""

    estimate: Estimate
    rank: int  # 1 = best by the ranking's order
    cost: float | None  # USD per run
    energy: float | None  # J per run
    overlaps: tuple[str, ...] = ()  # devices whose intervals overlap this one's: not told apart
    pareto: bool = False  # on the front of time against cost
    tier: int | None = None  # by time: 1 = told apart from no device of tier 1's leader; None without a band
    notes: tuple[str, ...] = field(default_factory=tuple)


def run_cost(time: float, price: PriceQuote | None, lifetime_s: float) -> float | None:
    """Return the USD one run of `time` s costs: rental time, or a purchase spread over `lifetime_s` of use."""
    if price is None:
        return None
    if lifetime_s <= 0:
        raise ValueError(f"lifetime {lifetime_s!r} s must be positive")
    if price.per_hour:
        return time * price.usd / 3600
    return time * price.usd / lifetime_s


def _overlap(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """Return True where two intervals (s) share a point; False where either is unknown."""
    if a is None or b is None:
        return False
    return a[0] <= b[1] and b[0] <= a[1]


def pareto_front(points: Sequence[tuple[float, float | None]]) -> list[bool]:
    """Return, per (time, cost) point, whether no other point is at least as good in both and better in one.

    A point without a cost is never on the front.
    """
    front = []
    for i, (time, cost) in enumerate(points):
        if cost is None:
            front.append(False)
            continue
        dominated = any(
            j != i and c is not None and t <= time and c <= cost and (t < time or c < cost)
            for j, (t, c) in enumerate(points)
        )
        front.append(not dominated)
    return front


def time_tiers(estimates: Sequence[Estimate]) -> list[int | None]:
    """Return each estimate's tier by time (1 first; None without an interval).

    The fastest and every device it cannot be told from are tier 1, the fastest of the rest leads tier 2, and so on.
    """
    tiers: list[int | None] = [None] * len(estimates)
    waiting = sorted((i for i, e in enumerate(estimates) if e.interval is not None), key=lambda i: estimates[i].time)
    tier = 0
    while waiting:
        tier += 1
        leader = waiting[0]
        members = [i for i in waiting if i == leader or _overlap(estimates[leader].interval, estimates[i].interval)]
        for i in members:
            tiers[i] = tier
        waiting = [i for i in waiting if i not in members]
    return tiers


def rank(estimates: Sequence[Estimate], *, order: Order = "time", lifetime_years: float = 4.0) -> list[Ranked]:
    """Return the devices ranked by predicted time (s), cost per run (USD) or energy per run (J), best first.

    A purchase price is spread over `lifetime_years` of continuous use; devices without the figure an order
    needs (a price, a TDP) come last, in order of time, with a note saying why.
    """
    if lifetime_years <= 0 or not math.isfinite(lifetime_years):
        raise ValueError(f"lifetime {lifetime_years!r} years must be a positive number")
    names = [e.device for e in estimates]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"device(s) given twice: {', '.join(twice)}")
    lifetime_s = lifetime_years * SECONDS_PER_YEAR
    costs = [run_cost(e.time, e.price, lifetime_s) for e in estimates]
    energies: list[float | None] = [e.time * e.tdp if e.tdp else None for e in estimates]
    times: list[float | None] = [e.time for e in estimates]
    key_of: list[float | None] = {"time": times, "cost": costs, "energy": energies}[order]
    front = pareto_front([(e.time, c) for e, c in zip(estimates, costs)])
    tiers = time_tiers(estimates)
    order_index = sorted(range(len(estimates)),
                         key=lambda i: (key_of[i] is None, key_of[i] if key_of[i] is not None else 0.0,
                                        estimates[i].time))
    ranked = []
    for place, i in enumerate(order_index, start=1):
        estimate = estimates[i]
        overlaps = tuple(other.device for other in estimates if other is not estimate
                         and _overlap(estimate.interval, other.interval))
        notes = []
        if estimate.band is None and not estimate.is_measurement:
            notes.append(f"no validated band for {estimate.model} on a {estimate.kind}: cannot say which "
                         "devices it is told apart from")
        if key_of[i] is None:
            notes.append("no price" if order == "cost" else "no TDP")
        ranked.append(Ranked(estimate, place, costs[i], energies[i], overlaps, front[i], tiers[i], tuple(notes)))
    return ranked


def kendall_tau(predicted: Sequence[float], measured: Sequence[float]) -> float:
    """Return Kendall's tau-b between two orderings of the same devices (1: the same order; NaN below 2)."""
    if len(predicted) != len(measured):
        raise ValueError("kendall_tau needs as many predicted as measured times")
    if len(predicted) < 2:
        return math.nan
    from scipy.stats import kendalltau

    return float(kendalltau(predicted, measured).statistic)
