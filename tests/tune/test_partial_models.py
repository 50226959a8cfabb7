"""Partial models (spec §5.3): constants recovered from data generated with known constants."""

import numpy as np
import pytest

from perfcast.tune.partial_models import (
    fit_buffer_size,
    fit_combined,
    fit_per_work,
    fit_saturation,
    fit_vector_width,
    fit_work_per_item,
)

NOISE = np.random.default_rng(0)


def noisy(t, level=0.005):
    return t * (1 + level * NOISE.standard_normal(len(t)))


def test_buffer_size():
    posbs = np.array([16, 32, 64, 128, 256, 512, 1024.0])
    fit = fit_buffer_size(posbs, 2e-4 + 3e-7 * 65536 / posbs, 65536)
    assert fit.constants["t_const"] == pytest.approx(2e-4, rel=1e-6)
    assert fit.constants["t_latency"] == pytest.approx(3e-7, rel=1e-6)
    assert fit.rms_relative_error < 1e-9


def test_per_work_form_of_models_1_to_3():
    """Model (2) divided by its work: t / simbs = t_calc + t_fixed / simbs (2 us + 6 us / simbs here)."""
    simbs = np.array([1, 2, 4.0])
    fit = fit_per_work("(1)-(3) per work", "simbs", simbs, (simbs * 2e-6 + 6e-6) / simbs)
    assert fit.constants["a"] == pytest.approx(2e-6, rel=1e-6) and fit.constants["b"] == pytest.approx(6e-6, rel=1e-6)
    assert fit.formula == "t / work = a + b / simbs" and fit.rms_relative_error < 1e-9
    assert fit.predict(np.array([8.0]))[0] == pytest.approx(2e-6 + 6e-6 / 8)  # 2.75 us: the gain left is bounded


def test_work_per_item_with_noise():
    simbs = np.array([1, 2, 4, 8, 16.0])
    fit = fit_work_per_item(simbs, noisy(5e-5 * simbs + 1e-4))
    assert fit.constants["t_calc"] == pytest.approx(5e-5, rel=0.03)
    assert fit.constants["t_fixed"] == pytest.approx(1e-4, rel=0.1)
    assert 0 < fit.rms_relative_error < 0.02
    assert fit.errors["t_calc"] > 0


def test_vector_width_finds_the_hardware_width():
    v = np.array([1, 2, 4, 8, 16.0])
    t = 1e-3 * v * (0.1 + 0.9 / np.minimum(8, v))
    fit = fit_vector_width(v, t)
    assert fit.constants["vwidth_max"] == 8
    assert fit.constants["r_seq"] == pytest.approx(0.1, abs=1e-4)
    assert fit.constants["t1"] == pytest.approx(1e-3, rel=1e-4)


def test_combined():
    simbs = np.array([1, 2, 4, 1, 2, 4.0])
    v = np.array([1, 1, 1, 8, 8, 8.0])
    speed = 0.1 + 0.9 / np.minimum(8, v)
    fit = fit_combined(simbs, v, 2e-6 * v * simbs * speed + 5e-5, r_seq=0.1, vwidth_max=8)
    assert fit.constants["t_calc"] == pytest.approx(2e-6, rel=1e-5)
    assert fit.constants["t_const"] == pytest.approx(5e-5, rel=1e-5)


@pytest.mark.parametrize("limit", [1, 4, 6])
def test_saturation_finds_the_limit(limit):
    n = np.array([1, 2, 4, 8, 16, 32.0])
    fit = fit_saturation("(5) work-group", "wgsize", "n_PE", n, 1e-3 * n / np.minimum(n, limit))
    assert fit.constants["n_PE"] == limit
    assert fit.constants["t1"] == pytest.approx(1e-3, rel=1e-6)
    np.testing.assert_allclose(fit.predict(n), 1e-3 * n / np.minimum(n, limit), rtol=1e-6)


def test_bad_input():
    with pytest.raises(ValueError, match="at least two"):
        fit_work_per_item([1], [1e-3])
    with pytest.raises(ValueError, match="positive"):
        fit_work_per_item([1, 2], [1e-3, 0.0])
