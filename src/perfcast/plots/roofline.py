"""The log-log roofline chart: roof, ceilings, per-level bandwidths, locality walls and kernel points."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from perfcast.models.roofline import LocalityWall, Roofline, attainable_performance

__all__ = ["KernelMark", "roofline_figure"]

GIGA = 1e9
_LEVEL_COLOURS = {"L1": "#1b9e77", "shared": "#66a61e", "L2": "#d95f02", "L3": "#7570b3", "DRAM": "#000000"}
_LEVEL_MARKERS = {"L1": "^", "shared": "v", "L2": "s", "L3": "D", "DRAM": "o"}
_KERNEL_COLOURS = ["#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00", "#a65628", "#f781bf", "#999999"]


@dataclass(frozen=True)
class KernelMark:
    """A kernel on the chart: its intensity in op/B and its measured performance in op/s.

    The intensity is one number, or one per memory level for a hierarchical chart; a performance of None
    places the kernel on the roof it is bounded by.
    """

    name: str
    intensity: float | Mapping[str, float]
    performance: float | None = None


def _screen_angle(ax: Axes, x: float, y: float, slope: float) -> float:
    """Return the on-screen angle (degrees) of a line of log-log `slope` through (x, y)."""
    p1 = ax.transData.transform((x, y))
    p2 = ax.transData.transform((x * 2, y * 2**slope))
    return math.degrees(math.atan2(p2[1] - p1[1], p2[0] - p1[0]))


def _x_limits(
    roofline: Roofline, kernels: Sequence[KernelMark], walls: Sequence[LocalityWall], extra: Sequence[float] = ()
) -> tuple[float, float]:
    """Return x limits (op/B) spanning the ridge, every kernel and every wall, in whole decades."""
    points = [roofline.ridge / 64, roofline.ridge * 16, *extra]
    for kernel in kernels:
        values = kernel.intensity.values() if isinstance(kernel.intensity, Mapping) else [kernel.intensity]
        points += [v for v in values if 0 < v < math.inf]
    points += [wall.intensity for wall in walls if 0 < wall.intensity < math.inf]
    return 10 ** math.floor(math.log10(min(points) / 2)), 10 ** math.ceil(math.log10(max(points) * 2))


def roofline_figure(
    roofline: Roofline,
    kernels: Sequence[KernelMark] = (),
    *,
    walls: Sequence[LocalityWall] = (),
    levels: Mapping[str, float] | None = None,
    title: str | None = None,
    sweep: Sequence[tuple[float, float]] = (),
    sweep_label: str = "measured intensity sweep",
) -> Figure:
    """Return a matplotlib Figure of the roofline.

    `levels` adds one bandwidth diagonal (B/s) per memory level; `sweep` draws
    measured (intensity op/B, performance op/s) points joined by a line.
    """
    figure = Figure(figsize=(9, 6), dpi=120)
    figure.subplots_adjust(left=0.1, right=0.97, top=0.92, bottom=0.1)
    ax = figure.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.yaxis.set_major_formatter(plain)
    x_lo, x_hi = _x_limits(roofline, kernels, walls, [x for x, _ in sweep if x > 0])
    x = np.geomspace(x_lo, x_hi, 512)
    lowest_ceiling = min([c.value for c in roofline.compute_ceilings], default=roofline.peak)
    y_lo = min(lowest_ceiling, roofline.bandwidth * x_lo) / GIGA / 4
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, roofline.peak / GIGA * 3)

    extra_levels = {name: rate for name, rate in (levels or {}).items() if name != "DRAM"}
    for name, rate in extra_levels.items():
        y = np.minimum(roofline.peak, rate * x) / GIGA
        ax.plot(x, y, color=_LEVEL_COLOURS.get(name, "#888888"), lw=1.4, label=f"{name} {rate / GIGA:,.0f} GB/s")

    roof = attainable_performance(x, roofline.peak, roofline.bandwidth) / GIGA
    ax.plot(x, roof, color="black", lw=2.6,
            label=f"roof: {roofline.peak / GIGA:,.1f} GFLOP/s, DRAM {roofline.bandwidth / GIGA:,.1f} GB/s")
    ax.plot([roofline.ridge], [roofline.peak / GIGA], "o", color="black", ms=5)
    ax.annotate(f"ridge {roofline.ridge:.3g} op/B", (roofline.ridge, roofline.peak / GIGA),
                textcoords="offset points", xytext=(6, -14), fontsize=8)

    # Ceilings of equal height (e.g. "no FMA" and "single thread" on a 2-core CPU) share one line and label.
    same_height: dict[float, list[str]] = {}
    for ceiling in roofline.compute_ceilings:
        same_height.setdefault(ceiling.value, []).append(ceiling.name)
    above = math.inf
    for value, names in sorted(same_height.items(), reverse=True):
        start = value / roofline.bandwidth
        ax.hlines(value / GIGA, start, x_hi, colors="#555555", linestyles="--", lw=1.1)
        # A label too close under the previous one goes below its line instead.
        below = above / value < 1.35
        ax.text(x_hi / 1.15, value / GIGA * (1 / 1.06 if below else 1.06),
                f"{' = '.join(names)}: {value / GIGA:,.1f} GFLOP/s",
                ha="right", va="top" if below else "bottom", fontsize=8, color="#333333")
        above = value
    for ceiling in roofline.bandwidth_ceilings:
        end = roofline.peak / ceiling.value
        xs = x[x <= end]
        ax.plot(xs, ceiling.value * xs / GIGA, color="#555555", ls="-.", lw=1.1)
        anchor = max(x_lo * 2, end / 64)
        ax.text(anchor, ceiling.value * anchor / GIGA / 1.5, f"{ceiling.name}: {ceiling.value / GIGA:,.1f} GB/s",
                fontsize=8, color="#333333", rotation=_screen_angle(ax, anchor, ceiling.value * anchor / GIGA, 1),
                rotation_mode="anchor", ha="left", va="top")

    for wall in walls:
        ax.axvline(wall.intensity, color="#8c564b", ls=":", lw=1.3)
        ax.text(wall.intensity * 1.05, y_lo * 1.5, f"wall: {wall.name} ({wall.intensity:.3g} op/B)",
                rotation=90, fontsize=8, color="#8c564b", va="bottom")

    for index, kernel in enumerate(kernels):
        colour = _KERNEL_COLOURS[index % len(_KERNEL_COLOURS)]
        per_level = dict(kernel.intensity) if isinstance(kernel.intensity, Mapping) else {"DRAM": kernel.intensity}
        performance = kernel.performance
        if performance is None:
            bounds = [roofline.peak] + [
                rate * per_level[name] for name, rate in {**extra_levels, "DRAM": roofline.bandwidth}.items()
                if name in per_level
            ]
            performance = min(bounds)
        for level, intensity in per_level.items():
            shown = min(max(intensity, x_lo), x_hi)
            ax.plot([shown], [performance / GIGA], _LEVEL_MARKERS.get(level, "o"), color=colour, ms=8,
                    mec="black", mew=0.6, label=f"{kernel.name} ({level})" if len(per_level) > 1 else kernel.name)
        ax.annotate(kernel.name, (min(max(min(per_level.values()), x_lo), x_hi), performance / GIGA),
                    textcoords="offset points", xytext=(-8, 8), ha="right", fontsize=9, color=colour)

    if sweep:
        intensities, rates = zip(*sorted(sweep))
        ax.plot(intensities, np.asarray(rates) / GIGA, "o-", color="#2ca02c", mec="black", ms=5, lw=1.2, label=sweep_label)

    ax.set_xlabel("Arithmetic intensity [op/B]  (work per byte of memory traffic)")
    ax.set_ylabel("Attainable performance [GFLOP/s]")
    ax.set_title(title or (f"Roofline — {roofline.label}" if roofline.label else "Roofline"), fontsize=11)
    ax.grid(True, which="major", color="#dddddd", lw=0.6)
    ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    return figure
