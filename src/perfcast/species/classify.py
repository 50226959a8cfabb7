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

import math
import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Literal

from pycparser import c_ast

from perfcast.errors import InputError
from perfcast.species.c_source import CSourceError, ParsedSource, parse_c_file
from perfcast.species.grammar import (
    Access,
    Pattern,
    Species,
    SpeciesSyntaxError,
    parse_species,
)
from perfcast.species.polynomial import NotAffine, Poly

__all__ = [
    "CALL_COSTS",
    "ELEMENTARY_FUNCTIONS",
    "ClassifyError",
    "LoopNestSpecies",
    "SourceClassification",
    "classify_file",
    "classify_source",
    "elementary_calls",
    "launches_value",
]

# Ops charged for one call of a library function. Elementary functions are a short polynomial plus range
# reduction in a vectorised libm (and a few instructions on a GPU's special-function unit): 8 is a middle value.
_ELEMENTARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan",
               "atan2", "sinh", "cosh", "tanh", "pow", "cbrt", "erf", "erfc", "hypot", "tgamma", "lgamma")
_SINGLE = ("sqrt", "fabs", "fmin", "fmax", "floor", "ceil", "round", "trunc", "rint", "copysign", "fmod")
ELEMENTARY_FUNCTIONS = tuple(name + suffix for name in _ELEMENTARY for suffix in ("", "f"))
CALL_COSTS: dict[str, int] = {
    **dict.fromkeys(ELEMENTARY_FUNCTIONS, 8),
    **{name + suffix: 1 for name in _SINGLE for suffix in ("", "f")},
    "rsqrtf": 1, "abs": 1, "labs": 1, "min": 1, "max": 1, "MIN": 1, "MAX": 1, "fma": 2, "fmaf": 2,
    # Run-time queries: no arithmetic on data.
    "omp_get_wtime": 0, "omp_get_thread_num": 0, "omp_get_num_threads": 0, "omp_get_max_threads": 0,
}

Status = Literal["exact", "unsure", "unclassified", "remainder"]
_LARGE = 1 << 20  # the value given to size symbols when strides must be ordered (sizes are large)


class ClassifyError(InputError):
    """A request that cannot be answered: a function that does not exist, a source that does not parse."""


class _Unclassifiable(Exception):
    """A loop nest outside what species describe (the message says why).

    `carrier` names an outer loop that, taken as a sequence of launches of its inner nests, would make them
    classifiable (its variable bounds them, or it holds sibling loops of different ranges).
    """

    def __init__(self, message: str, carrier: str | None = None) -> None:
        super().__init__(message)
        self.carrier = carrier


class _DataDependent(Exception):
    """An index expression that reads memory or a data value."""


@dataclass(frozen=True)
class LoopNestSpecies:
    """The classification of one outermost loop nest: species, f, status and the reasons behind them."""

    function: str
    line: int
    loop_variable: str
    status: Status
    species: str | None = None
    f: str | None = None
    f_poly: Poly | None = field(default=None, repr=False, compare=False)
    work_units: str | None = None
    ops_per_work_unit: str | None = None
    m: str | None = None
    reasons: tuple[str, ...] = ()
    doubts: tuple[str, ...] = ()
    symbols: Mapping[str, str] = field(default_factory=dict)
    element_bytes: int | None = None
    precision: str | None = None
    repetitions: str | None = None
    enclosing: tuple[str, ...] = ()
    repetitions_poly: Poly | None = field(default=None, repr=False, compare=False)

    @property
    def location(self) -> str:
        """Return 'function:line' for messages."""
        return f"{self.function}:{self.line}"

    def f_value(self, bind: Mapping[str, int] = {}) -> float | None:
        """Return f (ops) with C names or species symbols bound from `bind`, or None while a symbol is unbound."""
        if self.f_poly is None:
            return None
        values = {**bind, **{c: bind[s] for s, c in self.symbols.items() if s in bind}}
        value = self.f_poly.evaluate(values)
        return None if value is None else float(value)

    def parsed(self) -> Species:
        """Return the species tree (ValueError for a nest without one)."""
        if self.species is None:
            raise ValueError(f"{self.location}: no species ({self.status})")
        return parse_species(self.species)

    def to_json(self) -> dict[str, object]:
        """Return a JSON-ready dict."""
        return {
            "function": self.function, "line": self.line, "loop_variable": self.loop_variable,
            "status": self.status, "species": self.species, "f": self.f, "work_units": self.work_units,
            "ops_per_work_unit": self.ops_per_work_unit, "m": self.m, "element_bytes": self.element_bytes,
            "precision": self.precision, "reasons": list(self.reasons), "doubts": list(self.doubts),
            "symbols": dict(self.symbols), "repetitions": self.repetitions, "enclosing": list(self.enclosing),
        }


@dataclass(frozen=True)
class SourceClassification:
    """Every loop nest of the selected functions of one C file, and the identifiers nothing declares."""

    path: str
    nests: tuple[LoopNestSpecies, ...]
    unresolved: tuple[str, ...]
    functions: tuple[str, ...]


# ---------------------------------------------------------------------------------------------- declarations


@dataclass
class _Var:
    """What the analysis knows of a declared name."""

    name: str
    kind: Literal["scalar", "array", "pointer", "function"]
    is_float: bool
    dims: tuple[c_ast.Node | None, ...] = ()
    scope: Literal["global", "param", "function", "nest"] = "function"
    element_bytes: int | None = None


_FLOAT_TYPES = {"float", "double", "_Float16", "half"}


def _declared(decl: c_ast.Decl, scope: Literal["global", "param", "function", "nest"]) -> _Var | None:
    """Return the _Var of a declaration (None for anonymous or struct declarations)."""
    if decl.name is None:
        return None
    node = decl.type
    dims: list[c_ast.Node | None] = []
    kind: Literal["scalar", "array", "pointer", "function"] = "scalar"
    while True:
        if isinstance(node, c_ast.ArrayDecl):
            kind = "array" if kind == "scalar" else kind
            dims.append(node.dim)
            node = node.type
        elif isinstance(node, c_ast.PtrDecl):
            if kind == "scalar":
                kind = "pointer"
            node = node.type
        elif isinstance(node, c_ast.FuncDecl):
            return _Var(decl.name, "function", False, (), scope)
        else:
            break
    names: list[str] = []
    if isinstance(node, c_ast.TypeDecl) and isinstance(node.type, c_ast.IdentifierType):
        names = list(node.type.names)
    return _Var(decl.name, kind, bool(_FLOAT_TYPES & set(names)), tuple(dims), scope, _type_bytes(names))


