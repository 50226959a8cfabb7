"""Algorithmic species from C source: every loop nest of a function, classified with its reasons.

The analysis, in the order it runs (docs/classify.md says the same for users):

1. Loops are normalised to a counter from 0: ``for (i = lo; i < hi; i += s)`` has
   extent (hi - lo) / s and ``i`` is replaced by ``lo + s*i`` in subscripts.
   Bounds that read memory are reported as unclassifiable, as are while loops,
   early exits and recursion.
2. Every array access is collected with its subscripts as polynomials in the
   loop variables (pointer aliases ``p = x + off`` and integer locals are
   substituted). A subscript that reads memory is *data-dependent*. Scalars
   read and written are followed in evaluation order, with the loops around them.
3. Written arrays and outer scalars are the outputs, less the work unit's
   temporaries (a scalar set before it is read; an array set, then consumed).
   An output written at a subscript that moves with loop variables is
   *distributed*; its loop variables are the parallel ones (the work units).
   One written at a fixed or data-dependent subscript, or accumulated by work
   units it is not indexed by, is *shared*. A loop is *sequential* inside the
   work unit when a run of it hands a value on, when an iteration uses what the
   previous one left in a scalar, or when an output is read where an earlier
   iteration wrote it. Loops that are neither parallel nor indexed reduce.
4. A loop that only launches the nests inside it (a time loop; a loop whose
   variable bounds an inner loop; a reducing loop that reads what it wrote) is
   split: each inner nest is classified with the loop's variable as a parameter
   and reported with its number of launches. Sizes that change between
   launches are their mean over all launches (exact sums over the loops).
5. Each array's subscripts are split into dimensions (delinearised from the
   strides of the loop variables), and each dimension is classified: a
   parallel variable alone is an element (constant offsets widen it to a
   neighbourhood); a parallel and a reducing variable together are a
   neighbourhood (sliding window) or a tile (when the parallel stride equals the
   reducing extent); a reducing variable alone spans a tile across the
   dimension; no parallel variable at all makes the array ``full``. One array
   read at different places (moved by other parallel loops, or apart by a
   parameter) is one access per place. Outputs written along a sequential loop,
   or at a few constant offsets, are a block (tile) per work unit.
6. ``unordered`` marks a gather (an input read at a data-dependent subscript),
   a mirrored subscript (negative stride) or a permutation (arrays that take
   the parallel variables in opposite dimension orders, e.g. a transpose).
7. The operator complexity f counts the arithmetic on data values (not on
   indices) per application of the operator: ops in the innermost reducing
   loops divided by the tile/neighbourhood size. Each of + - * / and each
   comparison, min, max or abs is one op (so an FMA-able a*b+c is 2); library
   calls cost what ``CALL_COSTS`` says (elementary functions 8), overridable.

Anything the analysis had to assume is kept as a *doubt*: a classification
with doubts is "unsure", never silently exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from pycparser import c_ast

from perfcast.species.c_source import CSourceError, ParsedSource, parse_c_file
from perfcast.species.classify.costs import CALL_COSTS, CONVERSION, ELEMENTARY_FUNCTIONS
from perfcast.species.classify.declarations import _assigned_names, _declared, _Unit, _unit_of, _Var
from perfcast.species.classify.dimensions import launch_points, sum_over_launches
from perfcast.species.classify.nest import _Loop, _NestAnalysis, _text
from perfcast.species.classify.nest_species import _classify_nest
from perfcast.species.classify.result import (
    ClassifyError,
    LoopNestSpecies,
    SourceClassification,
    _DataDependent,
    _Unclassifiable,
    bind_symbols,
    launches_value,
)
from perfcast.species.polynomial import NotAffine, Poly

__all__ = [
    "CALL_COSTS",
    "ClassifyError",
    "ELEMENTARY_FUNCTIONS",
    "LoopNestSpecies",
    "SourceClassification",
    "bind_symbols",
    "classify_file",
    "classify_source",
    "conversions",
    "elementary_calls",
    "launches_value",
]


def _classify_function(unit: _Unit, definition: c_ast.FuncDef, call_costs: Mapping[str, int]) -> list[LoopNestSpecies]:
    name = definition.decl.name
    scope: dict[str, _Var] = dict(unit.globals)
    params = definition.decl.type.args.params if definition.decl.type.args is not None else []
    for param in params:
        if isinstance(param, c_ast.Decl):
            var = _declared(param, "param")
            if var is not None:
                scope[var.name] = var
    assigned = _assigned_names(definition.body)
    results: list[LoopNestSpecies] = []
    subst: dict[str, Poly] = {}
    aliases: dict[str, tuple[str, Poly]] = {}
    symbols: dict[str, str] = {}
    outer: list[_Loop] = []

    def walk(node: c_ast.Node | None, pragmas: list[str]) -> None:
        if node is None:
            return
        if isinstance(node, c_ast.Compound):
            pending: list[str] = []
            for item in node.block_items or []:
                if isinstance(item, c_ast.Pragma):
                    pending.append(item.string)
                    continue
                walk(item, pending)
                pending = []
            return
        if isinstance(node, c_ast.Decl):
            var = _declared(node, "function")
            if var is None:
                return
            scope[var.name] = var
            if node.init is not None and assigned.get(var.name, 0) == 0:
                probe = _NestAnalysis(unit, scope, subst, aliases, call_costs, (name,))
                if var.kind == "pointer":
                    target = probe.resolve_pointer(node.init)
                    if target is not None:
                        aliases[var.name] = target
                elif not var.is_float and var.kind == "scalar":
                    try:
                        subst[var.name] = probe.index(node.init)
                    except (NotAffine, _DataDependent):
                        pass
            return
        if isinstance(node, c_ast.For):
            found, carrier = _classify_loop(unit, name, node, scope, subst, aliases, call_costs, pragmas, symbols,
                                            outer)
            if carrier is None:
                results.append(found)
                return
            # A loop that launches its inner nests: each is a kernel, run once per iteration of `carrier`,
            # with the carrier's variable a parameter of its sizes.
            before = scope.get(carrier.var)
            scope[carrier.var] = _Var(carrier.var, "scalar", False, (), "function")
            outer.append(carrier)
            first_result = len(results)
            walk(node.stmt, [])
            outer.pop()
            between = _statements_between_nests(node.stmt)
            if between:
                # x[i] = s / L[i][i] after the inner nest: work of the launching loop that no kernel holds.
                said = (f"loop '{carrier.var}' also runs statement(s) outside its inner nests (line(s) "
                        f"{', '.join(map(str, between))}): their work is in no species")
                results[first_result:] = [replace(n, reasons=(*n.reasons, said)) for n in results[first_result:]]
            if before is None:
                del scope[carrier.var]
            else:
                scope[carrier.var] = before
            return
        if isinstance(node, (c_ast.While, c_ast.DoWhile)):
            line = node.coord.line
            results.append(LoopNestSpecies(name, line, "", "unclassified", reasons=(
                f"line {line}: a while loop (its trip count is not in its header)",)))
            return
        if isinstance(node, c_ast.If):
            first = len(results)
            walk(node.iftrue, [])
            walk(node.iffalse, [])
            if outer:
                # Inside a launching loop, a nest under an if runs only on the launches the test lets through.
                why = f"line {node.coord.line}: runs only when '{_text(node.cond)}' holds; counted as every launch"
                results[first:] = [replace(n, doubts=(*n.doubts, why), status="unsure" if n.status == "exact"
                                           else n.status) for n in results[first:]]
            return
        if isinstance(node, c_ast.Label):
            walk(node.stmt, [])
            return
        if isinstance(node, c_ast.Switch):
            walk(node.stmt, [])
            return
        if isinstance(node, (c_ast.Case, c_ast.Default)):
            for item in node.stmts or []:
                walk(item, [])

    walk(definition.body, [])
    return results


def _classify_loop(unit: _Unit, function: str, loop: c_ast.For, scope: dict[str, _Var], subst: dict[str, Poly],
                   aliases: dict[str, tuple[str, Poly]], call_costs: Mapping[str, int], pragmas: list[str],
                   symbols: dict[str, str], outer: Sequence[_Loop] = ()) -> tuple[LoopNestSpecies, _Loop | None]:
    """Return the nest's classification, or the loop to split it at when it launches its inner nests (a time loop)."""
    nest = _NestAnalysis(unit, scope, subst, aliases, call_costs, (function,))
    nest.parameters = {loop.var: loop for loop in outer}
    for pragma in pragmas:
        if pragma.startswith("omp"):
            nest.note(f"#pragma {pragma}")
    context = _repetitions(outer)
    counters = _loop_counters(loop)
    for changed in _assigned_names(loop):
        var = scope.get(changed)
        if var is not None and var.kind == "scalar" and not var.is_float and var.scope != "nest" and \
                changed not in counters:
            # b[c] = a[i]; c++: an index the loop moves itself is not the value it had before the loop.
            nest.subst.pop(changed, None)
            nest.opaque[changed] = "changed inside the loop"
    try:
        nest.statement(loop)
        found = _classify_nest(nest, loop, function, dict(symbols))
        if _launches_inner_nests(nest, loop):
            return found, nest.loops[nest.order[0]]
        context = _repetitions(outer, nest.loops[nest.order[0]].extent)
        return replace(found, reasons=(*context[1], *found.reasons), repetitions=context[0],
                       enclosing=tuple(v.var for v in outer), repetitions_poly=context[2]), None
    except _Unclassifiable as error:
        first = nest.order[0] if nest.order else None
        # Split at the outermost loop when it carries the inner bounds, or when it is a time loop around them.
        if first is not None and first in nest.loops and _has_inner_loop(loop.stmt) and \
                (error.carrier == first or not _in_subscripts(loop.stmt, first)):
            return _unclassified(nest, loop, function, str(error)), nest.loops[first]
        return replace(_unclassified(nest, loop, function, str(error)), repetitions=context[0],
                       enclosing=tuple(v.var for v in outer), repetitions_poly=context[2]), None
    except RecursionError:
        return _unclassified(nest, loop, function, "an expression nested too deeply to analyse"), None
    except (NotAffine, _DataDependent) as error:
        first = nest.order[0] if nest.order else None
        if first is not None and first in nest.loops and _has_inner_loop(loop.stmt) and \
                not _in_subscripts(loop.stmt, first):
            return _unclassified(nest, loop, function, str(error)), nest.loops[first]
        return _unclassified(nest, loop, function, f"a subscript or bound is not affine: {error}"), None


