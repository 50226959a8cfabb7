"""The access pattern of each input and output array (step 5)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from perfcast.species.classify.dimensions import _Builder, _expressible, _large, _split_dims
from perfcast.species.classify.nest import _NestAnalysis, _Ref
from perfcast.species.classify.result import _DataDependent, _Unclassifiable
from perfcast.species.grammar import (
    Access,
    Pattern,
)
from perfcast.species.polynomial import NotAffine, Poly


def _parameter_offsets(nest: _NestAnalysis, refs: list[_Ref]) -> bool:
    """Return True when a subscript of `refs` is placed by a launching loop's variable (row i of A, not row j)."""
    for ref in refs:
        for sub in ref.subscripts or ():
            _, rest = sub.split_linear(list(nest.loops))
            if rest.symbols() & set(nest.parameters):
                return True
    return False


def _groups_by_loops(refs: list[_Ref], parallel: set[str], per_dimension: bool = False,
                     parameters: Sequence[str] = (), loop_vars: Sequence[str] = ()) -> list[list[_Ref]]:
    """Return the accesses of one array grouped by the parallel loops that move them (per subscript for outputs).

    A[i][j] beside A[k][k] (a pivot every work unit reads) or A[i][k] beside A[j][k] (rows for i and for j) are
    different parts of A, read in different ways: each group is classified on its own.
    """
    groups: dict[object, list[_Ref]] = {}
    for ref in refs:
        key: object
        if ref.subscripts is None:
            key = "data-dependent"
        elif per_dimension:
            key = tuple(frozenset(s.symbols() & parallel) for s in ref.subscripts)
        else:
            key = frozenset(v for s in ref.subscripts for v in s.symbols() & parallel)
        if ref.subscripts is not None and (parameters or not per_dimension):
            # y[i] beside y[k - 1 - i], or A[i][k] beside A[j][k] with i, j fixed by the launching loops: places
            # apart by a parameter or running the other way are different parts of the array.
            shape: list[object] = []
            for sub in ref.subscripts:
                coefficients, rest = sub.split_linear(list(loop_vars))
                moving = tuple(sorted(str(t) for t in rest.terms if set(t) & set(parameters)))
                if per_dimension:
                    # An output's places: C[k][j] below row i and C[i][j] itself are two outputs.
                    shape.append(moving)
                else:
                    # Mirrored (y[N-1-i]) only for the parallel loops; under a launching loop a reducing loop's
                    # presence also tells parts apart (B[k][j] for k > i beside B[i][j]).
                    signs = tuple(sorted((v, _large(c) > 0) for v, c in coefficients.items()
                                         if v in parallel or parameters))
                    shape.append((signs, moving))
            key = (key, tuple(shape))
        groups.setdefault(key, []).append(ref)
    return list(groups.values())


def _guarded_extent(nest: _NestAnalysis, refs: Sequence[_Ref], var: str, full: Poly, what: str) -> Poly:
    """Return how many iterations of `var` reach `refs` under their guards (all of them when any is unguarded).

    ``if (i > 10) B[i] = C[i];`` in a loop of 256 writes 245 elements of B.
    """
    if not full.is_const():
        return full
    last = full.const_value() - 1
    lows: list[Fraction] = []
    highs: list[Fraction] = []
    for ref in refs:
        low, high = Fraction(0), last
        for limited, first, final in ref.limits:
            if limited == var:
                low = max(low, first) if first is not None else low
                high = min(high, final) if final is not None else high
        lows.append(low)
        highs.append(high)
    if not lows:
        return full
    low, high = min(lows), max(highs)
    if low <= 0 and high >= last:
        return full
    count = max(Fraction(0), high - low + 1)
    nest.note(f"{what}: only iterations {low}..{high} of loop '{var}' pass the guard: {count} of {full}")
    return Poly.const(count) if count >= 1 else full


def _partial_sums(nest: _NestAnalysis, name: str, refs: list[_Ref], outermost: str) -> bool:
    """Return True for a function-local array only updated (+=) at subscripts free of the outermost loop."""
    var = nest.scope.get(name)
    if var is None or var.scope != "function" or var.kind != "array":
        return False
    return all(r.mode == "update" and r.subscripts is not None and
               all(outermost not in s.symbols() for s in r.subscripts) for r in refs)


