"""The boat hull figures of a described device, each with a line saying where it comes from."""

from __future__ import annotations

from dataclasses import dataclass

from perfcast.devices.schema import Device, Figure, Precision
from perfcast.models.boathull import ELEMENTARY_OPS, CpuFigures, GpuFigures
from perfcast.units import Dimension, format_quantity

__all__ = ["ELEMENTARY_OPS", "ConversionOps", "ElementaryOps", "HullInputs", "conversion_ops", "elementary_ops", "hull_inputs",
           "unpriced_conversions"]

# An uncoalesced access of s bytes still moves a whole memory transaction: 32 B on every NVIDIA GPU
# since compute capability 1.2 and on GCN.
TRANSACTION_BYTES = 32
# Of the bytes a triad moves on a CPU (two reads, one write, the written line's fill), the program's: 24 of 32.
STREAM_TRIAD_SHARE = 0.75


@dataclass(frozen=True)
class HullInputs:
    """The figures the boat hull model reads for one device, and the source of each."""

    device: Device
    figures: GpuFigures | CpuFigures
    sources: dict[str, str]


def _describe(figure: Figure, dimension: Dimension) -> str:
    """Return a figure with its unit and provenance, e.g. '133.9 GB/s (spec: NVIDIA ...)'."""
    return f"{format_quantity(figure.value, dimension)} ({figure.provenance.source}: {figure.provenance.describe()})"


def hull_inputs(device: Device, precision: Precision | str = Precision.FP32, element_bytes: float = 4) -> HullInputs:
    """Return the boat hull figures of `device` (op/s, B/s): measured where the file has them, else stated fallbacks."""
    precision = Precision(precision)
    peak = device.peak_compute(precision)
    kinds = device.peak[precision]
    best = max((f for k, f in kinds.items() if k.value != "tensor"), key=lambda f: f.value)
    dram = device.memory_level("DRAM").bandwidth
    assert dram is not None
    sources = {"P_compute": _describe(best, Dimension.COMPUTE)}
    if device.kind == "cpu":
        assert device.simd_width_bits is not None
        p_memory = dram.value
        sources["P_memory"] = _describe(dram, Dimension.BANDWIDTH)
        if dram.provenance.counts == "moved":
            # The hull counts the elements a program reads and writes (§2.2); on a CPU each stored line is also
            # read in first. P_memory is the rate of the program's bytes, as STREAM's triad counts them.
            p_memory = dram.value * STREAM_TRIAD_SHARE
            sources["P_memory"] = (f"{format_quantity(p_memory, Dimension.BANDWIDTH)}: the bytes a triad program "
                                   f"reads and writes, {STREAM_TRIAD_SHARE:g} of the "
                                   + sources["P_memory"] + " that move (its write-allocate reads are the rest)")
        sources["N_threads"] = f"{device.threads} hardware threads"
        sources["W_vector"] = f"{device.simd_width_bits} bit"
        figures: GpuFigures | CpuFigures = CpuFigures(peak, p_memory, device.threads, device.simd_width_bits)
        return HullInputs(device, figures, sources)
    coalesced = device.bandwidth_ceilings.get("coalesced")
    if coalesced is not None:
        sources["P_coalesced"] = _describe(coalesced, Dimension.BANDWIDTH)
        p_coalesced = coalesced.value
    else:
        p_coalesced = dram.value
        sources["P_coalesced"] = _describe(dram, Dimension.BANDWIDTH) + " — DRAM peak, no measured coalesced figure"
    uncoalesced = device.bandwidth_ceilings.get("uncoalesced")
    if uncoalesced is not None:
        sources["P_uncoalesced"] = _describe(uncoalesced, Dimension.BANDWIDTH)
        p_uncoalesced = uncoalesced.value
    else:
        fraction = min(1.0, element_bytes / TRANSACTION_BYTES)
        p_uncoalesced = p_coalesced * fraction
        sources["P_uncoalesced"] = (
            f"{format_quantity(p_uncoalesced, Dimension.BANDWIDTH)} (estimated: P_coalesced x {element_bytes:g} B "
            f"used of each {TRANSACTION_BYTES} B transaction; no measured figure)"
        )
    bus = device.host_link.bandwidth if device.host_link else None
    if bus is not None:
        sources["B_bus"] = _describe(bus, Dimension.BANDWIDTH)
    # The issue share is the FP32 peak's; at other precisions the i1 floor is left unpriced.
    share = device.fp32_issue_share if precision is Precision.FP32 else None
    if share is not None:
        sources["issue share"] = f"{share.value:g} ({share.provenance.source}: {share.provenance.describe()})"
    figures = GpuFigures(peak, p_coalesced, p_uncoalesced, bus.value if bus else None,
                         share.value if share is not None else None)
    return HullInputs(device, figures, sources)


