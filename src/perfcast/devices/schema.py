"""The device description: one schema for CPUs and GPUs, every figure with its provenance.

In a YAML file a figure is written either bare (``fp32: {fma: 1088.6 GFLOP/s}``),
taking the file's default ``provenance``, or as a mapping with its own
(``{value: 113 GB/s, source: measured, tool: ..., date: 2026-11-22}``).
Counts that describe the structure (cores, SMs, warp size) take the file's
default provenance.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PositiveInt,
    ValidationInfo,
    model_validator,
)

from perfcast.errors import NotFound
from perfcast.units import Dimension, InstructionKind, Precision, parse_quantity

__all__ = [
    "COUNTED_RATES",
    "GUARDED_ACCESSES",
    "GUARDED_COPY",
    "SCALAR_ACCESSES",
    "scalar_dram",
    "Clock",
    "CountedRate",
    "Device",
    "Figure",
    "HostLink",
    "InstructionKind",
    "Maxima",
    "MemoryLevel",
    "Precision",
    "Price",
    "Provenance",
    "device_slug",
]


class Provenance(BaseModel):
    """Where a figure comes from: a vendor spec, a measurement (tool, date) or an estimate (method)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Literal["spec", "measured", "estimated"]
    reference: str | None = Field(default=None, description="spec: the document the figure is taken from")
    tool: str | None = Field(default=None, description="measured: the program that measured it")
    date: _dt.date | None = Field(
        default=None, description="measured: the day it was measured (a published measurement gives its reference); "
        "spec: the date of the document (or the day it was read, for a web page that changes)"
    )
    repetitions: PositiveInt | None = Field(default=None, description="measured: number of timed repetitions")
    spread: float | None = Field(
        default=None, ge=0, description="measured: (max - min) / median of the timed repetitions"
    )
    method: str | None = Field(default=None, description="estimated: how the figure was derived")
    counts: Literal["moved", "program"] | None = Field(
        default=None, description="measured bandwidths: the bytes that move (a store's write-allocate read "
        "included) or the bytes the program reads and writes (as STREAM counts them)")
    note: str | None = None

    @classmethod
    def measured(
        cls, tool: str, date: _dt.date | str | None = None, *, repetitions: int | None = None,
        spread: float | None = None, note: str | None = None, counts: Literal["moved", "program"] | None = None,
    ) -> Provenance:
        """Return the provenance of a figure `tool` measured on `date` (today by default)."""
        when = _dt.date.fromisoformat(date) if isinstance(date, str) else date or _dt.date.today()
        return cls(source="measured", tool=tool, date=when, repetitions=repetitions,
                   spread=None if spread is None else round(spread, 4), note=note, counts=counts)

    @classmethod
    def estimated(cls, method: str, note: str | None = None) -> Provenance:
        """Return the provenance of a figure derived by `method` (say how, so that a reader can redo it)."""
        return cls(source="estimated", method=method, note=note)

    def fields(self) -> dict[str, Any]:
        """Return the provenance as the flat keys a device file writes beside a figure's value."""
        return self.model_dump(mode="json", exclude_none=True)

    def describe(self) -> str:
        """Return where the figure comes from, in one line (reference, tool and date, or method)."""
        if self.source == "spec":
            return self.reference or ""
        if self.source == "measured":
            repeated = f", {self.repetitions} reps" if self.repetitions else ""
            spread = f", spread {self.spread:.1%}" if self.spread is not None else ""
            when = ", ".join(str(part) for part in (self.date, self.reference) if part)
            return f"{self.tool}, {when}{repeated}{spread}"
        return self.method or ""

    @model_validator(mode="after")
    def _required_details(self) -> Provenance:
        # A published measurement (someone else's benchmark run) is dated by its reference instead.
        needed: dict[str, list[tuple[str, object]]] = {
            "spec": [("reference", self.reference)],
            "measured": [("tool", self.tool), ("date", self.date or self.reference)],
            "estimated": [("method", self.method)],
        }
        missing = needed[self.source]
        absent = [name for name, value in missing if value in (None, "")]
        if absent:
            raise ValueError(f"a {self.source!r} figure needs {' and '.join(absent)}")
        return self