def _declared_dims(nest: _NestAnalysis, name: str) -> tuple[Poly | None, ...]:
    var = nest.scope.get(name)
    if var is None or not var.dims:
        return ()
    dims: list[Poly | None] = []
    for node in var.dims:
        try:
            dims.append(nest.index(node) if node is not None else None)
        except (NotAffine, _DataDependent):
            dims.append(None)
    return tuple(dims)


def _input_access(
    nest: _NestAnalysis, builder: _Builder, name: str, refs: list[_Ref], parallel: set[str], reducing: set[str],
    nominal: dict[str, Poly],
) -> tuple[Access, bool, tuple[str, ...], Poly]:
    """Return input `name`'s access, whether it is unordered, its parallel-variable order and its m (§2.2)."""
    declared = _declared_dims(nest, name)
    if any(r.subscripts is None for r in refs):
        size = _declared_size(nest, builder, name, declared)
        nest.note(f"{_shown(refs)}: read at a data-dependent subscript (a gather): unordered element")
        return Access(size, Pattern("element")), True, (), Poly.const(1)
    if all(not r.subscripts for r in refs):
        var = nest.scope.get(name)
        if var is not None and var.kind == "scalar":
            return Access((1,), Pattern("full")), False, (), Poly.const(1)
    dims, per_ref = _split_dims(nest, name, refs, declared, parallel)
    rank = len(dims)
    widths: list[Poly] = []
    kinds: list[str] = []
    extents: list[Poly] = []
    order: list[str] = []
    seen_parallel: set[str] = set()
    unordered = False
    for k in range(rank):
        used_p: set[str] = set()
        used_r: set[str] = set()
        offsets: list[Fraction] = []
        coefficients: dict[str, set[Fraction]] = {}
        guarded = all(r.guarded for r in refs)
        for entry in per_ref:
            relative, offset = entry[k]
            offsets.append(_offset_value(nest, name, k, offset, entry_offsets=[e[k][1] for e in per_ref]))
            for loop_var, c in relative.items():
                (used_p if loop_var in parallel else used_r).add(loop_var)
                coefficients.setdefault(loop_var, set()).add(c)
        if any(len(cs) > 1 for cs in coefficients.values()):
            raise _Unclassifiable(f"'{name}': a loop variable has different coefficients in dimension {k + 1}")
        coefficient = {v: next(iter(cs)) for v, cs in coefficients.items()}
        spread = Poly.const(max(offsets) - min(offsets)) if offsets else Poly()
        # The window is the union of what each access covers: A[i + n] for n in -R..R and a plain A[i] in
        # another branch span 2R + 1, not 2R + 1 plus the plain access's offset.
        window = _window(nest, [entry[k] for entry in per_ref], reducing)
        if len(used_p) > 1:
            raise _Unclassifiable(f"'{name}': dimension {k + 1} mixes parallel variables {', '.join(sorted(used_p))}")
        if used_p:
            (p,) = used_p
            order.append(p)
            seen_parallel.add(p)
            cp = coefficient[p]
            if cp < 0:
                unordered = True
                nest.note(f"'{name}' is read mirrored along '{p}' (negative stride): unordered")
                cp = -cp
            reach = Poly()
            for r in used_r:
                if coefficient[r] < 0:
                    raise _Unclassifiable(f"'{name}': reducing variable '{r}' runs backwards")
                reach = reach + Poly.const(coefficient[r]) * (nest.loops[r].extent - 1)
            if cp == 1 and not used_r:
                width = spread + 1
                kind = "neighb" if width != Poly.const(1) else "element"
                extent = nominal[p] if guarded else nest.loops[p].extent + spread
                if kind == "element":
                    extent = _guarded_extent(nest, refs, p, extent, name)
            elif cp == 1:
                width = window
                kind = "neighb"
                extent = nominal[p] if guarded else nest.loops[p].extent + window - 1
            elif len(used_r) == 1 and coefficient[next(iter(used_r))] == 1 and \
                    nest.loops[next(iter(used_r))].extent == Poly.const(cp) and spread == Poly():
                width = Poly.const(cp)
                kind = "tile"
                extent = nest.loops[p].extent * Poly.const(cp)
            elif not used_r:
                width = Poly.const(1)
                kind = "element"
                extent = nest.loops[p].extent * Poly.const(cp)
                nest.doubt(f"'{name}' is read every {cp} elements along '{p}' (strided)")
            else:
                raise _Unclassifiable(f"'{name}': dimension {k + 1} is not an element, tile or neighbourhood")
            if kind == "neighb" and not guarded and extent != nest.loops[p].extent and not _expressible(extent):
                nest.note(f"'{name}' is padded by the halo ({extent}); sized by the work units")
                extent = nest.loops[p].extent
        else:
            width = window
            kind = "span"
            extent = width
        widths.append(width)
        kinds.append(kind)
        extents.append(extent)
    extents, widths, kinds = _merge_blocked(extents, widths, kinds)
    if seen_parallel and seen_parallel != parallel:
        others = ", ".join(v for v in nest.order if v in parallel - seen_parallel)
        nest.note(f"'{name}' is not indexed by {others}: each element serves the work units along {others}")
    if len(kinds) == 1 and kinds[0] == "tile":
        # A 1-D array cut into tiles of T is rows of T: written 2-D, as the reference table does (tile(1xB)).
        rows = extents[0].divide(widths[0])
        if rows is not None:
            extents, widths, kinds = [rows, widths[0]], [Poly.const(1), widths[0]], ["element", "tile"]
    size = tuple(d for k, e in enumerate(extents) for d in builder.dims_of(e, f"'{name}' dimension {k + 1}"))
    shown = _shown(refs)
    if not any(k in ("element", "neighb", "tile") for k in kinds):
        nest.note(f"{shown}: no parallel loop variable, read whole by every work unit: full")
        whole = Poly.const(1)
        for extent in extents:
            whole = whole * extent
        return Access(size, Pattern("full")), unordered, (), whole
    if "neighb" in kinds:
        pattern = Pattern("neighb", _pattern_size(builder, name, widths, kinds))
        nest.note(f"{shown}: offsets or a sliding window around each work unit: {pattern}")
    elif any(w != Poly.const(1) for w in widths):
        pattern = Pattern("tile", _pattern_size(builder, name, widths, kinds))
        nest.note(f"{shown}: each work unit reduces a block: {pattern}")
    else:
        pattern = Pattern("element")
        nest.note(f"{shown}: one element per work unit: element")
    m = Poly.const(1)
    if pattern.kind != "element":
        for width in widths:
            m = m * width
    return Access(size, pattern), unordered, tuple(order), m


