"""The maxima the cross-device projection (spec §4) reads of a device, each marked with how it was obtained.

Six figures per device and precision: the FMA-only and ADD/MUL-only rates (op/s) and the L1, L2, DRAM and
shared-memory bandwidths (B/s). Each is taken, in this order:

1. ``measured``: a measured maximum of the device (its ``maxima`` section, or a figure a ``perfcast bench``
   profile measured in place of the peak);
2. ``scaled``: the device's peak times the efficiency (maximum / peak) the *source* device reached on the same
   figure, Max_t = Peak_t * Max_s / Peak_s as §4 says (the source's maximum as taken by these rules);
3. ``scaled``: the peak times the device's own efficiency on a related figure it has measured (the fp32 rates
   at the efficiency of its HPL fp64 run), when the source gives none;
4. ``peak``: the peak itself (a vendor figure or an estimate), an upper bound that overstates the maximum.

DRAM is read at both devices' rates of 4-byte accesses, the accesses the profiled kernels make, where both
measured one below their widest access's (two ``perfcast bench`` profiles of GPUs: ``four_byte_dram``); else at
each device's DRAM figure, so that the two sides are taken at one access width.

A figure the device does not give at all (a cache without a bandwidth) is left out; the projection then
refuses the kernels whose bytes hit that level. An L2 bandwidth below the device's DRAM bandwidth is not a
cache's rate but a failed measurement (a sweep that timed its launches, as the H200's first bench did: 0.42
TB/s beside 3.44 TB/s of DRAM): the L2 is then charged to L1, whose bandwidth its bytes cross too, as the GPU
corpus does for a level a GPU gives no bandwidth for, and the figure says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from perfcast.devices.schema import Device, Figure, InstructionKind, Precision, scalar_dram
from perfcast.errors import NotFound
from perfcast.models.projection import GpuMaxima
from perfcast.units import Dimension, format_quantity

__all__ = ["FIGURES", "Capability", "ProjectionCapabilities", "four_byte_dram", "projection_capabilities"]

FIGURES = ("fma", "add_mul", "L1", "L2", "DRAM", "shared")
_COMPUTE = {"fma": InstructionKind.FMA, "add_mul": InstructionKind.ADD_MUL}


@dataclass(frozen=True)
class Capability:
    """One figure the projection reads: value (op/s or B/s), how it was obtained, and from what."""

    value: float
    how: str  # measured | scaled | peak
    detail: str


@dataclass(frozen=True)
class ProjectionCapabilities:
    """A device's six §4 figures in one precision, each with how it was obtained."""

    device: Device
    precision: Precision
    figures: dict[str, Capability]

    def maxima(self) -> GpuMaxima:
        """Return the figures as the model reads them (op/s, B/s; None where the device gives none)."""
        value = {name: (c.value if c else None) for name in FIGURES for c in [self.figures.get(name)]}
        return GpuMaxima(value["fma"], value["add_mul"], value["L1"], value["L2"], value["DRAM"],  # type: ignore[arg-type]
                         value["shared"], fp_issue_share=self.fp_issue_share)

    @property
    def fp_issue_share(self) -> float | None:
        """Return the share of issues FP instructions must fill to reach `fma` (fp32 only; None where unknown)."""
        share = self.device.fp32_issue_share
        return share.value if share is not None and self.precision is Precision.FP32 else None

    def summary(self) -> str:
        """Return one line: 'fma 9.5 TFLOP/s (measured), ..., DRAM 1.4 TB/s (measured)'."""
        line = ", ".join(f"{name} {_quantity(name, c.value, self.precision)} ({c.how})"
                         for name, c in self.figures.items())
        return line + (f", fp issue share {self.fp_issue_share:g}" if self.fp_issue_share is not None else "")


def _quantity(name: str, value: float, precision: Precision = Precision.FP32) -> str:
    """Return a figure with its unit: op/s counted in FLOP/s, or in OP/s for an integer precision; B/s."""
    if name not in _COMPUTE:
        return format_quantity(value, Dimension.BANDWIDTH)
    integer = precision.value.startswith("int")
    return format_quantity(value, Dimension.COMPUTE, unit="OP/s" if integer else None)


def _peak(device: Device, precision: Precision, name: str) -> Figure | None:
    """Return the figure the device gives for `name` in its peaks or memory levels (measured or not)."""
    if name in _COMPUTE:
        return device.peak.get(precision, {}).get(_COMPUTE[name])
    level = next((level for level in device.memory if level.level == name), None)
    return level.bandwidth if level else None


def four_byte_dram(source: Device, target: Device) -> bool:
    """Return True where both devices measured DRAM's 4-byte accesses below their widest: §4 reads those rates then."""
    return scalar_dram(source) is not None and scalar_dram(target) is not None


