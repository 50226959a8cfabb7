"""Charts of the GPU corpus report: fraction of the roofline per kernel and GPU, projection error heatmap, hull ranges."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["hull_ranges_chart", "projection_heatmap", "roofline_fraction_chart"]


def roofline_fraction_chart(fractions: Mapping[str, Mapping[str, float]], title: str) -> Any:
    """Return a grouped bar chart: per kernel, each GPU's best configuration as a fraction of its roofline bound."""
    import matplotlib.pyplot as plt

    kernels = list(fractions)
    devices = sorted({d for per in fractions.values() for d in per})
    fig, ax = plt.subplots(figsize=(10, 4.2), layout="constrained")
    width = 0.8 / max(1, len(devices))
    cmap = plt.get_cmap("tab10")
    for i, device in enumerate(devices):
        x = [k + i * width for k, kernel in enumerate(kernels) if device in fractions[kernel]]
        y = [fractions[kernel][device] for kernel in kernels if device in fractions[kernel]]
        ax.bar(x, y, width, label=device, color=cmap(i % 10))
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(kernels))], kernels)
    ax.set_ylabel("bound / best measured time")
    ax.set_title(title)
    ax.legend(ncol=5, fontsize=7, loc="upper right")
    return fig


def projection_heatmap(devices: Sequence[str], errors: Mapping[tuple[str, str], float], title: str) -> Any:
    """Return a source x target heatmap of the projection's error (APE of the target's best configuration)."""
    import matplotlib.pyplot as plt

    grid = np.full((len(devices), len(devices)), np.nan)
    for (source, target), value in errors.items():
        grid[devices.index(source), devices.index(target)] = value * 100
    fig, ax = plt.subplots(figsize=(7.5, 6.2), layout="constrained")
    # The colours stop at 100 %: a few far misses would otherwise wash out every other cell; the numbers say all.
    image = ax.imshow(np.minimum(grid, 100.0), cmap="viridis_r", vmin=0, vmax=100)
    for i in range(len(devices)):
        for j in range(len(devices)):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=7,
                        color="white" if grid[i, j] > 50 else "black")
    ax.set_xticks(range(len(devices)), devices, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(devices)), devices, fontsize=8)
    ax.set_xlabel("target")
    ax.set_ylabel("source")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label="APE of the best configuration (%, colours capped at 100)")
    return fig


def hull_ranges_chart(rows: Sequence[tuple[str, float, float, float]], title: str) -> Any:
    """Return the boat hull's ranges (lower, upper, s) as bars with the best measured time as a point, log scale."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 0.28 * len(rows) + 1.2), layout="constrained")
    for i, (_label, lower, upper, measured) in enumerate(rows):
        inside = lower <= measured <= upper
        ax.plot([lower, upper], [i, i], color="tab:blue", lw=5, solid_capstyle="butt")
        ax.plot([measured], [i], marker="o", color="tab:green" if inside else "tab:red", ms=5)
    ax.set_xscale("log")
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time (s): predicted range (bar), best measured (dot: green inside, red outside)")
    ax.set_title(title)
    return fig