_PROVENANCE_KEYS = set(Provenance.model_fields)


class Figure(BaseModel):
    """A number in base units (op/s, B/s, B or Hz) with its provenance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float = Field(gt=0, allow_inf_nan=False)
    provenance: Provenance

    @classmethod
    def measured(cls, value: float, tool: str, date: _dt.date | str | None = None, **details: Any) -> Figure:
        """Return a measured figure (base units) with its tool, date and optional repetitions and spread."""
        return cls(value=value, provenance=Provenance.measured(tool, date, **details))

    @classmethod
    def estimated(cls, value: float, method: str) -> Figure:
        """Return an estimated figure (base units) with the method that derived it."""
        return cls(value=value, provenance=Provenance.estimated(method))

    def fields(self) -> dict[str, Any]:
        """Return the figure as the flat mapping a device file writes: value and provenance keys."""
        return {"value": self.value, **self.provenance.fields()}


def device_slug(text: str, prefix: str = "") -> str:
    """Return a device name for the catalog from free text: 'NVIDIA H100 PCIe' -> 'nvidia-h100-pcie' (60 chars)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "device"
    return (f"{prefix}-{slug}" if prefix else slug)[:60].strip("-")


def _figure_reader(dimension: Dimension | None):  # noqa: ANN202 - returns a pydantic validator
    """Return a before-validator reading a bare or detailed figure of `dimension` (None: a plain number)."""

    def number(value: Any) -> float:
        if dimension is not None:
            return parse_quantity(value, dimension)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"expected a plain number, got {value!r}")
        return float(value)

    def read(raw: Any, info: ValidationInfo) -> Any:
        if isinstance(raw, Figure):
            return raw
        if isinstance(raw, dict):
            if "provenance" in raw:
                details = dict(raw)
                details["value"] = number(details.get("value"))
                return details
            unknown = set(raw) - _PROVENANCE_KEYS - {"value"}
            if unknown:
                raise ValueError(f"unknown key(s) {sorted(unknown)} in figure")
            if "value" not in raw:
                raise ValueError("figure mapping needs a 'value'")
            provenance = {key: val for key, val in raw.items() if key != "value"}
            return {"value": number(raw["value"]), "provenance": provenance}
        default = (info.context or {}).get("default_provenance")
        if default is None:
            raise ValueError(
                "bare figure but the file has no default 'provenance'; "
                "write {value: ..., source: spec|measured|estimated, ...}"
            )
        return {"value": number(raw), "provenance": default}

    return BeforeValidator(read)


ComputeFigure = Annotated[Figure, _figure_reader(Dimension.COMPUTE)]
BandwidthFigure = Annotated[Figure, _figure_reader(Dimension.BANDWIDTH)]
BytesFigure = Annotated[Figure, _figure_reader(Dimension.BYTES)]
FrequencyFigure = Annotated[Figure, _figure_reader(Dimension.FREQUENCY)]
PowerFigure = Annotated[Figure, _figure_reader(Dimension.POWER)]
ShareFigure = Annotated[Figure, _figure_reader(None)]  # a fraction in (0, 1], no unit


