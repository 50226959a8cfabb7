"""The campaign chart: predicted against measured time per kernel, one marker per model, log-log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.figure import Figure

__all__ = ["PredictedPoint", "predicted_vs_measured_figure"]

_STYLE = {
    "roofline": dict(marker="v", color="#1b9e77", label="roofline lower bound"),
    "boat hull": dict(marker="s", color="#d95f02", label="boat hull range (middle)"),
    "quantitative": dict(marker="o", color="#7570b3", label="quantitative roofline"),
    "projection": dict(marker="D", color="#e7298a", label="projection interval (middle)"),
}


@dataclass(frozen=True)
class PredictedPoint:
    """One model's prediction of one kernel: measured time, predicted time, optional range (all s)."""

    kernel: str
    model: str
    measured: float
    predicted: float
    lower: float | None = None
    upper: float | None = None


def predicted_vs_measured_figure(points: Sequence[PredictedPoint], title: str) -> Figure:
    """Return the log-log chart of predicted against measured times, with the y = x line and a 2x band."""
    if not points:
        raise ValueError("nothing to draw: no kernel has a prediction")
    figure = Figure(figsize=(8, 7), layout="constrained")
    ax = figure.add_subplot()
    values = [v for p in points for v in (p.measured, p.predicted, p.lower, p.upper) if v]
    low, high = min(values) / 2, max(values) * 2
    ax.plot([low, high], [low, high], color="black", lw=1, label="predicted = measured")
    ax.fill_between([low, high], [low / 2, high / 2], [low * 2, high * 2], color="#cccccc", alpha=0.3, lw=0,
                    label="within 2x")
    for model, style in _STYLE.items():
        chosen = [p for p in points if p.model == model]
        if not chosen:
            continue
        ax.scatter([p.measured for p in chosen], [p.predicted for p in chosen], marker=style["marker"],
                   color=style["color"], label=style["label"], zorder=3, s=36)
        for p in chosen:
            if p.lower is not None and p.upper is not None:
                ax.plot([p.measured, p.measured], [p.lower, p.upper], color=style["color"], alpha=0.5, lw=2)
    for kernel in sorted({p.kernel for p in points}):
        measured = next(p.measured for p in points if p.kernel == kernel)
        ax.annotate(kernel, (measured, measured), textcoords="offset points", xytext=(5, -12), fontsize=7,
                    color="#444444")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_xlabel("measured time (s)")
    ax.set_ylabel("predicted time (s)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return figure