def _unclassified(nest: _NestAnalysis, loop: c_ast.For, function: str, why: str) -> LoopNestSpecies:
    return LoopNestSpecies(function, loop.coord.line, nest.order[0] if nest.order else "", "unclassified",
                           reasons=(*nest.reasons, why), doubts=tuple(nest.doubts))


def _repetitions(outer: Sequence[_Loop], kernel_extent: Poly | None = None,
                 ) -> tuple[str | None, tuple[str, ...], Poly | None]:
    """Return how often a nest inside the loops `outer` runs (None at the top level), and the reasons to show.

    Counted launch by launch where they are few enough, leaving out launches of an empty range or of an empty
    kernel; else by Faulhaber's sums over the loops' ranges.
    """
    if not outer:
        return None, (), None
    points = launch_points(list(outer), kernel_extent)
    if points is not None:
        count = Poly.const(len(points))
    else:
        try:
            count = sum_over_launches(Poly.const(1), list(outer))
        except NotAffine:
            count = Poly.symbol("unknown")
    reasons = tuple(
        f"inside loop '{loop.var}' (line {loop.line}), which runs it {loop.extent} times: '{loop.var}' is a "
        "parameter of the kernel, not one of its dimensions" for loop in outer)
    return str(count), reasons, count


def _statements_between_nests(body: c_ast.Node | None) -> list[int]:
    """Return the lines of a launching loop's statements that are not loops (declarations without a value aside)."""
    items = body.block_items or [] if isinstance(body, c_ast.Compound) else [body] if body is not None else []
    lines = []
    for item in items:
        if isinstance(item, (c_ast.For, c_ast.Pragma, c_ast.EmptyStatement)) or _has_inner_loop(item):
            continue
        if isinstance(item, c_ast.Decl) and item.init is None:
            continue
        if item.coord is not None:
            lines.append(item.coord.line)
    return lines


