"""A tuning space written as a file: any OpenCL kernel made tunable from the command line (`tune kernel SPEC`).

The shape follows KernelTuner's `tune_kernel` (kernel name and source, problem size, arguments, tunable
parameters, restrictions, the NDRange as expressions of the parameters), with the level of the hierarchical
method each parameter belongs to:

    version: 1
    kernel: scale                    # the __kernel function
    source: scale.cl                 # beside this file; each parameter is passed as -DNAME=value (upper case)
    problem: {n: 65536}              # the target problem size
    size: n                          # the size work-groups split (the hierarchical method grows it)

Parameters
----------
      items: {values: [1, 4, 16], level: work-item}
      wg: {values: [1, 8, 64], level: work-group}
    restrictions: ["items * wg <= 1024"]
    arguments:                       # in the kernel's order
      - {array: float32, length: n, fill: arange}
      - {array: float32, length: n, fill: zeros}
      - {scalar: float32, value: 2.0}
    ndrange: {global: "n / items", local: "wg"}
    units_per_group: "items * wg"    # problem units one work-group covers
    work: "n"                        # units of work the throughput counts
    check: {size: {n: 4096}, output: 1, expect: "2 * arg0 + 1"}   # optional

Expressions are arithmetic (+ - * / // % **, min, max; in `expect` also sqrt, exp, log, sin, cos, abs) over the
parameters, the problem's sizes and, in `expect`, the arguments' arrays `argN`. They are parsed when the file
is read, so a mistake is reported before any device work; nothing else of Python can run in them.

"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from perfcast.errors import InputError
from perfcast.safe_yaml import load_model_file

__all__ = ["KERNEL_SPEC_VERSION", "KernelSpec", "KernelSpecError", "Expression", "load_kernel_spec", "tunable"]

KERNEL_SPEC_VERSION = 1
MAX_ARRAY_BYTES = 64 * 2**30  # one argument; more than any device this tunes holds
LEVELS = ("work-item", "work-group", "ndrange")
_DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "uint32": np.uint32, "int64": np.int64}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
    ast.NotEq: operator.ne}
_SIZE_FUNCTIONS: dict[str, Callable[..., Any]] = {"min": min, "max": max}
_ARRAY_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": np.minimum, "max": np.maximum, "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin,
    "cos": np.cos, "abs": np.abs}


class KernelSpecError(InputError):
    """A tuning spec perfcast cannot use: unreadable, a field wrong, an expression that is not arithmetic."""


class Expression:
    """An arithmetic expression of a spec, parsed once; `value(names)` evaluates it."""

    def __init__(self, text: str, functions: Mapping[str, Callable[..., Any]], where: str) -> None:
        self.text, self.functions, self.where = text, dict(functions), where
        try:
            self.tree = ast.parse(text, mode="eval").body
        except SyntaxError as error:
            raise KernelSpecError(f"{where}: {text!r} is not an expression ({error.msg})") from None
        for node in ast.walk(self.tree):
            allowed = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.Constant, ast.Name, ast.Call, ast.Load,
                       ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
            if not isinstance(node, allowed) or isinstance(node, ast.Constant) and not isinstance(
                    node.value, int | float) or isinstance(node, ast.Call) and not (
                    isinstance(node.func, ast.Name) and node.func.id in self.functions and not node.keywords):
                raise KernelSpecError(f"{where}: {text!r}: only arithmetic on names and numbers"
                                      + (f" and {', '.join(sorted(self.functions))}" if self.functions else ""))
            if isinstance(node, ast.BinOp | ast.UnaryOp | ast.Compare) and not _known_operator(node):
                raise KernelSpecError(f"{where}: {text!r}: an operator perfcast does not evaluate")

    def names(self) -> set[str]:
        """Return the names the expression reads (not its functions)."""
        called = {node.func.id for node in ast.walk(self.tree) if isinstance(node, ast.Call)
                  and isinstance(node.func, ast.Name)}
        return {node.id for node in ast.walk(self.tree) if isinstance(node, ast.Name)} - called

    def value(self, names: Mapping[str, Any]) -> Any:
        """Return the expression's value with `names` bound; unknown names and arithmetic errors are spec errors."""
        try:
            return self._eval(self.tree, names)
        except KeyError as error:
            raise KernelSpecError(f"{self.where}: {self.text!r} names {error.args[0]!r}, which is not defined "
                                  f"(known: {', '.join(sorted(names))})") from None
        except (ZeroDivisionError, OverflowError, ValueError, TypeError) as error:
            raise KernelSpecError(f"{self.where}: {self.text!r} with {dict(names)}: {error}") from None

    def _eval(self, node: ast.AST, names: Mapping[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.BinOp):
            left, right = self._eval(node.left, names), self._eval(node.right, names)
            if isinstance(node.op, ast.Pow) and isinstance(right, int | float) and abs(right) > 64:
                raise ValueError("an exponent above 64")
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp):
            operand = self._eval(node.operand, names)
            return -operand if isinstance(node.op, ast.USub) else +operand if isinstance(node.op, ast.UAdd) else (
                not operand)
        if isinstance(node, ast.Compare):
            left = self._eval(node.left, names)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self._eval(right_node, names)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.BoolOp):
            values = [self._eval(v, names) for v in node.values]
            return all(values) if isinstance(node.op, ast.And) else any(values)
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        return self.functions[node.func.id](*(self._eval(a, names) for a in node.args))


