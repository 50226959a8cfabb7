"""Established yardsticks run beside perfcast's own CPU measurements: a STREAM triad and a peak-FMA loop in C."""

from __future__ import annotations

import ctypes
import datetime as dt
import platform
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfcast.bench.cpu import bench_library, compute_rate, register_blocks, streaming_arrays, triad_rate
from perfcast.devices.schema import Device
from perfcast.kernels.native import build_executable
from perfcast.output_files import reproduce_block
from perfcast.units import Dimension, format_quantity

__all__ = [
    "REFERENCE_FLAGS", "Comparison", "compare_with_references", "comparison_markdown", "run_peakflops", "run_stream",
]

FOLDER = Path(__file__).parent / "reference"
REFERENCE_FLAGS = ("-O3", "-march=native", "-fopenmp")


def _reference_flags() -> tuple[str, ...]:
    """Return the reference builds' flags: as published, plus this CPU's register block (CHAINS) as -D."""
    return (*REFERENCE_FLAGS, *register_blocks()[0].defines())


def _run(program: Path, *arguments: object) -> dict[str, list[float]]:
    """Return the numeric fields of each output line of `program`, keyed by the line's first word."""
    result = subprocess.run([str(program), *map(str, arguments)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{program.name} failed ({result.returncode}): {result.stderr.strip()}")
    fields: dict[str, list[float]] = {}
    for line in result.stdout.splitlines():
        name, *values = line.split()
        try:
            fields[name] = [float(v) for v in values]
        except ValueError:
            continue
    return fields


def run_stream(elements: int, ntimes: int = 11) -> dict[str, float]:
    """Return the reference STREAM median copy and triad bandwidths (B/s) on `elements` doubles per array."""
    program, _, _ = build_executable(FOLDER / "stream.c", REFERENCE_FLAGS)
    fields = _run(program, elements, ntimes)
    return {"copy": fields["copy"][0], "triad": fields["triad"][0]}


def run_peakflops(iterations: int, ntimes: int = 11) -> float:
    """Return the reference loop's median fp32 FMA rate (op/s) on every core."""
    program, _, _ = build_executable(FOLDER / "peakflops.c", _reference_flags())
    return _run(program, iterations, ntimes)["fma"][0]


INTERVAL_CONFIDENCE = 0.9  # of the ratios' bootstrap intervals in the reports
INTERVAL_NOTE = ("The 90 % interval resamples each side's rounds (bootstrap, 2000 draws): a target inside it is "
                 "not told apart from the measured ratio by this run.")


@dataclass(frozen=True)
class Comparison:
    """perfcast against a reference, side by side over rounds: median rates and the ratio of medians."""

    figure: str
    unit: str
    perfcast: tuple[float, ...]
    reference: tuple[float, ...]

    @property
    def ratio(self) -> float:
        """Return median(perfcast) / median(reference)."""
        return float(np.median(self.perfcast) / np.median(self.reference))

    def interval(self, confidence: float = INTERVAL_CONFIDENCE, draws: int = 2000) -> tuple[float, float]:
        """Return the ratio's bootstrap interval (dimensionless): each side's rounds resampled, medians divided.

        On a shared machine the rounds of one side spread by tens of percent, so a ratio of medians over a
        few rounds moves by about as much between runs; a target inside this interval is not told apart from
        the measured ratio. The draws are seeded: the same rounds give the same interval.
        """
        rng = np.random.default_rng(0)
        ours, theirs = np.asarray(self.perfcast), np.asarray(self.reference)
        ratios = (np.median(rng.choice(ours, (draws, ours.size)), axis=1)
                  / np.median(rng.choice(theirs, (draws, theirs.size)), axis=1))
        tail = (1 - confidence) / 2
        low, high = np.quantile(ratios, [tail, 1 - tail])
        return float(low), float(high)

    def interval_text(self) -> str:
        """Return the ratio's 90 % interval as the reports print it: '0.967–1.169' (dimensionless)."""
        low, high = self.interval()
        return f"{low:.3f}–{high:.3f}"


def compare_with_references(
    threads: int, dram_elements: int, rounds: int = 5, progress: Callable[[int], None] = lambda _: None
) -> list[Comparison]:
    """Return DRAM triad and fp32 FMA peak, perfcast against the references, alternating within each round."""
    lib = bench_library()
    arrays = streaming_arrays(lib, dram_elements, threads)
    block = register_blocks()[0].block_bytes

    def our_triad() -> float:
        return triad_rate(lib, arrays, dram_elements, threads, 10, 0.02).value

    def our_peak() -> float:
        return compute_rate(lib, "peak_f32_fma", ctypes.c_float, threads, block, 10, 0.05).value

    pairs = [
        (our_triad, lambda: run_stream(dram_elements, 11)["triad"]),
        (our_peak, lambda: run_peakflops(20_000_000, 11)),
    ]
    ours: list[list[float]] = [[], []]
    theirs: list[list[float]] = [[], []]
    for done in range(rounds):
        for index, (mine, reference) in enumerate(pairs):
            # Alternate which goes first, so that neither always follows the other's warm caches or clocks.
            if done % 2:
                theirs[index].append(reference())
                ours[index].append(mine())
            else:
                ours[index].append(mine())
                theirs[index].append(reference())
        progress(done + 1)
    return [
        Comparison("DRAM triad bandwidth", "B/s", tuple(ours[0]), tuple(theirs[0])),
        Comparison("fp32 FMA peak", "op/s", tuple(ours[1]), tuple(theirs[1])),
    ]


def comparison_markdown(
    results: Sequence[Comparison], host: Device, elements: int, largest_cache: float, rounds: int, command: str
) -> str:
    """Return the side-by-side comparison as a Markdown report, with the command that reproduces it."""
    isa = register_blocks()[0]
    lines = [
        "# perfcast bench against established CPU references",
        "",
        "perfcast's native CPU backend (`src/perfcast/bench/kernels/bench.c`) and two references written in",
        "this repository, compiled as `gcc " + " ".join(REFERENCE_FLAGS) + "`:",
        "a STREAM triad (`src/perfcast/bench/reference/stream.c`) and a peak fp32 FMA loop with",
        f"`-DCHAINS={3 * isa.registers // 4}` independent accumulators of the widest vector type",
        f"(`src/perfcast/bench/reference/peakflops.c`; this CPU: {isa.name}, {isa.registers} vector registers of",
        f"{isa.vector_bytes} B; three quarters of them hold accumulators, the rest the constants).",
        "Both run on every core, side by side in the same command: each round runs perfcast and the reference",
        "once each, alternating which goes first. Each side's figure is the median over rounds of its",
        "per-round median; the ratio is perfcast / reference.",
        "",
        *reproduce_block(command),
        f"- date: {dt.date.today().isoformat()}; machine: {platform.machine()}, {platform.system()} {platform.release()}",
        f"- device: {host.full_name}, {host.threads} threads",
        f"- triad arrays: {elements:,} doubles each ({3 * elements * 8 / 2**20:,.0f} MiB in all, "
        f"{3 * elements * 8 / largest_cache:.0f}x the largest cache); {rounds} rounds",
        "",
        "| figure | perfcast (median) | reference (median) | perfcast / reference | 90 % interval | per round: perfcast "
        "| per round: reference |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for c in results:
        dimension = Dimension.BANDWIDTH if c.unit == "B/s" else Dimension.COMPUTE
        scale = 1e9  # per-round values in GB/s and GFLOP/s
        lines.append(
            f"| {c.figure} | {format_quantity(float(np.median(c.perfcast)), dimension)} | "
            f"{format_quantity(float(np.median(c.reference)), dimension)} | **{c.ratio:.3f}** | "
            f"{c.interval_text()} | {', '.join(f'{v / scale:.1f}' for v in c.perfcast)} | "
            f"{', '.join(f'{v / scale:.1f}' for v in c.reference)} |"
        )
    lines += ["", "Per-round values are in GB/s (triad) and GFLOP/s (peak). The target is a ratio of at least 0.95.",
              INTERVAL_NOTE]
    return "\n".join(lines) + "\n"
