"""The small exact polynomial algebra behind loop extents, subscripts and op counts."""

from fractions import Fraction

import pytest

from perfcast.species.polynomial import NotAffine, Poly

n, k, i, j = (Poly.symbol(name) for name in "nkij")


def test_arithmetic_and_printing():
    p = (n - 2) * 3 + k * n * 2
    assert str(p) == "2*k*n + 3*n - 6"
    assert p - p == Poly()
    assert (n * n).degree() == 2
    assert Poly.const(Fraction(1, 128)) * n * 128 == n
    assert str(-n + 1) == "-n + 1"


def test_exact_division_only():
    assert (n * k * 4).divide(n) == k * 4
    assert (n * 4 - 8).divide(n - 2) == Poly.const(4)
    assert (n + 1).divide(k) is None
    assert (n * n + 1).divide(n + 1) is None
    assert Poly.const(3).divide(Poly()) is None


def test_evaluate_and_substitute():
    p = n * k + 1
    assert p.evaluate({"n": 3, "k": 4}) == 13
    assert p.evaluate({"n": 3}) is None
    assert p.substitute({"k": n}) == n * n + 1


def test_split_linear_in_loop_variables():
    subscript = i * n + j - n * 3 + 2
    coefficients, rest = subscript.split_linear(["i", "j"])
    assert coefficients == {"i": n, "j": Poly.const(1)}
    assert rest == Poly.const(2) - n * 3
    with pytest.raises(NotAffine):
        (i * j).split_linear(["i", "j"])


def test_equality_with_numbers_and_hash():
    assert Poly.const(5) == 5
    assert hash(n + 1) == hash(Poly.symbol("n") + 1)
    assert (n + 1).is_const() is False and Poly.const(2).const_value() == 2
