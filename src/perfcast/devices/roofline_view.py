"""The roofline of a described device: its peak, bandwidths and the ceilings its figures imply."""

from __future__ import annotations

from perfcast.devices.schema import Device, InstructionKind, Precision
from perfcast.models.roofline import Ceiling, Roofline

__all__ = ["NO_FMA", "NO_SIMD", "SINGLE_THREAD", "device_roofline"]

NO_FMA = "no FMA"
NO_SIMD = "no SIMD"
SINGLE_THREAD = "single thread"


def device_roofline(device: Device, precision: Precision | str = Precision.FP32, *, tensor: bool = False) -> Roofline:
    """Return the roofline (op/s, B/s) of `device` at `precision`, with the in-core and bandwidth ceilings it implies.

    In-core ceilings: no FMA (the add/multiply peak, or π/2 where only the
    FMA peak is known), and on CPUs no SIMD (π / lanes) and a single thread
    (π / cores) — or, for fp32, the measured ceilings of a bench profile. Bandwidth ceilings: those recorded
    in the device file, named
    '<name> bandwidth' (e.g. 'single thread bandwidth').
    """
    precision = Precision(precision)
    peak = device.peak_compute(precision, tensor=tensor)
    kinds = device.peak[precision]
    ceilings: list[Ceiling] = []
    # Measured fp32 ceilings (perfcast bench) replace the derived ones of the same name.
    measured = {
        name: figure.value
        for name, figure in device.compute_ceilings.items()
        if precision is Precision.FP32 and figure.value < peak
    }
    if InstructionKind.FMA in kinds and kinds[InstructionKind.FMA].value >= peak:
        add_mul = kinds.get(InstructionKind.ADD_MUL)
        ceilings.append(Ceiling(NO_FMA, add_mul.value if add_mul else peak / 2))
    if device.kind == "cpu":
        lanes = device.simd_lanes(precision)
        if lanes > 1 and NO_SIMD not in measured:
            ceilings.append(Ceiling(NO_SIMD, peak / lanes))
        if device.compute_units > 1 and SINGLE_THREAD not in measured:
            ceilings.append(Ceiling(SINGLE_THREAD, peak / device.compute_units))
    ceilings = [c for c in ceilings if c.name not in measured]
    ceilings += [Ceiling(name, value) for name, value in measured.items()]
    bandwidth_ceilings = tuple(
        Ceiling(f"{name} bandwidth", figure.value) for name, figure in device.bandwidth_ceilings.items()
    )
    return Roofline(
        peak=peak,
        bandwidth=device.dram_bandwidth,
        compute_ceilings=tuple(sorted(ceilings, key=lambda c: -c.value)),
        bandwidth_ceilings=tuple(sorted(bandwidth_ceilings, key=lambda c: -c.value)),
        label=f"{device.full_name} ({precision.value})",
    )
