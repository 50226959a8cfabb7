"""Operation costs: what a library call and an operator count as in f."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from pycparser import c_ast

from perfcast.species.polynomial import Poly

# Ops charged for one call of a library function. Elementary functions are a short polynomial plus range
# reduction in a vectorised libm (and a few instructions on a GPU's special-function unit): 8 is a middle value.
_ELEMENTARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan",
               "atan2", "sinh", "cosh", "tanh", "pow", "cbrt", "erf", "erfc", "hypot", "tgamma", "lgamma")


_SINGLE = ("sqrt", "fabs", "fmin", "fmax", "floor", "ceil", "round", "trunc", "rint", "copysign", "fmod")


ELEMENTARY_FUNCTIONS = tuple(name + suffix for name in _ELEMENTARY for suffix in ("", "f"))


# The key of CALL_COSTS that prices a conversion of an integer data element to floating point (an unsigned char
# summed into a float), not a C name. It costs no op in f (a conversion is not arithmetic on data); classifying
# again at 1 counts the conversions per application (`conversions`), which the boat hull prices at a device's
# conversion rate.
CONVERSION = "(int to float)"


CALL_COSTS: dict[str, int] = {
    CONVERSION: 0,
    **dict.fromkeys(ELEMENTARY_FUNCTIONS, 8),
    **{name + suffix: 1 for name in _SINGLE for suffix in ("", "f")},
    "rsqrtf": 1, "abs": 1, "labs": 1, "min": 1, "max": 1, "MIN": 1, "MAX": 1, "fma": 2, "fmaf": 2,
    # Run-time queries: no arithmetic on data.
    "omp_get_wtime": 0, "omp_get_thread_num": 0, "omp_get_num_threads": 0, "omp_get_max_threads": 0,
}


@dataclass
class _Term:
    """Ops executed once per iteration of `loops`."""

    ops: Poly
    loops: tuple[str, ...]


_ARITH = {"+", "-", "*", "/", "%", "<", ">", "<=", ">=", "==", "!=", "&", "|", "^", "<<", ">>"}


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
