"""The VaR kernel: OpenCL against the numpy reference, and the VaR of a portfolio with a closed form."""

import numpy as np
import pytest
from scipy.stats import norm

from perfcast.kernels.varmc import (
    STOCK,
    Market,
    Portfolio,
    default_market,
    mpps,
    reference_portfolio,
    simulate_values,
    value_at_risk,
)

pyopencl = pytest.importorskip("pyopencl")


def _opencl():
    from perfcast.kernels.varmc.opencl import VarmcConfig, VarmcOpenCl

    try:
        pyopencl.get_platforms()
    except pyopencl.Error:
        pytest.skip("no OpenCL platform")
    return VarmcConfig, VarmcOpenCl


def test_reference_portfolio_layout():
    portfolio = reference_portfolio(10)
    assert list(portfolio.types[:4]) == [1, 0, 1, 0]  # even FBOND, odd STOCK
    assert portfolio.size == 10


@pytest.mark.parametrize("params", [(16, 1, 1, 1), (64, 2, 4, 8), (256, 4, 16, 4), (1024, 1, 8, 16), (100, 3, 2, 2)])
def test_opencl_matches_the_numpy_reference(params):
    VarmcConfig, VarmcOpenCl = _opencl()
    portfolio, market = reference_portfolio(1000), default_market()
    kernel = VarmcOpenCl(portfolio, market)
    config = VarmcConfig(*params)
    nsim = config.sims_per_group * 4
    values, seconds = kernel.run(config, nsim, seed=11)
    reference = simulate_values(portfolio, market, nsim, seed=11)
    assert seconds > 0
    np.testing.assert_allclose(values, reference, rtol=2e-5)


def test_results_do_not_depend_on_the_tuning_parameters():
    VarmcConfig, VarmcOpenCl = _opencl()
    kernel = VarmcOpenCl(reference_portfolio(500), default_market())
    a, _ = kernel.run(VarmcConfig(32, 1, 1, 1), 512)
    b, _ = kernel.run(VarmcConfig(512, 4, 16, 8), 512)
    np.testing.assert_allclose(a, b, rtol=1e-5)


def test_stock_only_var_matches_its_closed_form():
    VarmcConfig, VarmcOpenCl = _opencl()
    market = default_market()
    amounts = np.array([3.0, 5.0, 2.0], np.float32)
    portfolio = Portfolio(np.full(3, STOCK, np.int32), amounts, np.zeros(3, np.float32))
    nsim = 2**16
    values, _ = VarmcOpenCl(portfolio, market).run(VarmcConfig(4, 4, 8, 16), nsim, seed=5)
    total, sd, q = float(amounts.sum()), 20.0, 0.01
    today = total * market.mean[0]
    expected = -total * sd * norm.ppf(q)  # VaR of A*S with S ~ N(mean, sd^2)
    # standard error of an empirical quantile: sqrt(q(1-q)/n) / pdf(z_q), in units of the value
    stderr = total * sd * np.sqrt(q * (1 - q) / nsim) / norm.pdf(norm.ppf(q))
    assert abs(value_at_risk(values, today, q) - expected) < 4 * stderr


def test_invalid_configurations_are_named():
    VarmcConfig, VarmcOpenCl = _opencl()
    kernel = VarmcOpenCl(reference_portfolio(100), default_market())
    assert "vwidth 3" in kernel.invalid(VarmcConfig(16, 1, 3, 1), 64)
    assert "not a multiple" in kernel.invalid(VarmcConfig(16, 1, 4, 4), 100)
    assert "local memory" in kernel.invalid(VarmcConfig(10**9, 1, 1, 1), 64)
    with pytest.raises(ValueError, match="not a multiple"):
        kernel.run(VarmcConfig(16, 1, 4, 4), 100)


def test_market_and_helpers():
    market = default_market()
    L = market.cholesky()
    np.testing.assert_allclose(L @ L.T, np.asarray(market.covariance))
    assert market.packed().shape == (13,)
    with pytest.raises(ValueError, match="positive definite"):
        Market((0, 0, 0), ((1, 2, 0), (2, 1, 0), (0, 0, 1)), 0).cholesky()
    assert mpps(2**20, 2, 2.0) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        value_at_risk(np.ones(4), 1.0, 1.5)
