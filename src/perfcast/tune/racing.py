"""Deciding between configurations on a noisy machine: a race, round-robin, compared by paired ratios.

Timings on a shared machine drift: the same configuration varies from one minute to the next by more than two
good configurations differ. Comparing means taken at different moments decides inside that drift. A race
runs the contenders in rounds, each round every contender once (in a rotating order), so that the drift
hits them alike, and compares each contender with the leader by the per-round ratio of their times. Its
log has a t-interval; the race goes on until every contender is decided — the interval excludes equality
(separated), or it is narrower than the resolution (their difference is known well enough) — or the rounds
run out, in which case the undecided are ties. Pure functions over a callable that times one run.
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
    """Return time_leader / time_contender per round, as a geometric mean with its t-interval (needs 2+ rounds)."""
    if len(contender) != len(leader) or len(contender) < 2:
        raise ValueError("a paired ratio needs two series of the same length, at least 2 rounds")
    from scipy import stats  # loaded when a race decides, not when `perfcast --help` lists the strategies

    logs = [math.log(b / a) for a, b in zip(contender, leader)]
    mean = statistics.fmean(logs)
    half = stats.t.ppf(0.5 + confidence / 2, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return Ratio(math.exp(mean), math.exp(mean - half), math.exp(mean + half))


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
    estimate on both sides. The leader is the contender with the best geometric-mean time so far.
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
        leader = min(range(contenders), key=lambda i: statistics.fmean(math.log(t) for t in samples[i]))
        ratios = [paired_ratio(samples[i], samples[leader], confidence) if i != leader else Ratio(1, 1, 1)
                  for i in range(contenders)]
        decided = [i == leader or r.separated or (r.high / r.estimate < 1 + resolution
                                                  and r.estimate / r.low < 1 + resolution)
                   for i, r in enumerate(ratios)]
        if all(decided):
            break
    return RaceResult(samples, leader, ratios, len(samples[0]), decided)