def _known_operator(node: ast.BinOp | ast.UnaryOp | ast.Compare) -> bool:
    if isinstance(node, ast.BinOp):
        return type(node.op) in _BINARY
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub | ast.UAdd | ast.Not)
    return all(type(op) in _COMPARE for op in node.ops)


class ParameterSpec(BaseModel):
    """One tunable parameter: its values and the level of the hierarchy it belongs to."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    values: tuple[int, ...] = Field(min_length=1)
    level: Literal["work-item", "work-group", "ndrange"]


class ArgumentSpec(BaseModel):
    """One kernel argument: an array (its type, length expression and content) or a scalar."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    array: Literal["float32", "float64", "int32", "uint32", "int64"] | None = None
    length: str | None = None
    fill: Literal["arange", "zeros", "ones", "random"] = "zeros"
    scalar: Literal["float32", "float64", "int32", "uint32", "int64"] | None = None
    value: float | str | None = None  # a number, or an expression of the problem's sizes

    @model_validator(mode="after")
    def _one_kind(self) -> ArgumentSpec:
        if (self.array is None) == (self.scalar is None):
            raise ValueError("give either array (with length) or scalar (with value)")
        if self.array is not None and self.length is None:
            raise ValueError("an array needs its length (an expression of the problem's sizes)")
        if self.scalar is not None and self.value is None:
            raise ValueError("a scalar needs its value")
        return self


