"""`perfcast roofline`: a device's roofline with kernels placed on it, as a table, JSON or a chart."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from perfcast.cli.common import (
    CsvOutput,
    app,
    check_chart_path,
    errors,
    fail,
    format_time,
    print_json,
    print_table,
    printable,
    resolve_device,
    text_out,
)
from perfcast.plots.files import save_figure
from perfcast.units import Dimension, Precision, UnitError, format_quantity, parse_quantity

if TYPE_CHECKING:  # numpy and the models load when a command runs, not for --help
    from perfcast.models.roofline import HierarchicalBound, LocalityWall, Roofline


@dataclass(frozen=True)
class _KernelArgument:
    """A kernel given as NAME:WORK:BYTES, BYTES either one DRAM figure or LEVEL=BYTES,LEVEL=BYTES."""

    name: str
    work: float
    traffic: dict[str, float]


def _parse_kernel(text: str) -> _KernelArgument:
    """Return the kernel described by a --kernel argument."""
    parts = text.split(":")
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"--kernel {text!r}: expected NAME:WORK:BYTES, e.g. triad:2e8:2.4e9 or s:1e9:L2=4e9,DRAM=1e9")
    name, work_text, bytes_text = parts
    try:
        work = parse_quantity(work_text, Dimension.WORK)
        if "=" in bytes_text:
            traffic = {}
            for item in bytes_text.split(","):
                level, _, amount = item.partition("=")
                traffic[level.strip()] = parse_quantity(amount, Dimension.BYTES)
        else:
            traffic = {"DRAM": parse_quantity(bytes_text, Dimension.BYTES)}
    except UnitError as error:
        raise ValueError(f"--kernel {text!r}: {error}") from None
    if work < 0 or any(v < 0 for v in traffic.values()):
        raise ValueError(f"--kernel {text!r}: work and bytes must not be negative")
    if work == 0 and not any(traffic.values()):
        raise ValueError(f"--kernel {text!r}: zero work and zero bytes")
    return _KernelArgument(name, work, traffic)


def _profile_kernels(path: Path, precision: Precision) -> list[_KernelArgument]:
    """Return each kernel of a perfcast profile as a roofline point: its FLOP and its bytes per level."""
    from perfcast.profiles.profile import load_profile

    kernels = []
    for profile in load_profile(path).kernels:
        m = profile.metrics
        key = precision.value
        if key not in m:
            raise ValueError(f"--profile {path}: kernel {profile.name!r} has no {key} instruction count")
        # M_fp counts an FMA once; it does two operations.
        work = m[key] + m.get(f"fma_{key}", 0.0)
        traffic = profile.level_bytes()
        if work == 0 and not any(traffic.values()):
            raise ValueError(f"--profile {path}: kernel {profile.name!r} has neither {key} work nor bytes")
        kernels.append(_KernelArgument(profile.name, work, traffic))
    return kernels


def _parse_wall(text: str) -> LocalityWall:
    """Return the locality wall described by a --wall NAME:INTENSITY argument."""
    from perfcast.models.roofline import LocalityWall

    name, sep, value = text.rpartition(":")
    try:
        intensity = parse_quantity(value, Dimension.INTENSITY)
    except UnitError as error:
        raise ValueError(f"--wall {text!r}: {error}") from None
    if not sep or not name or intensity <= 0:
        raise ValueError(f"--wall {text!r}: expected NAME:INTENSITY with a positive intensity in op/B")
    return LocalityWall(name, intensity)


def _finite(value: float) -> float | None:
    """Return `value`, or None where it is infinite (JSON has no infinity)."""
    return None if math.isinf(value) else value


@app.command("roofline")
def roofline_command(
    device_name: Annotated[str, typer.Option("--device", "-d", help="Catalog name, device YAML file, or 'host'.")],
    kernel: Annotated[list[str] | None, typer.Option("--kernel", "-k", help="NAME:WORK:BYTES (op and B; BYTES may be L1=..,L2=..,DRAM=..). Repeatable.")] = None,
    profile: Annotated[list[Path] | None, typer.Option("--profile", help="A perfcast profile (perfcast profile -o): each kernel placed with its FLOP at --precision and its bytes per level (simulated ones where the profile has them). Repeatable.")] = None,
    precision: Annotated[Precision, typer.Option("--precision", "-p", help="Arithmetic precision of the roof.")] = Precision.FP32,
    tensor: Annotated[bool, typer.Option("--tensor", help="Use the tensor/matrix-unit peak where the device has one.")] = False,
    lacking: Annotated[list[str] | None, typer.Option("--lacking", help="A ceiling the kernels have not broken through, e.g. 'no FMA'. Repeatable.")] = None,
    hierarchical: Annotated[bool, typer.Option("--hierarchical", help="Draw one bandwidth line per memory level.")] = False,
    wall: Annotated[list[str] | None, typer.Option("--wall", help="A locality wall NAME:INTENSITY (op/B). Repeatable.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the chart (.png, .svg or .pdf).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    csv_to: CsvOutput = None,
) -> None:
    """Roofline of a device at one precision, with kernels placed on it, their bound and predicted time."""
    from perfcast.devices.roofline_view import device_roofline
    from perfcast.models.roofline import effective_roofs, hierarchical_roofline

    device = resolve_device(device_name)
    try:
        kernels = [_parse_kernel(text) for text in kernel or []]
        walls = [_parse_wall(text) for text in wall or []]
        roofline = device_roofline(device, precision, tensor=tensor)
        lacking = list(lacking or [])
        compute, dram = effective_roofs(roofline, lacking)
        bandwidths = {**device.level_bandwidths(), "DRAM": dram}
        for path in profile or []:
            for k in _profile_kernels(path, precision):
                # A profile simulated for another device may name a level this one has no bandwidth for.
                unknown = sorted(set(k.traffic) - set(bandwidths))
                if unknown:
                    errors.print(f"note: {printable(k.name)}: {', '.join(unknown)} bytes left out ({device.name} "
                                 "gives no bandwidth for that level)", highlight=False)
                kernels.append(_KernelArgument(k.name, k.work,
                                               {lv: b for lv, b in k.traffic.items() if lv in bandwidths}))
        results = [hierarchical_roofline(k.work, k.traffic, compute, bandwidths) for k in kernels]
        check_chart_path(output)
    except (LookupError, ValueError) as error:
        raise fail(str(error)) from None

    rows = [
        {
            "name": k.name,
            "work": k.work,
            "traffic": k.traffic,
            "intensity": {level: _finite(float(v)) for level, v in r.intensities.items()},
            "attainable": float(r.attainable),
            "bound": "compute" if r.binding == "compute" else "memory",
            "binding": str(r.binding),
            "time": float(r.time),
        }
        for k, r in zip(kernels, results)
    ]
    if as_json:
        print_json({
            "device": device.name,
            "precision": precision.value,
            "peak": roofline.peak,
            "bandwidth": roofline.bandwidth,
            "ridge": roofline.ridge,
            "level_bandwidths": device.level_bandwidths(),
            "compute_ceilings": {c.name: c.value for c in roofline.compute_ceilings},
            "bandwidth_ceilings": {c.name: c.value for c in roofline.bandwidth_ceilings},
            "lacking": lacking,
            "kernels": rows,
        })
    else:
        _print_roofline(roofline, rows, lacking, csv_to)
    if output is not None:
        _write_chart(roofline, kernels, results, walls, device.level_bandwidths() if hierarchical else None, output)
        (errors if as_json else text_out(csv_to)).print(f"wrote {printable(output)}", highlight=False)


def _print_roofline(roofline: Roofline, rows: list[dict[str, Any]], lacking: list[str],
                   csv_to: Path | None = None) -> None:
    """Print the roof, its ceilings and the kernel table for a human (the table as CSV with --csv)."""
    out = text_out(csv_to)
    out.print(f"[bold]{printable(roofline.label)}[/]", highlight=False)
    out.print(
        f"  peak {format_quantity(roofline.peak, Dimension.COMPUTE)}, DRAM {format_quantity(roofline.bandwidth, Dimension.BANDWIDTH)}, "
        f"ridge point {roofline.ridge:.3g} op/B",
        highlight=False,
    )
    for ceiling in roofline.compute_ceilings:
        out.print(f"  ceiling {printable(ceiling.name)}: {format_quantity(ceiling.value, Dimension.COMPUTE)}", highlight=False)
    for ceiling in roofline.bandwidth_ceilings:
        out.print(f"  ceiling {printable(ceiling.name)}: {format_quantity(ceiling.value, Dimension.BANDWIDTH)}", highlight=False)
    if not rows:
        return
    table = Table(title=f"kernels{' lacking ' + ', '.join(lacking) if lacking else ''}", title_justify="left")
    for column, justify in [("kernel", "left"), ("work", "right"), ("intensity", "right"), ("attainable", "right"),
                            ("bound by", "left"), ("time", "right")]:
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        intensity = ", ".join(
            f"{level} {'∞' if v is None else f'{v:.3g}'}" for level, v in row["intensity"].items()
        ) + " op/B"
        table.add_row(
            printable(row["name"]), format_quantity(row["work"], Dimension.WORK), intensity,
            format_quantity(row["attainable"], Dimension.COMPUTE),
            row["binding"] if row["bound"] == "memory" else "compute",
            format_time(row["time"]),
        )
    print_table(table, csv_to)



def _write_chart(
    roofline: Roofline,
    kernels: list[_KernelArgument],
    results: list[HierarchicalBound],
    walls: list[LocalityWall],
    levels: dict[str, float] | None,
    output: Path,
) -> None:
    """Draw the roofline chart with the kernels at their attainable performance and save it."""
    import numpy as np

    from perfcast.plots.roofline import KernelMark, roofline_figure

    marks = []
    for k, r in zip(kernels, results):
        intensities = {level: float(v) for level, v in r.intensities.items() if np.isfinite(v) and v > 0}
        if not intensities:
            continue
        if levels is None:
            intensities = {"DRAM": intensities["DRAM"]} if "DRAM" in intensities else intensities
        marks.append(KernelMark(k.name, intensities, float(r.attainable)))
    save_figure(roofline_figure(roofline, marks, walls=walls, levels=levels), output)
