"""Measured against modelled time for each step of a hierarchical tuning run."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from perfcast.tune.partial_models import FittedModel

__all__ = ["partial_models_figure"]

_X_LABELS = {"(1)": "posbs", "(2)": "simbs", "(3)": "vwidth", "(4)": "vwidth x simbs x speedup(vwidth)",
             "(5)": "wgsize", "(6)": "ngroup"}


def partial_models_figure(fits: Sequence[FittedModel], title: str) -> Figure:
    """Return one panel per fitted model: measured mean times (ms) and the fitted curve, constants in the legend."""
    if not fits:
        raise ValueError("no fitted model to draw")
    columns = min(3, len(fits))
    rows = -(-len(fits) // columns)
    figure = Figure(figsize=(5.2 * columns, 4.0 * rows), dpi=110, layout="constrained")
    axes = np.atleast_1d(figure.subplots(rows, columns, squeeze=False)).ravel()
    for ax, fit in zip(axes, fits):
        dense = np.geomspace(fit.x.min(), fit.x.max(), 100) if fit.x.min() > 0 else np.linspace(fit.x.min(), fit.x.max(), 100)
        ax.plot(fit.x, fit.measured * 1e3, "o", color="#1f77b4", mec="black", label="measured (mean)")
        constants = ", ".join(
            f"{k}={v:.3g}" + (f"±{fit.errors[k]:.1g}" if fit.errors.get(k) else "") for k, v in fit.constants.items()
        )
        ax.plot(dense, fit.predict(dense) * 1e3, "-", color="#d62728", label=f"model: {constants}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        plain = FuncFormatter(lambda value, _: f"{value:g}")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(plain)
            axis.set_minor_formatter(plain if axis is ax.yaxis else NullFormatter())
        ax.set_xlabel(_X_LABELS.get(fit.name[:3], "parameter"))
        ax.set_ylabel("kernel time [ms]")
        ax.set_title(f"{fit.name}: rms error {fit.rms_relative_error:.1%}\n{fit.formula}", fontsize=8)
        ax.legend(fontsize=7)
        ax.grid(True, color="#dddddd", lw=0.6)
    for ax in axes[len(fits):]:
        ax.set_visible(False)
    figure.suptitle(title, fontsize=11)
    return figure
