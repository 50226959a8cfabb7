"""One analysed loop nest to a species, with f (steps 3, 5-7)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from pycparser import c_ast

from perfcast.species.classify.access import (
    _groups_by_loops,
    _input_access,
    _output_access,
    _parameter_offsets,
    _partial_sums,
    _shared_size,
    _shown,
)
from perfcast.species.classify.dimensions import _Builder, _large, _mean_over_launches
from perfcast.species.classify.nest import _NestAnalysis, _Ref
from perfcast.species.classify.result import LoopNestSpecies, _Unclassifiable
from perfcast.species.classify.work_units import (
    _accumulated,
    _accumulator_only,
    _array_recurrences,
    _permuted,
    _private_scalars,
    _temporary,
)
from perfcast.species.grammar import (
    Access,
    Pattern,
    Species,
    SpeciesSyntaxError,
    parse_species,
)
from perfcast.species.polynomial import Poly


def _classify_nest(nest: _NestAnalysis, loop: c_ast.For, function: str, symbols: dict[str, str]) -> LoopNestSpecies:
    """Return the species of the analysed nest `nest` (whose outermost loop is `loop`)."""
    builder = _Builder(nest, symbols)
    first = nest.order[0]
    outermost = nest.loops[first]
    if outermost.extent.is_const() and outermost.extent.const_value() <= 0 or outermost.extent == Poly():
        return LoopNestSpecies(function, loop.coord.line, first, "remainder",
                               reasons=(f"loop '{first}' runs {outermost.extent} times: the remainder of a blocked "
                                        "loop above (empty when the block divides the extent)",))
    private = _private_scalars(nest)
    for name in private:
        nest.note(f"'{name}' is set before it is read in every iteration (line "
                  f"{next(r.line for r in nest.refs if r.name == name)}): a temporary of the work unit, not an output")
    reads = [r for r in nest.refs if r.mode in ("read", "update") and r.name not in private]
    writes = [r for r in nest.refs if r.mode in ("write", "update") and r.name not in private]
    if not writes:
        raise _Unclassifiable("the loop writes nothing outside itself")
    loop_vars = set(nest.loops)
    outputs: dict[str, list[_Ref]] = {}
    for ref in writes:
        outputs.setdefault(ref.name, []).append(ref)
    distributed: dict[str, list[_Ref]] = {}
    shared: dict[str, list[_Ref]] = {}
    scattered: list[str] = []
    parallel: set[str] = set()
    for name, refs in outputs.items():
        if _partial_sums(nest, name, refs, first):
            shared[name] = refs
            nest.note(f"'{name}' holds partial results of a reduction (local to the function, only updated, "
                      f"not indexed by '{first}'): the reduction's one value, 1|shared")
            continue
        moving = [r for r in refs if r.subscripts is not None and any(s.symbols() & loop_vars for s in r.subscripts)]
        if moving and len(moving) == len(refs):
            distributed[name] = refs
            for r in refs:
                for s in r.subscripts or ():
                    parallel |= s.symbols() & loop_vars
        elif moving:
            raise _Unclassifiable(f"'{name}' is written both at moving and at fixed subscripts")
        elif all(r.mode == "write" for r in refs) and any(r.subscripts is None for r in refs) and \
                not {r.text for r in refs} & {r.text for r in nest.refs if r.name == name and r.mode == "read"}:
            # Stored (not accumulated) at a data-dependent place: each work unit writes its own element
            # somewhere (a permutation), or the code races.
            scattered.append(name)
        else:
            shared[name] = refs
    if not distributed:
        parallel = set(loop_vars)
    sequential = nest.sequential_loops()
    for var, carried in sequential.items():
        if var in parallel:
            parallel.discard(var)
            nest.note(f"loop '{var}' runs more than once in each work unit and one run hands '{carried}' to the "
                      f"next: '{var}' is sequential inside the work unit, not a parallel dimension")
    for var, carried in _array_recurrences(nest, distributed, reads, parallel).items():
        parallel.discard(var)
        sequential.setdefault(var, carried)
        nest.note(f"{carried} reads what an earlier iteration of loop '{var}' wrote (a recurrence): '{var}' runs "
                  "in sequence inside the work unit, not a parallel dimension")
    for var, carried in nest.recurrences().items():
        if var in parallel:
            parallel.discard(var)
            sequential.setdefault(var, carried)
            nest.note(f"each iteration of loop '{var}' uses '{carried}' as the previous one left it (a recurrence): "
                      f"'{var}' runs in sequence inside the work unit, not a parallel dimension")
    if not parallel:
        # Every output moves only with sequential loops: the other loops make the work units.
        parallel = loop_vars - set(sequential)
    if not parallel:
        raise _Unclassifiable("no loop is parallel: every loop runs in sequence")
    for name, refs in list(distributed.items()):
        used = {v for r in refs for sub in r.subscripts or () for v in sub.symbols() & loop_vars}
        missing = parallel - used
        if not used & parallel:
            shared[name] = distributed.pop(name)
            nest.note(f"{_shown(refs)}: every work unit writes the whole of '{name}' (it moves only with loop(s) "
                      f"{', '.join(sorted(used))}, which run inside the work unit): shared")
        elif missing and _temporary(nest, name, refs):
            del distributed[name]
            nest.note(f"{_shown(refs)}: set and then read by each work unit, indexed by "
                      f"{', '.join(sorted(used & parallel))} only: a temporary every work unit reuses, not an output")
        elif missing and _accumulated(nest, name, refs):
            shared[name] = distributed.pop(name)
            nest.note(f"{_shown(refs)}: accumulated by the work units along {', '.join(sorted(missing))} (a "
                      "reduction into each element): shared")
    reducing = loop_vars - parallel
    if first in reducing:
        for written in distributed:
            looked_back = [r for r in reads if r.name == written and r.subscripts is not None
                           and any(first in sub.symbols() for sub in r.subscripts)]
            if looked_back:
                raise _Unclassifiable(
                    f"loop '{first}' reads {_shown(looked_back)}, which its earlier iterations wrote: each iteration "
                    "is a launch of the nest inside, not a reduction", carrier=first)
    ordered_parallel = [v for v in nest.order if v in parallel]
    partial = {name for name, refs in shared.items() if _partial_sums(nest, name, refs, first)}
    for name, refs in shared.items():
        if name in partial or any(sub.symbols() & loop_vars for r in refs for sub in r.subscripts or ()):
            continue
        how = "a data-dependent subscript" if any(r.subscripts is None for r in refs) else "a fixed location"
        nest.note(f"{_shown(refs)} written at {how} by every work unit: shared")
    if reducing:
        reducers = ", ".join(v for v in nest.order if v in reducing)
        nest.note(f"parallel loops {', '.join(ordered_parallel)}; loop(s) {reducers} reduce into each output")
    else:
        nest.note(f"parallel loops {', '.join(ordered_parallel)} (every iteration is a work unit)")

    unordered = False
    orders: dict[str, tuple[str, ...]] = {}
    inputs: list[Access] = []
    input_names: list[str] = []
    for ref in reads:
        if ref.name not in input_names:
            input_names.append(ref.name)
    nominal: dict[str, Poly] = {v: nest.loops[v].extent for v in nest.order}
    described: list[tuple[str, Access]] = []
    in_place: list[str] = []
    applications: list[Poly] = []  # per input: how often a work unit applies the operator to it (the class's m)
    for name in input_names:
        refs = [r for r in reads if r.name == name]
        groups = _groups_by_loops(refs, parallel, parameters=list(nest.parameters), loop_vars=list(nest.loops))
        if len(groups) > 1:
            nest.note(f"'{name}' is read at places that move with different parallel loops, or lie apart "
                      f"({'; '.join(_shown(g) for g in groups)}): one access each")
        for number, group in enumerate(groups):
            if name in outputs and _accumulator_only(nest, builder, name, group, outputs[name], shared, reducing,
                                                     distributed, in_place):
                continue
            access, array_unordered, order, applications_here = _input_access(
                nest, builder, name, group, parallel, reducing, nominal)
            if (name, access) in described and not _parameter_offsets(nest, group):
                nest.note(f"{_shown(group)}: the same part of '{name}' again, read by other work units or in "
                          "another order: counted once")
                unordered |= array_unordered
                continue
            applications.append(applications_here)
            unordered |= array_unordered
            if order:
                orders[f"read {name} {number}"] = order
            described.append((name, access))
    outs: list[Access] = []
    for name, refs in distributed.items():
        groups = _groups_by_loops(refs, parallel, per_dimension=True, parameters=list(nest.parameters),
                                  loop_vars=list(nest.loops))
        if len(groups) > 1:
            nest.note(f"'{name}' is written at {len(groups)} places per work unit "
                      f"({'; '.join(_shown(g) for g in groups)}): one output each")
        for number, group in enumerate(groups):
            access, order, mirrored = _output_access(nest, builder, name, group, parallel, nominal)
            unordered |= mirrored
            if order:
                orders[f"write {name} {number}"] = order
            outs.append(access)
    for name in scattered:
        work_dims = Poly.const(1)
        for v in ordered_parallel:
            work_dims = work_dims * nominal[v]
        outs.append(Access(builder.dims_of(work_dims, f"output '{name}'"), Pattern("element")))
        unordered = True
        nest.note(f"'{name}' is stored once per work unit at a data-dependent place (a scatter): unordered element")
    for name, refs in shared.items():
        size = (1,) if name in partial else _shared_size(nest, builder, name, refs)
        outs.append(Access(size, Pattern("shared")))
    for role, order in orders.items():
        if len(set(order)) != len(order):
            raise _Unclassifiable(f"'{role.split()[1]}' has one loop variable in two dimensions (a diagonal)")
    distinct = {o for o in orders.values() if len(o) > 1}
    if _permuted(distinct):
        unordered = True
        nest.note("arrays take the parallel loop variables in different dimension orders (a permutation): unordered")
    if any(r.subscripts is None for r in reads if r.name not in outputs):
        unordered = True
    if not described and in_place:
        # Only accumulators were read: an array updated in place, repeatedly (e.g. an operator applied k times).
        for name in in_place:
            refs = [r for r in reads if r.name == name]
            access, _, order, applications_here = _input_access(nest, builder, name, refs, parallel, set(), nominal)
            nest.note(f"'{name}' is updated in place: also the input")
            described.append((name, access))
    inputs = [a for _, a in described]
    if not inputs:
        inputs = [Access((1,), Pattern("full"))]
        nest.note("the loop reads no array (a fill): its input is the value it stores, one element every work "
                  "unit reads: 1|full")
    species = Species(tuple(inputs), tuple(outs), unordered)
    text = str(species)
    try:
        parse_species(text)
    except SpeciesSyntaxError as error:  # pragma: no cover - the builder only makes valid sizes
        raise _Unclassifiable(f"internal: built an invalid species {text!r}: {error}") from None
    work = Poly.const(1)
    for v in ordered_parallel:
        work = work * nominal[v]
    # A size that changes with a launching loop is compared, and taken, at its mean over the launches.
    applications = [builder.at_mean(a, a.symbols() & set(nest.parameters), "m", whole=False)
                    if a.symbols() & set(nest.parameters) else a for a in applications]
    m = max(applications, key=_large) if applications else Poly.const(1)
    raw_ops = _ops_per_work_unit(nest, parallel, reducing)
    f, per_unit = _complexity(nest, parallel, reducing, m, builder)
    work = _launch_means(nest, builder, raw_ops, work)
    for name in sorted(f.symbols()):
        builder.symbol_for(name)  # so that f binds by the species symbol (REPS) as well as the C name (reps)
    element_bytes, precision = _element_type(nest, [*(name for name, _ in described), *distributed, *scattered])
    return LoopNestSpecies(
        function, loop.coord.line, first, "unsure" if nest.doubts else "exact", text,
        str(f), f, str(work), str(per_unit), str(m),
        tuple(nest.reasons), tuple(nest.doubts), dict(builder.symbols), element_bytes, precision,
    )


def _element_type(nest: _NestAnalysis, names: Sequence[str]) -> tuple[int | None, str | None]:
    """Return the element size (B) of the widest array of the species and the precision its arithmetic uses."""
    variables = [nest.scope[n] for n in names if n in nest.scope]
    sizes = [v.element_bytes for v in variables if v.element_bytes is not None]
    floats = [v for v in variables if v.is_float]
    precision = None
    if floats:
        precision = "fp64" if any(v.element_bytes == 8 for v in floats) else "fp32"
    return (max(sizes) if sizes else None), precision


def _launch_means(nest: _NestAnalysis, builder: _Builder, ops: Poly, work: Poly) -> Poly:
    """Return the work units of a launched kernel at their mean, and doubt the means where they mislead.

    Each size is a mean over the launches; when two of them change together (lu's work units N - i and its
    ops per unit 2i), launches x the mean kernel is not the launches' work: the doubt says by how much.
    """
    varying = (ops.symbols() | work.symbols()) & set(nest.parameters)
    if not varying:
        return work
    first = nest.order[0]
    kernel_extent = nest.loops[first].extent
    mean_work = _mean_over_launches(work, nest.parameters, kernel_extent)
    mean_ops = _mean_over_launches(ops, nest.parameters, kernel_extent)
    total = _mean_over_launches(ops * work, nest.parameters, kernel_extent)
    if mean_work is None or mean_ops is None or total is None:
        return work
    if mean_work.is_const() and mean_ops.is_const() and total.is_const() and total.const_value() > 0:
        ratio = mean_work.const_value() * mean_ops.const_value() / total.const_value()
        if abs(ratio - 1) > Fraction(1, 10):
            nest.doubt(f"the work units ({work}) and the ops per work unit ({ops}) both change with the launching "
                       f"loop(s): launches x the mean kernel does {float(ratio):.2f}x the work of the launches")
    return mean_work


def _ops_per_work_unit(nest: _NestAnalysis, parallel: set[str], reducing: set[str]) -> Poly:
    """Return the data ops of one work unit, as a polynomial (launching loops' variables kept)."""
    per_unit = Poly()
    for term in nest.terms:
        count: Poly | None = term.ops
        inside = set(term.loops)
        for var in nest.order:
            assert count is not None
            if var in reducing and var in inside:
                count = count * nest.loops[var].extent
            elif var in parallel and var not in inside:
                # Ops outside a parallel loop are shared by its iterations (e.g. a blocked loop's block).
                count = count.divide(nest.loops[var].extent)
                if count is None:
                    nest.doubt(f"{term.ops} op(s) outside loop '{var}' do not divide over its iterations; left out")
                    break
        if count is not None:
            per_unit = per_unit + count
    return per_unit


def _complexity(nest: _NestAnalysis, parallel: set[str], reducing: set[str], m: Poly,
                builder: _Builder | None = None) -> tuple[Poly, Poly]:
    """Return (f, ops per work unit): the data ops of one work unit, and those per application of the operator (/m)."""
    per_unit = _ops_per_work_unit(nest, parallel, reducing)
    exact = per_unit.divide(m)
    varying = (per_unit.symbols() | m.symbols()) & set(nest.parameters)
    if varying and builder is not None and (exact is None or exact.symbols() & set(nest.parameters)):
        per_unit = builder.at_mean(per_unit, varying, "ops per work unit", whole=False)
        m = builder.at_mean(m, varying, "m", whole=False)
    if per_unit == Poly():
        nest.note("no arithmetic on data: a copy, f = 0")
    f = per_unit.divide(m)
    if f is None:
        nest.doubt(f"ops per work unit {per_unit} are not a multiple of m = {m}; f taken at large sizes")
        value = _large(per_unit) / _large(m)
        f = Poly.const(value)
    if m != Poly.const(1):
        nest.note(f"{per_unit} data op(s) per work unit over m = {m} operator applications: f = {f}")
    return f, per_unit
