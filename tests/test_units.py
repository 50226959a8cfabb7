"""Quantities with units: decimal rates, binary capacities, clear errors."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfcast.units import Dimension, UnitError, format_quantity, parse_quantity


@pytest.mark.parametrize(
    ("text", "dimension", "expected"),
    [
        ("177.4 GB/s", Dimension.BANDWIDTH, 177.4e9),
        ("1088.64 GFLOP/s", Dimension.COMPUTE, 1088.64e9),
        ("15.67 TFLOP/s", Dimension.COMPUTE, 15.67e12),
        ("48 KiB", Dimension.BYTES, 49152),
        ("1 GiB", Dimension.BYTES, 2**30),
        ("2.4 GB", Dimension.BYTES, 2.4e9),
        ("1.215 GHz", Dimension.FREQUENCY, 1.215e9),
        ("2G", Dimension.WORK, 2e9),
        ("1e9", Dimension.BYTES, 1e9),
        (3.5, Dimension.INTENSITY, 3.5),
        ("0.25 FLOP/B", Dimension.INTENSITY, 0.25),
    ],
)
def test_parse(text, dimension, expected):
    assert parse_quantity(text, dimension) == expected


def test_decimal_parse_is_exact():
    # 1088.64 * 1e9 in binary floating point is off by one ulp; the parser must not be.
    assert parse_quantity("1088.64 GFLOP/s", Dimension.COMPUTE) == 1088640000000.0


@pytest.mark.parametrize(
    ("text", "dimension", "message"),
    [
        ("10 GiB/s", Dimension.BANDWIDTH, "binary prefix"),
        ("10 GHz", Dimension.BANDWIDTH, "not a bandwidth unit"),
        ("fast", Dimension.COMPUTE, "cannot read"),
        ("10 XB/s", Dimension.BANDWIDTH, "unknown prefix"),
        (True, Dimension.COMPUTE, "boolean"),
        ("inf", Dimension.COMPUTE, "cannot read"),
    ],
)
def test_errors(text, dimension, message):
    with pytest.raises(UnitError, match=message):
        parse_quantity(text, dimension)


@given(value=st.floats(min_value=1e-3, max_value=1e18, allow_nan=False))
def test_format_parse_round_trip(value):
    for dimension in (Dimension.COMPUTE, Dimension.BANDWIDTH, Dimension.FREQUENCY):
        text = format_quantity(value, dimension, digits=17)
        assert parse_quantity(text, dimension) == pytest.approx(value, rel=1e-15)


def test_format_prefixes():
    assert format_quantity(1088.64e9, Dimension.COMPUTE) == "1.089 TFLOP/s"
    assert format_quantity(49152, Dimension.BYTES) == "48 KiB"
    assert format_quantity(2.4e9, Dimension.BYTES) == "2.4 GB"


@given(value=st.floats(min_value=1e-3, max_value=1e18, allow_nan=False))
def test_exact_quantity_round_trips_exactly(value):
    from perfcast.units import exact_quantity

    for dimension in (Dimension.COMPUTE, Dimension.BANDWIDTH, Dimension.FREQUENCY, Dimension.BYTES):
        text = exact_quantity(value, dimension)
        assert parse_quantity(text, dimension) == value
