"""Charts of the cross-device projection (spec §4).

`projection_rooflines_figure`: two log-log panels, source and target. Each draws the kernel-specific
rooflines, one per memory level (min(BW_ceil^l x OI, Perf_ceil)), the Perf_mix and Perf_ceil lines, and the
kernel at its intensity per level: measured on the source; on the target the projected performance per level,
the interval shaded, and the target's measurement where it is known.

`projection_intervals_figure`: per kernel and target, the predicted time interval as a bar with its middle,
and the measured time, on a log time axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from perfcast.models.projection import KernelCeilings, Projection

__all__ = ["IntervalRow", "projection_intervals_figure", "projection_rooflines_figure"]

GIGA = 1e9
_LEVEL_COLOURS = {"L1": "#1b9e77", "L2": "#d95f02", "DRAM": "#7570b3"}
_LEVEL_MARKERS = {"L1": "o", "L2": "s", "DRAM": "^"}


def _panel(ax, ceilings: KernelCeilings, title: str, points: dict[str, float],  # noqa: ANN001 - matplotlib Axes
           span: tuple[float, float], work: str = "FLOP") -> None:
    """Draw one device's kernel-specific rooflines and the kernel's points (op/s per level) on `ax`; `work`: FLOP or OP."""
    low, high = span
    intensities = np.geomspace(low, high, 200)
    top = min(ceilings.perf_ceil, ceilings.perf_core or float("inf"))
    for level, bandwidth in ceilings.bandwidth_ceilings.items():
        roof = np.minimum(bandwidth * intensities, top) / GIGA
        ax.plot(intensities, roof, color=_LEVEL_COLOURS[level], lw=1.5,
                label=f"{level}: BW_ceil {bandwidth / GIGA:.4g} GB/s")
    ax.axhline(ceilings.perf_mix / GIGA, color="black", ls="--", lw=1,
               label=f"Perf_mix {ceilings.perf_mix / GIGA:.4g} G{work}/s")
    if ceilings.perf_ceil < ceilings.perf_mix * (1 - 1e-9):
        ax.axhline(ceilings.perf_ceil / GIGA, color="black", ls=":", lw=1,
                   label=f"Perf_ceil (warp efficiency) {ceilings.perf_ceil / GIGA:.4g} G{work}/s")
    if ceilings.perf_core is not None:
        ax.axhline(ceilings.perf_core / GIGA, color="#e7298a", ls="-.", lw=1,
                   label=f"Perf_core (core-bound time) {ceilings.perf_core / GIGA:.4g} G{work}/s")
    for level, performance in points.items():
        ax.scatter([ceilings.intensities[level]], [performance / GIGA], color=_LEVEL_COLOURS[level],
                   marker=_LEVEL_MARKERS[level], s=50, zorder=4, edgecolor="black", lw=0.5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"operational intensity ({work}/B traversing the level)")
    ax.set_ylabel(f"performance (G{work}/s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)


def projection_rooflines_figure(kernel: str, source: str, target: str, projection: Projection,
                                measured_target: float | None = None, work: str = "FLOP") -> Figure:
    """Return the source and target rooflines of one kernel, its measured point and its projected interval.

    measured_target: the kernel's measured time on the target (s), drawn as a star when given; work: what the
    kernel's operations are, FLOP, or OP for an integer kernel's instructions.
    """
    figure = Figure(figsize=(12, 5.2), layout="constrained")
    left, right = figure.subplots(1, 2, sharey=True)
    all_intensities = [*projection.source.intensities.values(), *projection.target.intensities.values()]
    span = (min(all_intensities) / 20, max(all_intensities) * 20)
    measured_points = {level: projection.measured_performance for level in projection.per_level}
    _panel(left, projection.source, f"{source}: {kernel} as measured", measured_points, span, work)
    _panel(right, projection.target, f"{target}: {kernel} projected", projection.per_level, span, work)
    right.axhspan(projection.lower / GIGA, projection.upper / GIGA, color="#e7298a", alpha=0.18,
                  label=f"projected interval {projection.lower / GIGA:.4g}–{projection.upper / GIGA:.4g} G{work}/s")
    right.axhline(projection.middle / GIGA, color="#e7298a", lw=1)
    if measured_target is not None:
        performance = projection.flop_target / measured_target
        right.scatter([max(projection.target.intensities.values())], [performance / GIGA], marker="*", s=160,
                      color="#e6ab02", edgecolor="black", lw=0.5, zorder=5,
                      label=f"measured on {target}: {performance / GIGA:.4g} G{work}/s")
    for ax in (left, right):
        ax.legend(loc="upper left", fontsize=7)
    figure.suptitle(f"{kernel}: {source} -> {target}, kernel-specific rooflines (markers: L1 o, L2 s, DRAM ^)",
                    fontsize=11)
    return figure


@dataclass(frozen=True)
class IntervalRow:
    """One kernel on one target: the projected time interval (s), its middle, and the measurement if known."""

    kernel: str
    target: str
    fast: float
    slow: float
    middle: float
    measured: float | None = None


def projection_intervals_figure(rows: Sequence[IntervalRow], title: str) -> Figure:
    """Return horizontal bars of predicted time intervals per kernel and target, with the measured times."""
    if not rows:
        raise ValueError("nothing to draw: no kernel was projected")
    figure = Figure(figsize=(8, 1.2 + 0.38 * len(rows)), layout="constrained")
    ax = figure.add_subplot()
    targets = sorted({r.target for r in rows})
    colours = dict(zip(targets, ["#e7298a", "#1b9e77", "#7570b3", "#d95f02", "#66a61e", "#a6761d"] * 10))
    labelled: set[str] = set()
    for y, row in enumerate(rows):
        colour = colours[row.target]
        label = None if row.target in labelled else f"projected onto {row.target}"
        labelled.add(row.target)
        # A zero-width interval (one level only) still shows as a thin bar.
        ax.barh(y, max(row.slow - row.fast, row.middle * 0.02), left=row.fast, height=0.6, color=colour,
                alpha=0.45, label=label)
        ax.plot([row.middle, row.middle], [y - 0.3, y + 0.3], color=colour, lw=2)
        if row.measured is not None:
            ax.scatter([row.measured], [y], marker="*", color="black", s=70, zorder=4,
                       label="measured" if "measured" not in labelled else None)
            labelled.add("measured")
    ax.set_yticks(range(len(rows)), [f"{r.kernel} -> {r.target}" for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    values = [v for r in rows for v in (r.fast, r.slow, r.measured) if v]
    ax.set_xlim(min(values) / 1.6, max(values) * 1.6)
    ax.set_xlabel("time (s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    return figure