def _offset_value(nest: _NestAnalysis, name: str, k: int, offset: Poly, entry_offsets: list[Poly]) -> Fraction:
    """Return a subscript offset as a number: itself, or its distance from the smallest offset.

    The distance serves when the offsets share a parameter of the kernel (A[k][j] and A[k + 1][j] inside a
    loop over k are one and two rows down).
    """
    if offset.is_const():
        return offset.const_value()
    base = min(entry_offsets, key=_large)
    difference = offset - base
    if difference.is_const() and offset.symbols() <= set(nest.parameters) | _size_symbols(nest):
        return difference.const_value()
    raise _Unclassifiable(f"'{name}' has a symbolic offset {offset} in dimension {k + 1}")


def _size_symbols(nest: _NestAnalysis) -> set[str]:
    """Return the symbols of the nest's loop extents (sizes such as N): an offset N - 1 - k is a fixed place."""
    names: set[str] = set()
    for loop in nest.loops.values():
        names |= loop.extent.symbols() | loop.lower.symbols()
    return names - set(nest.loops)


def _window(nest: _NestAnalysis, entries: Sequence[tuple[dict[str, Fraction], Poly]], reducing: set[str]) -> Poly:
    """Return the width (elements) of the union of the ranges the accesses of one dimension cover over the reducing loops."""
    lows: list[Poly] = []
    highs: list[Poly] = []
    for relative, offset in entries:
        low, high = offset, offset
        for var, c in relative.items():
            if var not in reducing:
                continue
            reach = Poly.const(abs(c)) * (nest.loops[var].extent - 1)
            if c < 0:
                low = low - reach
            else:
                high = high + reach
        lows.append(low)
        highs.append(high)
    if not lows:
        return Poly.const(1)
    return max(highs, key=_large) - min(lows, key=_large) + 1


