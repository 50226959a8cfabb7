"""The small exact polynomial algebra behind loop extents, subscripts and op counts."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


@given(st.lists(st.integers(-5, 5), min_size=1, max_size=5), st.integers(0, 40))
def test_sum_over_equals_adding_the_terms(coefficients, count):
    """Faulhaber's sums against a loop: sum of c_p * i**p for i in 0..count-1, powers up to 4."""
    poly = Poly()
    for power, c in enumerate(coefficients):
        poly = poly + Poly({("i",) * power: c})
    expected = sum(sum(c * i**p for p, c in enumerate(coefficients)) for i in range(count))
    assert poly.sum_over("i", Poly.const(count)) == expected


def test_sum_over_a_triangle_keeps_the_outer_variable():
    # sum over j in 0..i-1 of 1 is i; then over i in 0..n-1: n(n-1)/2 (the triangle's size).
    inner = Poly.const(1).sum_over("j", i)
    assert inner == i
    assert inner.sum_over("i", n).evaluate({"n": 10}) == 45
    assert (i * i).sum_over("i", Poly.const(4)) == 14  # 0 + 1 + 4 + 9
    with pytest.raises(NotAffine):
        Poly({("i",) * 5: 1}).sum_over("i", n)
