"""The checks the models' inputs share: finite counts and rates, never NaN, never negative."""

from __future__ import annotations

import math

__all__ = ["non_negative", "positive"]


def non_negative(name: str, value: float) -> float:
    """Return `value` as a float if it is a finite number >= 0, else raise ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {value:g}")
    return float(value)


def positive(name: str, value: float) -> float:
    """Return `value` as a float if it is a finite number > 0, else raise ValueError naming it."""
    if non_negative(name, value) == 0:
        raise ValueError(f"{name} must be positive")
    return float(value)
