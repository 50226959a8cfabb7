"""Partial performance models of the hierarchical method (spec §5.3), fitted by least squares to each step.

Pure: measurements in (parameter value, mean time s, standard deviation s),
fitted constants with their standard errors and the fit error out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import least_squares

from perfcast.tune.store import Measurement

__all__ = [
    "FittedModel",
    "fit_buffer_size",
    "fit_combined",
    "fit_per_work",
    "fit_saturation",
    "fit_vector_width",
    "fit_varmc_run",
    "fit_work_per_item",
]


@dataclass(frozen=True)
class FittedModel:
    """A partial model with its fitted constants, their standard errors, and the fit's relative RMS error."""

    name: str
    formula: str
    constants: dict[str, float]
    errors: dict[str, float]  # one standard error per fitted constant (0 for a constant chosen by search)
    rms_relative_error: float
    x: NDArray[np.float64]
    measured: NDArray[np.float64]
    predict: Callable[[NDArray[np.float64]], NDArray[np.float64]]


def _points(x: Sequence[float], t: Sequence[float]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    xs, ts = np.asarray(x, dtype=np.float64), np.asarray(t, dtype=np.float64)
    if xs.shape != ts.shape or xs.size < 2:
        raise ValueError("a fit needs at least two (value, time) points")
    if not (np.isfinite(ts).all() and (ts > 0).all()):
        raise ValueError("measured times must be positive and finite")
    return xs, ts


def _fit(
    name: str, formula: str, names: Sequence[str],
    model: Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]],
    x: NDArray[np.float64], t: NDArray[np.float64], start: Sequence[float], fixed: dict[str, float] | None = None,
) -> FittedModel:
    """Return the relative least-squares fit of model(params, x) to t."""
    result = least_squares(lambda p: (model(p, x) - t) / t, np.asarray(start, dtype=np.float64), bounds=(0, np.inf))
    residual = result.fun
    dof = max(1, x.size - len(start))
    try:
        covariance = np.linalg.inv(result.jac.T @ result.jac) * float(residual @ residual) / dof
        errors = np.sqrt(np.clip(np.diag(covariance), 0, None))
    except np.linalg.LinAlgError:
        errors = np.full(len(start), np.inf)
    params = result.x
    constants = dict(zip(names, map(float, params)))
    return FittedModel(
        name=name,
        formula=formula,
        constants={**constants, **(fixed or {})},
        errors={**dict(zip(names, map(float, errors))), **{k: 0.0 for k in (fixed or {})}},
        rms_relative_error=float(np.sqrt(np.mean(residual**2))),
        x=x,
        measured=t,
        predict=lambda xs: model(params, np.asarray(xs, dtype=np.float64)),
    )


def fit_buffer_size(posbs: Sequence[float], t: Sequence[float], n_elements: int) -> FittedModel:
    """Fit model (1): t = t_const + t_latency * n_elements / posbs (s)."""
    x, ts = _points(posbs, t)
    return _fit("(1) buffer size", "t = t_const + t_latency * n_elements / posbs", ("t_const", "t_latency"),
                lambda p, v: p[0] + p[1] * n_elements / v, x, ts, [ts.min(), ts.min() / n_elements])


def fit_work_per_item(simbs: Sequence[float], t: Sequence[float]) -> FittedModel:
    """Fit model (2): t = simbs * t_calc + t_fixed, t_fixed = t_bw + t_startup + t_latency * n_transfer (s).

    Within one sweep of simbs the three fixed terms do not vary, so only their sum can be identified.
    """
    x, ts = _points(simbs, t)
    return _fit("(2) work per item", "t = simbs * t_calc + (t_bw + t_startup + t_latency * n_transfer)",
                ("t_calc", "t_fixed"), lambda p, v: v * p[0] + p[1], x, ts, [ts.min() / x.max(), ts.min() / 2])


def fit_vector_width(vwidth: Sequence[float], t: Sequence[float]) -> FittedModel:
    """Fit model (3): t = t1 * vwidth * (r_seq + (1 - r_seq) / min(vwidth_max, vwidth)); vwidth_max by search."""
    x, ts = _points(vwidth, t)
    best: FittedModel | None = None
    for vmax in sorted({float(v) for v in x}):
        def model(p: NDArray[np.float64], v: NDArray[np.float64], vmax: float = vmax) -> NDArray[np.float64]:
            r = min(p[1], 1.0)
            return p[0] * v * (r + (1 - r) / np.minimum(vmax, v))

        fit = _fit("(3) vector width", "t = t1 * vwidth * (r_seq + (1 - r_seq) / min(vwidth_max, vwidth))",
                   ("t1", "r_seq"), model, x, ts, [ts[np.argmin(x)], 0.1], {"vwidth_max": vmax})
        if best is None or fit.rms_relative_error < best.rms_relative_error:
            best = fit
    assert best is not None
    return best


def fit_combined(
    simbs: Sequence[float], vwidth: Sequence[float], t: Sequence[float], r_seq: float, vwidth_max: float
) -> FittedModel:
    """Fit model (4): t = t_calc * vwidth * simbs * speedup(vwidth) + t_const, speedup from model (3)."""
    s, ts = _points(simbs, t)
    v = np.asarray(vwidth, dtype=np.float64)
    work = s * v * (r_seq + (1 - r_seq) / np.minimum(vwidth_max, v))
    return _fit("(4) combined", "t = t_calc * vwidth * simbs * speedup(vwidth) + t_const", ("t_calc", "t_const"),
                lambda p, w: p[0] * w + p[1], work, ts, [ts.min() / work.max(), ts.min() / 2])


def fit_per_work(name: str, parameter: str, values: Sequence[float], t_per_work: Sequence[float]) -> FittedModel:
    """Fit the form models (1)-(3) share per unit of work: t / work = a + b / x (s per unit of work).

    Model (1) at fixed work is t_const + t_latency * n_elements / posbs; model (2) divided by its work
    (simbs) is t_calc + t_fixed / simbs; model (3) divided by vwidth is t1 * r_seq + t1 * (1 - r_seq) / vwidth
    below vwidth_max (and flat above it, which this form does not follow: it predicts more gain, not less).
    """
    x, ts = _points(values, t_per_work)
    return _fit(name, f"t / work = a + b / {parameter}", ("a", "b"), lambda p, v: p[0] + p[1] / v, x, ts,
                [ts.min() / 2, ts.max() * x.min() / 2])


def _saturating(limit: int) -> Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]]:
    """Return t(v) = t1 * v / min(v, limit) for a fixed limit: the saturation curve with one free constant."""
    return lambda p, v: p[0] * v / np.minimum(v, limit)


def fit_saturation(name: str, count_name: str, limit_name: str, counts: Sequence[float], t: Sequence[float]) -> FittedModel:
    """Fit models (5) and (6): t = t1 * n / min(n, n_limit), the limit (n_PE or n_CU) by search over integers."""
    x, ts = _points(counts, t)
    best: FittedModel | None = None
    for limit in range(1, int(x.max()) + 1):
        fit = _fit(name, f"t = t1 * {count_name} / min({count_name}, {limit_name})", ("t1",),
                   _saturating(limit), x, ts, [ts.min()],
                   {limit_name: float(limit)})
        if best is None or fit.rms_relative_error < best.rms_relative_error - 1e-12:
            best = fit
    assert best is not None
    return best


# ---------------------------------------------------------------- fitting the steps of a stored VaR run



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
        fits.append(fit_saturation("(6) NDRange", "ngroup", "n_CU", list(np.asarray(groups)[order]),
                                   list(np.asarray([m.mean for m in ndrange])[order])))
    return fits