class Price(BaseModel):
    """What the device costs, in US dollars, marked as what it is: a list price (per unit) or a rental quote (per hour).

    A list price is the vendor's launch or catalog price of one unit (a CPU: one socket; a GPU: one board or
    module); a street price is a dated retail or reseller figure; a rental quote is an on-demand cloud price per
    device-hour (an 8-GPU instance's price divided by 8). Prices move: each carries its reference and date, and a
    user's prices file overrides them (`perfcast choose --prices`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["list", "street", "rental"]
    usd: float = Field(gt=0, allow_inf_nan=False, description="US dollars: per unit (list, street) or per hour (rental)")
    reference: str = Field(min_length=1, description="where the price is quoted: a vendor page, a cloud price list")
    date: _dt.date = Field(description="the day of the quote (or of the launch, for a launch list price)")
    note: str | None = None

    @property
    def per(self) -> Literal["unit", "hour"]:
        """Return what the price is for: one unit (list, street) or one device-hour (rental)."""
        return "hour" if self.kind == "rental" else "unit"


class Clock(BaseModel):
    """Clock frequencies in Hz: base and/or boost (for old NVIDIA GPUs, the shader clock)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base: FrequencyFigure | None = None
    boost: FrequencyFigure | None = None

    @model_validator(mode="after")
    def _at_least_one(self) -> Clock:
        if self.base is None and self.boost is None:
            raise ValueError("clock needs base or boost")
        return self

    @property
    def peak(self) -> Figure:
        """Return the highest clock known (boost if given)."""
        figure = self.boost or self.base
        assert figure is not None  # enforced by the validator
        return figure


class MemoryLevel(BaseModel):
    """One level of the memory hierarchy: capacity of one instance, and aggregate bandwidth in B/s."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    level: Literal["L1", "L2", "L3", "shared", "DRAM"]
    size: BytesFigure | None = None
    scope: Literal["per_core", "per_unit", "device"] = "device"
    bandwidth: BandwidthFigure | None = None
    line: PositiveInt | None = Field(default=None, description="cache line (B); GPU: the sector a miss fetches")
    ways: PositiveInt | None = Field(default=None, description="associativity of one instance")
    write: Literal["back", "through"] | None = Field(
        default=None, description="write-back (dirty lines written on eviction) or write-through")
    write_allocate: bool | None = Field(default=None, description="a store miss fetches the line first")
    note: str | None = None


class HostLink(BaseModel):
    """The link between host memory and an accelerator's memory (per direction, B/s)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    bandwidth: BandwidthFigure


MAXIMA_TOLERANCE = 1.05  # a measured maximum may pass an estimated peak by this much (an estimate's rounding)