def _maximum(device: Device, precision: Precision, name: str, four_byte: bool = False) -> Figure | None:
    """Return the device's measured maximum for `name`: its maxima section, else a measured peak figure.

    `four_byte`: DRAM at the device's measured rate of 4-byte accesses (see `four_byte_dram`).
    """
    scalar = scalar_dram(device) if four_byte and name == "DRAM" else None
    if scalar is not None:
        return scalar
    if name in _COMPUTE:
        figure = device.maxima.compute.get(precision, {}).get(_COMPUTE[name])
    else:
        figure = device.maxima.bandwidth.get(name)  # type: ignore[call-overload]
    if figure is None:
        figure = _peak(device, precision, name)
        figure = figure if figure is not None and figure.provenance.source == "measured" else None
    return figure


def _efficiency(device: Device, precision: Precision, name: str) -> float | None:
    """Return measured / peak of `name` on `device` when it has both, as two different figures."""
    measured, peak = _maximum(device, precision, name), _peak(device, precision, name)
    if measured is None or peak is None or measured is peak or peak.provenance.source == "measured":
        return None
    return measured.value / peak.value


def _source_efficiency(source: Device, precision: Precision, name: str) -> float | None:
    """Return the source's maximum as the projection takes it (measured, or scaled itself) over its peak."""
    peak = _peak(source, precision, name)
    taken = _capability(source, precision, name, None)
    if peak is None or taken is None or taken.how == "peak" or peak.provenance.source == "measured":
        return None
    return taken.value / peak.value


def _related_efficiency(device: Device, precision: Precision, name: str) -> tuple[float, str] | None:
    """Return the device's own efficiency on a related measured figure: another compute rate for a compute one."""
    if name not in _COMPUTE:
        return None
    for other in Precision:
        for kind_name in _COMPUTE:
            if (other, kind_name) == (precision, name):
                continue
            efficiency = _efficiency(device, other, kind_name)
            if efficiency is not None:
                return efficiency, f"{other.value} {kind_name}"
    return None


def _capability(device: Device, precision: Precision, name: str, source: Device | None,
                four_byte: bool = False) -> Capability | None:
    """Return one figure of `device` by the rules of the module docstring, or None where it has none."""
    measured = _maximum(device, precision, name, four_byte)
    if measured is not None:
        return Capability(measured.value, "measured", f"{measured.provenance.source}: "
                          f"{measured.provenance.describe()}")
    peak = _peak(device, precision, name)
    if peak is None:
        if name == "add_mul" and _peak(device, precision, "fma") is not None:
            # One add or one multiply per lane per clock: half the FLOP rate of the fused form.
            base = _capability(device, precision, "fma", source)
            assert base is not None
            return Capability(base.value / 2, base.how, f"half the FMA rate ({base.detail})")
        if name == "fma" and _peak(device, precision, "add_mul") is not None:
            base = _capability(device, precision, "add_mul", source)
            assert base is not None
            return Capability(base.value, base.how, f"no FMA: the ADD/MUL rate stands in ({base.detail})")
        return None
    peak_text = (f"peak {_quantity(name, peak.value, precision)} ({peak.provenance.source}: "
                 f"{peak.provenance.describe()})")
    if source is not None and source.name != device.name:
        efficiency = _source_efficiency(source, precision, name)
        if efficiency is not None:
            return Capability(peak.value * efficiency, "scaled",
                              f"{peak_text} x {efficiency:.3f}, {source.name}'s measured / peak")
    related = _related_efficiency(device, precision, name)
    if related is not None:
        efficiency, what = related
        return Capability(peak.value * efficiency, "scaled",
                          f"{peak_text} x {efficiency:.3f}, this device's measured / peak {what}")
    return Capability(peak.value, "peak", f"{peak_text}; no measured maximum: an upper bound")


def projection_capabilities(device: Device, precision: Precision | str = Precision.FP32,
                            source: Device | None = None, four_byte: bool = False) -> ProjectionCapabilities:
    """Return the §4 figures (op/s, B/s) of `device` in `precision`; a target names its `source` to borrow efficiency.

    `four_byte`: DRAM at the device's rate of 4-byte accesses (`four_byte_dram(source, target)` for both sides).
    Raises NotFound when the device has no compute rate in that precision.
    """
    precision = Precision(precision)
    figures = {name: c for name in FIGURES
               if (c := _capability(device, precision, name, source, four_byte)) is not None}
    l1, l2, dram = (figures.get(name) for name in ("L1", "L2", "DRAM"))
    if l1 is not None and l2 is not None and dram is not None and l2.value < dram.value:
        figures["L2"] = Capability(l1.value, l1.how, f"L2 charged to L1: its {_quantity('L2', l2.value)} "
                                   f"({l2.how}) is below DRAM's {_quantity('DRAM', dram.value)}, not a cache's "
                                   f"rate; L1 {l1.detail}")
    missing = [name for name in ("fma", "add_mul") if name not in figures]
    if missing:
        raise NotFound(f"{device.name} has no {precision.value} {' or '.join(missing)} rate, which the projection "
                       f"reads: add peak.{precision.value} to its device file, or measure it with `perfcast bench`")
    return ProjectionCapabilities(device, precision, figures)
