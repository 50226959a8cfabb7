"""The six rates the quantitative roofline (spec §3) reads of a device, each with where it comes from.

T_SP and T_DP are the fp32/fp64 FMA peaks, T_int the int32 multiply-add peak and T_add the int32 add peak
(`peak.int32.add_mul` in a device file), B_mem the DRAM bandwidth (of 4-byte accesses where the device measured
that below its widest access's: `bandwidth_ceilings["4-byte accesses"]`). T_ldst, local/shared-memory load-store
instructions per second, is the shared-memory bandwidth divided by 4 B (the width of the accesses the bench
suite's local-memory kernel makes); a CPU has no shared memory, so its L1 bandwidth stands in, said so.

Beside the six: what one elementary-function call (exp, log, sin) costs on the device, in instructions of its
precision, where the device has a measured rate of such calls: (T_SP / 2) / calls per second (T_DP for fp64;
an FMA is 2 ops, one instruction). A counting profiler (Oclgrind) gives every call a fixed ELEMENTARY_COST
instructions, which is near a GPU's and far below a CPU's, where a call runs a library routine.

And the rate of random loads found in each level (L2, L3, DRAM) where the device has one measured: the latency
floor of §3.1 prices a kernel's scattered loads at it. The rate of integer divisions (§3.2) and of instructions in
code left scalar (§3.3's issue floor) and of atomics (§3.4), where measured; on a CPU, the throughput of local
accesses and the cost of a barrier crossing (§3.9), where measured.

On a CPU, its L1 bandwidth and SIMD width: §3.6 prices a kernel's global loads and stores at the L1 in the vector
width its compiler gave it, and its local ones at T_ldst where local memory was measured (`local_rate`), else as
global ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from perfcast.devices.schema import (
    COUNTED_RATES,
    GUARDED_ACCESSES,
    GUARDED_COPY,
    SCALAR_ACCESSES,
    Device,
    Figure,
    InstructionKind,
    Precision,
    scalar_dram,
)
from perfcast.errors import NotFound
from perfcast.models.quantitative import ELEMENTARY_COST, DeviceRates
from perfcast.units import Dimension, format_quantity

__all__ = ["LDST_BYTES", "QuantitativeInputs", "quantitative_inputs"]

LDST_BYTES = 4  # bytes per local/shared-memory access when T_ldst is read off a bandwidth
# The names the inputs' sources and summaries give the counted rates (schema.COUNTED_RATES) that §3.2–§3.4 and
# §3.7–§3.9 price with.
_COUNTED_KEYS = {"int_divisions": "int32 divisions", "scalar_instructions": "scalar instructions",
                 "atomics": "atomics", "first_touches": "first touches", "launches": "launches",
                 "work_groups": "work-groups", "local_loads": "local accesses (CPU)",
                 "barriers": "barrier crossings", "barrier_values": "values kept across barriers"}


@dataclass(frozen=True)
class QuantitativeInputs:
    """The §3 rates of one device and, per symbol, a line saying where the figure comes from."""

    device: Device
    rates: DeviceRates
    sources: dict[str, str]  # '15.67 TFLOP/s (spec: NVIDIA Tesla V100 ... whitepaper)'
    summaries: dict[str, str]  # the same in short: '15.67 TFLOP/s (spec)'
    elementary_cost: dict[str, float] = field(default_factory=dict)  # precision -> instructions per call, measured
    random_loads: dict[str, float] = field(default_factory=dict)  # L2, L3, DRAM -> random loads/s, measured
    int_divisions: float | None = None  # int32 divisions/s, measured (§3.2's division cost)
    scalar_instructions: float | None = None  # inst/s of code left scalar, measured (§3.3's issue floor)
    atomics: float | None = None  # atomic read-modify-writes/s, measured (§3.4's atomic cost)
    elementary_rates: dict[str, float] = field(default_factory=dict)  # precision -> calls/s, measured (§3.3)
    l1_bandwidth: float | None = None  # a CPU's L1 bandwidth, B/s (§3.6)
    simd_bits: int | None = None  # a CPU's SIMD width, bits (§3.6)
    local_rate: float | None = None  # local-memory accesses/s measured (a shared level), not stood in for by L1
    first_touches: float | None = None  # 4 KiB pages touched first per s, measured (§3.7's first-touch cost)
    guarded_dram: float | None = None  # B/s of the guarded triad, measured: B_mem of a kernel whose code masks (§3.6)
    set_walk_loads: dict[str, float] = field(default_factory=dict)  # L2, L3 -> loads/s to lines of one L1 set (§3.1)
    # L2, L3 -> working set (B) -> random loads/s over it, measured (§3.1: a level's rate at a kernel's own set)
    random_curves: dict[str, dict[float, float]] = field(default_factory=dict)
    launches: float | None = None  # empty one-group launches per s, measured (§3.8's launch cost)
    work_groups: float | None = None  # empty work-groups per s past a launch's first, measured (§3.8)
    local_loads: float | None = None  # a CPU's local accesses/s in independent chains, measured (§3.9)
    barriers: float | None = None  # a CPU's work-item barrier crossings/s, one value live across each (§3.9)
    barrier_values: float | None = None  # a CPU's values live across barriers saved and restored per s (§3.9)
    guarded_copy: float | None = None  # B/s moved of the guarded copy, measured: beside the triad's, masked moves' costs


def _value(value: float, dimension: Dimension, unit: str = "") -> str:
    """Return a rate with its unit, FLOP/s renamed to `unit` for integer and instruction rates."""
    return format_quantity(value, dimension, unit=unit or None)


def _describe(figure: Figure, dimension: Dimension, unit: str = "", divided: str = "") -> str:
    """Return a figure with its unit and provenance, e.g. '15.67 TB/s (estimated: 80 SMs x ...)'."""
    return f"{_value(figure.value, dimension, unit)}{divided} ({figure.provenance.source}: {figure.provenance.describe()})"


def _peak(device: Device, precision: Precision, kind: InstructionKind, symbol: str) -> Figure:
    """Return the peak figure `symbol` reads, or raise NotFound saying how to get it.

    A floating-point multiply-add rate falls back to the best non-tensor figure: a CPU without FMA issues its
    multiplies and adds on separate pipes, and that combined rate is its multiply-add throughput.
    """
    kinds = device.peak.get(precision, {})
    figure = kinds.get(kind)
    if figure is None and precision.value.startswith("fp") and kind is InstructionKind.FMA:
        usable = [f for k, f in kinds.items() if k is not InstructionKind.TENSOR]
        figure = max(usable, key=lambda f: f.value) if usable else None
    if figure is None:
        raise NotFound(
            f"{device.name} has no {precision.value} {kind.value} peak, which the quantitative model reads as "
            f"{symbol}: measure the device with `perfcast bench` (every backend measures it), or add "
            f"peak.{precision.value}.{kind.value} to its device file"
        )
    return figure


def quantitative_inputs(device: Device) -> QuantitativeInputs:
    """Return T_SP, T_DP, T_int, T_add (op/s), T_ldst (instructions/s) and B_mem (B/s) of `device`, with sources."""
    figures = {
        "T_SP": _peak(device, Precision.FP32, InstructionKind.FMA, "T_SP"),
        "T_int": _peak(device, Precision.INT32, InstructionKind.FMA, "T_int (integer multiply-add)"),
        "T_add": _peak(device, Precision.INT32, InstructionKind.ADD_MUL, "T_add (integer add)"),
    }
    units = {"T_SP": "FLOP/s", "T_int": "OP/s", "T_add": "inst/s"}
    sources = {symbol: _describe(figure, Dimension.COMPUTE, units[symbol]) for symbol, figure in figures.items()}
    summaries = {symbol: f"{_value(figure.value, Dimension.COMPUTE, units[symbol])} ({figure.provenance.source})"
                 for symbol, figure in figures.items()}
    fp64 = _peak(device, Precision.FP64, InstructionKind.FMA, "T_DP") if Precision.FP64 in device.peak else None
    sources["T_DP"] = _describe(fp64, Dimension.COMPUTE) if fp64 else "none: the device has no fp64 peak"
    summaries["T_DP"] = f"{_value(fp64.value, Dimension.COMPUTE)} ({fp64.provenance.source})" if fp64 else "none"
    local = next((level for level in device.memory if level.level == "shared" and level.bandwidth), None)
    stand_in = ""
    if local is None and device.kind == "cpu":
        local = next((level for level in device.memory if level.level == "L1" and level.bandwidth), None)
        stand_in = ", the L1 bandwidth standing in for a CPU's missing shared memory"
    if local is None or local.bandwidth is None:
        raise NotFound(
            f"{device.name} has no shared-memory bandwidth, from which the quantitative model reads T_ldst "
            "(load-store instructions/s = bandwidth / 4 B): measure the device with `perfcast bench`, or give its "
            "shared level a bandwidth in its device file"
        )
    t_ldst = local.bandwidth.value / LDST_BYTES
    ldst = _value(t_ldst, Dimension.COMPUTE, "inst/s")
    sources["T_ldst"] = (f"{ldst} = {local.level} "
                         + _describe(local.bandwidth, Dimension.BANDWIDTH, divided=f" / {LDST_BYTES} B") + stand_in)
    summaries["T_ldst"] = f"{ldst} (from {local.level}) ({local.bandwidth.provenance.source})"
    dram = device.memory_level("DRAM").bandwidth
    assert dram is not None  # the schema requires it
    # As T_ldst: the rate of the 4-byte accesses the profiles' kernels make (they do not say their widths), where
    # the device measured it below its DRAM figure, the widest access's (the roofline's roof).
    b_mem = scalar_dram(device) or dram
    wider = (f", the rate of {SCALAR_ACCESSES} (the DRAM figure, {_value(dram.value, Dimension.BANDWIDTH)}, is a "
             "wider access's)") if b_mem is not dram else ""
    sources["B_mem"] = _describe(b_mem, Dimension.BANDWIDTH) + wider
    summaries["B_mem"] = (f"{_value(b_mem.value, Dimension.BANDWIDTH)} ({b_mem.provenance.source}"
                          f"{f', {SCALAR_ACCESSES}' if wider else ''})")
    rates = DeviceRates(figures["T_SP"].value, fp64.value if fp64 else None, figures["T_int"].value,
                        figures["T_add"].value, t_ldst, b_mem.value)
    costs: dict[str, float] = {}
    for precision, peak in ((Precision.FP32, figures["T_SP"]), (Precision.FP64, fp64)):
        calls = device.elementary.get(precision)
        key = f"elementary {precision.value}"
        if calls is None or peak is None:
            sources[key] = summaries[key] = (f"{ELEMENTARY_COST} instructions per call (the counting profiler's; "
                                             "no measured rate of calls)")
            continue
        costs[precision.value] = peak.value / 2 / calls.value
        sources[key] = (f"{costs[precision.value]:.3g} instructions per call = {precision.value} FMA peak / 2 / "
                        + _describe(calls, Dimension.COMPUTE, "call/s"))
        summaries[key] = f"{costs[precision.value]:.3g} instructions per call ({calls.provenance.source})"
    random = {level: figure.value for level, figure in device.random_loads.items()}
    for level, figure in device.random_loads.items():
        key = f"random loads {level}"
        sources[key] = _describe(figure, Dimension.COMPUTE, "load/s")
        summaries[key] = f"{_value(figure.value, Dimension.COMPUTE, 'load/s')} ({figure.provenance.source})"
    for level, figure in device.set_walk_loads.items():
        key = f"set-walk loads {level}"
        sources[key] = _describe(figure, Dimension.COMPUTE, "load/s")
        summaries[key] = f"{_value(figure.value, Dimension.COMPUTE, 'load/s')} ({figure.provenance.source})"
    measured: dict[str, float | None] = {}
    for rate in COUNTED_RATES:
        figure = getattr(device, rate.name)
        measured[rate.name] = None if figure is None else figure.value
        if figure is not None:
            key = _COUNTED_KEYS[rate.name]
            sources[key] = _describe(figure, Dimension.COMPUTE, rate.unit)
            summaries[key] = f"{_value(figure.value, Dimension.COMPUTE, rate.unit)} ({figure.provenance.source})"
    l1_bandwidth = simd_bits = None
    l1 = next((level for level in device.memory if level.level == "L1" and level.bandwidth), None)
    if device.kind == "cpu" and l1 is not None and l1.bandwidth is not None and device.simd_width_bits:
        l1_bandwidth, simd_bits = l1.bandwidth.value, device.simd_width_bits
        sources["T_ldst, global (CPU)"] = (f"L1 {_describe(l1.bandwidth, Dimension.BANDWIDTH)} at {simd_bits}-bit "
                                           "vectors, x lanes / SIMD lanes for a kernel vectorised narrower (§3.6)")
        summaries["T_ldst, global (CPU)"] = (f"L1 {_value(l1.bandwidth.value, Dimension.BANDWIDTH)} at {simd_bits}-bit "
                                             f"vectors ({l1.bandwidth.provenance.source})")
    guarded = device.bandwidth_ceilings.get(GUARDED_ACCESSES) if device.kind == "cpu" else None
    copy = device.bandwidth_ceilings.get(GUARDED_COPY) if guarded is not None else None
    if guarded is not None:
        sources["B_mem, masked accesses (CPU)"] = (_describe(guarded, Dimension.BANDWIDTH) + ", the triad written with a "
                                                   "guard, for a kernel whose compiled code masks its accesses (§3.6)")
        summaries["B_mem, masked accesses (CPU)"] = (f"{_value(guarded.value, Dimension.BANDWIDTH)} "
                                                     f"({guarded.provenance.source}, {GUARDED_ACCESSES})")
    if copy is not None:
        sources["masked loads and stores (CPU)"] = (_describe(copy, Dimension.BANDWIDTH) + ", the copy written with a "
                                                    "guard: beside the guarded triad, a masked load's and a masked "
                                                    "store's cost, from any level (§3.6)")
        summaries["masked loads and stores (CPU)"] = (f"{_value(copy.value, Dimension.BANDWIDTH)} "
                                                      f"({copy.provenance.source}, {GUARDED_COPY})")
    return QuantitativeInputs(device, rates, sources, summaries, costs, random, measured["int_divisions"],
                              measured["scalar_instructions"], measured["atomics"],
                              {p.value: figure.value for p, figure in device.elementary.items() if p.value in costs},
                              l1_bandwidth, simd_bits, None if stand_in else t_ldst, measured["first_touches"],
                              None if guarded is None else guarded.value,
                              {level: figure.value for level, figure in device.set_walk_loads.items()},
                              {level: {float(size): figure.value for size, figure in sizes.items()}
                               for level, sizes in device.random_loads_by_size.items() if sizes},
                              launches=measured["launches"], work_groups=measured["work_groups"],
                              local_loads=measured["local_loads"], barriers=measured["barriers"],
                              barrier_values=measured["barrier_values"],
                              guarded_copy=None if copy is None else copy.value)
