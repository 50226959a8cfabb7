"""What a classification returns: the species of one loop nest, its status and reasons; the errors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from perfcast.errors import InputError
from perfcast.species.grammar import (
    Species,
    parse_species,
)
from perfcast.species.polynomial import Poly

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
    """The classification of one loop nest (outermost, or launched by a loop around it): species, f, status, reasons."""

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
