"""The chart of `perfcast choose`: predicted time against cost (or energy) per run, the Pareto front highlighted.

Each device is a point at its predicted time (s) with its validated interval as a horizontal bar; the vertical
axis is the cost of one run (USD) where prices are known, else its energy (J). The devices of the Pareto front
(nothing is both faster and cheaper) are drawn filled and joined by a step line; a measured time is a star.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.figure import Figure

__all__ = ["ChoicePoint", "choice_figure"]


@dataclass(frozen=True)
class ChoicePoint:
    """One device on the chart: time (s), its interval (s, high may be inf), cost or energy, front, measured time."""

    device: str
    time: float
    interval: tuple[float, float] | None
    value: float | None  # USD or J per run
    pareto: bool
    measured: float | None = None


def choice_figure(points: Sequence[ChoicePoint], title: str, value_label: str) -> Figure:
    """Return the time-against-cost (or energy) chart of a ranking; devices without a value are listed below it."""
    figure = Figure(figsize=(9, 6), layout="constrained")
    ax = figure.add_subplot()
    shown = [(p, p.value) for p in points if p.value is not None]
    missing = [p.device for p in points if p.value is None]
    for point, value in shown:
        colour = "#d95f02" if point.pareto else "#7570b3"
        if point.interval is not None:
            low, high = point.interval
            right = high if math.isfinite(high) else point.time * 10
            ax.plot([low, right], [value, value], color=colour, alpha=0.35, lw=3,
                    ls="-" if math.isfinite(high) else ":")
        ax.scatter([point.time], [value], s=45, zorder=3, color=colour if point.pareto else "white",
                   edgecolor=colour, lw=1.5)
        if point.measured is not None:
            ax.scatter([point.measured], [value], marker="*", s=110, zorder=4, color="black")
        ax.annotate(point.device, (point.time, value), textcoords="offset points", xytext=(5, 4), fontsize=8)
    front = sorted(((p, v) for p, v in shown if p.pareto), key=lambda pair: pair[0].time)
    if len(front) > 1:
        ax.step([p.time for p, _ in front], [v for _, v in front], where="post", color="#d95f02", lw=1,
                label="Pareto front (nothing both faster and cheaper)")
    if shown:
        ax.set_xscale("log")
        ax.set_yscale("log")
    label = "predicted time per run (s); bar: validated interval, dotted: no upper limit; star: measured"
    if missing:
        # In the axis label, so that the layout makes room for it (a free text would overlap the label).
        label += "\n" + textwrap.fill("not drawn (no figure for this axis): " + ", ".join(missing), 110)
    ax.set_xlabel(label, fontsize=9)
    ax.set_ylabel(value_label)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    if len(front) > 1:
        ax.legend(fontsize=8, loc="best")
    return figure
