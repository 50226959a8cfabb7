"""The effective core clock under load, from a chain of dependent one-cycle adds on every core."""

from __future__ import annotations

import ctypes
import platform
from dataclasses import dataclass
from pathlib import Path

from perfcast.bench.timing import median_and_spread
from perfcast.kernels.native import build_library

__all__ = ["ClockSample", "measure_clock"]

SOURCE = Path(__file__).parent / "kernels" / "clock.c"
ADDS_PER_ITERATION = 8


@dataclass(frozen=True)
class ClockSample:
    """Clock in Hz while all `threads` threads run (median over repetitions), spread (max - min) / median."""

    median: float
    spread: float
    repetitions: int
    threads: int


def measure_clock(threads: int, iterations: int = 20_000_000, repetitions: int = 5) -> ClockSample:
    """Return the clock (Hz) of the slowest of `threads` cores each retiring a dependent add per cycle."""
    if platform.machine() not in ("x86_64", "AMD64", "aarch64", "arm64"):
        raise RuntimeError(f"the clock probe supports x86-64 and AArch64, not {platform.machine()}")
    library = build_library(SOURCE)
    chain = library.handle.add_chain
    chain.argtypes = [ctypes.c_long, ctypes.c_int]
    chain.restype = ctypes.c_double
    chain(iterations // 10, threads)  # warm-up: wakes the cores up from idle clocks
    rates = []
    for _ in range(repetitions):
        seconds = chain(iterations, threads)
        if seconds <= 0:
            raise RuntimeError("clock probe: the add chain did not run")
        rates.append(iterations * ADDS_PER_ITERATION / seconds)
    return ClockSample(*median_and_spread(rates), repetitions, threads)