def _shown(refs: Sequence[_Ref], most: int = 4) -> str:
    """Return the distinct accesses of `refs` as written in the source, e.g. "A[i - 1], A[i], A[i + 1]"."""
    texts = list(dict.fromkeys(r.text for r in refs))
    return ", ".join(texts[:most]) + (f" (+{len(texts) - most} more)" if len(texts) > most else "")


def _merge_blocked(
    extents: list[Poly], widths: list[Poly], kinds: list[str]
) -> tuple[list[Poly], list[Poly], list[str]]:
    """Merge a blocked loop's two element dimensions ((n/128) x 128) back into the one the array has (n)."""
    k = 0
    while k + 1 < len(extents):
        fractional = any(c.denominator != 1 for c in extents[k].terms.values())
        product = extents[k] * extents[k + 1]
        if fractional and kinds[k] == "element" and kinds[k + 1] in ("element", "neighb") and \
                all(c.denominator == 1 for c in product.terms.values()):
            extents[k:k + 2] = [product]
            widths[k:k + 2] = [widths[k + 1]]
            kinds[k:k + 2] = [kinds[k + 1]]
            continue
        k += 1
    return extents, widths, kinds


def _pattern_size(builder: _Builder, name: str, widths: list[Poly], kinds: list[str]) -> tuple[int | str, ...]:
    size: list[int | str] = []
    for k, width in enumerate(widths):
        dims = builder.dims_of(width, f"'{name}' pattern dimension {k + 1}")
        size.extend(dims)
    return tuple(size)


def _output_access(
    nest: _NestAnalysis, builder: _Builder, name: str, refs: list[_Ref], parallel: set[str], nominal: dict[str, Poly]
) -> tuple[Access, tuple[str, ...], bool]:
    """Return the access of a distributed output, the order of its parallel variables, and whether it is mirrored.

    One element per work unit, or a block (tile) when a work unit writes several: at a few constant offsets
    (B[2*i] and B[2*i + 1]) or along a loop that runs in sequence inside the work unit.
    """
    declared = _declared_dims(nest, name)
    dims, per_ref = _split_dims(nest, name, refs, declared, parallel)
    extents: list[Poly] = []
    widths: list[Poly] = []
    order: list[str] = []
    kinds: list[str] = []
    mirrored = False
    for k in range(len(dims)):
        variables = {v for entry in per_ref for v in entry[k][0]}
        offsets = {entry[k][1] for entry in per_ref}
        if not variables:
            listed = list(offsets)
            values = sorted(_offset_value(nest, f"output {name}", k, o, listed) for o in listed)
            width = Poly.const(values[-1] - values[0] + 1)
            known = dims[k].extent
            if len(values) == 1:
                # One fixed place along this dimension (a column B[i][0], a row A[k][j]): one element wide.
                extents.append(Poly.const(1))
                widths.append(Poly.const(1))
                kinds.append("element")
            else:
                extents.append(known if known is not None else width)
                widths.append(width)
                kinds.append("tile")
                nest.note(f"output '{name}' is written at {len(values)} offsets in dimension {k + 1} by each work "
                          f"unit: a block of {width}")
            continue
        blocked = _blocked_output_dim(nest, per_ref, k, variables, parallel)
        if blocked is not None:
            p, width = blocked
            order.append(p)
            extents.append(nominal[p] * width)
            widths.append(width)
            kinds.append("tile")
            nest.note(f"output '{name}': each work unit of '{p}' writes a run of {width} along sequential loop(s) "
                      f"{', '.join(sorted(variables - {p}))}")
            continue
        if len(variables) != 1:
            raise _Unclassifiable(f"output '{name}': dimension {k + 1} is indexed by {', '.join(sorted(variables))}")
        (v,) = variables
        if v not in parallel:
            # Written along a loop that runs inside the work unit: the block it sweeps, with any fixed places
            # written beside it (v[0][i] = 1 before v[j][i] for j in 1..N-2).
            width = _window(nest, [entry[k] for entry in per_ref], set(nest.loops) - parallel)
            extents.append(width)
            widths.append(width)
            kinds.append("tile")
            nest.note(f"output '{name}' is written along sequential loop '{v}' by each work unit: a block of {width}")
            continue
        coefficients = {entry[k][0].get(v, Fraction(0)) for entry in per_ref}
        if len(coefficients) == 1 and next(iter(coefficients)) not in (0, 1, -1) and len(offsets) == 1:
            # D[2*i + 6]: still one element per work unit, every c-th one of the array.
            stride = next(iter(coefficients))
            nest.doubt(f"output '{name}' is written every {abs(stride)} elements along '{v}' (strided)")
            coefficients = {Fraction(1) if stride > 0 else Fraction(-1)}
        if coefficients != {1} and coefficients != {-1}:
            strides = ", ".join(str(c) for c in sorted(coefficients))
            raise _Unclassifiable(f"output '{name}': '{v}' has stride {strides} (not an element per work unit)")
        if coefficients == {-1}:
            mirrored = True
            nest.note(f"output '{name}' is written mirrored along '{v}' (negative stride): unordered")
        if len(offsets) != 1:
            nest.doubt(f"output '{name}' is written at several offsets along '{v}'")
        order.append(v)
        extents.append(_guarded_extent(nest, refs, v, nominal[v], f"output '{name}'"))
        widths.append(Poly.const(1))
        kinds.append("element")
    extents, widths, kinds = _merge_blocked(extents, widths, kinds)
    size = tuple(d for k, e in enumerate(extents) for d in builder.dims_of(e, f"output '{name}' dimension {k + 1}"))
    if "tile" in kinds:
        pattern = Pattern("tile", _pattern_size(builder, name, widths, kinds))
        nest.note(f"{_shown(refs)} written: a block per work unit: {pattern}")
        return Access(size, pattern), tuple(order), mirrored
    nest.note(f"{_shown(refs)} written: one element per work unit: element")
    return Access(size, Pattern("element")), tuple(order), mirrored