_TYPE_BYTES = {"char": 1, "short": 2, "int": 4, "long": 8, "float": 4, "double": 8, "_Float16": 2, "half": 2,
               "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4, "int64_t": 8,
               "uint64_t": 8, "size_t": 8, "ptrdiff_t": 8, "_Bool": 1}


def _type_bytes(names: Sequence[str]) -> int | None:
    """Return the size in B of a C scalar type spelled by `names` (LP64), or None when unknown."""
    if names.count("long") >= 1 and "double" not in names:
        return 8
    for name in names:
        if name in _TYPE_BYTES and name not in ("signed", "unsigned"):
            return _TYPE_BYTES[name]
    return 4 if set(names) & {"signed", "unsigned"} else None


# ------------------------------------------------------------------------------------------------- the nest


@dataclass(frozen=True)
class _Loop:
    var: str
    extent: Poly
    lower: Poly
    step: Fraction
    line: int
    descending: bool = False  # the source walks it downwards (kept to tell which iterations come first)


@dataclass(frozen=True)
class _Ref:
    """One access of an array or outer scalar: subscripts (None where data-dependent), and how."""

    name: str
    subscripts: tuple[Poly, ...] | None
    mode: Literal["read", "write", "update"]
    loops: tuple[str, ...]
    guarded: bool
    line: int
    text: str
    backwards: tuple[str, ...] = ()  # loop variables whose loop around this access runs downwards in the source


@dataclass
class _Term:
    """Ops executed once per iteration of `loops`."""

    ops: Poly
    loops: tuple[str, ...]


_ARITH = {"+", "-", "*", "/", "%", "<", ">", "<=", ">=", "==", "!=", "&", "|", "^", "<<", ">>"}


def _int_literal(text: str) -> int | None:
    """Return the value of a C integer literal (suffixes and hex allowed), or None."""
    cleaned = text.rstrip("uUlL")
    try:
        return int(cleaned, 0) if not re.fullmatch(r"0\d+", cleaned) else int(cleaned, 8)
    except ValueError:
        return None


