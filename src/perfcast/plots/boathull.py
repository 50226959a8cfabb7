"""The boat hull chart (spec §2.6) and the application report chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter
from numpy.typing import ArrayLike

from perfcast.models.boathull import ApplicationPrediction, HullPrediction

__all__ = ["HullPanel", "MeasuredPoints", "application_figure", "hull_figure"]

_TERM_STYLE = {
    "c0": dict(color="#1f77b4", ls="-", lw=1.6),
    "m0": dict(color="#d62728", ls="-", lw=1.6),
    "c1": dict(color="#1f77b4", ls="--", lw=1.1),
    "c2": dict(color="#9467bd", ls="--", lw=1.1),
    "c3": dict(color="#8c564b", ls="--", lw=1.1),
    "m1": dict(color="#d62728", ls="--", lw=1.1),
    "i1": dict(color="#2ca02c", ls="--", lw=1.1),
}
_TERM_MEANING = {
    "c0": "c0 compute", "m0": "m0 memory", "c1": "c1 floor: no FMA", "c2": "c2 floor: single-threaded vector",
    "c3": "c3 floor: single-threaded scalar", "m1": "m1 floor: scattered accesses",
    "i1": "i1 floor: on-chip loads take issues",
}
_CPU_TERM_MEANING = {**_TERM_MEANING, "c1": "c1 floor: multi-threaded scalar"}


@dataclass(frozen=True)
class MeasuredPoints:
    """Measured execution times (s) at complexities f, to overlay on a hull."""

    f: ArrayLike
    time: ArrayLike
    label: str = "measured"


@dataclass(frozen=True)
class HullPanel:
    """One (processor, class) graph: a prediction over a dense f grid, and optional measured points."""

    title: str
    prediction: HullPrediction
    measured: MeasuredPoints | None = None
    show_transfer: bool = False


def _time_axis(ax, label: str) -> None:  # noqa: ANN001 - a matplotlib Axes
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(plain)
    ax.yaxis.set_major_formatter(plain)
    ax.set_xlabel("operator complexity f [ops per application]")
    ax.set_ylabel(label)
    ax.grid(True, which="major", color="#dddddd", lw=0.6)


def hull_figure(panels: Sequence[HullPanel], suptitle: str | None = None) -> Figure:
    """Return a Figure with one boat hull graph per panel, side by side; times are drawn in ms."""
    if not panels:
        raise ValueError("a hull figure needs at least one panel")
    figure = Figure(figsize=(6.4 * len(panels), 5.2), dpi=120, layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    for ax, panel in zip(axes, panels):
        p = panel.prediction
        ms = 1e3
        meaning = _CPU_TERM_MEANING if "c2" in p.terms else _TERM_MEANING
        hull = np.maximum(p.terms["c0"], p.terms["m0"])
        # The hull is drawn first, wide and pale, so that the c0 and m0 lines stay visible on top of it.
        ax.plot(p.f, hull * ms, color="#bbbbbb", lw=7, solid_capstyle="butt", label="hull max(c0, m0)")
        if p.floors:
            ax.fill_between(p.f, hull * ms, (p.upper - p.transfer) * ms, color="#ffbf00", alpha=0.22,
                            label="predicted range (floors kept)")
        for name, values in p.terms.items():
            if name == "t0" or (name not in ("c0", "m0") and name not in p.floors):
                continue
            ax.plot(p.f, values * ms, label=meaning.get(name, name), **_TERM_STYLE.get(name, {}))
        if panel.show_transfer and "t0" in p.terms:
            t0 = p.terms["t0"]
            ax.plot(p.f, (hull + t0) * ms, color="black", ls=":", lw=1.6, label="hull + t0 (transfers)")
            if p.floors:
                ax.plot(p.f, (p.upper - p.transfer + t0) * ms, color="#888888", ls=":", lw=1.2,
                        label="upper end + t0")
        if panel.measured is not None:
            ax.plot(np.asarray(panel.measured.f), np.asarray(panel.measured.time) * ms, "o", color="#2ca02c",
                    mec="black", ms=7, label=panel.measured.label)
        _time_axis(ax, "execution time [ms]")
        ax.set_title(panel.title, fontsize=10)
        ax.legend(fontsize=8, loc="upper left")
    if suptitle:
        figure.suptitle(suptitle, fontsize=11)
    return figure


def application_figure(
    results: Mapping[str, ApplicationPrediction], title: str | None = None
) -> Figure:
    """Return a bar chart of each primitive's predicted range (ms) per device: solid to the lower end, hatched to the upper."""
    if not results:
        raise ValueError("an application figure needs at least one device")
    devices = list(results)
    first = results[devices[0]]
    names = [name for name, _ in first.primitives] + [name for name, _ in first.transfers] + ["total"]
    figure = Figure(figsize=(9, 0.32 * len(names) * len(devices) + 2.2), dpi=120, layout="constrained")
    ax = figure.add_subplot()
    height = 0.8 / len(devices)
    smallest = np.inf
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    for index, device in enumerate(devices):
        result = results[device]
        lower = [p.lower[0] for _, p in result.primitives] + [t for _, t in result.transfers] + [result.lower]
        upper = [p.upper[0] for _, p in result.primitives] + [t for _, t in result.transfers] + [result.upper]
        positions = np.arange(len(names)) + index * height
        colour = colours[index % len(colours)]
        lower_ms = np.asarray(lower) * 1e3
        upper_ms = np.asarray(upper) * 1e3
        smallest = min(smallest, lower_ms[lower_ms > 0].min(initial=np.inf))
        ax.barh(positions, lower_ms, height=height, color=colour, label=f"{device}: lower end")
        ax.barh(positions, upper_ms - lower_ms, left=lower_ms, height=height, color="none", edgecolor=colour,
                hatch="///", label=f"{device}: up to upper end")
    ax.set_yticks(np.arange(len(names)) + height * (len(devices) - 1) / 2, names)
    ax.invert_yaxis()
    ax.set_xscale("log")
    if np.isfinite(smallest):
        ax.set_xlim(left=smallest / 3)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.set_xlabel("predicted time [ms] (log scale; transfers of 0 s are not drawn)")
    ax.grid(True, axis="x", color="#dddddd", lw=0.6)
    ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.01), ncol=2, frameon=False)
    figure.suptitle(title or "Application prediction (boat hull)", fontsize=11)
    return figure
