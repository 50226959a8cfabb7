"""Primitives and applications for the boat hull model: predicting a species on a device, and YAML application files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from perfcast.models.boathull import (
    ApplicationPrediction,
    ClassVariables,
    CpuFigures,
    GpuFigures,
    HullPrediction,
    predict_application,
    predict_cpu,
    predict_gpu,
    priced_complexity,
    transfer_time,
    with_conversions,
)
from perfcast.species.classes import HaloTile, class_variables
from perfcast.species.grammar import (
    Species,
    SpeciesBindingError,
    parse_species,
)
from perfcast.units import Dimension, UnitError, parse_quantity

__all__ = [
    "Application",
    "PrimitivePrediction",
    "predict_app",
    "predict_primitive",
    "priced_f",
]


@dataclass(frozen=True)
class PrimitivePrediction:
    """One species predicted on one device: the bound species, its class variables and the time range."""

    species: Species
    variables: ClassVariables
    prediction: HullPrediction


def predict_primitive(
    species: str | Species,
    figures: GpuFigures | CpuFigures,
    f: ArrayLike,
    *,
    bind: Mapping[str, int] | None = None,
    element_bytes: float = 4,
    assume: Iterable[str] = (),
    transfers: bool = False,
    tile: HaloTile = HaloTile(),
    vector_lanes: float | None = None,
) -> PrimitivePrediction:
    """Return the boat hull time range (s) of `species` on a device's `figures`, for each complexity in `f`.

    `vector_lanes`: on a CPU, the SIMD lanes the compiler used (`predict_cpu`); a GPU takes none.
    """
    parsed = parse_species(species) if isinstance(species, str) else species
    bound = parsed.bind(dict(bind or {}))
    variables = class_variables(bound, tile)
    if isinstance(figures, CpuFigures):
        prediction = predict_cpu(variables, figures, f, element_bytes=element_bytes, assume=assume,
                                 vector_lanes=vector_lanes)
    elif vector_lanes is not None:
        raise ValueError("vector lanes are a CPU's compiler evidence; a GPU's boat hull takes none")
    else:
        prediction = predict_gpu(variables, figures, f, element_bytes=element_bytes, assume=assume, transfers=transfers)
    return PrimitivePrediction(bound, variables, prediction)


class Primitive(BaseModel):
    """One step of an application: a species (or a C loop nest to classify) with f, element size and assumptions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    species: str | None = None
    source: str | None = Field(default=None, description="a C file whose loop nest gives the species and f")
    function: str | None = Field(default=None, description="the function of `source` that holds the loop nest")
    line: int | None = Field(default=None, ge=1, description="the line of the loop nest, where the function has several")
    define: dict[str, int] = Field(default_factory=dict, description="macros and sizes for classifying `source`")
    f: float | None = Field(default=None, ge=0, description="ops per application of the element operator")
    elementary_calls: float | None = Field(
        default=None, ge=0, description="elementary-function calls (exp, log, sin, ...) per application of the "
        "element operator, counted in f at 8 ops each as `perfcast classify` counts them; a device with a measured "
        "rate of such calls prices them at its own cost (with 'source' they are counted from the C code)")
    conversions: float | None = Field(
        default=None, ge=0, description="integer-to-float conversions of data elements per application of the "
        "element operator (bytes summed in fp32), which f does not count; a device with a conversion rate prices "
        "each at its own cost (with 'source' they are counted from the C code)")
    element_size: float | None = Field(default=None, gt=0, description="bytes per element (default: the file's)")
    assume: tuple[str, ...] = ()

    @field_validator("species")
    @classmethod
    def _parses(cls, text: str | None) -> str | None:
        if text is not None:
            parse_species(text)  # a SpeciesSyntaxError is a ValueError: pydantic reports it on this field
        return text

    @model_validator(mode="after")
    def _one_origin(self) -> Primitive:
        if (self.species is None) == (self.source is None):
            raise ValueError("give exactly one of 'species' or 'source' (a C file)")
        if self.source is None and (self.function or self.line or self.define):
            raise ValueError("'function', 'line' and 'define' go with 'source'")
        if self.species is not None and self.f is None:
            raise ValueError("'f' is required with 'species' (with 'source' it is counted from the C code)")
        return self