class CheckSpec(BaseModel):
    """The reference check: a small problem size, the output argument and its expected content."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    size: dict[str, int] | None = None
    output: int = Field(ge=0)
    expect: str
    rtol: float = Field(default=1e-5, gt=0)


class KernelSpec(BaseModel):
    """A tuning space of an OpenCL kernel, as `tune kernel` reads it (format version 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    version: int = Field(default=KERNEL_SPEC_VERSION, ge=1)
    kernel: str = Field(min_length=1)
    source: str = Field(min_length=1)
    problem: dict[str, int] = Field(min_length=1)
    size: str
    parameters: dict[str, ParameterSpec] = Field(min_length=1)
    restrictions: tuple[str, ...] = ()
    arguments: tuple[ArgumentSpec, ...] = Field(min_length=1)
    ndrange: dict[Literal["global", "local"], str]
    units_per_group: str
    work: str
    check: CheckSpec | None = None

    @model_validator(mode="after")
    def _consistent(self) -> KernelSpec:
        if self.size not in self.problem:
            raise ValueError(f"size {self.size!r} is not one of the problem's sizes ({', '.join(self.problem)})")
        if set(self.ndrange) != {"global", "local"}:
            raise ValueError("ndrange needs global and local")
        groups = [name for name, p in self.parameters.items() if p.level == "work-group"]
        if len(groups) != 1:
            raise ValueError(f"one parameter must be the work-group's size (level work-group); found {groups or 'none'}")
        if not all(name.isidentifier() and name.isascii() for name in (*self.parameters, *self.problem)):
            raise ValueError("parameter and size names must be plain identifiers")
        if self.check is not None and self.check.output >= len(self.arguments):
            raise ValueError(f"check.output {self.check.output}: the kernel has {len(self.arguments)} arguments")
        return self


@dataclass(frozen=True)
class _Compiled:
    """A spec's expressions, parsed."""

    restrictions: tuple[Expression, ...]
    global_size: Expression
    local_size: Expression
    units_per_group: Expression
    work: Expression
    lengths: tuple[Expression | None, ...]
    scalars: tuple[Expression | None, ...]
    expect: Expression | None


def load_kernel_spec(path: str | Path) -> tuple[KernelSpec, str]:
    """Return the spec at `path` and its kernel's source text (read from beside the spec)."""
    path = Path(path)
    spec = load_model_file(path, KernelSpec, KERNEL_SPEC_VERSION, "tuning spec", KernelSpecError)
    _compile(spec, str(path))  # every expression parsed and its names checked now, before any device work
    source = path.parent / spec.source
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise KernelSpecError(f"{path}: source {spec.source}: cannot read ({error})") from None
    return spec, text


def _compile(spec: KernelSpec, where: str) -> _Compiled:
    """Return the spec's expressions parsed, each checked to name only what it may."""
    sizes, params = set(spec.problem), set(spec.parameters)

    def parse(text: str, what: str, allowed: set[str], functions: Mapping[str, Callable[..., Any]]) -> Expression:
        expression = Expression(text, functions, f"{where}: {what}")
        unknown = expression.names() - allowed
        if unknown:
            raise KernelSpecError(f"{where}: {what}: {text!r} names {', '.join(sorted(unknown))}; it may use "
                                  f"{', '.join(sorted(allowed)) or 'numbers only'}")
        return expression

    return _Compiled(
        tuple(parse(r, f"restriction {r!r}", params, _SIZE_FUNCTIONS) for r in spec.restrictions),
        parse(spec.ndrange["global"], "ndrange.global", params | sizes, _SIZE_FUNCTIONS),
        parse(spec.ndrange["local"], "ndrange.local", params | sizes, _SIZE_FUNCTIONS),
        parse(spec.units_per_group, "units_per_group", params, _SIZE_FUNCTIONS),
        parse(spec.work, "work", sizes, _SIZE_FUNCTIONS),
        tuple(parse(a.length, f"arguments.{i}.length", sizes, _SIZE_FUNCTIONS) if a.length else None
              for i, a in enumerate(spec.arguments)),
        tuple(parse(a.value, f"arguments.{i}.value", sizes, _SIZE_FUNCTIONS) if isinstance(a.value, str) else None
              for i, a in enumerate(spec.arguments)),
        parse(spec.check.expect, "check.expect", sizes | {f"arg{i}" for i in range(len(spec.arguments))},
              _ARRAY_FUNCTIONS) if spec.check else None,
    )


def _whole(value: Any, what: str) -> int:
    """Return an expression's value as a positive whole number, or KernelSpecError."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number) or not math.isfinite(float(value)) \
            or float(value) != int(value) or int(value) < 1:
        raise KernelSpecError(f"{what} came out as {value!r}, not a positive whole number")
    return int(value)


def _filled(fill: str, length: int, dtype: Any, rng: np.random.Generator) -> np.ndarray:
    """Return an array of `length` elements of `dtype` filled as the spec names (random: seeded by `rng`)."""
    if fill == "arange":
        return np.arange(length, dtype=dtype)
    if fill == "ones":
        return np.ones(length, dtype)
    if fill == "random":
        floating = np.issubdtype(dtype, np.floating)
        return (rng.random(length) if floating else rng.integers(0, 1 << 16, length)).astype(dtype)
    return np.zeros(length, dtype)


def host_arrays(spec: KernelSpec, size: Mapping[str, int], seed: int = 1) -> list[Any]:
    """Return each argument's host value at `size`: arrays filled as the spec says (seeded), scalars typed."""
    return _host_values(spec, _compile(spec, "spec"), size, seed)


def _host_values(spec: KernelSpec, compiled: _Compiled, size: Mapping[str, int], seed: int = 1) -> list[Any]:
    """Return host_arrays' values with the spec's expressions already parsed (a tuning run parses them once)."""
    rng = np.random.default_rng(seed)
    values: list[Any] = []
    for index, argument in enumerate(spec.arguments):
        if argument.array is not None:
            expression = compiled.lengths[index]
            assert expression is not None
            length = _whole(expression.value(size), f"arguments.{index}.length")
            dtype = _DTYPES[argument.array]
            if length * np.dtype(dtype).itemsize > MAX_ARRAY_BYTES:
                raise KernelSpecError(f"arguments.{index}: {length:,} elements at {dict(size)}, more than the "
                                      f"{MAX_ARRAY_BYTES // 2**30} GiB an argument may take")
            values.append(_filled(argument.fill, length, dtype, rng))
        else:
            scalar = compiled.scalars[index]
            raw = scalar.value(size) if scalar is not None else argument.value
            values.append(_DTYPES[argument.scalar or "float32"](float(raw)))  # type: ignore[arg-type]
    return values


def tunable(spec: KernelSpec, source: str, device: Any = None) -> Any:
    """Return the spec as an OpenClTunable on `device` (every strategy, store and resume then works on it)."""
    import pyopencl as cl

    from perfcast.tune.opencl_kernel import OpenClTunable

    compiled = _compile(spec, "spec")
    group = next(name for name, p in spec.parameters.items() if p.level == "work-group")

    def arguments(context: Any, size: Mapping[str, int]) -> list[Any]:
        flags = cl.mem_flags
        return [cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=value)
                if isinstance(value, np.ndarray) else value for value in _host_values(spec, compiled, size)]

    def ndrange(config: Mapping[str, int], size: Mapping[str, int]) -> tuple[int, int]:
        names = {**size, **config}
        return (_whole(compiled.global_size.value(names), "ndrange.global"),
                _whole(compiled.local_size.value(names), "ndrange.local"))

    def restriction(expression: Expression) -> Callable[[Mapping[str, int]], str | None]:
        return lambda config: None if expression.value(config) else f"restriction {expression.text!r}"

    reference = None
    if spec.check is not None:
        expect = compiled.expect
        assert expect is not None

        def reference(size: Mapping[str, int]) -> np.ndarray:
            arrays = _host_values(spec, compiled, size)
            names = {**size, **{f"arg{i}": v for i, v in enumerate(arrays)}}
            expected = np.asarray(expect.value(names), dtype=arrays[spec.check.output].dtype)  # type: ignore[union-attr]
            return np.broadcast_to(expected, arrays[spec.check.output].shape).copy()  # type: ignore[union-attr]

    return OpenClTunable(
        name=spec.kernel, source=source, kernel_name=spec.kernel,
        parameters={name: p.values for name, p in spec.parameters.items()},
        problem=dict(spec.problem), size_key=spec.size,
        item_parameters=tuple(name for name, p in spec.parameters.items() if p.level == "work-item"),
        group_parameter=group, arguments=arguments, ndrange=ndrange,
        units_per_group=lambda config: _whole(compiled.units_per_group.value(config), "units_per_group"),
        work=lambda size: float(compiled.work.value(size)),
        reference=reference, output=spec.check.output if spec.check else 0,
        check_size=dict(spec.check.size) if spec.check and spec.check.size else None,
        constraints=[restriction(r) for r in compiled.restrictions], device=device,
        rtol=spec.check.rtol if spec.check else 1e-5)
