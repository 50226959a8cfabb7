"""fp32/fp64 FMA peaks and the 1-thread fp32 peak: perfcast's CPU kernels against likwid-bench, alternating.

Run from the repository root after `make test` (needs likwid: apt-get install likwid) on an AVX/AVX2 x86 CPU:
    .venv/bin/python docs/validation/scripts/peaks_vs_likwid.py
Prints a Markdown table: perfcast and likwid-bench medians (GFLOP/s) over 5 rounds that alternate which runs
first, and their ratio. likwid-bench kernels: peakflops_sp_avx_fma / peakflops_avx_fma on 24 kB per thread.
"""

import ctypes
import re
import statistics
import subprocess
from collections.abc import Callable

import numpy as np

from perfcast.bench.cpu import SOURCE, _declare, _ptr, register_blocks
from perfcast.bench.suite import calibrated_rate
from perfcast.kernels.native import build_library, native_flags

LIBRARY = _declare(build_library(SOURCE, native_flags()))
BLOCK_BYTES = register_blocks()[0].block_bytes
CHAIN_LENGTH = 256


def perfcast_peak(function: str, threads: int, scalar: type, size: int) -> float:
    """Return perfcast's measured FMA rate (op/s) of kernel `function` on `threads` threads."""
    sink = np.zeros(64, dtype=np.float32 if size == 4 else np.float64)
    kernel = getattr(LIBRARY, function)
    return calibrated_rate(
        lambda passes: kernel(passes, CHAIN_LENGTH, threads, scalar(0.999), scalar(1e-3),
                              _ptr(sink, ctypes.POINTER(scalar))),
        threads * (BLOCK_BYTES // size) * CHAIN_LENGTH * 2, 5, 0.05,
    ).value


def likwid_peak(test: str, threads: int) -> float:
    """Return likwid-bench's rate (op/s) of `test` on `threads` threads of the first socket."""
    workgroup = f"N:24kB:{threads}" if threads > 1 else "S0:24kB:1"
    text = subprocess.run(["likwid-bench", "-t", test, "-W", workgroup], capture_output=True, text=True,
                          check=True).stdout
    found = re.search(r"MFlops/s:\s+([\d.]+)", text)
    assert found, text
    return float(found.group(1)) * 1e6


CASES: dict[str, tuple[Callable[[], float], Callable[[], float]]] = {
    "fp32 FMA peak, 2 threads": (lambda: perfcast_peak("peak_f32_fma", 2, ctypes.c_float, 4),
                                 lambda: likwid_peak("peakflops_sp_avx_fma", 2)),
    "fp64 FMA peak, 2 threads": (lambda: perfcast_peak("peak_f64_fma", 2, ctypes.c_double, 8),
                                 lambda: likwid_peak("peakflops_avx_fma", 2)),
    "fp32 FMA, 1 thread": (lambda: perfcast_peak("peak_f32_fma", 1, ctypes.c_float, 4),
                           lambda: likwid_peak("peakflops_sp_avx_fma", 1)),
}

if __name__ == "__main__":
    print("| figure | perfcast | likwid-bench | ratio |")
    print("|---|---:|---:|---:|")
    for name, (ours, theirs) in CASES.items():
        mine: list[float] = []
        peer: list[float] = []
        for round_number in range(5):
            order = [(ours, mine), (theirs, peer)]
            for measure, into in order if round_number % 2 == 0 else reversed(order):
                into.append(measure())
        ratio = statistics.median(mine) / statistics.median(peer)
        print(f"| {name} | {statistics.median(mine) / 1e9:.1f} | {statistics.median(peer) / 1e9:.1f} | {ratio:.2f} |")
