"""Timing a call honestly: warm-up runs discarded, repeated runs, median and spread."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["TimingSample", "interleaved_timings", "median_and_spread", "time_call"]


@dataclass(frozen=True)
class TimingSample:
    """Wall-clock seconds of repeated runs: median, relative spread (max - min) / median, and each run."""

    median: float
    spread: float
    samples: tuple[float, ...]


def median_and_spread(values: Sequence[float]) -> tuple[float, float]:
    """Return the median of `values` and their spread (max - min) / median (0 where the median is 0)."""
    median = float(np.median(values))
    return median, (max(values) - min(values)) / median if median > 0 else 0.0


def _sample(samples: list[float]) -> TimingSample:
    return TimingSample(*median_and_spread(samples), tuple(samples))


def time_call(run: Callable[[], object], repetitions: int = 10, warmup: int = 1) -> TimingSample:
    """Return the timing (s) of `repetitions` calls of `run` after `warmup` discarded calls."""
    if repetitions < 1 or warmup < 0:
        raise ValueError("repetitions must be >= 1 and warmup >= 0")
    for _ in range(warmup):
        run()
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return _sample(samples)


def interleaved_timings(
    runs: Sequence[Callable[[], object]],
    repetitions: int = 10,
    warmup: int = 1,
    progress: Callable[[int], None] = lambda _: None,
) -> list[TimingSample]:
    """Return the timing (s) of each call in `runs`, timed round-robin: one run of each per round.

    On a shared, noisy machine a slow spell then touches every call alike
    instead of a few neighbouring ones, so their ratios stay comparable.
    `progress` gets the number of rounds completed.
    """
    if repetitions < 1 or warmup < 0:
        raise ValueError("repetitions must be >= 1 and warmup >= 0")
    for run in runs:
        for _ in range(warmup):
            run()
    samples: list[list[float]] = [[] for _ in runs]
    for round_ in range(repetitions):
        for index, run in enumerate(runs):
            start = time.perf_counter()
            run()
            samples[index].append(time.perf_counter() - start)
        progress(round_ + 1)
    return [_sample(values) for values in samples]
