"""Timing a call honestly: warm-up runs discarded, repeated runs, median and spread."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["TimingSample", "time_call"]


@dataclass(frozen=True)
class TimingSample:
    """Wall-clock seconds of repeated runs: median, relative spread (max - min) / median, and each run."""

    median: float
    spread: float
    samples: tuple[float, ...]


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
    median = float(np.median(samples))
    return TimingSample(median, (max(samples) - min(samples)) / median if median > 0 else 0.0, tuple(samples))
