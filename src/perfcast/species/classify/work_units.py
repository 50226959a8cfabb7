"""What the work units share and hand on: temporaries, accumulators and carried dependences (step 3)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from perfcast.species.classify.access import _shown
from perfcast.species.classify.dimensions import _Builder
from perfcast.species.classify.nest import _NestAnalysis, _Ref
from perfcast.species.polynomial import Poly


def _accumulator_only(nest: _NestAnalysis, builder: _Builder, name: str, group: list[_Ref], writes: list[_Ref],
                      shared: dict[str, list[_Ref]], reducing: set[str], distributed: dict[str, list[_Ref]],
                      in_place: list[str]) -> bool:
    """Return True when the reads `group` of output `name` are only its accumulator, not an input of the species.

    A reduction's accumulator (shared) and one set in the nest before it accumulates (C[i][j] = 0; then +=) hold
    no data the work unit reads; one that accumulates onto its old value (C[i][j] *= beta; or x[i] = x[i] + ...)
    reads it: then it is an input too.
    """
    write_subs = {r.subscripts for r in writes}
    if not all(r.subscripts in write_subs for r in group):
        first = next(r for r in nest.refs if r.name == name)
        if first.mode == "write" and all(r.subscripts in write_subs or _behind(nest, r, writes) for r in group):
            # p[i][0] = 0; for j: p[i][j] = f(p[i][j - 1]): the work unit reads back what it wrote.
            nest.note(f"{_shown(group)}: reads back what the work unit wrote into '{name}' (from "
                      f"{first.text}, line {first.line}): not an input")
            return True
        return False
    subs = {r.subscripts for r in group}
    earliest = next(r for r in nest.refs if r.name == name and r.subscripts in subs)
    if name in shared:
        nest.note(f"'{name}' is read where it is written: the reduction's accumulator, not an input")
        return True
    if reducing and earliest.mode == "write":
        nest.note(f"'{name}' is set ({earliest.text}, line {earliest.line}) before it accumulates: "
                  "its old value is not read, not an input")
        if name in distributed and name not in in_place:
            in_place.append(name)
        return True
    if reducing:
        nest.note(f"'{name}' accumulates onto its old value ({earliest.text}, line {earliest.line}, reads it "
                  "first): also an input")
    else:
        nest.note(f"'{name}' is updated in place: also an input")
    return False


def _accumulated(nest: _NestAnalysis, name: str, writes: list[_Ref]) -> bool:
    """Return True when every element of `name` the nest writes is also read there (x[i] = x[i] + ..., x[i] += ...)."""
    read = {r.subscripts for r in nest.refs if r.name == name and r.mode in ("read", "update")}
    return all(w.mode == "update" or w.subscripts in read for w in writes)


def _temporary(nest: _NestAnalysis, name: str, writes: list[_Ref]) -> bool:
    """Return True for an array of the function (not a global) whose every element the nest sets before reading it.

    doitgen's sum[p] = 0; sum[p] += ...; A[r][q][p] = sum[p]: each work unit (r, q, p) uses sum[p] as scratch.
    """
    var = nest.scope.get(name)
    if var is None or var.scope not in ("function", "param") or var.kind not in ("array", "pointer"):
        return False
    seen: dict[tuple[Poly, ...] | None, str] = {}
    for ref in nest.refs:
        if ref.name == name:
            seen.setdefault(ref.subscripts, ref.mode)
    # Consumed elsewhere (A[r][q][p] = sum[p]), not only updated in place (q[i] = q[i] + ...): a temporary.
    written_at = {(r.line, r.subscripts) for r in nest.refs if r.name == name and r.mode in ("write", "update")}
    consumed = any(r.mode == "read" and (r.line, r.subscripts) not in written_at
                   for r in nest.refs if r.name == name)
    return consumed and None not in seen and all(mode == "write" for mode in seen.values())


def _carried_along(nest: _NestAnalysis, read: _Ref, write: _Ref, variables: Sequence[str]) -> str | None:
    """Return the loop of `variables` along which `read` lies where an earlier iteration's `write` was, else None.

    A constant shift along the dimension a loop moves: p[i][j - 1] against p[i][j] is one iteration of j
    behind (v[j + 1] against v[j] too, in a downward loop). A shift along a dimension no loop of the nest
    moves (row k - 1 against row k) is a place another launch wrote: nothing is carried.
    """
    if read.subscripts is None or write.subscripts is None or len(read.subscripts) != len(write.subscripts):
        return None
    shifts = [r - w for r, w in zip(read.subscripts, write.subscripts)]
    if not all(d.is_const() for d in shifts) or all(d == Poly() for d in shifts):
        return None
    for d, sub in zip(shifts, write.subscripts):
        if d == Poly():
            continue
        coefficients, _ = sub.split_linear(list(variables))
        steps = {v: c.const_value() for v, c in coefficients.items() if c.is_const()}
        if not steps:
            return None
        # A flattened A[i*M + j] shifted by -M is one row back (i - 1), not M columns: the shift is spent on the
        # largest strides first, and the outermost loop it moves carries the dependence.
        left = d.const_value()
        for var in sorted(steps, key=lambda v: -abs(steps[v])):
            iterations = Fraction(int(left / steps[var]))
            if iterations != 0:
                extent = nest.loops[var].extent
                if extent.is_const() and abs(iterations) >= extent.const_value():
                    return None  # past the loop's whole range: a place another launch wrote (the row before)
                behind = iterations > 0 if var in write.backwards else iterations < 0
                return var if behind else None
            left -= iterations * steps[var]
        return None
    return None


def _behind(nest: _NestAnalysis, read: _Ref, writes: list[_Ref]) -> bool:
    """Return True when `read` is at a place some write of the nest reached in an earlier iteration of a loop."""
    return any(_carried_along(nest, read, write, nest.order) is not None for write in writes)


def _array_recurrences(nest: _NestAnalysis, distributed: dict[str, list[_Ref]], reads: list[_Ref],
                       parallel: set[str]) -> dict[str, str]:
    """Return the parallel loops along which an output is read where an earlier iteration wrote it, and the read.

    p[i][j] = f(p[i][j - 1]) (or v[j] = g(v[j + 1]) in a downward loop) carries a value from one iteration of
    j to the next. Reading ahead (A[i] = A[i + 1], the old value) carries nothing the order cannot keep.
    """
    found: dict[str, str] = {}
    ordered = [v for v in nest.order if v in parallel]
    for name, writes in distributed.items():
        for read in (r for r in reads if r.name == name):
            for write in writes:
                var = _carried_along(nest, read, write, ordered)
                if var is not None:
                    found.setdefault(var, read.text)
    return found


def _permuted(orders: set[tuple[str, ...]]) -> bool:
    """Return True when two arrays take two parallel variables in opposite dimension orders (A[i][j], B[j][i]).

    An array with fewer dimensions (sum[j][i] beside diff[j][i][k]) keeps the order: it is not a permutation.
    """
    listed = list(orders)
    for a, first in enumerate(listed):
        for second in listed[a + 1:]:
            common = [v for v in first if v in second]
            if common != [v for v in second if v in first]:
                return True
    return False


def _private_scalars(nest: _NestAnalysis) -> list[str]:
    """Return the function's scalars that the nest always sets before reading them: temporaries, not outputs.

    Set on every path to each read (``tmp = a[i]; b[i] = tmp;``, also set in both branches of an if, or set and
    read within the same branch); one set on one path only (``if (c) t = a[i]; b[i] = t;``) keeps the value of
    an earlier iteration where the path is not taken: not private.
    """
    private: list[str] = []
    names = dict.fromkeys(key for key, _, _, _ in nest.flow if isinstance(key, str))
    for name in names:
        var = nest.scope.get(name)
        if var is None or var.kind != "scalar" or var.scope not in ("function", "param"):
            continue  # a global outlives the call: what the loop leaves in it is a result
        reads = [i for i, (key, mode, _, _) in enumerate(nest.flow)
                 if key == name and mode in ("read", "self-read", "cond-read")]
        written = any(key == name and mode in ("write", "cond-write") for key, mode, _, _ in nest.flow)
        if written and all(nest.set_before(i) for i in reads):
            private.append(name)
    return private
