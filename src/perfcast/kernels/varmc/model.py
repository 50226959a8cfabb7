"""Market, portfolio and the numpy reference of the VaR kernel, with the kernel's exact random numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "FBOND", "STOCK", "Market", "Portfolio", "default_market", "mpps", "normals", "reference_portfolio",
    "simulate_values", "value_at_risk",
]

STOCK, FBOND = 0, 1
_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


@dataclass(frozen=True)
class Market:
    """Today's market: mean of (stock index, foreign rate, exchange rate), their 3x3 covariance, today's day number."""

    mean: tuple[float, float, float]
    covariance: tuple[tuple[float, float, float], ...]
    today: float

    def cholesky(self) -> NDArray[np.float64]:
        """Return the lower Cholesky factor L of the covariance (market = mean + L z)."""
        try:
            return np.linalg.cholesky(np.asarray(self.covariance, dtype=np.float64))
        except np.linalg.LinAlgError:
            raise ValueError("the market covariance is not symmetric positive definite") from None

    def packed(self) -> NDArray[np.float32]:
        """Return mean[3], L row by row [9] and today as the kernel's float32 `market` argument."""
        return np.concatenate([np.asarray(self.mean), self.cholesky().ravel(), [self.today]]).astype(np.float32)


def default_market() -> Market:
    """Return the case study's market: index 100, foreign rate 3 %, exchange rate 1.1, correlated moves."""
    sd = np.array([20.0, 0.01, 0.08])
    corr = np.array([[1.0, -0.3, 0.2], [-0.3, 1.0, 0.1], [0.2, 0.1, 1.0]])
    cov = corr * np.outer(sd, sd)
    return Market((100.0, 0.03, 1.1), tuple(map(tuple, cov)), today=0.0)


@dataclass(frozen=True)
class Portfolio:
    """Positions: type (STOCK or FBOND), amount, and day of maturity (bonds)."""

    types: NDArray[np.int32]
    amounts: NDArray[np.float32]
    maturities: NDArray[np.float32]

    def __post_init__(self) -> None:
        n = len(self.types)
        if n == 0 or len(self.amounts) != n or len(self.maturities) != n:
            raise ValueError("a portfolio needs equally many types, amounts and maturities, at least one")
        if not np.isin(self.types, (STOCK, FBOND)).all():
            raise ValueError("position types must be STOCK (0) or FBOND (1)")

    @property
    def size(self) -> int:
        """Return the number of positions of the portfolio."""
        return len(self.types)

    def value(self, stock: float, rate: float, fx: float, today: float) -> float:
        """Return the portfolio value in one market state."""
        years = (self.maturities.astype(np.float64) - today) / 365.25
        bond = self.amounts * fx * np.exp(-rate * years)
        return float(np.where(self.types == STOCK, self.amounts * stock, bond).sum())


def reference_portfolio(npos: int = 2**17, seed: int = 7) -> Portfolio:
    """Return the reference test portfolio: even positions FBOND, odd positions STOCK (spec §5.1)."""
    rng = np.random.default_rng(seed)
    types = np.where(np.arange(npos) % 2 == 0, FBOND, STOCK).astype(np.int32)
    amounts = rng.uniform(1.0, 100.0, npos).astype(np.float32)
    maturities = rng.uniform(30.0, 3650.0, npos).astype(np.float32)
    return Portfolio(types, amounts, maturities)


def _splitmix64(x: NDArray[np.uint64]) -> NDArray[np.uint64]:
    with np.errstate(over="ignore"):
        x = (x + np.uint64(0x9E3779B97F4A7C15)) & _MASK
        x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _MASK
        x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _MASK
        return x ^ (x >> np.uint64(31))


def normals(seed: int, first: int, count: int) -> NDArray[np.float64]:
    """Return the (count, 3) standard normals of simulations first..first+count-1, exactly as the kernel draws them."""
    sims = np.arange(first, first + count, dtype=np.uint64)
    seed_ = np.uint64(seed)
    r0 = _splitmix64(seed_ ^ (sims * np.uint64(2)))
    r1 = _splitmix64(seed_ ^ (sims * np.uint64(2) + np.uint64(1)))

    def uniform(bits: NDArray[np.uint64]) -> NDArray[np.float64]:
        return ((bits & np.uint64(0xFFFFFFFF)) >> np.uint64(8)).astype(np.float64) / 16777216.0 + 1 / 16777216.0

    u0, u1 = uniform(r0), uniform(r0 >> np.uint64(32))
    u2, u3 = uniform(r1), uniform(r1 >> np.uint64(32))
    m0, m1 = np.sqrt(-2 * np.log(u0)), np.sqrt(-2 * np.log(u2))
    two_pi = 6.28318530718
    return np.stack([m0 * np.cos(two_pi * u1), m0 * np.sin(two_pi * u1), m1 * np.cos(two_pi * u3)], axis=1)


def simulate_values(portfolio: Portfolio, market: Market, nsim: int, seed: int = 1, chunk: int = 4096) -> NDArray[np.float64]:
    """Return the portfolio value in each of `nsim` simulated markets (float64 numpy reference of the kernel)."""
    if nsim < 1:
        raise ValueError("nsim must be positive")
    L = market.cholesky()
    mean = np.asarray(market.mean)
    stock_amount = np.where(portfolio.types == STOCK, portfolio.amounts, 0).astype(np.float64).sum()
    bond = portfolio.types == FBOND
    amounts = portfolio.amounts[bond].astype(np.float64)
    years = (portfolio.maturities[bond].astype(np.float64) - market.today) / 365.25
    values = np.empty(nsim)
    for start in range(0, nsim, chunk):
        count = min(chunk, nsim - start)
        states = mean + normals(seed, start, count) @ L.T  # (count, 3): stock, rate, fx
        discount = np.exp(-np.outer(states[:, 1], years)) @ amounts
        values[start : start + count] = stock_amount * states[:, 0] + states[:, 2] * discount
    return values


def value_at_risk(values: NDArray[np.floating], today_value: float, quantile: float = 0.01) -> float:
    """Return VaR = today's value - the `quantile` of the simulated portfolio values."""
    if not 0 < quantile < 1:
        raise ValueError("the quantile must lie strictly between 0 and 1")
    return float(today_value - np.quantile(values, quantile))


def mpps(nsim: int, npos: int, seconds: float) -> float:
    """Return the throughput in mega positions per second: 2^-20 * nsim * npos / t."""
    return nsim * npos / seconds / 2**20
