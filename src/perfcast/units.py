"""Quantities with units, as written in device files and on the command line.

Rates use decimal prefixes only (GB/s = 1e9 B/s, GFLOP/s = 1e9 op/s), as the
model reference demands; capacities accept binary prefixes too (KiB, MiB)
because caches are sized that way.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from enum import Enum

from perfcast.errors import InputError

__all__ = ["Dimension", "InstructionKind", "Precision", "UnitError", "exact_quantity", "format_duration",
           "format_quantity", "parse_quantity"]


class Dimension(str, Enum):
    """What a quantity measures; each has one base unit."""

    WORK = "op"
    COMPUTE = "op/s"
    BANDWIDTH = "B/s"
    BYTES = "B"
    FREQUENCY = "Hz"
    INTENSITY = "op/B"
    POWER = "W"


class UnitError(InputError):
    """A quantity whose number or unit cannot be read."""


# Decimal factors so that "1088.64 GFLOP/s" becomes exactly the float nearest 1088.64e9.
_DECIMAL = {p: Decimal(f"1e{e}") for p, e in [("", 0), ("k", 3), ("K", 3), ("M", 6), ("G", 9), ("T", 12), ("P", 15), ("E", 18)]}
_BINARY = {p: Decimal(2**e) for p, e in [("Ki", 10), ("Mi", 20), ("Gi", 30), ("Ti", 40)]}

# Accepted unit spellings per dimension, without prefix.
_UNITS: dict[Dimension, tuple[str, ...]] = {
    Dimension.WORK: ("op", "FLOP", "flop", "ops"),
    Dimension.COMPUTE: ("op/s", "OP/s", "FLOP/s", "flop/s", "FLOPS", "flops", "IOP/s", "IOPS"),
    Dimension.BANDWIDTH: ("B/s",),
    Dimension.BYTES: ("B",),
    Dimension.FREQUENCY: ("Hz",),
    Dimension.INTENSITY: ("op/B", "FLOP/B", "flop/B"),
    Dimension.POWER: ("W",),
}

_QUANTITY = re.compile(
    r"^\s*(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?P<unit>\S*)\s*$"
)


def _unit_factor(unit: str, dimension: Dimension) -> Decimal:
    """Return the factor that converts `unit` to the dimension's base unit."""
    if unit == "":
        return _DECIMAL[""]
    if unit in _DECIMAL and dimension in (Dimension.WORK, Dimension.BYTES):
        return _DECIMAL[unit]  # a bare prefix scales a count: "2G" op
    for base in sorted(_UNITS[dimension], key=len, reverse=True):
        if not unit.endswith(base):
            continue
        prefix = unit[: -len(base)]
        if prefix in _DECIMAL:
            return _DECIMAL[prefix]
        if prefix in _BINARY and dimension is Dimension.BYTES:
            return _BINARY[prefix]
        if prefix in _BINARY:
            raise UnitError(
                f"binary prefix {prefix!r} is only allowed for sizes in bytes; "
                f"rates use decimal prefixes (G{base} = 1e9 {dimension.value})"
            )
        raise UnitError(f"unknown prefix {prefix!r} in unit {unit!r}")
    accepted = ", ".join(_UNITS[dimension])
    raise UnitError(f"unit {unit!r} is not a {dimension.name.lower()} unit (expected one of: {accepted})")


def parse_quantity(value: str | float | int, dimension: Dimension) -> float:
    """Return `value` in the dimension's base unit (op/s, B/s, B, Hz, op/B or W).

    A bare number is taken to be in the base unit already; a string may carry
    a prefixed unit, e.g. ``"177.4 GB/s"``, ``"48 KiB"``, ``"1.215 GHz"``.
    """
    if isinstance(value, bool):
        raise UnitError(f"expected a quantity in {dimension.value}, got a boolean")
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        match = _QUANTITY.match(str(value))
        if match is None:
            raise UnitError(f"cannot read {value!r} as a quantity in {dimension.value}")
        number = float(Decimal(match["number"]) * _unit_factor(match["unit"], dimension))
    if not math.isfinite(number):
        raise UnitError(f"{value!r} is not a finite number")
    return number


def format_quantity(value: float, dimension: Dimension, digits: int = 4, unit: str | None = None) -> str:
    """Return `value` (in base units) as a string with a decimal SI prefix; `unit` renames the dimension's (call/s)."""
    if value is None or not math.isfinite(value):
        return "—" if value is None else str(value)
    unit = unit or {Dimension.COMPUTE: "FLOP/s", Dimension.WORK: "FLOP"}.get(dimension, dimension.value)
    if dimension is Dimension.BYTES:
        # Binary prefixes only for sizes that are whole multiples, as cache and memory sizes are.
        for prefix in ("Ti", "Gi", "Mi", "Ki"):
            factor = float(_BINARY[prefix])
            if abs(value) >= factor and value % factor == 0 and abs(value) / factor < 10_000:
                return f"{value / factor:g} {prefix}B"
    magnitude = abs(value)
    for prefix in ("P", "T", "G", "M", "k"):
        factor = float(_DECIMAL[prefix])
        if magnitude >= factor:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def exact_quantity(value: float, dimension: Dimension) -> str:
    """Return `value` (base units) as the shortest prefixed string that parses back to exactly `value`."""
    for digits in range(6, 18):
        text = format_quantity(value, dimension, digits=digits)
        if parse_quantity(text, dimension) == value:
            return text
    # Dividing in binary can lose the last digit; dividing the float's exact decimal form does not.
    unit = {Dimension.COMPUTE: "FLOP/s", Dimension.WORK: "FLOP"}.get(dimension, dimension.value)
    exact = Decimal(repr(value))
    for prefix in ("P", "T", "G", "M", "k", ""):
        if abs(value) >= float(_DECIMAL[prefix]) or prefix == "":
            text = f"{(exact / _DECIMAL[prefix]).normalize():f} {prefix}{unit}"
            if parse_quantity(text, dimension) == value:
                return text
            break
    return repr(value)


def format_duration(seconds: float, digits: int = 4) -> str:
    """Return a duration (s) in s, ms, µs or ns, with `digits` significant digits."""
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= factor:
            return f"{seconds / factor:.{digits}g} {unit}"
    return f"{seconds / 1e-9:.{digits}g} ns"


# Number formats and instruction kinds of arithmetic peaks. They live here, with the units, so that the command
# line can name them in its options without loading the device schema.
class Precision(str, Enum):
    """Number format of an arithmetic peak."""

    FP16 = "fp16"
    BF16 = "bf16"
    FP32 = "fp32"
    FP64 = "fp64"
    INT8 = "int8"
    INT32 = "int32"

    @property
    def element_bytes(self) -> int:
        """Return the size of one element of this format in bytes."""
        return {"fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8, "int8": 1, "int32": 4}[self.value]


class InstructionKind(str, Enum):
    """Which instructions reach a peak: fused multiply-add (2 ops each), plain add/multiply, tensor/matrix units."""

    FMA = "fma"
    ADD_MUL = "add_mul"
    TENSOR = "tensor"
