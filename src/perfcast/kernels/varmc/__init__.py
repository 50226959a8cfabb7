"""The Monte Carlo Value-at-Risk case study (spec §5.1): market, portfolio, numpy reference, OpenCL kernel."""

from perfcast.kernels.varmc.model import (
    FBOND,
    STOCK,
    Market,
    Portfolio,
    default_market,
    mpps,
    normals,
    reference_portfolio,
    simulate_values,
    value_at_risk,
)

__all__ = [
    "FBOND",
    "STOCK",
    "Market",
    "Portfolio",
    "default_market",
    "mpps",
    "normals",
    "reference_portfolio",
    "simulate_values",
    "value_at_risk",
]
