"""A quick, honest DRAM bandwidth probe: numpy copies over arrays far larger than the last-level cache."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from perfcast.bench.timing import median_and_spread

__all__ = ["BandwidthSample", "measure_copy_bandwidth"]


@dataclass(frozen=True)
class BandwidthSample:
    """Copy bandwidth in B/s (bytes read + bytes written, STREAM convention) over timed repetitions."""

    median: float
    spread: float  # (max - min) / median of the per-repetition bandwidths
    repetitions: int
    threads: int
    array_bytes: int


def measure_copy_bandwidth(
    array_bytes: int = 256 * 2**20, threads: int | None = None, repetitions: int = 7
) -> BandwidthSample:
    """Return the median copy bandwidth (B/s) of `threads` threads copying one `array_bytes` array into another.

    numpy releases the GIL while copying, so each thread streams its own
    slice concurrently. The first copy (page faults, warm-up) is discarded.
    """
    if array_bytes < 8 * 1024:
        raise ValueError("array_bytes must be at least 8 KiB")
    if repetitions < 1:
        raise ValueError("repetitions must be at least 1")
    threads = threads or len(os.sched_getaffinity(0))
    count = array_bytes // 8
    source = np.ones(count)
    target = np.zeros(count)
    edges = np.linspace(0, count, threads + 1, dtype=np.int64)
    slices = [slice(int(lo), int(hi)) for lo, hi in zip(edges[:-1], edges[1:])]

    def copy(part: slice) -> None:
        np.copyto(target[part], source[part])

    rates = []
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for repetition in range(repetitions + 1):
            start = time.perf_counter()
            list(pool.map(copy, slices))
            elapsed = time.perf_counter() - start
            if repetition > 0:
                rates.append(2 * count * 8 / elapsed)
    median, spread = median_and_spread(rates)
    return BandwidthSample(
        median=median,
        spread=spread,
        repetitions=repetitions,
        threads=threads,
        array_bytes=count * 8,
    )