@dataclass(frozen=True)
class ElementaryOps:
    """What one elementary-function call costs a device, in ops of its f (op/call), and where that comes from."""

    ops: float
    source: str

    @property
    def extra(self) -> float:
        """Return the ops (op/call) a call costs beyond the ELEMENTARY_OPS that a species' f counts it at."""
        return self.ops - ELEMENTARY_OPS


def elementary_ops(device: Device, precision: Precision | str = Precision.FP32) -> ElementaryOps:
    """Return the ops (of P_compute) one elementary call costs: P_compute / measured calls/s, else ELEMENTARY_OPS.

    A device measured by `perfcast bench` has a rate of exp/log/sin calls; P_compute divided by it is how many of
    the peak's ops one call displaces. Without such a rate the species' own count stands, said so.
    """
    precision = Precision(precision)
    calls = device.elementary.get(precision)
    if calls is None:
        return ElementaryOps(float(ELEMENTARY_OPS), f"{ELEMENTARY_OPS} ops per call (classify's count; the device "
                                                    f"has no measured rate of {precision.value} calls)")
    peak = device.peak_compute(precision)
    ops = peak / calls.value
    return ElementaryOps(ops, f"{ops:.3g} ops per call = P_compute {format_quantity(peak, Dimension.COMPUTE)} / "
                              f"{format_quantity(calls.value, Dimension.COMPUTE, unit='call/s')} "
                              f"({calls.provenance.source})")


@dataclass(frozen=True)
class ConversionOps:
    """What one int/fp32 conversion costs a device, in ops of its f (op/conversion), and where that comes from."""

    ops: float
    source: str


def conversion_ops(device: Device, precision: Precision | str = Precision.FP32) -> ConversionOps | None:
    """Return the ops (of P_compute) one int/fp32 conversion costs: P_compute / conversions per s; None without a rate.

    The catalog's `conversions` figure comes from the vendors' per-clock throughputs; a device without it leaves a
    class's conversions unpriced, and its callers say so.
    """
    precision = Precision(precision)
    if device.conversions is None or precision is not Precision.FP32:  # the figure is int <-> fp32's
        return None
    peak = device.peak_compute(precision)
    ops = peak / device.conversions.value
    return ConversionOps(ops, f"{ops:.3g} ops per conversion = P_compute {format_quantity(peak, Dimension.COMPUTE)} / "
                              f"{format_quantity(device.conversions.value, Dimension.COMPUTE, unit='conv/s')} "
                              f"({device.conversions.provenance.source}: {device.conversions.provenance.describe()})")


def unpriced_conversions(device: Device, precision: Precision | str = Precision.FP32) -> str:
    """Return, in words, why `conversion_ops` gives `device` no cost at `precision` (for a caller that prices none)."""
    precision = Precision(precision)
    if precision is not Precision.FP32:
        return f"the conversion rate is of int32 <-> fp32, not {precision.value}"
    return f"{device.name} has no int/fp32 conversion rate (its device file's `conversions`)"