class Transfer(BaseModel):
    """A host<->device copy: its size in bytes (or elements of the file's element size)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    bytes: float | None = None
    elements: int | None = Field(default=None, ge=0)

    @field_validator("bytes", mode="before")
    @classmethod
    def _quantity(cls, value: object) -> object:
        return None if value is None else parse_quantity(value, Dimension.BYTES)  # type: ignore[arg-type]

    @model_validator(mode="after")
    def _one_size(self) -> Transfer:
        if (self.bytes is None) == (self.elements is None):
            raise ValueError("give exactly one of 'bytes' or 'elements'")
        if self.bytes is not None and not 0 <= self.bytes < float("inf"):
            raise ValueError(f"bytes must be a finite, non-negative size, got {self.bytes:g} B")
        return self


APPLICATION_VERSION = 1  # the application file format this perfcast writes and reads


class Application(BaseModel):
    """An ordered list of primitives plus host<->device transfers (spec §2.5)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(default=APPLICATION_VERSION, ge=1)  # of the file format; files without one are version 1
    name: str
    description: str | None = None
    element_size: float = Field(default=4, gt=0)
    precision: str = "fp32"
    bind: dict[str, int] = Field(default_factory=dict)
    primitives: tuple[Primitive, ...] = Field(min_length=1)
    transfers: tuple[Transfer, ...] = ()

    def transfer_bytes(self, transfer: Transfer) -> float:
        """Return the size of `transfer` in B."""
        return transfer.bytes if transfer.bytes is not None else transfer.elements * self.element_size  # type: ignore[operator]


def priced_f(primitive: Primitive, extra_ops_per_call: float = 0.0, ops_per_conversion: float | None = None) -> float:
    """Return the primitive's f (ops) with its elementary calls and conversions priced.

    Each call costs `extra_ops_per_call` ops more than f counts it at; each conversion `ops_per_conversion` ops
    (None: the conversions stay unpriced).
    """
    f = primitive.f or 0.0
    try:
        if primitive.elementary_calls and extra_ops_per_call:
            f = priced_complexity(f, primitive.elementary_calls, extra_ops_per_call)
        if primitive.conversions and ops_per_conversion is not None:
            f = with_conversions(f, primitive.conversions, ops_per_conversion)
    except ValueError as error:
        raise ValueError(f"primitive {primitive.name!r}: {error}") from None
    return f


def predict_app(
    application: Application, figures: GpuFigures | CpuFigures, tile: HaloTile = HaloTile(),
    extra_ops_per_call: float = 0.0, ops_per_conversion: float | None = None,
) -> tuple[ApplicationPrediction, tuple[PrimitivePrediction, ...]]:
    """Return the application's total time range (s) on one device's `figures`, and each primitive's prediction.

    `extra_ops_per_call`: ops one elementary-function call costs on the device beyond the 8 that f counts it at
    (a device's measured cost, see perfcast.devices.hull_view.elementary_ops); 0 keeps every f as written.
    `ops_per_conversion`: ops one int-to-float conversion costs there (hull_view.conversion_ops); None leaves
    the primitives' conversions unpriced.
    """
    steps = []
    for primitive in application.primitives:
        try:
            steps.append(
                predict_primitive(
                    primitive.species or "",
                    figures,
                    [priced_f(primitive, extra_ops_per_call, ops_per_conversion)],
                    bind=application.bind,
                    element_bytes=primitive.element_size or application.element_size,
                    assume=primitive.assume,
                    tile=tile,
                )
            )
        except (SpeciesBindingError, UnitError, ValueError) as error:
            raise ValueError(f"primitive {primitive.name!r}: {error}") from None
    moves: list[tuple[str, float]] = []
    bus = getattr(figures, "b_bus", None)
    for transfer in application.transfers:
        size = application.transfer_bytes(transfer)
        # A CPU works in host memory: nothing crosses a bus.
        moves.append((transfer.name, transfer_time(size, 1, bus) if bus else 0.0))
    total = predict_application([(p.name, s.prediction) for p, s in zip(application.primitives, steps)], moves)
    if not (np.isfinite(total.lower) and np.isfinite(total.upper)):
        raise ValueError(f"application {application.name!r}: the total time overflows")
    return total, tuple(steps)
