"""The quadrant-split chart of the quantitative roofline (spec §3): devices as points, one kernel as a half-line.

x is memory bandwidth (GB/s), y the adjusted compute throughput T'_op (GFLOP/s or GOP/s). The kernel is the
half-line y = O_krn x through the origin. A device above it is memory bound for this kernel and its estimate is
straight below, on the line (B_mem, O_krn B_mem); a device below it is compute bound and its estimate lies to its
left, on the line (T'_op / O_krn, T'_op). Arrows go from each device to its estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.figure import Figure

from perfcast.models.quantitative import QuantitativePrediction

__all__ = ["quadrant_figure"]

GIGA = 1e9
_COLOURS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"]


def _estimate(prediction: QuantitativePrediction) -> tuple[float, float]:
    """Return the device's estimate on the kernel line, (GB/s, G op/s)."""
    b_mem, t_adj = prediction.rates.b_mem / GIGA, prediction.t_op_adjusted / GIGA
    if prediction.bound == "memory":
        return b_mem, prediction.performance / GIGA
    if math.isinf(prediction.o_krn):
        return 0.0, t_adj if prediction.bound == "compute" else prediction.performance / GIGA
    if prediction.bound != "compute":  # a floor, the divisions or the atomics (§3.1–§3.4): on the kernel line
        performance = prediction.performance / GIGA
        return performance / prediction.o_krn, performance
    return t_adj / (prediction.o_krn), t_adj


def quadrant_figure(kernel: str, predictions: Sequence[tuple[str, QuantitativePrediction]], *,
                    log: bool = False) -> Figure:
    """Return the quadrant-split chart of one kernel on several devices (names with their predictions)."""
    if not predictions:
        raise ValueError("the quadrant-split chart needs at least one device")
    figure = Figure(figsize=(7.5, 6), layout="constrained")
    ax = figure.add_subplot()
    o_krn = predictions[0][1].o_krn
    points = [(p.rates.b_mem / GIGA, p.t_op_adjusted / GIGA) for _, p in predictions]
    estimates = [_estimate(p) for _, p in predictions]
    xs = [x for x, _ in points + estimates if x > 0]
    ys = [y for _, y in points + estimates if y > 0]
    if log:
        x_max, y_max = max(xs) * 3, max(ys) * 3
        x_min, y_min = min(xs) / 3, min(ys) / 3
        ax.set_xscale("log")
        ax.set_yscale("log")
    else:
        x_max, y_max = max(xs) * 1.25, max(ys) * 1.25
        x_min, y_min = 0.0, 0.0
    ax.set_xlim(x_min, x_max)
    ax.set_ylim(y_min, y_max)
    unit = "GOP/s" if predictions[0][1].kernel.k_type == "int" else "GFLOP/s"
    # The half-line and the two half-planes it splits the chart into.
    if math.isinf(o_krn):
        line_x, line_y = [x_min, x_min], [y_min, y_max]
        label = "kernel: no DRAM traffic (every device compute bound)"
    else:
        line_x = [max(x_min, 1e-12), x_max]
        line_y = [o_krn * x for x in line_x]
        label = f"kernel: O_krn = {o_krn:.3g} op/B"
    ax.fill_between(line_x, line_y, [y_max * 10] * 2, color="#fdd0a2", alpha=0.35, lw=0,
                    label="devices here: memory bound")
    ax.fill_between(line_x, [y_min if log else 0.0] * 2, line_y, color="#c6dbef", alpha=0.35, lw=0,
                    label="devices here: compute bound")
    ax.plot(line_x, line_y, color="black", lw=2, label=label)
    for index, ((name, prediction), (x, y), (ex, ey)) in enumerate(zip(predictions, points, estimates)):
        colour = _COLOURS[index % len(_COLOURS)]
        ax.plot([x], [y], "o", color=colour, ms=8, label=f"{name}: {prediction.bound} bound, "
                f"{prediction.performance / GIGA:.4g} {unit}")
        if (ex, ey) != (x, y):
            ax.annotate("", xy=(ex, ey), xytext=(x, y),
                        arrowprops={"arrowstyle": "->", "color": colour, "lw": 1.5})
        ax.plot([ex], [ey], "x", color=colour, ms=8)
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(6, 6), fontsize=9, color=colour)
    ax.set_xlabel("memory bandwidth B_mem (GB/s)")
    ax.set_ylabel(f"adjusted compute throughput T'_op ({unit})")
    ax.set_title(f"Quadrant split: {kernel}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, framealpha=0.9)
    return figure
