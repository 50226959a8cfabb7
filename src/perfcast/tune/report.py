"""Fitting the partial models of spec §5.3 to the steps of a stored hierarchical VaR run."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfcast.tune.models import (
    FittedModel,
    fit_buffer_size,
    fit_combined,
    fit_saturation,
    fit_vector_width,
    fit_work_per_item,
)
from perfcast.tune.store import Measurement

__all__ = ["fit_varmc_run"]


def _last_sweep(measurements: Sequence[Measurement], step: str, name: str) -> list[Measurement]:
    """Return the last pass of a sweep of parameter `name`: the measurements that share every other parameter."""
    chosen = [m for m in measurements if m.step == step]
    if not chosen:
        return []
    others = {k: v for k, v in chosen[-1].config.items() if k != name}
    same = [m for m in chosen if {k: v for k, v in m.config.items() if k != name} == others]
    return sorted(same, key=lambda m: m.config[name])


def fit_varmc_run(measurements: Sequence[Measurement]) -> list[FittedModel]:
    """Return the partial models (1)-(6) fitted to a hierarchical run's steps (those with two points or more)."""
    fits: list[FittedModel] = []

    def usable(points: Sequence[Measurement]) -> bool:
        return len(points) >= 2

    posbs = _last_sweep(measurements, "1-item:posbs", "posbs")
    if usable(posbs):
        npos = posbs[0].size["npos"]
        fits.append(fit_buffer_size([m.config["posbs"] for m in posbs], [m.mean for m in posbs], npos))
    simbs = _last_sweep(measurements, "1-item:simbs", "simbs")
    if usable(simbs):
        fits.append(fit_work_per_item([m.config["simbs"] for m in simbs], [m.mean for m in simbs]))
    vwidth = _last_sweep(measurements, "1-item:vwidth", "vwidth")
    if usable(vwidth):
        vector = fit_vector_width([m.config["vwidth"] for m in vwidth], [m.mean for m in vwidth])
        fits.append(vector)
        item = [m for m in measurements if m.step.startswith("1-item:") and m.config["posbs"] == vwidth[0].config["posbs"]]
        unique = {(m.config["simbs"], m.config["vwidth"]): m for m in item}
        if len(unique) >= 3:
            points = list(unique.values())
            fits.append(fit_combined([m.config["simbs"] for m in points], [m.config["vwidth"] for m in points],
                                     [m.mean for m in points], vector.constants["r_seq"], vector.constants["vwidth_max"]))
    group = _last_sweep(measurements, "2-group", "wgsize")
    if usable(group):
        fits.append(fit_saturation("(5) work-group", "wgsize", "n_PE", [m.config["wgsize"] for m in group],
                                   [m.mean for m in group]))
    ndrange = [m for m in measurements if m.step == "3-ndrange"]
    if usable(ndrange):
        groups = [m.size["nsim"] / (m.config["simbs"] * m.config["vwidth"] * m.config["wgsize"]) for m in ndrange]
        order = np.argsort(groups)
        fits.append(fit_saturation("(6) NDRange", "ngroup", "n_CU", np.asarray(groups)[order],
                                   np.asarray([m.mean for m in ndrange])[order]))
    return fits