def _loop_counters(loop: c_ast.For) -> set[str]:
    """Return the variables the for statements under `loop` (itself included) count with."""
    names: set[str] = set()

    class Visitor(c_ast.NodeVisitor):
        def visit_For(self, n: c_ast.For) -> None:
            init = n.init
            if isinstance(init, c_ast.DeclList):
                names.update(d.name for d in init.decls if d.name)
            elif isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID):
                names.add(init.lvalue.name)
            self.generic_visit(n)

    Visitor().visit(loop)
    return names


def _has_inner_loop(node: c_ast.Node | None) -> bool:
    """Return True when a for loop lies under `node`."""
    found = False

    class Visitor(c_ast.NodeVisitor):
        def visit_For(self, n: c_ast.For) -> None:
            nonlocal found
            found = True

    Visitor().visit(node) if node is not None else None
    return found


def _in_subscripts(node: c_ast.Node, name: str) -> bool:
    """Return True when the identifier `name` appears inside a subscript or a pointer offset under `node`."""
    found = False

    class Names(c_ast.NodeVisitor):
        def visit_ID(self, n: c_ast.ID) -> None:
            nonlocal found
            found = found or n.name == name

    class Visitor(c_ast.NodeVisitor):
        def visit_ArrayRef(self, n: c_ast.ArrayRef) -> None:
            Names().visit(n.subscript)
            self.visit(n.name)

        def visit_BinaryOp(self, n: c_ast.BinaryOp) -> None:
            if n.op in ("+", "-"):  # p + t * N: an offset into memory
                Names().visit(n)
            self.generic_visit(n)

    Visitor().visit(node)
    return found


