"""Polynomials with rational coefficients over named symbols: loop extents, subscripts and op counts of C loop nests.

Loop bounds and subscripts in C are mostly affine in the loop variables with
coefficients that are products of size parameters (``i*n + j``); op counts
are products of trip counts (``2*k*len``). One small exact algebra covers all
of these, so that a classification says ``2*k`` rather than a float.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

__all__ = ["NotAffine", "Poly"]

Monomial = tuple[str, ...]  # sorted factor names, repeated for powers; () is the constant term


class NotAffine(ValueError):
    """A polynomial that is not affine in the variables asked about (e.g. i*j, or i*i)."""


class Poly:
    """An immutable polynomial: a map from monomials (sorted symbol names) to non-zero Fractions."""

    __slots__ = ("_terms",)

    def __init__(self, terms: Mapping[Monomial, Fraction | int] | None = None) -> None:
        self._terms: dict[Monomial, Fraction] = {
            tuple(sorted(m)): Fraction(c) for m, c in (terms or {}).items() if c != 0
        }

    @classmethod
    def const(cls, value: Fraction | int) -> Poly:
        """Return the constant polynomial `value`."""
        return cls({(): value})

    @classmethod
    def symbol(cls, name: str) -> Poly:
        """Return the polynomial made of the one symbol `name`."""
        return cls({(name,): 1})

    @property
    def terms(self) -> dict[Monomial, Fraction]:
        """Return a copy of the monomial -> coefficient map."""
        return dict(self._terms)

    def symbols(self) -> frozenset[str]:
        """Return every symbol that occurs in this polynomial."""
        return frozenset(name for monomial in self._terms for name in monomial)

    def is_const(self) -> bool:
        """Return True when the polynomial has no symbols."""
        return all(not m for m in self._terms)

    def const_value(self) -> Fraction:
        """Return the value of a constant polynomial (ValueError otherwise)."""
        if not self.is_const():
            raise ValueError(f"{self} is not a constant")
        return self._terms.get((), Fraction(0))

    def constant_term(self) -> Fraction:
        """Return the coefficient of the empty monomial."""
        return self._terms.get((), Fraction(0))

    def __add__(self, other: Poly | int | Fraction) -> Poly:
        other = _as_poly(other)
        terms = dict(self._terms)
        for m, c in other._terms.items():
            terms[m] = terms.get(m, Fraction(0)) + c
        return Poly(terms)

    __radd__ = __add__

    def __neg__(self) -> Poly:
        return Poly({m: -c for m, c in self._terms.items()})

    def __sub__(self, other: Poly | int | Fraction) -> Poly:
        return self + (-_as_poly(other))

    def __rsub__(self, other: Poly | int | Fraction) -> Poly:
        return _as_poly(other) - self

    def __mul__(self, other: Poly | int | Fraction) -> Poly:
        other = _as_poly(other)
        terms: dict[Monomial, Fraction] = {}
        for m1, c1 in self._terms.items():
            for m2, c2 in other._terms.items():
                m = tuple(sorted(m1 + m2))
                terms[m] = terms.get(m, Fraction(0)) + c1 * c2
        return Poly(terms)

    __rmul__ = __mul__

    def divide(self, other: Poly) -> Poly | None:
        """Return self / other when the division is exact (other a single term, or a constant multiple), else None."""
        if not other._terms:
            return None
        if len(other._terms) == 1:
            ((monomial, coefficient),) = other._terms.items()
            result: dict[Monomial, Fraction] = {}
            for m, c in self._terms.items():
                remaining = list(m)
                for name in monomial:
                    if name not in remaining:
                        return None
                    remaining.remove(name)
                result[tuple(remaining)] = c / coefficient
            return Poly(result)
        # A multi-term divisor divides exactly only a constant multiple of itself here (e.g. (n-2)*4 / (n-2)).
        first = next(iter(other._terms))
        ratio = self._terms.get(first, Fraction(0)) / other._terms[first]
        return Poly.const(ratio) if self == other * Poly.const(ratio) else None

    def substitute(self, values: Mapping[str, Poly]) -> Poly:
        """Return this polynomial with symbols replaced by the polynomials in `values`."""
        total = Poly()
        for m, c in self._terms.items():
            term = Poly.const(c)
            for name in m:
                term = term * (values[name] if name in values else Poly.symbol(name))
            total = total + term
        return total

    def sum_over(self, name: str, count: Poly) -> Poly:
        """Return the sum of this polynomial for `name` = 0, 1, ..., count - 1 (powers of `name` up to 4).

        Faulhaber's formulas keep the sum exact when `count` is itself a polynomial (a triangular range).
        """
        e = count
        sums = [
            e,
            e * (e - 1) * Poly.const(Fraction(1, 2)),
            (e - 1) * e * (e * 2 - 1) * Poly.const(Fraction(1, 6)),
            e * e * (e - 1) * (e - 1) * Poly.const(Fraction(1, 4)),
            e * (e - 1) * (e * 2 - 1) * (e * e * 3 - e * 3 - 1) * Poly.const(Fraction(1, 30)),
        ]
        total = Poly()
        for monomial, coefficient in self._terms.items():
            power = monomial.count(name)
            if power >= len(sums):
                raise NotAffine(f"{name}^{power} in a sum over {name}")
            rest = Poly({tuple(m for m in monomial if m != name): coefficient})
            total = total + rest * sums[power]
        return total

    def evaluate(self, values: Mapping[str, int | Fraction]) -> Fraction | None:
        """Return the value with every symbol bound from `values`, or None if a symbol is unbound."""
        if not self.symbols() <= set(values):
            return None
        bound = self.substitute({name: Poly.const(Fraction(v)) for name, v in values.items()})
        return bound.const_value()

    def split_linear(self, variables: Iterable[str]) -> tuple[dict[str, Poly], Poly]:
        """Return ({variable: coefficient}, rest) with self = Σ coefficient·variable + rest; NotAffine otherwise."""
        wanted = set(variables)
        coefficients: dict[str, Poly] = {}
        rest: dict[Monomial, Fraction] = {}
        for m, c in self._terms.items():
            found = [name for name in m if name in wanted]
            if not found:
                rest[m] = c
                continue
            if len(found) > 1:
                raise NotAffine(f"{self} is not affine in {', '.join(sorted(set(found)))}")
            others = list(m)
            others.remove(found[0])
            coefficients[found[0]] = coefficients.get(found[0], Poly()) + Poly({tuple(others): c})
        return coefficients, Poly(rest)

    def degree(self) -> int:
        """Return the largest number of symbol factors in one term."""
        return max((len(m) for m in self._terms), default=0)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (int, Fraction)):
            other = Poly.const(other)
        return isinstance(other, Poly) and self._terms == other._terms

    def __hash__(self) -> int:
        return hash(frozenset(self._terms.items()))

    def __repr__(self) -> str:
        return f"Poly({self})"

    def __str__(self) -> str:
        if not self._terms:
            return "0"
        parts: list[str] = []
        for m, c in sorted(self._terms.items(), key=lambda item: (-len(item[0]), item[0])):
            sign = "-" if c < 0 else "+"
            magnitude = abs(c)
            factors = "*".join(m)
            if not m:
                body = _format_fraction(magnitude)
            elif magnitude == 1:
                body = factors
            else:
                body = f"{_format_fraction(magnitude)}*{factors}"
            parts.append(f" {sign} {body}" if parts else ("-" if sign == "-" else "") + body)
        return "".join(parts)


def _format_fraction(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _as_poly(value: Poly | int | Fraction) -> Poly:
    return value if isinstance(value, Poly) else Poly.const(value)
