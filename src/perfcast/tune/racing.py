"""Deciding between configurations on a noisy machine: a race, round-robin, compared by paired ratios.

Timings on a shared machine drift: the same configuration varies from one minute to the next by more than two
good configurations differ. Comparing means taken at different moments decides inside that drift. A race
runs the contenders in rounds, each round every contender once (in a rotating order), so that the drift
hits them alike, and compares each contender with the leader (the lowest median time) by the per-round
ratio of their times: its median, with a distribution-free interval, so that a disturbed round does not
sway it. The race goes on until every contender is decided — the interval excludes equality (separated),
or it is narrower than the resolution (their difference is known well enough) — or the rounds run out, in
which case the undecided are ties. Pure functions over a callable that times one run.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["RaceResult", "Ratio", "paired_ratio", "race"]


@dataclass(frozen=True)
class Ratio:
    """A contender's performance relative to the leader's (time_leader / time_contender): estimate and interval."""

    estimate: float
    low: float
    high: float

    @property
    def separated(self) -> bool:
        """Return True when the interval excludes 1 (the two are told apart)."""
        return self.high < 1 or self.low > 1


def paired_ratio(contender: Sequence[float], leader: Sequence[float], confidence: float = 0.95) -> Ratio:
    """Return time_leader / time_contender per round: the median ratio, with its distribution-free interval.

    A disturbed round (another process took the core for part of it) gives one wild ratio; the median and
    the order-statistic interval of the median (the k-th smallest and k-th largest ratios, k from the
    binomial distribution; the extremes when there are too few rounds for `confidence`) ignore it, where a
    mean and a t-interval would not. Needs 2+ rounds.
    """
    if len(contender) != len(leader) or len(contender) < 2:
        raise ValueError("a paired ratio needs two series of the same length, at least 2 rounds")
    from scipy import stats  # loaded when a race decides, not when `perfcast --help` lists the strategies

    logs = sorted(math.log(b / a) for a, b in zip(contender, leader))
    n = len(logs)
    # The largest k with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2: [x_(k), x_(n+1-k)] covers the median.
    # The binomial quantile is the smallest k with P(B <= k) >= that, so P(B < k) is below it; at least 1.
    k = max(1, int(stats.binom.ppf((1 - confidence) / 2, n, 0.5)))
    return Ratio(math.exp(statistics.median(logs)), math.exp(logs[k - 1]), math.exp(logs[n - k]))


@dataclass(frozen=True)
class RaceResult:
    """A finished race: per contender its times per round (s), its ratio to the leader, and its round spread."""

    samples: list[list[float]]
    leader: int
    ratios: list[Ratio]  # the leader's own is (1, 1, 1)
    rounds: int
    decided: list[bool]

    def spread(self, index: int) -> float:
        """Return a contender's (max - min) / median over the rounds: how much the machine moved it."""
        times = self.samples[index]
        return (max(times) - min(times)) / statistics.median(times)


def race(run: Callable[[int], float], contenders: int, *, min_rounds: int = 3, max_rounds: int = 15,
         resolution: float = 0.02, confidence: float = 0.95) -> RaceResult:
    """Race `contenders` (indices 0..n-1, `run(i)` times one run of i, in s) round-robin until decided.

    A contender is decided when its interval against the leader excludes 1, or is within `resolution` of its
    estimate on both sides. The leader is the contender with the lowest median time so far.
    """
    if contenders < 1 or min_rounds < 2 or max_rounds < min_rounds:
        raise ValueError("a race needs a contender, min_rounds >= 2 and max_rounds >= min_rounds")
    samples: list[list[float]] = [[] for _ in range(contenders)]
    leader, ratios, decided = 0, [Ratio(1, 1, 1)] * contenders, [True] * contenders
    for round_ in range(max_rounds):
        for offset in range(contenders):  # rotate who runs first: no contender always follows the same one
            index = (round_ + offset) % contenders
            samples[index].append(run(index))
        if round_ + 1 < min_rounds or contenders == 1:
            continue
        leader = min(range(contenders), key=lambda i: statistics.median(samples[i]))
        ratios = [paired_ratio(samples[i], samples[leader], confidence) if i != leader else Ratio(1, 1, 1)
                  for i in range(contenders)]
        decided = [i == leader or r.separated or (r.high / r.estimate < 1 + resolution
                                                  and r.estimate / r.low < 1 + resolution)
                   for i, r in enumerate(ratios)]
        if all(decided):
            break
    return RaceResult(samples, leader, ratios, len(samples[0]), decided)