def _blocked_output_dim(
    nest: _NestAnalysis, per_ref: list[list[tuple[dict[str, Fraction], Poly]]], k: int, variables: set[str],
    parallel: set[str],
) -> tuple[str, Poly] | None:
    """Return (parallel variable, run length) for out[i*T + t] with t a sequential loop over T, else None."""
    parallel_here = variables & parallel
    others = variables - parallel
    if len(parallel_here) != 1 or not others:
        return None
    (p,) = parallel_here
    coefficients: dict[str, set[Fraction]] = {}
    for entry in per_ref:
        for var, c in entry[k][0].items():
            coefficients.setdefault(var, set()).add(c)
    if any(len(cs) != 1 for cs in coefficients.values()):
        return None
    stride = Poly.const(next(iter(coefficients[p])))
    run = Poly()
    for var in others:
        c = next(iter(coefficients[var]))
        if c <= 0:
            return None
        run = run + Poly.const(c) * (nest.loops[var].extent - 1)
    width = run + 1
    if width != stride:
        return None
    return p, width


def _declared_size(nest: _NestAnalysis, builder: _Builder, name: str,
                   declared: tuple[Poly | None, ...]) -> tuple[int | str, ...]:
    if declared and all(d is not None for d in declared):
        return tuple(x for k, d in enumerate(declared) for x in builder.dims_of(d, f"'{name}' dimension {k + 1}"))  # type: ignore[arg-type]
    symbol = builder.symbol_for(f"{name}_size")
    nest.doubt(f"the size of '{name}' is not declared: written as the symbol {symbol}")
    return (symbol,)


def _shared_size(nest: _NestAnalysis, builder: _Builder, name: str, refs: list[_Ref]) -> tuple[int | str, ...]:
    var = nest.scope.get(name)
    if var is not None and var.kind == "scalar":
        return (1,)
    loop_vars = set(nest.loops)
    if all(r.subscripts is not None for r in refs):
        moving = {v for r in refs for sub in r.subscripts or () for v in sub.symbols() & loop_vars}
        if not moving:
            return (len({r.subscripts for r in refs}),)
        declared = _declared_dims(nest, name)
        if declared and all(d is not None for d in declared):
            return _declared_size(nest, builder, name, declared)
        extent = Poly.const(1)
        for v in nest.order:
            if v in moving:
                extent = extent * nest.loops[v].extent
        return builder.dims_of(extent, f"shared output '{name}'")
    return _declared_size(nest, builder, name, _declared_dims(nest, name))
