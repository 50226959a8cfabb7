"""Sizes and dimensions: species symbols, means over launches, and delinearised subscripts (step 5)."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from fractions import Fraction

from perfcast.species.classify.nest import _Loop, _NestAnalysis, _Ref
from perfcast.species.classify.result import _LARGE, _Unclassifiable
from perfcast.species.polynomial import NotAffine, Poly


@dataclass
class _Dim:
    """One dimension of an array as the nest sees it."""

    base: Poly
    extent: Poly | None
    vars: dict[str, Fraction] = field(default_factory=dict)


def _large(poly: Poly) -> Fraction:
    value = poly.evaluate(dict.fromkeys(poly.symbols(), _LARGE))
    assert value is not None
    return value


def _abs_poly(poly: Poly) -> Poly:
    return -poly if _large(poly) < 0 else poly


@dataclass
class _Builder:
    """Turns the collected loops and accesses of one nest into a species, f and reasons."""

    nest: _NestAnalysis
    symbols: dict[str, str]

    def symbol_for(self, name: str) -> str:
        """Return the species symbol (upper case) for the C name `name`."""
        for symbol, c_name in self.symbols.items():
            if c_name == name:
                return symbol
        base = re.sub(r"[^A-Z0-9_]", "_", name.upper())
        if not base or not base[0].isalpha():
            base = "S" + base
        symbol, n = base, 2
        while symbol in self.symbols:
            symbol, n = f"{base}_{n}", n + 1
        self.symbols[symbol] = name
        return symbol

    def dims_of(self, poly: Poly, what: str) -> tuple[int | str, ...]:
        """Return species dimensions for an extent polynomial (a number, a symbol, or a product of symbols)."""
        varying = poly.symbols() & set(self.nest.parameters)
        if varying:
            poly = self.at_mean(poly, varying, what)
        if poly.is_const():
            value = poly.const_value()
            if value.denominator != 1 or value < 1:
                raise _Unclassifiable(f"{what} has extent {poly}")
            return (int(value),)
        terms = poly.terms
        if len(terms) == 1:
            ((monomial, coefficient),) = terms.items()
            dims: list[int | str] = [self.symbol_for(name) for name in monomial]
            if coefficient != 1:
                if coefficient.denominator != 1 or coefficient < 1:
                    raise _Unclassifiable(f"{what} has extent {poly}")
                dims.insert(0, int(coefficient))
            return tuple(dims)
        # S + c with a small constant: an interior or padded range; the species is sized by S.
        constant = poly.constant_term()
        rest = poly - constant
        if len(rest.terms) == 1 and abs(constant) <= 16 and next(iter(rest.terms.values())) == 1:
            self.nest.note(f"{what}: extent {poly} taken as {rest} (a border of {abs(constant)} element(s))")
            return self.dims_of(rest, what)
        raise _Unclassifiable(f"{what} has extent {poly}, which a species size cannot express")


    def at_mean(self, poly: Poly, varying: AbstractSet[str], what: str, whole: bool = True) -> Poly:
        """Return `poly` averaged over the launches of the nest: every launching loop's iterations, exactly.

        A triangular kernel (j from i + 1 in a loop over i) has a size that changes with each launch; its mean
        over all launches, times their number, is the work of them all. `whole` rounds a size down to an
        integer (at least 1); f and m keep their fraction.
        """
        first = self.nest.order[0] if self.nest.order else None
        mean = _mean_over_launches(poly, self.nest.parameters,
                                   self.nest.loops[first].extent if first in self.nest.loops else None)
        if mean is None:
            raise _Unclassifiable(f"{what}: extent {poly} changes with the launching loops in a way perfcast "
                                  "cannot average")
        if whole and mean.is_const():
            mean = Poly.const(max(1, math.floor(mean.const_value())))
        loops = ", ".join(f"'{n}'" for n in sorted(varying))
        self.nest.note(f"{what}: {poly} changes with loop {loops} that launches the nest; its mean over the "
                       f"launches is {mean}")
        return mean


_ENUMERABLE = 300_000  # launches walked one by one; past this the sums are taken in closed form


def launch_points(launching: Sequence[_Loop], kernel_extent: Poly | None = None) -> list[dict[str, Fraction]] | None:
    """Return the launching loops' variable values of every launch that runs, or None past _ENUMERABLE or unbound.

    A launching loop whose range is empty for some outer values (j < i - 8) runs nothing there, and a
    kernel whose own loop is empty for a launch (j from i up to 512, i past 512) is no launch: both are left out.
    """
    return _launch_points(tuple(launching), kernel_extent)


def sum_over_launches(poly: Poly, launching: Sequence[_Loop]) -> Poly:
    """Return the sum of `poly` over every iteration of the launching loops, innermost first (Faulhaber's sums).

    Exact where no range is empty; NotAffine where a power is too high to sum.
    """
    total = poly
    for loop in reversed(launching):
        walk = {loop.var: loop.lower + Poly.const(loop.step) * Poly.symbol(loop.var)}
        total = total.substitute(walk).sum_over(loop.var, loop.extent)
    return total


@functools.lru_cache(maxsize=256)
def _launch_points(launching: tuple[_Loop, ...], kernel_extent: Poly | None) -> list[dict[str, Fraction]] | None:
    try:
        estimate = sum_over_launches(Poly.const(1), launching)
    except NotAffine:
        return None
    if not estimate.is_const() or abs(estimate.const_value()) > _ENUMERABLE:
        return None  # unbound sizes, or too many launches to walk: closed-form sums instead
    points: list[dict[str, Fraction]] = [{}]
    for loop in launching:
        grown: list[dict[str, Fraction]] = []
        for point in points:
            extent, lower = loop.extent.evaluate(point), loop.lower.evaluate(point)
            if extent is None or lower is None:
                return None
            for t in range(max(0, math.ceil(extent))):
                grown.append({**point, loop.var: lower + loop.step * t})
                if len(grown) > _ENUMERABLE:
                    return None
        points = grown
    if kernel_extent is not None:
        points = [p for p in points if (kernel_extent.evaluate(p) or 0) >= 1]
    return points


def _mean_over_launches(poly: Poly, launching: Mapping[str, _Loop], kernel_extent: Poly | None = None) -> Poly | None:
    """Return the mean of `poly` over the launches that run, or None when it cannot be averaged.

    Walked launch by launch when they are few enough (sizes below 0 count as 0); else Faulhaber's sums over the
    loops' ranges, innermost first, which are exact where no range is empty.
    """
    points = launch_points(list(launching.values()), kernel_extent)
    if points is not None:
        if not points:
            return Poly.const(0)
        values = [poly.evaluate(p) for p in points]
        if any(v is None for v in values):
            return None
        return Poly.const(sum((max(Fraction(0), v) for v in values if v is not None), Fraction(0)) / len(points))
    try:
        total = sum_over_launches(poly, list(launching.values()))
        count = sum_over_launches(Poly.const(1), list(launching.values()))
    except NotAffine:
        return None
    if count == Poly():
        return None
    mean = total.divide(count)
    if mean is None and total.is_const() and count.is_const():
        mean = Poly.const(total.const_value() / count.const_value())
    if mean is None and count.is_const():
        mean = total * Poly.const(1 / count.const_value())
    return mean


def _joins(nest: _NestAnalysis, dim: _Dim, var: str, stride: Poly, parallel: set[str]) -> bool:
    """Return True when loop variable `var` of `stride` indexes the same dimension as the variables of `dim`."""
    if stride == dim.base:
        return True
    ratio = stride.divide(dim.base)
    if ratio is None or not ratio.is_const():
        return False  # a symbolic ratio: a row length, so a new dimension
    members = list(dim.vars)
    if any(v in parallel for v in members):
        # Past the reach of the dimension's parallel variable: the next row (or the block of a blocked loop).
        reach = max(_large(dim.base) * _large(nest.loops[v].extent) for v in members if v in parallel)
        return _large(stride) < reach
    # A dimension walked only by reducing loops: a parallel stride equal to their extent makes tiles.
    return any(ratio == nest.loops[v].extent for v in members)


def _split_dims(
    nest: _NestAnalysis, name: str, refs: Sequence[_Ref], declared: tuple[Poly | None, ...], parallel: set[str]
) -> tuple[list[_Dim], list[list[tuple[dict[str, Fraction], Poly]]]]:
    """Return the dimensions of array `name` and, per access, per dimension, ({var: relative coefficient}, offset)."""
    loop_vars = list(nest.loops)
    ranks = {len(r.subscripts) for r in refs if r.subscripts is not None}
    if len(ranks) > 1:
        raise _Unclassifiable(f"'{name}' is accessed with different numbers of subscripts")
    rank = ranks.pop() if ranks else 1
    per_ref: list[list[tuple[dict[str, Fraction], Poly]]] = []
    if rank > 1:
        natural = [_Dim(Poly.const(1), declared[k] if k < len(declared) else None) for k in range(rank)]
        for ref in refs:
            assert ref.subscripts is not None
            terms: list[tuple[dict[str, Fraction], Poly]] = []
            for sub in ref.subscripts:
                coefficients, rest = sub.split_linear(loop_vars)
                terms.append(({v: _const_ratio(c, Poly.const(1), name) for v, c in coefficients.items()}, rest))
            per_ref.append(terms)
        return natural, per_ref
    # One subscript: delinearise from the strides of the loop variables, smallest first.
    strides: dict[str, Poly] = {}
    split: list[tuple[dict[str, Poly], Poly]] = []
    for ref in refs:
        assert ref.subscripts is not None
        if not ref.subscripts:
            split.append(({}, Poly()))
            continue
        coefficients, rest = ref.subscripts[0].split_linear(loop_vars)
        split.append((coefficients, rest))
        for var, coefficient in coefficients.items():
            magnitude = _abs_poly(coefficient)
            if var in strides and strides[var] != magnitude:
                raise _Unclassifiable(f"'{name}' is indexed by '{var}' with different strides")
            strides[var] = magnitude
    ordered = sorted(strides.items(), key=lambda item: _large(item[1]))
    dims: list[_Dim] = []
    for var, stride in ordered:
        if dims and _joins(nest, dims[-1], var, stride, parallel):
            dims[-1].vars[var] = Fraction(1)
        else:
            dims.append(_Dim(stride, None, {var: Fraction(1)}))
    if not dims or _large(dims[0].base) != 1:
        dims.insert(0, _Dim(Poly.const(1), None))
        if len(dims) > 1:
            nest.doubt(f"'{name}' is accessed with stride {dims[1].base} (not contiguous)")
    dims.reverse()  # outermost first
    if len(dims) == 1 and len(declared) == 1:
        dims[0].extent = declared[0]
    for k in range(1, len(dims)):
        inner = dims[k - 1].base.divide(dims[k].base)
        if inner is None:
            raise _Unclassifiable(f"'{name}': stride {dims[k - 1].base} is not a multiple of {dims[k].base}")
        dims[k].extent = inner
    for coefficients, rest in split:
        entry: list[tuple[dict[str, Fraction], Poly]] = []
        remaining = rest
        for dim in dims:
            relative = {var: _const_ratio(c, dim.base, name) for var, c in coefficients.items() if var in dim.vars}
            offset, remaining = _take_offset(remaining, dim.base)
            entry.append((relative, offset))
        if remaining != Poly():
            entry[-1] = (entry[-1][0], entry[-1][1] + remaining)
        per_ref.append(entry)
    return dims, per_ref


def _const_ratio(coefficient: Poly, base: Poly, name: str) -> Fraction:
    ratio = coefficient.divide(base)
    if ratio is None or not ratio.is_const():
        raise _Unclassifiable(f"'{name}': coefficient {coefficient} is not a constant multiple of the stride {base}")
    return ratio.const_value()


def _take_offset(rest: Poly, base: Poly) -> tuple[Poly, Poly]:
    """Split a constant offset into (whole multiples of `base`, the remainder for inner dimensions)."""
    if base == Poly.const(1):
        return rest, Poly()
    if base.is_const():
        step = base.const_value()
        if rest.is_const():
            # Floor, so that the remainder is what lies inside the row: A[2*i + 3] is row i + 1, column 1.
            quotient = math.floor(rest.const_value() / step)
            return Poly.const(quotient), rest - Poly.const(quotient * step)
        return Poly(), rest
    taken = Poly()
    left = Poly()
    for monomial, coefficient in rest.terms.items():
        term = Poly({monomial: coefficient})
        part = term.divide(base)
        if part is not None and all(c.denominator == 1 for c in part.terms.values()):
            taken = taken + part
        else:
            left = left + term
    return taken, left


def _expressible(poly: Poly) -> bool:
    if poly.is_const():
        return poly.const_value() >= 1 and poly.const_value().denominator == 1
    terms = poly.terms
    return len(terms) == 1 and next(iter(terms.values())) == 1
