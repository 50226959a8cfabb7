"""Declared names of a C translation unit: their kind, type size and scope."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pycparser import c_ast


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
