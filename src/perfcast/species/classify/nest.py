"""Walking one loop nest: its loops, array accesses, scalar flow and op terms (steps 1-2 of the analysis)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from pycparser import c_ast

from perfcast.species.classify.costs import (
    _ARITH,
    _ELEMENTARY,
    CONVERSION,
    _is_literal,
    _poly_weight,
    _Term,
    _terms_weight,
)
from perfcast.species.classify.declarations import _declared, _Unit, _Var
from perfcast.species.classify.result import _DataDependent, _Unclassifiable
from perfcast.species.polynomial import NotAffine, Poly


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
    # Ranges of loop counters an enclosing guard allows (if (i > 10) B[i] = ...): (var, first, last), inclusive.
    limits: tuple[tuple[str, Fraction | None, Fraction | None], ...] = ()


_Limits = dict[str, tuple[Fraction | None, Fraction | None]]


def _intersected(levels: Sequence[_Limits]) -> _Limits:
    """Return the counter ranges every one of `levels` allows (None: unbounded on that side)."""
    merged: _Limits = {}
    for level in levels:
        for var, (low, high) in level.items():
            old_low, old_high = merged.get(var, (None, None))
            merged[var] = (max((v for v in (low, old_low) if v is not None), default=None),
                           min((v for v in (high, old_high) if v is not None), default=None))
    return merged


def _int_literal(text: str) -> int | None:
    """Return the value of a C integer literal (suffixes and hex allowed), or None."""
    cleaned = text.rstrip("uUlL")
    try:
        return int(cleaned, 0) if not re.fullmatch(r"0\d+", cleaned) else int(cleaned, 8)
    except ValueError:
        return None


def _cast_kind(node: c_ast.Node) -> Literal["float", "int"] | None:
    """Return the type class a cast converts to, None for anything else."""
    if not isinstance(node, c_ast.Cast):
        return None
    names = getattr(getattr(node.to_type.type, "type", None), "names", None) or []
    return "float" if {"float", "double"} & set(names) else "int" if names else None


def _walk(node: c_ast.Node) -> list[c_ast.Node]:
    """Return `node` and every node below it."""
    found = [node]
    for _, child in node.children():
        found.extend(_walk(child))
    return found


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
        # Each for statement is an instance of its variable's loop; two instances of one variable are sequential
        # loops of the same work unit. Scalars read and written, with the instances around them, show the values
        # one such loop hands to the next.
        self.instances: list[int] = []
        self.instance_var: dict[int, str] = {}
        self.flow: list[tuple[object, str, tuple[int, ...], frozenset[str]]] = []
        self.parameters: dict[str, _Loop] = {}  # variables of the loops that launch this nest, as size parameters
        self.updating: str | None = None  # the scalar whose assignment is being evaluated
        self.direction: dict[str, bool] = {}  # whether the loop of each variable now open runs downwards
        self.limits: list[dict[str, tuple[Fraction | None, Fraction | None]]] = []  # per enclosing guard
        self.in_condition = False
        self.cond_depth = 0  # if-branches around the statement being walked
        self.break_targets: list[str] = []  # what a break leaves: the innermost loop or switch
        self.inlined = False  # walking the body of a function called in the nest
        self.branch_path: list[int] = []  # which branch of which if, from the nest's top: a write there is seen
        self.flow_paths: list[tuple[int, ...]] = []  # by reads inside the same branch; beside each flow entry
        self.branches_seen = 0

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
            if mode == "read" and name == self.updating:
                recorded = "self-read"  # s = s + x, s += x: the scalar's own update, not a use of it
            elif mode == "read" and self.in_condition:
                recorded = "cond-read"  # decided once the branches are seen: if (x > m) m = x; updates m
            elif mode == "write" and self.cond_depth:
                recorded = "cond-write"  # set on one path only: what was there before may still be read
            self.flow.append((name, recorded, tuple(self.instances), frozenset()))
            self.flow_paths.append(tuple(self.branch_path))

    def settle_branches(self, condition_start: int, branch_start: int, true_flow: int) -> None:
        """Decide what an if did to the scalars once both branches are walked.

        A test of a scalar the branches set is its own update (if (x > m) m = x: a max); a scalar set first on
        both paths is set, whatever the test said.
        """
        written = {key for key, mode, _, _ in self.flow[branch_start:] if mode in ("write", "cond-write")}
        for index in range(condition_start, branch_start):
            key, mode, stack, symbols = self.flow[index]
            if mode == "cond-read":
                self.flow[index] = (key, "self-read" if key in written else "read", stack, symbols)

        def set_first(events: Sequence[tuple[str, str]]) -> set[str]:
            first: dict[str, str] = {}
            for name, mode in events:
                first.setdefault(name, mode)
            return {name for name, mode in first.items() if mode in ("write", "cond-write")}

        flow_events = [(str(k), m) for k, m, _, _ in self.flow[branch_start:true_flow] if isinstance(k, str)]
        other = [(str(k), m) for k, m, _, _ in self.flow[true_flow:] if isinstance(k, str)]
        for name in sorted(set_first(flow_events) & set_first(other)):
            self.flow.append((name, "write" if not self.cond_depth else "cond-write", tuple(self.instances),
                              frozenset()))
            self.flow_paths.append(tuple(self.branch_path))

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
            inside = [index for index, (key, _, stack, _) in enumerate(self.flow)
                      if isinstance(key, str) and instance in stack]
            written = {self.flow[i][0] for i in inside if self.flow[i][1] in ("write", "cond-write")}
            for index in inside:
                key, mode = self.flow[index][0], self.flow[index][1]
                if mode == "read" and key in written and not self.set_before(index, inside):
                    found.setdefault(var, str(key))
        return found

    def set_before(self, index: int, candidates: Sequence[int] | None = None) -> bool:
        """Return True when a write of the same scalar, on a path that leads to the read at `index`, precedes it."""
        key, path = self.flow[index][0], self.flow_paths[index]
        for earlier in candidates if candidates is not None else range(index):
            if earlier >= index:
                break
            if self.flow[earlier][0] == key and self.flow[earlier][1] in ("write", "cond-write"):
                write_path = self.flow_paths[earlier]
                if path[:len(write_path)] == write_path:
                    return True
        return False

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
                if mode not in ("write", "cond-write") or not inside or var in symbols:
                    continue
                for later_key, later_mode, later_stack, _ in self.flow[position + 1:]:
                    if later_key != key or inside[0] in later_stack:
                        continue
                    if later_mode in ("read", "self-read", "cond-read"):
                        handed = key[0] if isinstance(key, tuple) else str(key)
                        found.setdefault(var, handed)
                        # Read inside a later sibling loop (over any variable): that loop waits for it too.
                        for reader in later_stack:
                            # Unless the value moves with that loop (sum[p] handed from one loop over p to another).
                            if reader not in stack and self.instance_var[reader] not in symbols:
                                found.setdefault(self.instance_var[reader], handed)
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
            self.break_targets.append("loop")
            self.statement(node.stmt)
            self.break_targets.pop()
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
            self.break_targets.append("switch")
            self.statement(node.stmt)
            self.break_targets.pop()
            self.doubt(f"line {node.coord.line}: a switch: every case is counted as if it ran")
        elif isinstance(node, (c_ast.Case, c_ast.Default)):
            for item in node.stmts or []:
                self.statement(item)
        elif isinstance(node, c_ast.Return) and self.inlined and not self.stack:
            # A called function's result: its expression is work of the call, not an exit from the loop.
            self.record(self.expression(node.expr) if node.expr is not None else Poly())
        elif isinstance(node, c_ast.Return):
            raise _Unclassifiable(f"line {node.coord.line}: 'return' inside the loop (an early exit)")
        elif isinstance(node, c_ast.Break) and self.break_targets and self.break_targets[-1] == "switch":
            return  # leaves the switch, not the loop
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
        condition_start = len(self.flow)
        self.in_condition = True
        try:
            self.record(self.expression(cond))
        finally:
            self.in_condition = False
        branch_start = len(self.flow)
        if guard:
            self.guard_depth += 1
        self.cond_depth += 1
        before = len(self.terms)
        self.limits.append(self.guard_limits(cond, True) if guard else {})
        self.branches_seen += 1
        self.branch_path.append(self.branches_seen)
        self.statement(iftrue)
        self.branch_path.pop()
        self.limits[-1] = self.guard_limits(cond, False) if guard else {}
        true_flow = len(self.flow)
        true_terms = self.terms[before:]
        del self.terms[before:]
        self.branches_seen += 1
        self.branch_path.append(self.branches_seen)
        self.statement(iffalse)
        self.branch_path.pop()
        self.limits.pop()
        false_terms = self.terms[before:]
        del self.terms[before:]
        self.cond_depth -= 1
        if guard:
            self.guard_depth -= 1
        self.settle_branches(condition_start, branch_start, true_flow)
        # The costlier branch counts: a work unit takes one of them.
        self.terms.extend(true_terms if _terms_weight(true_terms) >= _terms_weight(false_terms) else false_terms)

    def guard_limits(self, cond: c_ast.Node, holds: bool) -> dict[str, tuple[Fraction | None, Fraction | None]]:
        """Return the counter ranges a guard allows where it holds (or fails): i > 10 lets i run from 11.

        Only comparisons of one loop counter with a constant, joined by && (or a single one negated), are read;
        anything else allows every iteration.
        """
        if isinstance(cond, c_ast.BinaryOp) and cond.op == "&&" and holds:
            return _intersected([self.guard_limits(cond.left, True), self.guard_limits(cond.right, True)])
        if not isinstance(cond, c_ast.BinaryOp) or cond.op not in ("<", "<=", ">", ">=", "=="):
            return {}
        op = cond.op if holds else {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!="}[cond.op]
        try:
            difference = self.index(cond.left) - self.index(cond.right)
        except (NotAffine, _DataDependent):
            return {}
        coefficients, rest = difference.split_linear(list(self.stack))
        if len(coefficients) != 1 or not rest.is_const():
            return {}
        ((var, a),) = coefficients.items()
        if not a.is_const() or a.const_value() == 0:
            return {}
        # a*v + r OP 0, with v the loop's counter from 0: v OP' -r/a (the sense flips for a < 0).
        bound = -rest.const_value() / a.const_value()
        if a.const_value() < 0:
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
        if op == "<":
            return {var: (None, Fraction(math.ceil(bound) - 1))}
        if op == "<=":
            return {var: (None, Fraction(math.floor(bound)))}
        if op == ">":
            return {var: (Fraction(math.floor(bound) + 1), None)}
        if op == ">=":
            return {var: (Fraction(math.ceil(bound)), None)}
        if op == "==" and bound.denominator == 1:
            return {var: (bound, bound)}
        return {}

    def current_limits(self) -> tuple[tuple[str, Fraction | None, Fraction | None], ...]:
        """Return the counter ranges every enclosing guard allows, one entry per limited variable."""
        return tuple((var, low, high) for var, (low, high) in _intersected(self.limits).items())

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
        self.record(ops + self.conversion_into(var.is_float, value))
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
            return left_ops + right_ops + own + self.conversion_ops(node), data
        if isinstance(node, c_ast.UnaryOp):
            if node.op in ("p++", "p--", "++", "--"):
                return self.increment(node)
            if node.op == "sizeof":
                return Poly(), False
            if node.op == "&":
                self.doubt(f"line {node.coord.line}: an address is taken; accesses through it are not seen")
                return Poly(), False
            ops, data = self.value(node.expr)
            # A negative literal (-1.0f) is a constant, not an operation.
            return ops + (1 if data and node.op in ("-", "~") and not _is_literal(node.expr) else 0), data
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
                    return ops + 1 + self.conversion_into(var.is_float, node.rvalue), True
                self.assign_local(var, node.rvalue)
                self.scalar_flow(name, "write")
                return Poly(), var.is_float or name in self.data_locals
            if var is not None and var.kind in ("pointer", "array") and var.scope != "nest":
                raise _Unclassifiable(f"line {node.coord.line}: pointer '{name}' is moved inside the loop")
            ops, data = self.value(node.rvalue)
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
            into_float = var is not None and var.kind == "scalar" and var.is_float
            return ops + (1 if compound else 0) + self.conversion_into(into_float, node.rvalue), True
        ops, _ = self.value(node.rvalue)
        ops = ops + self.access(target, "update" if compound else "write")
        into_float = self.element_kind(target) == "float"
        return ops + (1 if compound else 0) + self.conversion_into(into_float, node.rvalue), True

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
        callee.inlined = True
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

    # -- conversions: integer data (an element of an integer array, or integer arithmetic on such elements) that
    # meets floating point. Elements the innermost loop does not index are converted once outside it, uncounted.
    def element_kind(self, node: c_ast.Node) -> Literal["float", "int"] | None:
        """Return the type class of the array element `node` reads (its array's declared type), None if unknown."""
        base = node
        while isinstance(base, c_ast.ArrayRef):
            base = base.name
        if isinstance(base, c_ast.UnaryOp) and base.op == "*":
            base = base.expr
            if isinstance(base, c_ast.BinaryOp) and base.op in ("+", "-"):  # *(p + i)
                pointers = [side for side in (base.left, base.right) if isinstance(side, c_ast.ID)
                            and self.pointer_name(side.name) is not None]
                base = pointers[0] if len(pointers) == 1 else None
        if not isinstance(base, c_ast.ID) or base is node:
            return None
        var = self.pointer_name(base.name)
        if var is None:
            return None
        if var.is_float:
            return "float"
        return "int" if var.element_bytes is not None else None  # a struct or an unknown typedef: unknown

    def pointer_name(self, name: str) -> _Var | None:
        """Return the array or pointer `name` stands for (through a pointer alias), None for anything else."""
        name = self.aliases[name][0] if name in self.aliases else name
        var = self.scope.get(name)
        return var if var is not None and var.kind in ("array", "pointer") else None

    def numeric_kind(self, node: c_ast.Node) -> Literal["float", "int"] | None:
        """Return whether an expression is of floating-point or integer type, None where the analysis cannot tell."""
        if isinstance(node, c_ast.Constant):
            return "float" if node.type in ("float", "double") else "int" if node.type in ("int", "char") else None
        if isinstance(node, c_ast.ID):
            var = self.scope.get(node.name)
            if var is None or var.kind != "scalar":
                return None
            return "float" if var.is_float else "int" if var.element_bytes is not None else None
        if self.is_read(node):
            return self.element_kind(node)
        if isinstance(node, c_ast.Cast):
            return _cast_kind(node)
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*", "/", "%"):
            kinds = {self.numeric_kind(node.left), self.numeric_kind(node.right)}
            return "float" if "float" in kinds else "int" if kinds == {"int"} else None
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
            return self.numeric_kind(node.expr)
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID):
            return "float" if node.name.name.rstrip("f") in _ELEMENTARY else None
        return None

    @staticmethod
    def is_read(node: c_ast.Node) -> bool:
        """Return whether `node` reads an array element (a[i] or *p)."""
        return isinstance(node, c_ast.ArrayRef) or (isinstance(node, c_ast.UnaryOp) and node.op == "*")

    def integer_data(self, node: c_ast.Node) -> bool:
        """Return whether `node` is integer data the innermost loop walks.

        That is an element of an integer array the loop indexes, or integer arithmetic on such elements (a cast
        to float of either included).
        """
        if isinstance(node, c_ast.Cast):
            return _cast_kind(node) == "float" and self.integer_data(node.expr)
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
            return self.integer_data(node.expr)
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*", "/", "%"):
            return (self.numeric_kind(node) == "int"
                    and (self.integer_data(node.left) or self.integer_data(node.right)))
        return self.is_read(node) and self.element_kind(node) == "int" and self.walked(node)

    def walked(self, node: c_ast.Node) -> bool:
        """Return whether the innermost loop's variable appears in an access (else it is read once, outside)."""
        if not self.stack:
            return True
        innermost = self.stack[-1]
        return any(isinstance(child, c_ast.ID) and child.name == innermost for child in _walk(node))

    def conversion_ops(self, node: c_ast.BinaryOp) -> int:
        """Return the ops of the conversions a floating-point operation makes of its integer-data operands."""
        cost = self.call_costs.get(CONVERSION, 0)
        if not cost or node.op not in ("+", "-", "*", "/"):
            return 0  # f counts no conversion: only `conversions` classifies again with a cost to count them
        left, right = self.numeric_kind(node.left), self.numeric_kind(node.right)
        converted = ((right == "float" or _cast_kind(node.left) == "float") and self.integer_data(node.left),
                     (left == "float" or _cast_kind(node.right) == "float") and self.integer_data(node.right))
        return cost * sum(converted)

    def conversion_into(self, into_float: bool, value: c_ast.Node) -> int:
        """Return the ops of converting `value` where it is integer data stored into floating point."""
        cost = self.call_costs.get(CONVERSION, 0)
        return cost if cost and into_float and self.integer_data(value) else 0

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
                              self.downwards(), self.current_limits()))
        if subscripts is not None:
            symbols = frozenset(v for sub in subscripts for v in sub.symbols())
            if mode in ("read", "update"):
                self.flow.append(((name, subscripts), "read", tuple(self.instances), symbols))
                self.flow_paths.append(tuple(self.branch_path))
            if mode in ("write", "update"):
                self.flow.append(((name, subscripts), "write", tuple(self.instances), symbols))
                self.flow_paths.append(tuple(self.branch_path))
        return ops


def _text(node: c_ast.Node) -> str:
    from pycparser import c_generator

    return c_generator.CGenerator().visit(node)