def _launches_inner_nests(nest: _NestAnalysis, loop: c_ast.For) -> bool:
    """Return True for a loop around loop nests whose variable indexes nothing: a time loop, T launches of them."""
    var = nest.order[0]
    if not _has_inner_loop(loop.stmt):
        return False
    # Read from the source, not from the accesses: a data-dependent subscript (x[idx[i]]) is no reason to keep a
    # time loop, while t in one (buf[t & 1]) is.
    return not _in_subscripts(loop.stmt, var) and \
        all(ref.subscripts is None or all(var not in s.symbols() for s in ref.subscripts) for ref in nest.refs)


def _unresolved(unit: _Unit, ast: c_ast.FileAST) -> tuple[str, ...]:
    """Return identifiers used in the file that nothing declares (macros left undefined, usually)."""
    declared: set[str] = set(unit.functions) | set(unit.globals)
    used: set[str] = set()
    called: set[str] = set()

    class Visitor(c_ast.NodeVisitor):
        def visit_Decl(self, n: c_ast.Decl) -> None:
            if n.name:
                declared.add(n.name)
            self.generic_visit(n)

        def visit_Typedef(self, n: c_ast.Typedef) -> None:
            declared.add(n.name)

        def visit_Enumerator(self, n: c_ast.Enumerator) -> None:
            declared.add(n.name)
            self.generic_visit(n)

        def visit_FuncCall(self, n: c_ast.FuncCall) -> None:
            if isinstance(n.name, c_ast.ID):
                called.add(n.name.name)
            if n.args is not None:
                self.visit(n.args)

        def visit_StructRef(self, n: c_ast.StructRef) -> None:
            self.visit(n.name)

        def visit_ID(self, n: c_ast.ID) -> None:
            used.add(n.name)

    Visitor().visit(ast)
    return tuple(sorted(used - declared))