class Maxima(BaseModel):
    """Measured maxima (spec §4): the best rates benchmarks reach on the device, each figure measured.

    compute: op/s per precision and instruction kind (fp64 FMA from HPL, ...); bandwidth: B/s per memory level
    (from STREAM-like kernels that run in that level). A measurement someone published names its reference.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    compute: dict[Precision, dict[InstructionKind, ComputeFigure]] = Field(default_factory=dict)
    bandwidth: dict[Literal["L1", "L2", "L3", "shared", "DRAM"], BandwidthFigure] = Field(default_factory=dict)

    def figures(self) -> dict[str, Figure]:
        """Return every maximum by its path: 'compute.fp64.fma', 'bandwidth.DRAM'."""
        found = {f"compute.{p.value}.{k.value}": f for p, kinds in self.compute.items() for k, f in kinds.items()}
        found.update({f"bandwidth.{level}": f for level, f in self.bandwidth.items()})
        return found

    @model_validator(mode="after")
    def _measured(self) -> Maxima:
        for path, figure in self.figures().items():
            if figure.provenance.source != "measured":
                raise ValueError(f"maxima.{path} is {figure.provenance.source!r}: maxima are measured figures "
                                 "(give tool and date, or tool and the reference that published it)")
        return self


class Device(BaseModel):
    """A processor as perfcast's models see it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="short key, e.g. 'gtx470'")
    full_name: str
    kind: Literal["cpu", "gpu"]
    vendor: str
    architecture: str | None = None
    year: int | None = Field(default=None, ge=1970, le=2100)
    provenance: Provenance = Field(description="default provenance of bare figures and structural counts")
    compute_units: PositiveInt = Field(description="CPU cores, or GPU streaming multiprocessors / compute units")
    processing_elements: PositiveInt | None = Field(
        default=None, description="GPU: scalar fp32 lanes (CUDA cores, stream processors)"
    )
    threads: PositiveInt = Field(description="CPU: hardware threads; GPU: maximum resident threads")
    simd_width_bits: PositiveInt | None = Field(default=None, description="CPU: widest vector register")
    warp_size: PositiveInt | None = Field(default=None, description="GPU: threads per warp / wavefront")
    compute_capability: str | None = Field(
        default=None, pattern=r"^\d+\.\d+$", description="NVIDIA GPU: CUDA compute capability, '9.0' for sm_90"
    )
    clock: Clock
    peak: dict[Precision, dict[InstructionKind, ComputeFigure]]
    memory: list[MemoryLevel]
    bandwidth_ceilings: dict[str, BandwidthFigure] = Field(
        default_factory=dict, description="practical bandwidths below DRAM peak, e.g. 'single thread'"
    )
    compute_ceilings: dict[str, ComputeFigure] = Field(
        default_factory=dict, description="measured fp32 rates below the peak, e.g. 'no SIMD', 'single thread'"
    )
    elementary: dict[Precision, ComputeFigure] = Field(
        default_factory=dict, description="elementary-function calls per second (exp, log and sin in equal parts, "
        "one call per lane; written as op/s), as a kernel calling them measures it"
    )
    random_loads: dict[str, ComputeFigure] = Field(
        default_factory=dict, description="independent loads per second, every core, each to a random line of a "
        "working set held by the level named (L2, L3) or by none (DRAM), written as op/s: what a load no "
        "prefetcher foresees costs where its line is found. The quantitative model's latency floor reads it")
    random_loads_by_size: dict[str, dict[PositiveInt, ComputeFigure]] = Field(
        default_factory=dict, description="CPU: the same random loads per level over several working sets (B) it "
        "holds, the level's own (random_loads) and doublings of it up to half the level, written as op/s: a level's "
        "random loads slow down within it (its TLB's reach, the share of a shared cache others leave). The latency "
        "floor prices a level's scattered loads at the rate of the buffers they gather from")
    random_loads_computed: dict[str, dict[PositiveInt, ComputeFigure]] = Field(
        default_factory=dict, description="CPU: loads per second to random lines of the same working sets "
        "(random_loads_by_size), each address computed from the work-item's index (a hash) instead of read from an "
        "index array, written as op/s: the level's own rate, without the wait for an index the gather adds. Listed "
        "beside the gather's; the latency floor does not read it (docs/models.md §3.1 says why)")
    set_walk_loads: dict[str, ComputeFigure] = Field(
        default_factory=dict, description="CPU: the same loads, each to a random one of lines that all share one L1 "
        "set (lines the L1's size over its ways apart, as down a matrix column of that row length), held by the "
        "level named (L2, L3), written as op/s: every miss takes a way of the one set, so fewer overlap. The "
        "latency floor prices the scattered loads in the L1 set of the two scattered loads before them with it")
    int_divisions: ComputeFigure | None = Field(
        default=None, description="int32 divisions per second, every core (or SM), by a divisor known only at run "
        "time, written as op/s: what an index divided by a size costs. The quantitative model "
        "prices integer divisions with it (§3.2)")
    scalar_instructions: ComputeFigure | None = Field(
        default=None, description="CPU: instructions per second, every core, of code its compiler left scalar "
        "(independent integer operations, counted as Oclgrind counts them), written as op/s. The quantitative "
        "model's issue floor prices a scalar kernel's instructions with it (§3.3)")
    atomics: ComputeFigure | None = Field(
        default=None, description="CPU: atomic read-modify-writes per second, every core, each into a 256-bin "
        "histogram of the core's own (a locked add on x86), written as op/s. The quantitative model prices a "
        "kernel's atomics with it (§3.4)")
    first_touches: ComputeFigure | None = Field(
        default=None, description="CPU: 4 KiB pages per second, every core, that a kernel's stores touch first in a "
        "buffer no one wrote before (the operating system maps each on that store), less the same stores on the "
        "pages mapped, written as op/s. The quantitative model prices a launch's first-touched pages with it (§3.7)")
    launches: ComputeFigure | None = Field(
        default=None, description="CPU (PoCL): empty kernel launches per second, each of one work-group, timed on "
        "the device (its profiling events' start to end, the queue finished after each), written as op/s: the "
        "runtime's own time of a launch. The quantitative model adds it to a campaign's timed launches (§3.8)")
    work_groups: ComputeFigure | None = Field(
        default=None, description="CPU (PoCL): work-groups per second, every core, that an empty kernel's launch "
        "runs beyond its first (the slope of its device time over its work-groups), written as op/s: what the "
        "runtime spends starting each work-group on a core. The quantitative model adds a launch's work-groups at "
        "it (§3.8)")
    local_loads: ComputeFigure | None = Field(
        default=None, description="CPU (PoCL): local-memory loads and stores per second, every core, each work-item "
        "summing a thousand local words in four independent chains within one barrier region, written as op/s: the "
        "throughput of local accesses, where the shared level's figure is a chain's latency. The quantitative model "
        "prices a kernel's local accesses at it (§3.9)")
    barriers: ComputeFigure | None = Field(
        default=None, description="CPU (PoCL): work-group barriers crossed per second, every core, one crossing per "
        "work-item, with one value live across each (the runtime ends the work-items' loop at each barrier and "
        "begins the next region's), written as op/s. The quantitative model adds a kernel's barrier crossings at it "
        "(§3.9); the values a kernel keeps live across its barriers cost more: barrier_values")
    barrier_values: ComputeFigure | None = Field(
        default=None, description="CPU (PoCL): values live across a barrier that the runtime saves and restores per "
        "second, every core, per work-item and crossing (eight values against one, the difference over seven), "
        "written as op/s. The quantitative model adds a kernel's values live across its barriers at it, counted "
        "from its IR (§3.9)")
    # COUNTED_RATES (after the class) lists the nine above by name, label and unit for the bench and the CLI.
    fp32_issue_share: ShareFigure | None = Field(
        default=None, description="GPU: the share of a scheduler's instruction issues that fp32 instructions must "
        "fill to reach peak.fp32 (1: the peak counts FP32 lanes that every other instruction displaces, as on "
        "GA10x, Ada, Hopper, Blackwell and RDNA 3's dual issue; 0.5: FP32 runs at peak with half the issues left "
        "to loads, integer and control, as on Volta, Turing and GA100). The projection's compute ceiling reads it")
    conversions: ComputeFigure | None = Field(
        default=None, description="int32 to fp32 and fp32 to int32 conversions per second, every SM or CU, written "
        "as op/s: on NVIDIA GPUs a unit of 16 a clock per SM (the CUDA C Programming Guide's throughput table, CC "
        "7.x to 9.0) a quarter to an eighth of the FP32 lanes; on AMD GPUs a full-rate vector instruction. The boat "
        "hull prices a class's conversions per application with it (docs/models.md, section 2)")
    host_link: HostLink | None = None
    tdp: PowerFigure | None = Field(
        default=None, description="thermal design power in W: a GPU's board (or module) power, a CPU's socket TDP")
    prices: list[Price] = Field(default_factory=list, description="list, street and rental prices, each dated")
    maxima: Maxima = Field(default_factory=Maxima, description="measured maxima, below the peaks (spec §4)")
    notes: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Device:
        if self.kind == "cpu" and self.simd_width_bits is None:
            raise ValueError("a cpu needs simd_width_bits")
        if self.kind == "gpu" and self.warp_size is None:
            raise ValueError("a gpu needs warp_size")
        if self.fp32_issue_share is not None:
            if self.kind != "gpu":
                raise ValueError("fp32_issue_share is a GPU's figure (its schedulers' issue)")
            if self.fp32_issue_share.value > 1:
                raise ValueError(f"fp32_issue_share is a share of the issues, at most 1: got "
                                 f"{self.fp32_issue_share.value:g}")
        if self.threads < self.compute_units:
            raise ValueError(f"threads ({self.threads}) < compute_units ({self.compute_units})")
        if not self.peak:
            raise ValueError("peak needs at least one precision")
        for precision, kinds in self.peak.items():
            if not kinds:
                raise ValueError(f"peak.{precision.value} lists no instruction kind")
            fma, add_mul = kinds.get(InstructionKind.FMA), kinds.get(InstructionKind.ADD_MUL)
            # Integer multiply is often slower than integer add, so only floating point is checked.
            floating = precision.value.startswith(("fp", "bf"))
            if floating and fma and add_mul and add_mul.value > fma.value * (1 + 1e-9):
                raise ValueError(
                    f"peak.{precision.value}: add_mul ({add_mul.value:g}) exceeds fma ({fma.value:g})"
                )
        levels = [level.level for level in self.memory]
        duplicated = sorted({name for name in levels if levels.count(name) > 1})
        if duplicated:
            raise ValueError(f"memory level(s) listed twice: {duplicated}")
        dram = [level for level in self.memory if level.level == "DRAM"]
        if not dram:
            raise ValueError("memory needs a DRAM level")
        if dram[0].bandwidth is None:
            raise ValueError("the DRAM level needs a bandwidth")
        for name, ceiling in self.bandwidth_ceilings.items():
            if ceiling.value > dram[0].bandwidth.value * (1 + 1e-9):
                raise ValueError(f"bandwidth ceiling {name!r} exceeds the DRAM bandwidth")
        top = max((f.value for kinds in self.peak.values() for f in kinds.values()), default=0.0)
        for name, ceiling in self.compute_ceilings.items():
            if ceiling.value > top * (1 + 1e-9):
                raise ValueError(f"compute ceiling {name!r} exceeds every peak")
        self._maxima_below_peaks()
        return self

    def _maxima_below_peaks(self) -> None:
        """Raise ValueError where a measured maximum passes the peak it is measured against."""
        pairs: list[tuple[str, Figure, Figure | None]] = [
            (f"compute.{p.value}.{k.value}", f, self.peak.get(p, {}).get(k))
            for p, kinds in self.maxima.compute.items() for k, f in kinds.items()
        ]
        bandwidths = {level.level: level.bandwidth for level in self.memory}
        pairs += [(f"bandwidth.{level}", f, bandwidths.get(level)) for level, f in self.maxima.bandwidth.items()]
        for path, measured, peak in pairs:
            if peak is not None and measured.value > peak.value * MAXIMA_TOLERANCE:
                raise ValueError(f"maxima.{path} ({measured.value:g}) exceeds the peak ({peak.value:g}) by more "
                                 f"than {MAXIMA_TOLERANCE - 1:.0%}")

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> Device:
        """Return a Device validated from a parsed YAML mapping; bare figures take its default provenance."""
        default = data.get("provenance") if isinstance(data, dict) else None
        return cls.model_validate(data, context={"default_provenance": default})

    def peak_compute(self, precision: Precision | str = Precision.FP32, *, tensor: bool = False) -> float:
        """Return the peak arithmetic rate in op/s for `precision` (FMA if the device has it)."""
        kinds = self.peak.get(Precision(precision))
        if not kinds:
            available = ", ".join(p.value for p in self.peak)
            raise NotFound(f"{self.name} has no {Precision(precision).value} peak (it has: {available})")
        if tensor and InstructionKind.TENSOR not in kinds:
            raise NotFound(f"{self.name} has no tensor peak for {Precision(precision).value}: drop --tensor")
        usable = [
            figure.value for kind, figure in kinds.items() if tensor or kind is not InstructionKind.TENSOR
        ]
        if not usable:
            raise NotFound(f"{self.name} has only a tensor peak for {Precision(precision).value}")
        return max(usable)

    @property
    def sm_architecture(self) -> str:
        """Return the architecture nvcc builds for, 'sm_90' for compute capability 9.0; NotFound without one."""
        if self.compute_capability is None:
            raise NotFound(f"{self.name} has no compute_capability: it is not an NVIDIA GPU, or its device file "
                           "lacks one (add e.g. compute_capability: '9.0')")
        return "sm_" + self.compute_capability.replace(".", "")

    def memory_level(self, name: str) -> MemoryLevel:
        """Return the memory level called `name` (L1, L2, L3, shared, DRAM)."""
        for level in self.memory:
            if level.level == name:
                return level
        raise NotFound(f"{self.name} has no memory level {name!r}")

    @property
    def dram_bandwidth(self) -> float:
        """Return the DRAM bandwidth in B/s."""
        figure = self.memory_level("DRAM").bandwidth
        assert figure is not None  # enforced by the validator
        return figure.value

    def level_bandwidths(self) -> dict[str, float]:
        """Return the bandwidth in B/s of every memory level that has one, fastest first."""
        rates = {level.level: level.bandwidth.value for level in self.memory if level.bandwidth is not None}
        return dict(sorted(rates.items(), key=lambda item: -item[1]))

    def simd_lanes(self, precision: Precision | str) -> int:
        """Return how many elements of `precision` one SIMD instruction (CPU) or warp (GPU) processes."""
        if self.kind == "gpu":
            assert self.warp_size is not None
            return self.warp_size
        assert self.simd_width_bits is not None
        return max(1, self.simd_width_bits // (8 * Precision(precision).element_bytes))


class CountedRate(NamedTuple):
    """An optional rate of one kind of operation a device runs (op/s), as perfcast bench measures and names it."""

    name: str  # the Device's field, and perfcast bench's SuiteResult's
    label: str  # 'int32 divisions'
    unit: str  # what op/s means here: 'div/s'
    method: str  # how the bench measures it, for the figure's tool


# The rates §3.2–§3.4 and §3.7–§3.9 read, in the order the bench, its CSV and `devices show` list them.
# The bandwidth ceiling of DRAM accessed one 4-byte word per thread at a time, which perfcast bench writes where a
# wider access reached more (the DRAM level's figure is then the widest access's): the rate §3's B_mem reads.
SCALAR_ACCESSES = "4-byte accesses"
# The rate (B/s moved) of the triad written with an int index and a guard, `if (i < n)`, as kernels are: on a CPU
# whose compiler masks the guarded accesses of a vectorised work-item loop (AVX2), the masked loads and stores bind
# it in the cores. §3's B_mem for a kernel whose compiled code masks its accesses (perfcast bench, OpenCL on CPUs).
GUARDED_ACCESSES = "guarded accesses"
# The rate (B/s moved) of the copy written the same way: beside the guarded triad, the cost of a masked load and of a
# masked store apart, which price the masked accesses of a kernel from any level (§3.6).
GUARDED_COPY = "guarded copy"

COUNTED_RATES = (
    CountedRate("int_divisions", "int32 divisions", "div/s", "int32 divisions by a run-time divisor"),
    CountedRate("scalar_instructions", "scalar instructions", "inst/s", "independent integer operations left scalar"),
    CountedRate("atomics", "atomic increments", "atomic/s", "atomic increments into a 256-bin histogram"),
    CountedRate("first_touches", "first-touched pages", "page/s",
                "a store to each 4 KiB page of fresh buffers, less the same stores again"),
    CountedRate("launches", "empty launches", "launch/s", "empty kernels of one work-group, launched one at a time"),
    CountedRate("work_groups", "empty work-groups", "group/s",
                "empty kernels of 1 to 4096 work-groups: the slope of their device time"),
    CountedRate("local_loads", "local accesses", "access/s",
                "1,024 local loads a work-item in four independent sums, one barrier region"),
    CountedRate("barriers", "barrier crossings", "crossing/s",
                "1 to 256 barriers a work-item, one add between: the slope of the time, per crossing"),
    CountedRate("barrier_values", "values kept across barriers", "value/s",
                "the same crossings with eight values live: the slopes' difference, per further value"),
)


def scalar_dram(device: Device) -> Figure | None:
    """Return the device's measured DRAM rate of 4-byte accesses (B/s) where it is below its DRAM figure, else None."""
    ceiling = device.bandwidth_ceilings.get(SCALAR_ACCESSES)
    dram = device.memory_level("DRAM").bandwidth
    if ceiling is None or ceiling.provenance.source != "measured" or dram is None or ceiling.value >= dram.value:
        return None
    return ceiling