class _NestAnalysis:
    """Walks one outermost loop nest and collects loops, accesses, op terms and doubts."""

    def __init__(self, unit: _Unit, scope: dict[str, _Var], substitutions: dict[str, Poly],
                 aliases: dict[str, tuple[str, Poly]], call_costs: Mapping[str, int], call_stack: tuple[str, ...]):
        self.unit = unit
        self.scope = dict(scope)
        self.subst = dict(substitutions)
        self.aliases = dict(aliases)
        self.call_costs = call_costs
        self.call_stack = call_stack
        self.loops: dict[str, _Loop] = {}
        self.order: list[str] = []
        self.stack: list[str] = []
        self.refs: list[_Ref] = []
        self.terms: list[_Term] = []
        self.doubts: list[str] = []
        self.reasons: list[str] = []
        self.data_locals: set[str] = set()
        self.subscript_ops = Poly()  # data ops inside data-dependent subscripts, taken by the next access
        self.opaque: dict[str, str] = {}  # integer locals whose value the analysis cannot follow, and why
        self.guard_depth = 0
        self.scalar_events: list[tuple[str, str]] = []  # outer scalars read or written, in evaluation order
        # Each for statement is an instance of its variable's loop; two instances of one variable are sequential
        # loops of the same work unit. Scalars read and written, with the instances around them, show the values
        # one such loop hands to the next.
        self.instances: list[int] = []
        self.instance_var: dict[int, str] = {}
        self.flow: list[tuple[object, str, tuple[int, ...], frozenset[str]]] = []
        self.parameters: dict[str, _Loop] = {}  # variables of the loops that launch this nest, as size parameters
        self.updating: str | None = None  # the scalar whose assignment is being evaluated
        self.direction: dict[str, bool] = {}  # whether the loop of each variable now open runs downwards
        self.in_condition = False

    # -- helpers
    def doubt(self, message: str) -> None:
        if message not in self.doubts:
            self.doubts.append(message)

    def note(self, message: str) -> None:
        if message not in self.reasons:
            self.reasons.append(message)

    def scalar_flow(self, name: str, mode: Literal["read", "write"]) -> None:
        var = self.scope.get(name)
        if var is not None and var.kind == "scalar" and name not in self.loops:
            recorded: str = mode
            if mode == "read" and (name == self.updating or self.in_condition):
                recorded = "self-read"  # s = s + x, s += x, if (x > s): the scalar's own update, not a use of it
            self.flow.append((name, recorded, tuple(self.instances), frozenset()))

    def downwards(self) -> tuple[str, ...]:
        return tuple(v for v in self.stack if self.direction.get(v))

    def recurrences(self) -> dict[str, str]:
        """Return the loop variables whose iterations hand a scalar to the next one (a recurrence), with it.

        ``for (j ...) { y[i][j] = x[i][j] + b * prev; prev = y[i][j]; }`` uses in iteration j what j - 1
        wrote: j runs in sequence. A reduction (s += x, or a max taken under an if) only updates its
        scalar, so it does not count.
        """
        found: dict[str, str] = {}
        for instance, var in self.instance_var.items():
            events: dict[str, list[str]] = {}
            for key, mode, stack, _ in self.flow:
                if isinstance(key, str) and instance in stack:
                    events.setdefault(key, []).append(mode)
            for name, modes in events.items():
                if "write" in modes and modes[0] != "write" and "read" in modes:
                    found.setdefault(var, name)
        return found

    def sequential_loops(self) -> dict[str, str]:
        """Return the loop variables of loops that hand a value on to what follows them, with the value handed.

        In ``s = 0; for (j ...) s += A[i][j]; for (j ...) B[i][j] = A[i][j] / s;`` the first loop over j must end
        before the second starts: j is sequential inside the work unit of i. A value is handed on when it is
        written inside one loop over j, at a place that does not move with j, and read after that loop ends,
        before anything writes it again.
        """
        by_var: dict[str, list[int]] = {}
        for instance, var in self.instance_var.items():
            by_var.setdefault(var, []).append(instance)
        found: dict[str, str] = {}
        for var, instances in by_var.items():
            for position, (key, mode, stack, symbols) in enumerate(self.flow):
                inside = [i for i in stack if i in instances]
                if mode != "write" or not inside or var in symbols:
                    continue
                for later_key, later_mode, later_stack, _ in self.flow[position + 1:]:
                    if later_key != key or inside[0] in later_stack:
                        continue
                    if later_mode in ("read", "self-read"):
                        found.setdefault(var, key[0] if isinstance(key, tuple) else str(key))
                    break
        return found

    def is_outer(self, name: str) -> bool:
        var = self.scope.get(name)
        return var is not None and var.scope != "nest"

    # -- index expressions
    def index(self, node: c_ast.Node) -> Poly:
        """Return an integer index expression as a polynomial; _DataDependent or NotAffine otherwise."""
        if isinstance(node, c_ast.Constant):
            value = _int_literal(node.value) if node.type in ("int", "long", "unsigned int", "char") or \
                node.type.startswith(("int", "long", "unsigned")) else None
            if value is None:
                raise _DataDependent(f"the constant {node.value}")
            return Poly.const(value)
        if isinstance(node, c_ast.ID):
            name = node.name
            if name in self.loops and name in self.stack:
                loop = self.loops[name]
                return loop.lower + Poly.const(loop.step) * Poly.symbol(name)
            if name in self.subst:
                return self.subst[name]
            if name in self.data_locals:
                raise _DataDependent(name)
            if name in self.opaque:
                raise NotAffine(f"'{name}' is {self.opaque[name]}")
            var = self.scope.get(name)
            if var is not None and (var.is_float or var.kind != "scalar"):
                raise _DataDependent(name)
            return Poly.symbol(name)
        if isinstance(node, c_ast.BinaryOp):
            if node.op in ("+", "-", "*"):
                left, right = self.index(node.left), self.index(node.right)
                return left + right if node.op == "+" else left - right if node.op == "-" else left * right
            if node.op == "/":
                left, right = self.index(node.left), self.index(node.right)
                if right.is_const() and right.const_value() != 0:
                    self.note(f"integer division by {right} in an index or bound is taken as exact")
                    return left * Poly.const(1 / right.const_value())
                raise NotAffine(f"division by {right}")
            if node.op == "<<":
                left, right = self.index(node.left), self.index(node.right)
                if right.is_const():
                    return left * Poly.const(2 ** int(right.const_value()))
            raise NotAffine(f"the operator {node.op!r}")
        if isinstance(node, c_ast.UnaryOp):
            if node.op == "-":
                return -self.index(node.expr)
            if node.op == "+":
                return self.index(node.expr)
            raise NotAffine(f"the operator {node.op!r}")
        if isinstance(node, c_ast.Cast):
            return self.index(node.expr)
        if isinstance(node, (c_ast.ArrayRef, c_ast.StructRef)):
            raise _DataDependent(f"it reads {_text(node)}")
        if isinstance(node, c_ast.TernaryOp):
            return self.clipped_block(node)
        raise NotAffine(type(node).__name__)

    def clipped_block(self, node: c_ast.TernaryOp) -> Poly:
        """Return C for min(X, C) written as a conditional: a block size clipped at the end of the range."""
        cond = node.cond
        if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">="):
            choices = [self.index(node.iftrue), self.index(node.iffalse)]
            constants = [c for c in choices if c.is_const()]
            if len(constants) == 1:
                self.note(f"line {node.coord.line}: '{_text(node)}' taken as {constants[0]} "
                          "(a block clipped at the end of the range: only the last block is shorter)")
                return constants[0]
        raise NotAffine("a conditional expression")

    # -- loops
    def loop_header(self, node: c_ast.For) -> _Loop:
        init, cond, step = node.init, node.cond, node.next
        var = lower = None
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
            var, lower_node = init.decls[0].name, init.decls[0].init
            self.scope[var] = _Var(var, "scalar", False, (), "nest")
        elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
            var, lower_node = init.lvalue.name, init.rvalue
        else:
            raise _Unclassifiable(f"line {node.coord.line}: the loop has no 'var = start' initialisation")
        assert var is not None
        declared = self.scope.get(var)
        if isinstance(init, c_ast.DeclList):
            declared = _declared(init.decls[0], "nest")
        if declared is not None and declared.kind == "pointer":
            raise _Unclassifiable(f"line {node.coord.line}: the loop follows pointer '{var}' (pointer chasing)")
        stride = self.loop_step(step, var, node)
        try:
            lower = self.index(lower_node)
            if not isinstance(cond, c_ast.BinaryOp):
                raise NotAffine("condition")
            if isinstance(cond.left, c_ast.ID) and cond.left.name == var:
                op, bound_node = cond.op, cond.right
            elif isinstance(cond.right, c_ast.ID) and cond.right.name == var:
                op = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "!=": "!="}.get(cond.op, cond.op)
                bound_node = cond.left
            else:
                raise NotAffine("condition")
            bound = self.index(bound_node)
        except _DataDependent as error:
            raise _Unclassifiable(f"line {node.coord.line}: loop '{var}' has data-dependent bounds ({error})") from None
        except NotAffine as error:
            raise _Unclassifiable(f"line {node.coord.line}: loop '{var}' bounds are not affine ({error})") from None
        if stride > 0 and op in ("<", "!="):
            span = bound - lower
        elif stride > 0 and op == "<=":
            span = bound - lower + 1
        elif stride < 0 and op == ">":
            span = lower - bound
        elif stride < 0 and op == ">=":
            span = lower - bound + 1
        else:
            raise _Unclassifiable(f"line {node.coord.line}: loop '{var}' condition {op!r} does not end the loop")
        extent = span * Poly.const(1 / abs(stride))
        if abs(stride) != 1 and extent.is_const():
            # A known trip count: the last, partial step still runs.
            extent = Poly.const(max(0, -(-extent.const_value() // 1)))
        elif abs(stride) != 1:
            self.note(f"loop '{var}' steps by {stride}: extent ({span})/{abs(stride)} taken as exact")
        outer = extent.symbols() & set(self.stack)
        if outer:
            raise _Unclassifiable(
                f"line {node.coord.line}: loop '{var}' bounds depend on the loop variable(s) "
                f"{', '.join(sorted(outer))} (a non-rectangular iteration space)",
                carrier=next(v for v in self.stack if v in outer),
            )
        descending = stride < 0
        if stride < 0:
            # A species does not depend on the order of iterations: walk a downward loop from its last value.
            lower = lower + Poly.const(stride) * (extent - 1)
            stride = -stride
        return _Loop(var, extent, lower, stride, node.coord.line, descending)

    def loop_step(self, step: c_ast.Node | None, var: str, node: c_ast.For) -> Fraction:
        if isinstance(step, c_ast.UnaryOp) and isinstance(step.expr, c_ast.ID) and step.expr.name == var:
            if step.op in ("p++", "++"):
                return Fraction(1)
            if step.op in ("p--", "--"):
                return Fraction(-1)
        if isinstance(step, c_ast.Assignment) and isinstance(step.lvalue, c_ast.ID) and step.lvalue.name == var:
            try:
                if step.op in ("+=", "-="):
                    amount = self.index(step.rvalue)
                    if amount.is_const() and amount.const_value() != 0:
                        return amount.const_value() * (1 if step.op == "+=" else -1)
                    if step.op == "+=":
                        raise _Unclassifiable(f"line {node.coord.line}: loop '{var}' steps by a symbolic {amount}")
                if step.op == "=" and isinstance(step.rvalue, c_ast.BinaryOp) and step.rvalue.op in ("+", "-"):
                    left = step.rvalue.left
                    if isinstance(left, c_ast.ID) and left.name == var:
                        amount = self.index(step.rvalue.right)
                        if amount.is_const() and amount.const_value() != 0:
                            return amount.const_value() * (1 if step.rvalue.op == "+" else -1)
            except (NotAffine, _DataDependent):
                pass
        raise _Unclassifiable(f"line {node.coord.line}: loop '{var}' has no constant step")

    # -- statements
    def statement(self, node: c_ast.Node | None) -> None:
        if node is None:
            return
        if isinstance(node, c_ast.Compound):
            for item in node.block_items or []:
                self.statement(item)
        elif isinstance(node, c_ast.For):
            loop = self.loop_header(node)
            known = self.loops.get(loop.var)
            if known is None:
                self.loops[loop.var] = loop
                self.order.append(loop.var)
            elif known.extent != loop.extent or known.lower != loop.lower or known.step != loop.step:
                raise _Unclassifiable(
                    f"line {node.coord.line}: two loops over '{loop.var}' with different ranges in one nest",
                    carrier=self.stack[0] if self.stack else None,
                )
            if loop.var in self.stack:
                raise _Unclassifiable(f"line {node.coord.line}: loop '{loop.var}' nested in a loop of the same variable")
            self.direction[loop.var] = loop.descending
            instance = len(self.instance_var) + 1
            self.instance_var[instance] = loop.var
            self.instances.append(instance)
            self.stack.append(loop.var)
            self.statement(node.stmt)
            self.stack.pop()
            self.instances.pop()
        elif isinstance(node, (c_ast.While, c_ast.DoWhile)):
            raise _Unclassifiable(f"line {node.coord.line}: a while loop (its trip count is not in its header)")
        elif isinstance(node, c_ast.Decl):
            self.declaration(node)
        elif isinstance(node, c_ast.DeclList):
            for decl in node.decls:
                self.declaration(decl)
        elif isinstance(node, c_ast.If):
            self.branches(node.cond, node.iftrue, node.iffalse)
        elif isinstance(node, c_ast.Switch):
            self.expression(node.cond)
            self.statement(node.stmt)
            self.doubt(f"line {node.coord.line}: a switch: every case is counted as if it ran")
        elif isinstance(node, (c_ast.Case, c_ast.Default)):
            for item in node.stmts or []:
                self.statement(item)
        elif isinstance(node, c_ast.Return):
            raise _Unclassifiable(f"line {node.coord.line}: 'return' inside the loop (an early exit)")
        elif isinstance(node, c_ast.Break):
            raise _Unclassifiable(f"line {node.coord.line}: 'break' inside the loop (a data-dependent trip count)")
        elif isinstance(node, c_ast.Goto):
            raise _Unclassifiable(f"line {node.coord.line}: 'goto' inside the loop")
        elif isinstance(node, c_ast.Continue):
            self.doubt(f"line {node.coord.line}: 'continue' may skip the body; counted as if the body ran")
        elif isinstance(node, c_ast.Label):
            self.statement(node.stmt)
        elif isinstance(node, (c_ast.Pragma, c_ast.EmptyStatement, c_ast.Typedef)):
            return
        else:
            self.record(self.expression(node))

    def record(self, ops: Poly) -> None:
        if ops != Poly():
            self.terms.append(_Term(ops, tuple(self.stack)))

    def branches(self, cond: c_ast.Node, iftrue: c_ast.Node | None, iffalse: c_ast.Node | None) -> None:
        guard = self.is_index_condition(cond)
        self.in_condition = True
        try:
            self.record(self.expression(cond))
        finally:
            self.in_condition = False
        if guard:
            self.guard_depth += 1
        before = len(self.terms)
        self.statement(iftrue)
        true_terms = self.terms[before:]
        del self.terms[before:]
        self.statement(iffalse)
        false_terms = self.terms[before:]
        del self.terms[before:]
        if guard:
            self.guard_depth -= 1
        # The costlier branch counts: a work unit takes one of them.
        self.terms.extend(true_terms if _terms_weight(true_terms) >= _terms_weight(false_terms) else false_terms)

    def is_index_condition(self, cond: c_ast.Node) -> bool:
        """Return True for a guard on indices only (border checks), False for a test of data."""
        if isinstance(cond, c_ast.BinaryOp) and cond.op in ("&&", "||"):
            return self.is_index_condition(cond.left) and self.is_index_condition(cond.right)
        if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", ">", "<=", ">=", "==", "!="):
            try:
                self.index(cond.left)
                self.index(cond.right)
                return True
            except (NotAffine, _DataDependent):
                return False
        if isinstance(cond, c_ast.UnaryOp) and cond.op == "!":
            return self.is_index_condition(cond.expr)
        return False

    def declaration(self, decl: c_ast.Decl) -> None:
        var = _declared(decl, "nest")
        if var is None:
            return
        self.scope[var.name] = var
        self.subst.pop(var.name, None)
        self.aliases.pop(var.name, None)
        if decl.init is None:
            return
        if var.kind == "pointer":
            self.pointer_alias(var.name, decl.init, decl.coord.line)
            return
        if isinstance(decl.init, c_ast.InitList):
            for item in decl.init.exprs:
                self.record(self.expression(item))
            return
        self.assign_local(var, decl.init)
        self.scalar_flow(var.name, "write")

    def assign_local(self, var: _Var, value: c_ast.Node) -> None:
        """Bind an integer local to its index polynomial, or mark it as carrying data."""
        if not var.is_float:
            try:
                self.subst[var.name] = self.index(value)
                self.data_locals.discard(var.name)
                self.opaque.pop(var.name, None)
                return
            except (NotAffine, _DataDependent):
                pass
        ops, is_data = self.value(value)
        self.record(ops)
        self.subst.pop(var.name, None)
        if is_data or var.is_float:
            self.data_locals.add(var.name)
        else:
            self.opaque[var.name] = f"computed in the loop as '{_text(value)}'"

    def pointer_alias(self, name: str, value: c_ast.Node, line: int) -> None:
        """Record p = base + offset (or &base[offset]) so that p[i] reads base[offset + i]."""
        target = self.resolve_pointer(value)
        if target is None:
            self.doubt(f"line {line}: pointer '{name}' is not an offset into a known array")
            self.aliases.pop(name, None)
            return
        self.aliases[name] = target

    def resolve_pointer(self, node: c_ast.Node) -> tuple[str, Poly] | None:
        try:
            if isinstance(node, c_ast.Cast):
                return self.resolve_pointer(node.expr)
            if isinstance(node, c_ast.ID):
                if node.name in self.aliases:
                    return self.aliases[node.name]
                var = self.scope.get(node.name)
                if var is not None and var.kind in ("pointer", "array"):
                    return node.name, Poly()
                return None
            if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-"):
                base = self.resolve_pointer(node.left)
                if base is None and node.op == "+":
                    base = self.resolve_pointer(node.right)
                    offset = self.index(node.left)
                else:
                    offset = self.index(node.right)
                if base is None:
                    return None
                return base[0], base[1] + (offset if node.op == "+" else -offset)
            if isinstance(node, c_ast.UnaryOp) and node.op == "&" and isinstance(node.expr, c_ast.ArrayRef):
                name, subscripts = self.flatten_ref(node.expr)
                if name is None or subscripts is None or len(subscripts) != 1:
                    return None
                return name, subscripts[0]
        except (NotAffine, _DataDependent):
            return None
        return None

    # -- expressions: returns ops per evaluation, registers accesses
    def expression(self, node: c_ast.Node) -> Poly:
        return self.value(node)[0]

    def value(self, node: c_ast.Node | None) -> tuple[Poly, bool]:
        """Return (ops, carries data) of an expression, registering its memory accesses."""
        if node is None:
            return Poly(), False
        if isinstance(node, c_ast.Constant):
            return Poly(), node.type in ("float", "double")
        if isinstance(node, c_ast.ID):
            var = self.scope.get(node.name)
            if var is not None and var.scope != "nest" and var.kind == "scalar":
                self.scalar_events.append((node.name, "read"))
            self.scalar_flow(node.name, "read")
            if node.name in self.data_locals:
                return Poly(), True
            if var is not None and var.scope != "nest" and var.kind == "scalar" and var.is_float:
                return Poly(), True
            if var is not None and var.kind in ("array", "pointer") and node.name not in self.aliases:
                if var.scope != "nest":
                    self.doubt(f"the array '{node.name}' is used whole (passed or copied); its accesses are not seen")
            return Poly(), False
        if isinstance(node, (c_ast.ArrayRef, c_ast.StructRef)) or (
            isinstance(node, c_ast.UnaryOp) and node.op == "*"
        ):
            return self.access(node, "read"), True
        if isinstance(node, c_ast.Assignment):
            return self.assignment(node)
        if isinstance(node, c_ast.BinaryOp):
            left_ops, left_data = self.value(node.left)
            right_ops, right_data = self.value(node.right)
            data = left_data or right_data
            # Arithmetic on two literals is folded by the compiler: it costs nothing at run time.
            folded = _is_literal(node.left) and _is_literal(node.right)
            own = 1 if data and node.op in _ARITH and not folded else 0
            return left_ops + right_ops + own, data
        if isinstance(node, c_ast.UnaryOp):
            if node.op in ("p++", "p--", "++", "--"):
                return self.increment(node)
            if node.op == "sizeof":
                return Poly(), False
            if node.op == "&":
                self.doubt(f"line {node.coord.line}: an address is taken; accesses through it are not seen")
                return Poly(), False
            ops, data = self.value(node.expr)
            return ops + (1 if data and node.op in ("-", "~") else 0), data
        if isinstance(node, c_ast.Cast):
            return self.value(node.expr)
        if isinstance(node, c_ast.TernaryOp):
            cond_ops, cond_data = self.value(node.cond)
            true_ops, true_data = self.value(node.iftrue)
            false_ops, false_data = self.value(node.iffalse)
            return cond_ops + max(true_ops, false_ops, key=_poly_weight), cond_data or true_data or false_data
        if isinstance(node, c_ast.FuncCall):
            return self.call(node)
        if isinstance(node, c_ast.ExprList):
            total, data = Poly(), False
            for item in node.exprs:
                ops, item_data = self.value(item)
                total, data = total + ops, data or item_data
            return total, data
        if isinstance(node, (c_ast.InitList, c_ast.CompoundLiteral)):
            return Poly(), False
        self.doubt(f"line {getattr(node.coord, 'line', '?')}: a {type(node).__name__} expression is not analysed")
        return Poly(), False

    def assignment(self, node: c_ast.Assignment) -> tuple[Poly, bool]:
        if isinstance(node.lvalue, c_ast.ID):
            outer, self.updating = self.updating, node.lvalue.name
            try:
                return self.assign_to(node)
            finally:
                self.updating = outer
        return self.assign_to(node)

    def assign_to(self, node: c_ast.Assignment) -> tuple[Poly, bool]:
        target = node.lvalue
        compound = node.op != "="
        if isinstance(target, c_ast.ID):
            name = target.name
            if name in self.stack or name in self.loops:
                raise _Unclassifiable(f"line {node.coord.line}: loop variable '{name}' is changed in the body")
            var = self.scope.get(name)
            if var is not None and var.scope == "nest":
                if var.kind == "pointer":
                    self.pointer_alias(name, node.rvalue, node.coord.line)
                    return Poly(), False
                if compound:
                    self.scalar_flow(name, "read")
                    self.scalar_flow(name, "write")
                    ops, data = self.value(node.rvalue)
                    carried = name in self.data_locals or var.is_float
                    if not (carried or data):
                        try:
                            self.subst[name] = self.index(c_ast.BinaryOp(node.op[:-1], target, node.rvalue))
                            return Poly(), False
                        except (NotAffine, _DataDependent):
                            pass
                    self.subst.pop(name, None)
                    self.data_locals.add(name)
                    return ops + 1, True
                self.assign_local(var, node.rvalue)
                self.scalar_flow(name, "write")
                return Poly(), var.is_float or name in self.data_locals
            if var is not None and var.kind in ("pointer", "array") and var.scope != "nest":
                raise _Unclassifiable(f"line {node.coord.line}: pointer '{name}' is moved inside the loop")
            ops, data = self.value(node.rvalue)
            self.scalar_events.append((name, "update" if compound else "write"))
            if compound:
                self.scalar_flow(name, "read")
            self.scalar_flow(name, "write")
            if var is not None and var.kind == "scalar" and not var.is_float:
                # An index the loop computes into a variable of the function: followed like a local of the loop.
                self.subst.pop(name, None)
                try:
                    if compound:
                        raise NotAffine("an accumulated integer")
                    self.subst[name] = self.index(node.rvalue)
                    self.data_locals.discard(name)
                except (NotAffine, _DataDependent):
                    self.data_locals.add(name)
            self.refs.append(_Ref(name, (), "update" if compound else "write", tuple(self.stack),
                                  self.guard_depth > 0, node.coord.line, name, self.downwards()))
            return ops + (1 if compound else 0), True
        ops, _ = self.value(node.rvalue)
        ops = ops + self.access(target, "update" if compound else "write")
        return ops + (1 if compound else 0), True

    def increment(self, node: c_ast.UnaryOp) -> tuple[Poly, bool]:
        target = node.expr
        if isinstance(target, c_ast.ID):
            name = target.name
            var = self.scope.get(name)
            if name in self.stack:
                raise _Unclassifiable(f"line {node.coord.line}: loop variable '{name}' is changed in the body")
            outer, self.updating = self.updating, name
            self.scalar_flow(name, "read")
            self.updating = outer
            self.scalar_flow(name, "write")
            if var is not None and var.scope == "nest":
                if name in self.subst:
                    self.subst[name] = self.subst[name] + (1 if "+" in node.op else -1)
                    return Poly(), False
                if var.kind == "pointer":
                    raise _Unclassifiable(f"line {node.coord.line}: pointer '{name}' walks through memory")
                self.data_locals.add(name)
                return Poly.const(1), True
            if var is not None and var.kind == "pointer":
                raise _Unclassifiable(f"line {node.coord.line}: pointer '{name}' walks through memory")
            self.scalar_events.append((name, "update"))
            self.refs.append(_Ref(name, (), "update", tuple(self.stack), self.guard_depth > 0, node.coord.line, name,
                                  self.downwards()))
            return Poly.const(1), True
        return self.access(target, "update") + 1, True

    def call(self, node: c_ast.FuncCall) -> tuple[Poly, bool]:
        name = node.name.name if isinstance(node.name, c_ast.ID) else None
        args = node.args.exprs if node.args is not None else []
        total, data = Poly(), False
        for arg in args:
            ops, arg_data = self.value(arg)
            total, data = total + ops, data or arg_data
        if name is None:
            self.doubt(f"line {node.coord.line}: a call through a function pointer is not analysed")
            return total, True
        if name in self.unit.functions:
            return total + self.inline(name, args, node.coord.line), True
        if name in self.call_costs:
            cost = self.call_costs[name]
            if cost != 1 or name.rstrip("f") in _ELEMENTARY:
                self.note(f"{name} counted as {cost} ops (change with --call-cost {name}=N)")
            return total + cost, True
        self.doubt(f"line {node.coord.line}: call to '{name}' (not in the file, cost unknown) counted as 1 op")
        return total + 1, True

    def inline(self, name: str, args: Sequence[c_ast.Node], line: int) -> Poly:
        """Return the ops of one call of a function defined in the file, its integer parameters bound to the call."""
        if name in self.call_stack:
            raise _Unclassifiable(f"line {line}: '{name}' is recursive")
        definition = self.unit.functions[name]
        params = definition.decl.type.args.params if definition.decl.type.args is not None else []
        scope = {k: v for k, v in self.unit.globals.items()}
        subst: dict[str, Poly] = {}
        for param, arg in zip(params, args):
            var = _declared(param, "param") if isinstance(param, c_ast.Decl) else None
            if var is None:
                continue
            if var.kind in ("pointer", "array"):
                target = self.resolve_pointer(arg)
                if target is None or self.is_outer(target[0]):
                    self.doubt(f"line {line}: '{name}' accesses '{var.name}' of the caller; its accesses are not followed")
                scope[var.name] = _Var(var.name, var.kind, var.is_float, var.dims, "nest")
                continue
            scope[var.name] = var
            if not var.is_float:
                try:
                    subst[var.name] = self.index(arg)
                except (NotAffine, _DataDependent):
                    self.doubt(f"line {line}: argument '{var.name}' of '{name}' is not an index expression")
            else:
                scope[var.name] = _Var(var.name, "scalar", True, (), "nest")
        callee = _NestAnalysis(self.unit, scope, subst, {}, self.call_costs, (*self.call_stack, name))
        callee.data_locals = {v.name for v in scope.values() if v.scope == "nest" and v.is_float}
        try:
            callee.statement(definition.body)
        except _Unclassifiable as error:
            raise _Unclassifiable(f"in '{name}' called on line {line}: {error}") from None
        for doubt in callee.doubts:
            self.doubt(f"in '{name}': {doubt}")
        total = Poly()
        for term in callee.terms:
            count = term.ops
            for loop in term.loops:
                count = count * callee.loops[loop].extent
            total = total + count
        self.note(f"call to '{name}' (line {line}) inlined: {total} ops per call")
        return total

    # -- accesses
    def flatten_ref(self, node: c_ast.Node) -> tuple[str | None, tuple[Poly, ...] | None]:
        """Return (array name, subscripts) of an access; subscripts None when one reads memory."""
        subscripts: list[c_ast.Node] = []
        base = node
        while isinstance(base, c_ast.ArrayRef):
            subscripts.append(base.subscript)
            base = base.name
        if isinstance(base, c_ast.StructRef):
            return self.flatten_ref(base.name) if not subscripts else (None, None)
        subscripts.reverse()
        offset = Poly()
        if isinstance(base, c_ast.UnaryOp) and base.op == "*":
            target = self.resolve_pointer(base.expr)
            if target is None:
                return None, None
            name, offset = target
            if not subscripts:
                return name, (offset,)
            return None, None
        if not isinstance(base, c_ast.ID):
            return None, None
        name = base.name
        if name in self.aliases:
            name, offset = self.aliases[name]
        polys: list[Poly] = []
        dependent = False
        for index, sub in enumerate(subscripts):
            try:
                poly = self.index(sub)
            except (_DataDependent, NotAffine) as error:
                dependent = True
                if isinstance(error, NotAffine):
                    self.doubt(f"subscript '{_text(sub)}' of '{name}' is not affine ({error})")
                # The reads inside the subscript are accesses too, and arithmetic on data there (binning) is work.
                self.subscript_ops = self.subscript_ops + self.value(sub)[0]
                continue
            polys.append(poly + offset if index == 0 else poly)
        return name, None if dependent else tuple(polys)

    def access(self, node: c_ast.Node, mode: Literal["read", "write", "update"]) -> Poly:
        """Register an access; return the data ops computed inside its subscripts."""
        self.subscript_ops = Poly()
        name, subscripts = self.flatten_ref(node)
        ops, self.subscript_ops = self.subscript_ops, Poly()
        line = node.coord.line if node.coord else 0
        if name is None:
            raise _Unclassifiable(f"line {line}: access '{_text(node)}' through a pointer that is not an array offset")
        var = self.scope.get(name)
        if var is not None and var.scope == "nest":
            return ops  # a temporary of the loop body: not part of the species
        if isinstance(node, c_ast.StructRef):
            self.note(f"'{_text(node)}': a field of '{name}' is treated as an element of '{name}'")
        self.refs.append(_Ref(name, subscripts, mode, tuple(self.stack), self.guard_depth > 0, line, _text(node),
                              self.downwards()))
        if subscripts is not None:
            symbols = frozenset(v for sub in subscripts for v in sub.symbols())
            if mode in ("read", "update"):
                self.flow.append(((name, subscripts), "read", tuple(self.instances), symbols))
            if mode in ("write", "update"):
                self.flow.append(((name, subscripts), "write", tuple(self.instances), symbols))
        return ops


def _is_literal(node: c_ast.Node) -> bool:
    """Return True for a constant expression made of literals only."""
    if isinstance(node, c_ast.Constant):
        return True
    if isinstance(node, c_ast.Cast):
        return _is_literal(node.expr)
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        return _is_literal(node.expr)
    if isinstance(node, c_ast.BinaryOp):
        return _is_literal(node.left) and _is_literal(node.right)
    return False


def _poly_weight(poly: Poly) -> Fraction:
    value = poly.evaluate(dict.fromkeys(poly.symbols(), 64))
    return value if value is not None else Fraction(0)


def _terms_weight(terms: list[_Term]) -> Fraction:
    return sum((_poly_weight(t.ops) for t in terms), Fraction(0))


def _text(node: c_ast.Node) -> str:
    from pycparser import c_generator

    return c_generator.CGenerator().visit(node)


# ---------------------------------------------------------------------------------------- building the species


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
            poly = self.at_middle(poly, varying, what)
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


    def at_middle(self, poly: Poly, varying: AbstractSet[str], what: str, whole: bool = True) -> Poly:
        """Return `poly` averaged over the launches of the nest: every launching loop's iterations, exactly.

        A triangular kernel (j from i + 1 in a loop over i) has a size that changes with each launch; its mean
        over all launches, times their number, is the work of them all. `whole` rounds a size down to an
        integer (at least 1); f and m keep their fraction.
        """
        mean = _mean_over_launches(poly, self.nest.parameters)
        if mean is None:
            raise _Unclassifiable(f"{what}: extent {poly} changes with the launching loops in a way perfcast "
                                  "cannot average")
        if whole and mean.is_const():
            mean = Poly.const(max(1, math.floor(mean.const_value())))
        loops = ", ".join(f"'{n}'" for n in sorted(varying))
        self.nest.note(f"{what}: {poly} changes with loop {loops} that launches the nest; its mean over the "
                       f"launches is {mean}")
        return mean


def _mean_over_launches(poly: Poly, launching: Mapping[str, _Loop]) -> Poly | None:
    """Return the mean of `poly` over the iterations of the launching loops (innermost first), or None."""
    total, count = poly, Poly.const(1)
    try:
        for loop in reversed(list(launching.values())):
            walk = {loop.var: loop.lower + Poly.const(loop.step) * Poly.symbol(loop.var)}
            total = total.substitute(walk).sum_over(loop.var, loop.extent)
            count = count.substitute(walk).sum_over(loop.var, loop.extent)
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


# ------------------------------------------------------------------------------------------- whole nest


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
        groups = _groups_by_loops(refs, parallel, per_dimension=True)
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
    # A size that changes with a launching loop is compared, and taken, at that loop's middle iteration.
    applications = [builder.at_middle(a, a.symbols() & set(nest.parameters), "m", whole=False)
                    if a.symbols() & set(nest.parameters) else a for a in applications]
    m = max(applications, key=_large) if applications else Poly.const(1)
    f, per_unit = _complexity(nest, parallel, reducing, m, builder)
    for name in sorted(f.symbols()):
        builder.symbol_for(name)  # so that f binds by the species symbol (REPS) as well as the C name (reps)
    element_bytes, precision = _element_type(nest, [*(name for name, _ in described), *distributed, *scattered])
    return LoopNestSpecies(
        function, loop.coord.line, first, "unsure" if nest.doubts else "exact", text,
        str(f), f, str(work), str(per_unit), str(m),
        tuple(nest.reasons), tuple(nest.doubts), dict(builder.symbols), element_bytes, precision,
    )


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


def _parameter_offsets(nest: _NestAnalysis, refs: list[_Ref]) -> bool:
    """Return True when a subscript of `refs` is placed by a launching loop's variable (row i of A, not row j)."""
    for ref in refs:
        for sub in ref.subscripts or ():
            _, rest = sub.split_linear(list(nest.loops))
            if rest.symbols() & set(nest.parameters):
                return True
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
        var = min(steps, key=lambda v: abs(steps[v]))
        iterations = d.const_value() / steps[var]
        behind = iterations > 0 if var in write.backwards else iterations < 0
        return var if behind else None
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
        if ref.subscripts is not None and parameters:
            # y[i] beside y[k - 1 - i], or A[i][k] beside A[j][k] with i, j fixed by the launching loops: places
            # apart by a parameter or running the other way are different parts of the array.
            shape = []
            for sub in ref.subscripts:
                coefficients, rest = sub.split_linear(list(loop_vars))
                signs = tuple(sorted((v, _large(c) > 0) for v, c in coefficients.items()))
                moving = tuple(sorted(str(t) for t in rest.terms if set(t) & set(parameters)))
                shape.append((signs, moving))
            key = (key, tuple(shape))
        groups.setdefault(key, []).append(ref)
    return list(groups.values())


def _private_scalars(nest: _NestAnalysis) -> list[str]:
    """Return the function's scalars that the nest always sets before reading them: temporaries, not outputs."""
    private: list[str] = []
    first: dict[str, str] = {}
    for name, event in nest.scalar_events:
        first.setdefault(name, event)
    for name, event in first.items():
        var = nest.scope.get(name)
        if var is None or var.kind != "scalar" or var.scope not in ("function", "param"):
            continue  # a global outlives the call: what the loop leaves in it is a result
        if event == "write":
            private.append(name)
    return private


def _element_type(nest: _NestAnalysis, names: Sequence[str]) -> tuple[int | None, str | None]:
    """Return the element size (B) of the widest array of the species and the precision its arithmetic uses."""
    variables = [nest.scope[n] for n in names if n in nest.scope]
    sizes = [v.element_bytes for v in variables if v.element_bytes is not None]
    floats = [v for v in variables if v.is_float]
    precision = None
    if floats:
        precision = "fp64" if any(v.element_bytes == 8 for v in floats) else "fp32"
    return (max(sizes) if sizes else None), precision


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


def _expressible(poly: Poly) -> bool:
    if poly.is_const():
        return poly.const_value() >= 1 and poly.const_value().denominator == 1
    terms = poly.terms
    return len(terms) == 1 and next(iter(terms.values())) == 1


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
            raise _Unclassifiable(f"output '{name}': '{v}' has stride {coefficients} (not an element per work unit)")
        if coefficients == {-1}:
            mirrored = True
            nest.note(f"output '{name}' is written mirrored along '{v}' (negative stride): unordered")
        if len(offsets) != 1:
            nest.doubt(f"output '{name}' is written at several offsets along '{v}'")
        order.append(v)
        extents.append(nominal[v])
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


def _complexity(nest: _NestAnalysis, parallel: set[str], reducing: set[str], m: Poly,
                builder: _Builder | None = None) -> tuple[Poly, Poly]:
    """Return (f, ops per work unit): the data ops of one work unit, and those per application of the operator (/m)."""
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
    exact = per_unit.divide(m)
    varying = (per_unit.symbols() | m.symbols()) & set(nest.parameters)
    if varying and builder is not None and (exact is None or exact.symbols() & set(nest.parameters)):
        per_unit = builder.at_middle(per_unit, varying, "ops per work unit", whole=False)
        m = builder.at_middle(m, varying, "m", whole=False)
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


# ----------------------------------------------------------------------------------------------- the file


@dataclass
class _Unit:
    """The functions and globals of one translation unit."""

    functions: dict[str, c_ast.FuncDef]
    globals: dict[str, _Var]


def _unit_of(ast: c_ast.FileAST) -> _Unit:
    functions: dict[str, c_ast.FuncDef] = {}
    globals_: dict[str, _Var] = {}
    for item in ast.ext:
        if isinstance(item, c_ast.FuncDef):
            functions[item.decl.name] = item
        elif isinstance(item, c_ast.Decl):
            var = _declared(item, "global")
            if var is not None and var.kind != "function":
                globals_[var.name] = var
    return _Unit(functions, globals_)


def _assigned_names(node: c_ast.Node) -> dict[str, int]:
    """Return how often each plain name is assigned or incremented under `node`."""
    counts: dict[str, int] = {}

    class Visitor(c_ast.NodeVisitor):
        def visit_Assignment(self, n: c_ast.Assignment) -> None:
            if isinstance(n.lvalue, c_ast.ID):
                counts[n.lvalue.name] = counts.get(n.lvalue.name, 0) + 1
            self.generic_visit(n)

        def visit_UnaryOp(self, n: c_ast.UnaryOp) -> None:
            # &x hands x to code that may set it (scanf("%d", &n), load(&width, &height)): it is assigned.
            if n.op in ("p++", "p--", "++", "--", "&") and isinstance(n.expr, c_ast.ID):
                counts[n.expr.name] = counts.get(n.expr.name, 0) + 1
            self.generic_visit(n)

    Visitor().visit(node)
    return counts


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
            walk(node.stmt, [])
            outer.pop()
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
            walk(node.iftrue, [])
            walk(node.iffalse, [])
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
    try:
        nest.statement(loop)
        found = _classify_nest(nest, loop, function, dict(symbols))
        if _launches_inner_nests(nest, loop):
            return found, nest.loops[nest.order[0]]
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
    except (NotAffine, _DataDependent) as error:
        first = nest.order[0] if nest.order else None
        if first is not None and first in nest.loops and _has_inner_loop(loop.stmt) and \
                not _in_subscripts(loop.stmt, first):
            return _unclassified(nest, loop, function, str(error)), nest.loops[first]
        return _unclassified(nest, loop, function, f"a subscript or bound is not affine: {error}"), None


def _unclassified(nest: _NestAnalysis, loop: c_ast.For, function: str, why: str) -> LoopNestSpecies:
    return LoopNestSpecies(function, loop.coord.line, nest.order[0] if nest.order else "", "unclassified",
                           reasons=(*nest.reasons, why), doubts=tuple(nest.doubts))


def _repetitions(outer: Sequence[_Loop]) -> tuple[str | None, tuple[str, ...], Poly | None]:
    """Return how often a nest inside the loops `outer` runs (None at the top level), and the reasons to show."""
    if not outer:
        return None, (), None
    count = Poly.const(1)
    try:
        for loop in reversed(list(outer)):
            walk = {loop.var: loop.lower + Poly.const(loop.step) * Poly.symbol(loop.var)}
            count = count.substitute(walk).sum_over(loop.var, loop.extent)
    except NotAffine:
        count = Poly.symbol("unknown")
    reasons = tuple(
        f"inside loop '{loop.var}' (line {loop.line}), which runs it {loop.extent} times: '{loop.var}' is a "
        "parameter of the kernel, not one of its dimensions" for loop in outer)
    return str(count), reasons, count


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
    # A data-dependent subscript may use the variable: then it is not a plain repetition.
    return all(ref.subscripts is not None and all(var not in s.symbols() for s in ref.subscripts)
               for ref in nest.refs)
    return True


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
    for name in names:
        nests.extend(_classify_function(unit, unit.functions[name], costs))
    return SourceClassification(source.path, tuple(nests), _unresolved(unit, source.ast), tuple(names))


def elementary_calls(
    source: ParsedSource, nests: Sequence[LoopNestSpecies], function: str | None, defines: Mapping[str, int],
    call_costs: Mapping[str, int] | None = None,
) -> list[float | None]:
    """Return the elementary-function calls (exp, log, sin, ...) per operator application of each of `nests`.

    f is linear in what a call costs, so classifying `source` again with every elementary function one op
    dearer adds the number of calls to f. None where f does not come to a number with `defines`.
    """
    costs = {**CALL_COSTS, **(call_costs or {})}
    dearer = classify_source(source, function, {**costs, **{name: costs[name] + 1 for name in ELEMENTARY_FUNCTIONS}})
    twins = {(n.function, n.line): n for n in dearer.nests}
    calls: list[float | None] = []
    for nest in nests:
        twin = twins.get((nest.function, nest.line))
        plain, counted = nest.f_value(defines), twin.f_value(defines) if twin is not None else None
        calls.append(counted - plain if plain is not None and counted is not None else None)
    return calls


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


def launches_value(nest: LoopNestSpecies, defines: Mapping[str, int]) -> float | None:
    """Return how often `nest` runs with the C names in `defines` bound (1 at the top level), or None if unbound."""
    if nest.repetitions_poly is None:
        return None if nest.repetitions is not None else 1.0
    value = nest.repetitions_poly.evaluate(defines)
    return None if value is None else float(value)


def bind_symbols(nest: LoopNestSpecies, defines: Mapping[str, int]) -> dict[str, int]:
    """Return species-symbol values for `nest` from --define values given by C name or by species symbol."""
    values: dict[str, int] = {}
    for symbol, c_name in nest.symbols.items():
        if symbol in defines:
            values[symbol] = defines[symbol]
        elif c_name in defines:
            values[symbol] = defines[c_name]
    return values