def classify_source(
    source: ParsedSource, function: str | None = None, call_costs: Mapping[str, int] | None = None
) -> SourceClassification:
    """Return the classification of every outermost loop nest of `function` (or of every function) in `source`."""
    unit = _unit_of(source.ast)
    costs = {**CALL_COSTS, **(call_costs or {})}
    if function is not None and function not in unit.functions:
        known = ", ".join(sorted(unit.functions)) or "none"
        raise ClassifyError(f"{source.path}: no function named {function!r} (functions: {known})")
    names = [function] if function is not None else list(unit.functions)
    nests: list[LoopNestSpecies] = []
    try:
        for name in names:
            nests.extend(_classify_function(unit, unit.functions[name], costs))
        unresolved = _unresolved(unit, source.ast)
    except RecursionError:
        raise ClassifyError(f"{source.path}: an expression is nested too deeply to analyse") from None
    return SourceClassification(source.path, tuple(nests), unresolved, tuple(names))


def _counted_by_difference(source: ParsedSource, nests: Sequence[LoopNestSpecies], function: str | None,
                           defines: Mapping[str, int], costs: Mapping[str, int],
                           dearer: Mapping[str, int]) -> list[float | None]:
    """Return, per nest, how much f grows when `source` is classified again with `dearer` costs (ops).

    `nests`: `source`'s classification (of `function`) at `costs`, every nest in its order. f is linear in each
    cost, so the growth counts what was made dearer by one op. Both classifications walk the same code in the
    same order, so a nest's twin is the one at its own place (two nests may share a line, from a macro). The
    difference of the two f polynomials is a number even where f keeps a size unbound (a loop of K calls);
    None where it is not.
    """
    twins = classify_source(source, function, {**costs, **dearer}).nests
    if len(twins) != len(nests):
        raise ValueError(f"{source.path}: {len(nests)} nests given, {len(twins)} classified: give the whole "
                         "classification, in order")
    found: list[float | None] = []
    for nest, twin in zip(nests, twins):
        if (twin.function, twin.line) != (nest.function, nest.line):
            raise ValueError(f"{source.path}: {nest.location} is not the nest classified at its place "
                             f"({twin.location}): give the whole classification, in order")
        if nest.f_poly is None or twin.f_poly is None:
            found.append(None)
            continue
        extra = replace(nest, f_poly=twin.f_poly - nest.f_poly).f_value(defines)
        found.append(extra if extra is None or extra >= 0 else None)
    return found


def elementary_calls(
    source: ParsedSource, nests: Sequence[LoopNestSpecies], function: str | None, defines: Mapping[str, int],
    call_costs: Mapping[str, int] | None = None,
) -> list[float | None]:
    """Return the elementary-function calls (exp, log, sin, ...) per operator application of each of `nests`.

    `nests` is `source`'s whole classification at `call_costs`, in order (`classify_source`'s). Classifying
    `source` again with every elementary function one op dearer adds the number of calls to f. None where that
    number depends on a size `defines` leaves unbound.
    """
    costs = {**CALL_COSTS, **(call_costs or {})}
    dearer = {name: costs[name] + 1 for name in ELEMENTARY_FUNCTIONS}
    return _counted_by_difference(source, nests, function, defines, costs, dearer)


def conversions(
    source: ParsedSource, nests: Sequence[LoopNestSpecies], function: str | None, defines: Mapping[str, int],
    call_costs: Mapping[str, int] | None = None,
) -> list[float | None]:
    """Return the integer-to-float conversions of data per operator application of each of `nests`.

    `nests` is `source`'s whole classification at `call_costs`, in order (`classify_source`'s). A conversion
    costs no op in f; classifying `source` again with it at one op adds their number to f (as `elementary_calls`
    counts calls). None where that number depends on a size `defines` leaves unbound.
    """
    costs = {**CALL_COSTS, **(call_costs or {})}
    return _counted_by_difference(source, nests, function, defines, costs, {CONVERSION: costs[CONVERSION] + 1})


def classify_file(
    path: str | Path, function: str | None = None, defines: Mapping[str, int] | None = None,
    call_costs: Mapping[str, int] | None = None,
) -> SourceClassification:
    """Return the species of every outermost loop nest in the C file at `path` (see the module docstring)."""
    try:
        source = parse_c_file(path, dict(defines or {}))
    except CSourceError as error:
        raise ClassifyError(str(error)) from None
    return classify_source(source, function, call_costs)
