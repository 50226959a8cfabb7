"""The `perfcast` command line: thin wrappers that call the library and print tables or JSON."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich import box
from rich.console import Console
from rich.table import Table

from perfcast import __version__
from perfcast.devices.catalog import DeviceFileError, device_to_yaml, get_device, known_devices, save_device
from perfcast.devices.schema import Device, Figure, Precision
from perfcast.models.boathull import ClassVariables, HullPrediction
from perfcast.models.roofline import (
    HierarchicalBound,
    LocalityWall,
    Roofline,
    effective_roofs,
    hierarchical_roofline,
)
from perfcast.plots.files import SAVE_FORMATS, save_figure
from perfcast.species.classes import HaloTile
from perfcast.units import Dimension, UnitError, format_quantity, parse_quantity

app = typer.Typer(
    help="perfcast: how fast will this kernel run on that processor, and why.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
devices_app = typer.Typer(help="Device descriptions: the catalog, one device in detail, this machine.", no_args_is_help=True)
app.add_typer(devices_app, name="devices")

console = Console()
errors = Console(stderr=True)

HOST = "host"


def _fail(message: str) -> typer.Exit:
    """Print `message` as an error and return the exit to raise."""
    errors.print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(code=2)


def _check_chart_path(output: Path | None) -> None:
    """Raise ValueError before any work if `output` is not a chart format perfcast writes."""
    if output is not None and output.suffix.lower() not in SAVE_FORMATS:
        raise ValueError(f"cannot write {output.name!r}: use {', '.join(SAVE_FORMATS)}")


def _print_json(data: Any) -> None:
    """Print `data` as JSON on stdout, with no styling, for scripts."""
    typer.echo(json.dumps(data, indent=2, default=str))


def _resolve_device(name: str) -> Device:
    """Return the device named on the command line: a catalog name, a YAML path, or 'host' (detected now)."""
    if name == HOST:
        from perfcast.devices.detect import detect_cpu

        with console.status("detecting this machine (probing DRAM bandwidth)…"):
            return detect_cpu()
    try:
        return get_device(name)
    except (KeyError, DeviceFileError) as error:
        raise _fail(str(error).strip('"')) from None


def _version(value: bool) -> None:
    if value:
        typer.echo(f"perfcast {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """perfcast: how fast will this kernel run on that processor, and why."""


# --------------------------------------------------------------------------- devices


def _device_row(device: Device) -> dict[str, Any]:
    """Return the headline figures of `device` in base units (op/s, B/s, op/B)."""
    fp64 = device.peak_compute(Precision.FP64) if Precision.FP64 in device.peak else None
    fp32 = device.peak_compute(Precision.FP32) if Precision.FP32 in device.peak else None
    return {
        "name": device.name,
        "full_name": device.full_name,
        "kind": device.kind,
        "origin": device.provenance.source,
        "fp32_peak": fp32,
        "fp64_peak": fp64,
        "dram_bandwidth": device.dram_bandwidth,
        "ridge_fp32": fp32 / device.dram_bandwidth if fp32 else None,
    }


@devices_app.command("list")
def devices_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the catalog and measured profiles with their peaks, DRAM bandwidth and fp32 ridge point (op/B)."""
    try:
        rows = [_device_row(device) for device in known_devices().values()]
    except DeviceFileError as error:
        raise _fail(str(error)) from None
    if as_json:
        _print_json(rows)
        return
    table = Table(title="perfcast device catalog", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("name", no_wrap=True)
    table.add_column("device", min_width=14)
    table.add_column("kind\nfigures")
    for heading in ("fp32\nGFLOP/s", "fp64\nGFLOP/s", "DRAM\nGB/s", "ridge\nop/B"):
        table.add_column(heading, justify="right", min_width=7)
    for row in rows:
        table.add_row(
            row["name"], row["full_name"], f"{row['kind']}\n{row['origin']}",
            f"{row['fp32_peak'] / 1e9:.5g}" if row["fp32_peak"] else "—",
            f"{row['fp64_peak'] / 1e9:.5g}" if row["fp64_peak"] else "—",
            f"{row['dram_bandwidth'] / 1e9:.5g}",
            f"{row['ridge_fp32']:.3g}" if row["ridge_fp32"] else "—",
        )
    console.print(table)


def _print_device(device: Device) -> None:
    """Print `device` for a human: its structure, then every figure with its provenance."""
    console.print(f"[bold]{device.full_name}[/]  ({device.name})")
    structure = [
        ("kind", device.kind), ("vendor", device.vendor), ("architecture", device.architecture),
        ("year", device.year),
        ("compute units", f"{device.compute_units} {'cores' if device.kind == 'cpu' else 'SMs / CUs'}"),
        ("processing elements", device.processing_elements), ("threads", device.threads),
        ("SIMD width", f"{device.simd_width_bits} bit" if device.simd_width_bits else None),
        ("warp size", device.warp_size),
    ]
    for label, value in structure:
        if value is not None:
            console.print(f"  {label:<20} {value}", highlight=False)
    default = device.provenance
    console.print(f"  {'figures':<20} {default.source}: {default.describe()}",
                  highlight=False)
    table = Table(show_header=True, header_style="bold")
    for column in ("figure", "value", "source", "details"):
        table.add_column(column, overflow="fold")
    rows: list[tuple[str, Figure, Dimension]] = []
    for name in ("base", "boost"):
        clock = getattr(device.clock, name)
        if clock is not None:
            rows.append((f"clock {name}", clock, Dimension.FREQUENCY))
    for precision, kinds in device.peak.items():
        for kind, figure in kinds.items():
            rows.append((f"peak {precision.value} {kind.value}", figure, Dimension.COMPUTE))
    for level in device.memory:
        where = {"per_core": " per core", "per_unit": " per SM/CU", "device": ""}[level.scope]
        if level.size is not None:
            rows.append((f"{level.level} size{where}", level.size, Dimension.BYTES))
        if level.bandwidth is not None:
            rows.append((f"{level.level} bandwidth", level.bandwidth, Dimension.BANDWIDTH))
    for name, figure in device.bandwidth_ceilings.items():
        rows.append((f"bandwidth ({name})", figure, Dimension.BANDWIDTH))
    if device.host_link is not None:
        rows.append((f"host link ({device.host_link.name})", device.host_link.bandwidth, Dimension.BANDWIDTH))
    for label, figure, dimension in rows:
        same = figure.provenance == default
        table.add_row(label, format_quantity(figure.value, dimension), figure.provenance.source,
                      "(as above)" if same else figure.provenance.describe())
    console.print(table)
    if device.notes:
        console.print(f"  [dim]{device.notes}[/]")


@devices_app.command("show")
def devices_show(
    name: Annotated[str, typer.Argument(help="Catalog name, path of a device YAML file, or 'host'.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    as_yaml: Annotated[bool, typer.Option("--yaml", help="Print the device file (YAML).")] = False,
) -> None:
    """Show one device: every figure with its provenance (spec, measured or estimated)."""
    device = _resolve_device(name)
    if as_json:
        _print_json(device.model_dump(mode="json"))
    elif as_yaml:
        typer.echo(device_to_yaml(device), nl=False)
    else:
        _print_device(device)


@devices_app.command("detect")
def devices_detect(
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the description to this YAML file.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Detect this machine's CPU (model, cores, SIMD width, caches), estimate its peaks and probe its DRAM bandwidth."""
    device = _resolve_device(HOST)
    if as_json:
        _print_json(device.model_dump(mode="json"))
    else:
        _print_device(device)
    if output is not None:
        save_device(device, output)
        (errors if as_json else console).print(f"wrote {output}", highlight=False)


# --------------------------------------------------------------------------- roofline


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


def _parse_wall(text: str) -> LocalityWall:
    """Return the locality wall described by a --wall NAME:INTENSITY argument."""
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
    precision: Annotated[Precision, typer.Option("--precision", "-p", help="Arithmetic precision of the roof.")] = Precision.FP32,
    tensor: Annotated[bool, typer.Option("--tensor", help="Use the tensor/matrix-unit peak where the device has one.")] = False,
    lacking: Annotated[list[str] | None, typer.Option("--lacking", help="A ceiling the kernels have not broken through, e.g. 'no FMA'. Repeatable.")] = None,
    hierarchical: Annotated[bool, typer.Option("--hierarchical", help="Draw one bandwidth line per memory level.")] = False,
    wall: Annotated[list[str] | None, typer.Option("--wall", help="A locality wall NAME:INTENSITY (op/B). Repeatable.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the chart (.png, .svg or .pdf).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Roofline of a device at one precision, with kernels placed on it, their bound and predicted time."""
    from perfcast.devices.roofline_view import device_roofline

    device = _resolve_device(device_name)
    try:
        kernels = [_parse_kernel(text) for text in kernel or []]
        walls = [_parse_wall(text) for text in wall or []]
        roofline = device_roofline(device, precision, tensor=tensor)
        lacking = list(lacking or [])
        compute, dram = effective_roofs(roofline, lacking)
        bandwidths = {**device.level_bandwidths(), "DRAM": dram}
        results = [hierarchical_roofline(k.work, k.traffic, compute, bandwidths) for k in kernels]
        _check_chart_path(output)
    except (KeyError, ValueError) as error:
        raise _fail(str(error).strip('"')) from None

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
        _print_json({
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
        _print_roofline(roofline, rows, lacking)
    if output is not None:
        _write_chart(roofline, kernels, results, walls, device.level_bandwidths() if hierarchical else None, output)
        (errors if as_json else console).print(f"wrote {output}", highlight=False)


def _print_roofline(roofline: Roofline, rows: list[dict[str, Any]], lacking: list[str]) -> None:
    """Print the roof, its ceilings and the kernel table for a human."""
    console.print(f"[bold]{roofline.label}[/]")
    console.print(
        f"  peak {format_quantity(roofline.peak, Dimension.COMPUTE)}, DRAM {format_quantity(roofline.bandwidth, Dimension.BANDWIDTH)}, "
        f"ridge point {roofline.ridge:.3g} op/B",
        highlight=False,
    )
    for ceiling in roofline.compute_ceilings:
        console.print(f"  ceiling {ceiling.name}: {format_quantity(ceiling.value, Dimension.COMPUTE)}", highlight=False)
    for ceiling in roofline.bandwidth_ceilings:
        console.print(f"  ceiling {ceiling.name}: {format_quantity(ceiling.value, Dimension.BANDWIDTH)}", highlight=False)
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
            row["name"], format_quantity(row["work"], Dimension.WORK), intensity,
            format_quantity(row["attainable"], Dimension.COMPUTE),
            row["binding"] if row["bound"] == "memory" else "compute",
            _format_time(row["time"]),
        )
    console.print(table)


def _format_time(seconds: float) -> str:
    """Return a duration in s, ms, µs or ns."""
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= factor or unit == "ns":
            return f"{seconds / factor:.4g} {unit}"
    raise AssertionError("unreachable")


def _write_chart(
    roofline: Roofline,
    kernels: list[_KernelArgument],
    results: list[HierarchicalBound],
    walls: list[LocalityWall],
    levels: dict[str, float] | None,
    output: Path,
) -> None:
    """Draw the roofline chart with the kernels at their attainable performance and save it."""
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


# --------------------------------------------------------------------------- boat hull


def _split_list(values: list[str] | None) -> list[str]:
    """Return the items of repeatable, comma-separated options."""
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


def _parse_bind(values: list[str] | None) -> dict[str, int]:
    """Return symbol values from --bind A=2048 options."""
    bound: dict[str, int] = {}
    for item in _split_list(values):
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip().isdigit() or int(value) < 1:
            raise ValueError(f"--bind {item!r}: expected SYMBOL=POSITIVE_INTEGER, e.g. A=2048")
        bound[name.strip()] = int(value)
    return bound


def _parse_tile(text: str) -> HaloTile:
    """Return the work-group tile given as TXxTY."""
    tx, sep, ty = text.lower().partition("x")
    if not sep or not tx.isdigit() or not ty.isdigit():
        raise ValueError(f"--tile {text!r}: expected TXxTY, e.g. 16x16")
    return HaloTile(int(tx), int(ty))


def _class_line(variables: ClassVariables) -> str:
    """Return the class variables in one line."""
    values = "  ".join(f"{name}={getattr(variables, name):,.6g}" for name in ("w", "m", "o", "d", "c", "u"))
    return f"{values}  GPU floors: {', '.join(variables.floors) or 'none'}"


def _hull_rows(prediction: HullPrediction) -> list[dict[str, Any]]:
    """Return one JSON-ready row per complexity f: the range in s, its binding terms, every term."""
    return [
        {
            "f": float(f),
            "lower": float(prediction.lower[i]),
            "upper": float(prediction.upper[i]),
            "lower_term": str(prediction.lower_term[i]),
            "upper_term": str(prediction.upper_term[i]),
            "terms": {name: float(values[i]) for name, values in prediction.terms.items()},
        }
        for i, f in enumerate(prediction.f)
    ]


@app.command("hull")
def hull_command(
    species: Annotated[str, typer.Argument(help="Algorithmic species, e.g. '1024x1024|neighb(7x7) -> 1024x1024|element'.")],
    device_names: Annotated[list[str], typer.Option("--device", "-d", help="Catalog name, device YAML file or 'host'. Repeatable.")],
    f_values: Annotated[str, typer.Option("--f", help="Operator complexities (ops per application), comma-separated.")] = "1,4,16,64,256,1024",
    assume: Annotated[list[str] | None, typer.Option("--assume", help="Rule out floors: fma, coalesced (GPU); vectorised, multithreaded (CPU).")] = None,
    bind: Annotated[list[str] | None, typer.Option("--bind", help="Bind a size symbol, e.g. A=2048. Repeatable or comma-separated.")] = None,
    element_size: Annotated[float, typer.Option("--element-size", "-s", help="Bytes per element.")] = 4,
    precision: Annotated[Precision, typer.Option("--precision", "-p", help="Precision of the compute peak.")] = Precision.FP32,
    tile: Annotated[str, typer.Option("--tile", help="Work-group tile (outputs) staged for neighbourhoods, TXxTY.")] = "16x16",
    transfers: Annotated[bool, typer.Option("--transfers", help="Add host<->device copies (t0) to both ends (GPUs).")] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the boat hull chart (.png, .svg or .pdf).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Boat hull: predicted execution time range of a primitive from its algorithmic species."""
    from perfcast.devices.hull_view import hull_inputs
    from perfcast.species.application import predict_primitive

    devices = [_resolve_device(name) for name in device_names]
    try:
        f = [parse_quantity(item, Dimension.WORK) for item in _split_list([f_values])]
        if not f:
            raise ValueError("--f: give at least one complexity")
        options = dict(bind=_parse_bind(bind), element_bytes=element_size, assume=_split_list(assume),
                       tile=_parse_tile(tile))
        _check_chart_path(output)
        results = []
        for device in devices:
            inputs = hull_inputs(device, precision, element_size)
            wants_bus = transfers and device.kind == "gpu"
            results.append((inputs, predict_primitive(species, inputs, f, transfers=wants_bus, **options)))
    except (KeyError, ValueError) as error:
        raise _fail(str(error).strip('"')) from None
    bound, variables = results[0][1].species, results[0][1].variables
    if as_json:
        _print_json({
            "species": species,
            "bound_species": str(bound),
            "class": {"origin": variables.origin, "name": variables.name, "floors": list(variables.floors),
                      **{k: getattr(variables, k) for k in ("w", "m", "o", "d", "c", "u")}},
            "element_size": element_size,
            "devices": [
                {"name": inputs.device.name, "kind": inputs.device.kind, "inputs": inputs.sources,
                 "assume": options["assume"], "floors": list(r.prediction.floors),
                 "ruled_out": list(r.prediction.ruled_out),
                 "ignored_assumptions": list(r.prediction.ignored_assumptions),
                 "transfer": r.prediction.transfer, "rows": _hull_rows(r.prediction)}
                for inputs, r in results
            ],
        })
    else:
        console.print(f"[bold]{bound}[/]", highlight=False)
        console.print(f"  class: {variables.name} ({variables.origin})", highlight=False)
        console.print(f"  {_class_line(variables)}", highlight=False)
        for inputs, r in results:
            _print_hull(inputs, r.prediction)
    if output is not None:
        from perfcast.plots.boathull import HullPanel, hull_figure

        dense = np.geomspace(1, 1e4, 241)
        panels = []
        for inputs, _ in results:
            wants_bus = transfers and inputs.device.kind == "gpu"
            curve = predict_primitive(species, inputs, dense, transfers=wants_bus, **options).prediction
            panels.append(HullPanel(inputs.device.full_name, curve, show_transfer=wants_bus))
        save_figure(hull_figure(panels, suptitle=f"{bound}  —  {variables.name} ({variables.origin})"), output)
        (errors if as_json else console).print(f"wrote {output}", highlight=False)


def _print_hull(inputs: Any, prediction: HullPrediction) -> None:
    """Print one device's inputs and predicted ranges for a human."""
    device = inputs.device
    console.print(f"\n[bold]{device.full_name}[/] ({device.kind})", highlight=False)
    for name, source in inputs.sources.items():
        console.print(f"  {name:<14}{source}", highlight=False)
    if prediction.ruled_out:
        console.print(f"  ruled out by assumptions: {', '.join(prediction.ruled_out)}", highlight=False)
    if prediction.ignored_assumptions:
        console.print(f"  assumptions with no floor on a {device.kind}: {', '.join(prediction.ignored_assumptions)}",
                      highlight=False)
    if prediction.transfer:
        console.print(f"  transfers t0 = {_format_time(prediction.transfer)} added to both ends", highlight=False)
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("f", justify="right")
    table.add_column("lower", justify="right")
    table.add_column("upper", justify="right")
    table.add_column("bound by")
    shown = [name for name in prediction.terms if name in ("c0", "m0") or name in prediction.floors]
    for name in shown:
        table.add_column(name, justify="right")
    for i, f in enumerate(prediction.f):
        table.add_row(
            f"{f:g}", _format_time(prediction.lower[i]), _format_time(prediction.upper[i]),
            f"{prediction.lower_term[i]} / {prediction.upper_term[i]}",
            *(_format_time(prediction.terms[name][i]) for name in shown),
        )
    console.print(table)


@app.command("app")
def app_command(
    path: Annotated[Path, typer.Argument(help="Application YAML file (see examples/fast-focus.yaml).")],
    device_names: Annotated[list[str], typer.Option("--device", "-d", help="Catalog name, device YAML file or 'host'. Repeatable.")],
    tile: Annotated[str, typer.Option("--tile", help="Work-group tile (outputs) staged for neighbourhoods, TXxTY.")] = "16x16",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report chart (.png, .svg or .pdf).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Boat hull prediction of a whole application, per primitive and in total, on one or more devices."""
    from perfcast.devices.hull_view import hull_inputs
    from perfcast.species.application import ApplicationFileError, load_application, predict_app

    devices = [_resolve_device(name) for name in device_names]
    try:
        application = load_application(path)
        _check_chart_path(output)
        halo = _parse_tile(tile)
        results = {}
        for device in devices:
            inputs = hull_inputs(device, application.precision, application.element_size)
            results[device.name] = (inputs, *predict_app(application, inputs, halo))
    except (ApplicationFileError, KeyError, ValueError) as error:
        raise _fail(str(error).strip('"')) from None
    if as_json:
        _print_json({
            "application": application.name,
            "devices": {
                name: {
                    "inputs": inputs.sources,
                    "primitives": [
                        {"name": p.name, "species": str(step.species), "class": step.variables.name,
                         "origin": step.variables.origin, "f": p.f,
                         **{k: v for k, v in _hull_rows(step.prediction)[0].items() if k != "f"}}
                        for p, step in zip(application.primitives, steps)
                    ],
                    "transfers": [{"name": n, "time": t} for n, t in total.transfers],
                    "total": {"lower": total.lower, "upper": total.upper},
                }
                for name, (inputs, total, steps) in results.items()
            },
        })
    else:
        _print_application(application, results)
    if output is not None:
        from perfcast.plots.boathull import application_figure

        figure = application_figure({name: total for name, (_, total, _) in results.items()},
                                    title=f"{application.name} — boat hull prediction")
        save_figure(figure, output)
        (errors if as_json else console).print(f"wrote {output}", highlight=False)


def _print_application(application: Any, results: dict[str, Any]) -> None:
    """Print the per-primitive ranges, transfers and totals of every device side by side."""
    console.print(f"[bold]{application.name}[/]", highlight=False)
    if application.description:
        console.print(f"  {application.description}", highlight=False)
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("step")
    table.add_column("class")
    for name in results:
        table.add_column(f"{name}\nlower – upper (bound by)", justify="right")
    first_steps = next(iter(results.values()))[2]
    for index, primitive in enumerate(application.primitives):
        step = first_steps[index]
        cells = []
        for _, _, steps in results.values():
            p = steps[index].prediction
            cells.append(f"{_format_time(p.lower[0])} – {_format_time(p.upper[0])} ({p.lower_term[0]}/{p.upper_term[0]})")
        table.add_row(primitive.name, f"{step.variables.name} ({step.variables.origin[:3]}.)", *cells)
    for index, transfer in enumerate(application.transfers):
        cells = []
        for inputs, total, _ in results.values():
            seconds = total.transfers[index][1]
            cells.append(_format_time(seconds) if inputs.device.kind == "gpu" else "— (host memory)")
        table.add_row(transfer.name, "transfer", *cells)
    table.add_section()
    table.add_row("[bold]total[/]", "", *(f"[bold]{_format_time(t.lower)} – {_format_time(t.upper)}[/]"
                                          for _, t, _ in results.values()))
    console.print(table)
    for name, (inputs, _, _) in results.items():
        console.print(f"[dim]{name} inputs:[/]", highlight=False)
        for label, source in inputs.sources.items():
            console.print(f"[dim]  {label:<14}{source}[/]", highlight=False)


# --------------------------------------------------------------------------- bench


def _write_sweep_csv(path: Path, suite: Any) -> None:
    """Write every raw point of a suite to CSV: what, x (working set B or intensity op/B), value, spread."""
    import csv

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["measurement", "x", "x_unit", "value", "unit", "spread", "repetitions"])
        for p in suite.sweep:
            writer.writerow([f"sweep {p.kernel}", p.working_set, "B", p.bandwidth.value, "B/s", p.bandwidth.spread,
                             p.bandwidth.repetitions])
        for kernel, sample in suite.dram.items():
            writer.writerow([f"dram {kernel}", "", "", sample.value, "B/s", sample.spread, sample.repetitions])
        for level, sample in suite.levels.items():
            writer.writerow([f"level {level}", "", "", sample.value, "B/s", sample.spread, sample.repetitions])
        for label, sample in suite.bandwidth_ceilings.items():
            writer.writerow([f"bandwidth {label}", "", "", sample.value, "B/s", sample.spread, sample.repetitions])
        for (precision, kind), sample in suite.compute.items():
            writer.writerow([f"peak {precision} {kind}", "", "", sample.value, "op/s", sample.spread, sample.repetitions])
        for label, sample in suite.compute_ceilings.items():
            writer.writerow([f"compute {label}", "", "", sample.value, "op/s", sample.spread, sample.repetitions])
        if suite.host_link is not None:
            s = suite.host_link
            writer.writerow(["host link", "", "", s.value, "B/s", s.spread, s.repetitions])
        for p in suite.mix:
            writer.writerow(["intensity sweep", p.intensity, "op/B", p.performance.value, "op/s",
                             p.performance.spread, p.performance.repetitions])


def _compare_rows(
    before: Device | None, after: Device, tool: str
) -> list[tuple[str, float, float | None, Dimension]]:
    """Return (figure, measured, previous or None, dimension) for every figure of `after` that `tool` measured."""
    def ours(figure: Figure | None) -> bool:
        return figure is not None and (figure.provenance.tool or "").startswith(tool)

    def old(getter: Any) -> float | None:
        try:
            figure = getter(before) if before is not None else None
        except KeyError:
            return None
        return figure.value if figure is not None else None

    rows: list[tuple[str, float, float | None, Dimension]] = []
    for precision, kinds in after.peak.items():
        for kind, figure in kinds.items():
            if ours(figure):
                rows.append((f"peak {precision.value} {kind.value}", figure.value,
                             old(lambda d, p=precision, k=kind: d.peak.get(p, {}).get(k)), Dimension.COMPUTE))
    for level in after.memory:
        if ours(level.bandwidth):
            assert level.bandwidth is not None
            rows.append((f"{level.level} bandwidth", level.bandwidth.value,
                         old(lambda d, n=level.level: d.memory_level(n).bandwidth), Dimension.BANDWIDTH))
    for name, figure in after.bandwidth_ceilings.items():
        if ours(figure):
            rows.append((f"bandwidth: {name}", figure.value, old(lambda d, n=name: d.bandwidth_ceilings.get(n)),
                         Dimension.BANDWIDTH))
    for name, figure in after.compute_ceilings.items():
        if ours(figure):
            rows.append((f"fp32 FMA: {name}", figure.value, old(lambda d, n=name: d.compute_ceilings.get(n)),
                         Dimension.COMPUTE))
    if after.host_link is not None and ours(after.host_link.bandwidth):
        rows.append(("host link", after.host_link.bandwidth.value,
                     old(lambda d: d.host_link.bandwidth if d.host_link else None), Dimension.BANDWIDTH))
    return rows


@app.command("bench")
def bench_command(
    backend_name: Annotated[str, typer.Option("--backend", "-b", help="cpu (native C), opencl (pyopencl) or cuda (CuPy).")] = "cpu",
    device_id: Annotated[str | None, typer.Option("--device", "-d", help="opencl: PLATFORM:DEVICE index or a name part; cuda: GPU index.")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Fewer sizes and repetitions (seconds, for tests and demos).")] = False,
    repetitions: Annotated[int, typer.Option("--repetitions", "-r", min=1, help="Timed repetitions per measurement.")] = 5,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Also write the measured profile (YAML) here.")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Draw the measured roofline (.png, .svg or .pdf).")] = None,
    csv_path: Annotated[Path | None, typer.Option("--csv", help="Write every raw measurement to CSV.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Measure a device's real ceilings with micro-benchmarks and write its measured profile."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from perfcast.bench.backends import BackendUnavailable, open_backend
    from perfcast.bench.suite import measured_device
    from perfcast.devices.catalog import PROFILES_DIR

    try:
        _check_chart_path(plot)
        with console.status(f"preparing the {backend_name} backend…"):
            backend, base = open_backend(backend_name, device_id, repetitions)
    except (BackendUnavailable, ValueError) as error:
        raise _fail(str(error)) from None
    with Progress(TextColumn("{task.description:<36}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                  TimeElapsedColumn(), console=errors, transient=True) as bar:
        task = bar.add_task("starting", total=1.0)
        suite = backend.run(quick, lambda label, fraction: bar.update(task, description=label, completed=fraction))
    try:
        profile = measured_device(base, suite)
    except ValueError as error:
        raise _fail(f"the measurements do not make a valid profile: {error}") from None
    saved = save_device(profile, PROFILES_DIR / f"{profile.name}.yaml")
    if output is not None:
        save_device(profile, output)
    if csv_path is not None:
        _write_sweep_csv(csv_path, suite)
    before = base if isinstance(base, Device) else None
    if before is None and "peak" in base:
        before = Device.from_mapping(base)
    rows = _compare_rows(before, profile, suite.tool)
    if as_json:
        _print_json({
            "profile": profile.model_dump(mode="json"),
            "saved": str(saved),
            "compared": [{"figure": f, "measured": m, "before": b} for f, m, b, _ in rows],
            "intensity_sweep": [{"intensity": p.intensity, "performance": p.performance.value} for p in suite.mix],
        })
    else:
        table = Table(box=box.SIMPLE_HEAD, title=f"{profile.full_name} — {suite.tool}", title_justify="left")
        for column in ("figure", "measured", "before", "measured / before"):
            table.add_column(column, justify="left" if column == "figure" else "right")
        for figure, measured, before, dimension in rows:
            table.add_row(figure, format_quantity(measured, dimension),
                          format_quantity(before, dimension) if before else "—",
                          f"{measured / before:.2f}" if before else "—")
        console.print(table)
        if before is not None:
            console.print(f"  'before' is the description the profile starts from ({before.provenance.source}: "
                          f"{before.provenance.describe()})", highlight=False)
    for path in (saved, output, csv_path):
        if path is not None:
            (errors if as_json else console).print(f"wrote {path}", highlight=False)
    if plot is not None:
        from perfcast.devices.roofline_view import device_roofline
        from perfcast.plots.roofline import roofline_figure

        roof = device_roofline(profile, "fp32")
        sweep = [(p.intensity, p.performance.value) for p in suite.mix]
        figure = roofline_figure(roof, levels=profile.level_bandwidths(), sweep=sweep,
                                 title=f"Measured roofline — {profile.full_name} (fp32)")
        save_figure(figure, plot)
        (errors if as_json else console).print(f"wrote {plot}", highlight=False)


# --------------------------------------------------------------------------- validation

validate_app = typer.Typer(help="Measured validations of the models on this machine.", no_args_is_help=True)
app.add_typer(validate_app, name="validate")


@validate_app.command("boathull")
def validate_boathull_command(
    device_name: Annotated[str, typer.Option("--device", "-d", help="Description of this CPU: a YAML file, or 'host' to detect it now.")] = HOST,
    quick: Annotated[bool, typer.Option("--quick", help="Small arrays and fewer complexities (seconds, for tests).")] = False,
    repetitions: Annotated[int, typer.Option("--repetitions", "-r", min=1, help="Timed runs per point.")] = 10,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the measured-vs-predicted chart.")] = None,
    markdown: Annotated[Path | None, typer.Option("--markdown", help="Write the report (Markdown) to this file.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Time synthetic primitives (elementwise, reduction, 5x5 neighbourhood) and compare with the boat hull prediction."""
    import shlex
    import sys

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from perfcast.bench.boathull_validation import (
        primitives_for,
        summary,
        validate_boathull,
        validation_markdown,
    )
    from perfcast.devices.hull_view import hull_inputs
    from perfcast.kernels.native import NativeBuildError

    try:
        _check_chart_path(output)
        device = _resolve_device(device_name)
        inputs = hull_inputs(device, Precision.FP32, 4)
        primitives = primitives_for(quick)
    except (ValueError, KeyError, NativeBuildError) as error:
        raise _fail(str(error)) from None

    def complexities(primitive: Any) -> Any:
        return primitive.complexities[::2] if quick else primitive.complexities

    with Progress(TextColumn("timing rounds"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=errors, transient=True) as bar:
        task = bar.add_task("timing", total=repetitions)
        try:
            run = validate_boathull(inputs, primitives, repetitions=repetitions, complexities=complexities,
                                    progress=lambda done: bar.update(task, completed=done))
        except ValueError as error:
            raise _fail(str(error)) from None
    rows = summary(run.points)
    if as_json:
        _print_json({
            "device": run.device, "compiler": run.compiler, "flags": run.flags, "repetitions": run.repetitions,
            "date": run.date, "inputs": inputs.sources,
            "points": [{**p.__dict__, "error_percent": p.error, "in_range": p.in_range} for p in run.points],
            "summary": rows,
        })
    else:
        table = Table(box=box.SIMPLE_HEAD, title=f"boat hull validation on {run.device}", title_justify="left")
        for column in ("primitive", "f", "measured", "spread", "predicted", "bound", "error", "in range"):
            table.add_column(column, justify="left" if column in ("primitive", "bound") else "right")
        for p in run.points:
            table.add_row(p.primitive, str(p.f), _format_time(p.measured), f"{p.spread:.0%}",
                          _format_time(p.predicted), p.binding, f"{p.error:.1f} %", "yes" if p.in_range else "no")
        console.print(table)
        for name, row in rows.items():
            console.print(f"  {name:<14} median error {row['median_error']:5.1f} %, max {row['max_error']:5.1f} %, "
                          f"inside the range {row['in_range']:.0%}", highlight=False)
    if output is not None:
        from perfcast.plots.boathull import HullPanel, MeasuredPoints, hull_figure
        from perfcast.species.application import predict_primitive

        dense = np.geomspace(1, 1e4, 161)
        panels = []
        for primitive in primitives:
            mine = [p for p in run.points if p.primitive == primitive.name]
            curve = predict_primitive(primitive.species, inputs, dense).prediction
            measured = MeasuredPoints([p.f for p in mine], [p.measured for p in mine],
                                      f"measured (median of {repetitions})")
            panels.append(HullPanel(f"{primitive.name}: {mine[0].class_name}\n{primitive.species}", curve, measured))
        save_figure(hull_figure(panels, suptitle=f"Boat hull vs measured — {run.device}"), output)
        (errors if as_json else console).print(f"wrote {output}", highlight=False)
    if markdown is not None:
        command = "perfcast " + " ".join(shlex.quote(arg) for arg in sys.argv[1:]) if sys.argv[1:] else "perfcast validate boathull"
        chart = None
        if output is not None:
            chart = os.path.relpath(output.resolve(), markdown.resolve().parent)
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(validation_markdown(run, inputs, command, chart), encoding="utf-8")
        (errors if as_json else console).print(f"wrote {markdown}", highlight=False)


@validate_app.command("bench")
def validate_bench_command(
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Side-by-side rounds (each runs both, alternating order).")] = 7,
    quick: Annotated[bool, typer.Option("--quick", help="Small arrays and 2 rounds (seconds, for tests).")] = False,
    markdown: Annotated[Path | None, typer.Option("--markdown", help="Write the report (Markdown) to this file.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Run perfcast's CPU triad and FMA peak beside a reference STREAM triad and peak-FMA loop in C."""
    import datetime as dt
    import platform
    import shlex
    import sys

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from perfcast.bench.reference import REFERENCE_FLAGS, compare_with_references
    from perfcast.devices.detect import detect_cpu
    from perfcast.kernels.native import NativeBuildError

    try:
        with console.status("detecting this machine…"):
            host = detect_cpu(probe_bytes=64 * 2**20, repetitions=3)
    except (ValueError, NativeBuildError) as error:
        raise _fail(str(error)) from None
    largest = max((lvl.size.value for lvl in host.memory if lvl.size is not None and lvl.level != "DRAM"),
                  default=32 * 2**20)
    elements = int((2 if quick else 8) * largest // 8)
    rounds = 2 if quick else rounds
    with Progress(TextColumn("side-by-side rounds"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=errors, transient=True) as bar:
        task = bar.add_task("rounds", total=rounds)
        try:
            results = compare_with_references(host.threads, elements, rounds,
                                              progress=lambda done: bar.update(task, completed=done))
        except (NativeBuildError, RuntimeError) as error:
            raise _fail(str(error)) from None
    if as_json:
        _print_json({"device": host.full_name, "threads": host.threads, "elements_per_array": elements,
                     "comparisons": [{"figure": c.figure, "unit": c.unit, "perfcast": c.perfcast,
                                      "reference": c.reference, "ratio": c.ratio} for c in results]})
    else:
        table = Table(box=box.SIMPLE_HEAD, title=f"perfcast against the references on {host.full_name}",
                      title_justify="left")
        for column in ("figure", "perfcast (median)", "reference (median)", "ratio"):
            table.add_column(column, justify="left" if column == "figure" else "right")
        for c in results:
            dimension = Dimension.BANDWIDTH if c.unit == "B/s" else Dimension.COMPUTE
            table.add_row(c.figure, format_quantity(float(np.median(c.perfcast)), dimension),
                          format_quantity(float(np.median(c.reference)), dimension), f"{c.ratio:.3f}")
        console.print(table)
    if markdown is not None:
        command = "perfcast " + " ".join(shlex.quote(arg) for arg in sys.argv[1:])
        lines = [
            "# perfcast bench against established CPU references",
            "",
            "perfcast's native CPU backend (`src/perfcast/bench/kernels/bench.c`) and two references written in",
            "this repository, compiled exactly as `gcc " + " ".join(REFERENCE_FLAGS) + "`:",
            "a STREAM triad (`src/perfcast/bench/reference/stream.c`) and a peak fp32 FMA loop with sixteen",
            "independent accumulators of the widest vector type (`src/perfcast/bench/reference/peakflops.c`).",
            "Both run on every core, side by side in the same command: each round runs perfcast and the reference",
            "once each, alternating which goes first. Each side's figure is the median over rounds of its",
            "per-round median; the ratio is perfcast / reference.",
            "",
            "Reproduce with:",
            "",
            "```sh",
            command if sys.argv[1:] else "perfcast validate bench --markdown docs/validation/bench-cpu.md",
            "```",
            "",
            f"- date: {dt.date.today().isoformat()}; machine: {platform.machine()}, {platform.system()} {platform.release()}",
            f"- device: {host.full_name}, {host.threads} threads",
            f"- triad arrays: {elements:,} doubles each ({3 * elements * 8 / 2**20:,.0f} MiB in all, "
            f"{3 * elements * 8 / largest:.0f}x the largest cache); {rounds} rounds",
            "",
            "| figure | perfcast (median) | reference (median) | perfcast / reference | per round: perfcast | per round: reference |",
            "|---|---:|---:|---:|---|---|",
        ]
        for c in results:
            dimension = Dimension.BANDWIDTH if c.unit == "B/s" else Dimension.COMPUTE
            scale = 1e9
            lines.append(
                f"| {c.figure} | {format_quantity(float(np.median(c.perfcast)), dimension)} | "
                f"{format_quantity(float(np.median(c.reference)), dimension)} | **{c.ratio:.3f}** | "
                f"{', '.join(f'{v / scale:.1f}' for v in c.perfcast)} | {', '.join(f'{v / scale:.1f}' for v in c.reference)} |"
            )
        lines += ["", "Per-round values are in GB/s (triad) and GFLOP/s (peak). The target is a ratio of at least 0.95."]
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
        (errors if as_json else console).print(f"wrote {markdown}", highlight=False)


# --------------------------------------------------------------------------- tuning

tune_app = typer.Typer(help="Auto-tuning of OpenCL kernels (the Monte Carlo VaR case study).", no_args_is_help=True)
app.add_typer(tune_app, name="tune")


def _tune_once(tunable: Any, strategy: str, store: Any, repetitions: int, budget: int, seed: int) -> tuple[Any, int, bool]:
    """Run one strategy with a progress line; return (result, run id, resumed)."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from perfcast.tune.strategies import Session, exhaustive, hierarchical, random_search

    run_id, resumed = store.open_run(tunable.name, strategy, tunable.environment(), tunable.target(), repetitions)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=errors,
                  transient=True) as bar:
        task = bar.add_task(f"{strategy}: starting", total=None)
        session = Session(tunable, store, run_id, repetitions,
                          progress=lambda label: bar.update(task, description=f"{strategy} #{session.measured + 1}: {label}"))
        if strategy == "hierarchical":
            result = hierarchical(session)
        elif strategy == "exhaustive":
            result = exhaustive(session)
        else:
            result = random_search(session, budget, seed)
    store.finish(run_id, {"best": result.best, "metric": result.measurement.metric, "mean_s": result.measurement.mean,
                          "std_s": result.measurement.std, "evaluations": result.evaluations, "steps": result.steps})
    return result, run_id, resumed


@tune_app.command("varmc")
def tune_varmc_command(
    device_id: Annotated[str | None, typer.Option("--device", "-d", help="OpenCL device: PLATFORM:DEVICE index or a name part.")] = None,
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="hierarchical, exhaustive or random.")] = "hierarchical",
    budget: Annotated[int, typer.Option("--budget", min=1, help="random: configurations to measure.")] = 20,
    nsim: Annotated[int, typer.Option("--nsim", min=1, help="Simulations of the target problem.")] = 2**14,
    npos: Annotated[int, typer.Option("--npos", min=1, help="Positions of the reference portfolio.")] = 2**14,
    repetitions: Annotated[int, typer.Option("--repetitions", "-r", min=1, help="Timed runs per configuration.")] = 10,
    store_path: Annotated[Path, typer.Option("--store", help="Results database (SQLite).")] = Path(".perfcast/results.sqlite"),
    quick: Annotated[bool, typer.Option("--quick", help="A small parameter space (seconds, for tests).")] = False,
    compare: Annotated[bool, typer.Option("--compare-exhaustive", help="Also run (or reuse) exhaustive search and report the fraction of its optimum.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Random strategy seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Tune the Monte Carlo VaR kernel on an OpenCL device; an interrupted run resumes where it stopped."""
    from perfcast.bench.backends import BackendUnavailable
    from perfcast.bench.opencl import OpenClBackend
    from perfcast.kernels.varmc import default_market, reference_portfolio
    from perfcast.tune.store import ResultsStore
    from perfcast.tune.strategies import STRATEGIES
    from perfcast.tune.varmc import VarmcTunable, default_space

    if strategy not in STRATEGIES:
        raise _fail(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    try:
        device = OpenClBackend.open(device_id, 1).device
        tunable = VarmcTunable(reference_portfolio(npos), default_market(), nsim, default_space(quick), device)
    except (BackendUnavailable, ValueError) as error:
        raise _fail(str(error)) from None
    store = ResultsStore(store_path)
    try:
        result, run_id, resumed = _tune_once(tunable, strategy, store, repetitions, budget, seed)
        optimum = None
        if compare and strategy != "exhaustive":
            optimum, _, _ = _tune_once(tunable, "exhaustive", store, repetitions, budget, seed)
    except RuntimeError as error:
        raise _fail(str(error)) from None
    finally:
        store.close()
    m = result.measurement
    summary = {
        "run": run_id, "resumed": resumed, "strategy": strategy, "device": device.name.strip(),
        "best": result.best, "mpps": m.metric, "mean_s": m.mean, "std_s": m.std, "evaluations": result.evaluations,
        "space_size": tunable.space.size(), "steps": result.steps, "store": str(store_path),
    }
    if optimum is not None:
        summary |= {"exhaustive_best": optimum.best, "exhaustive_mpps": optimum.measurement.metric,
                    "exhaustive_evaluations": optimum.evaluations,
                    "fraction_of_optimum": m.metric / optimum.measurement.metric}
    if as_json:
        _print_json(summary)
        return
    console.print(f"[bold]{strategy}[/] tuning of varmc on {summary['device']} (run {run_id}"
                  f"{', resumed' if resumed else ''}; nsim={nsim}, npos={npos})", highlight=False)
    console.print(f"  best: {result.best}", highlight=False)
    console.print(f"  {m.metric:,.0f} mpps (kernel {m.mean * 1e3:.3f} ± {m.std * 1e3:.3f} ms over {repetitions} runs)",
                  highlight=False)
    console.print(f"  evaluations: {result.evaluations} measurements (configuration x problem size); "
                  f"the space has {summary['space_size']} configurations", highlight=False)
    if optimum is not None:
        console.print(f"  exhaustive optimum: {optimum.best}, {optimum.measurement.metric:,.0f} mpps after "
                      f"{optimum.evaluations} evaluations; this run reached "
                      f"{summary['fraction_of_optimum']:.1%} of it", highlight=False)
    console.print(f"  results in {store_path}; draw the step models with: perfcast tune report {run_id}", highlight=False)


@tune_app.command("report")
def tune_report_command(
    run_id: Annotated[int, typer.Argument(help="Tuning run id (printed by perfcast tune varmc).")],
    store_path: Annotated[Path, typer.Option("--store", help="Results database (SQLite).")] = Path(".perfcast/results.sqlite"),
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Draw measured vs model per step (.png, .svg, .pdf).")] = None,
    csv_path: Annotated[Path | None, typer.Option("--csv", help="Export the run's measurements to CSV.")] = None,
    parquet_path: Annotated[Path | None, typer.Option("--parquet", help="Export to Parquet (needs pandas + pyarrow).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Fit the partial models of each step of a hierarchical run, print the constants and draw the step plots."""
    from perfcast.tune.report import fit_varmc_run
    from perfcast.tune.store import ResultsStore

    if not store_path.is_file():
        raise _fail(f"no results database at {store_path}")
    store = ResultsStore(store_path)
    try:
        _check_chart_path(output)
        info = store.run_info(run_id)
        measurements = store.measurements(run_id)
        if csv_path is not None:
            store.export_csv(run_id, csv_path)
    except (KeyError, ValueError) as error:
        raise _fail(str(error).strip('"')) from None
    finally:
        store.close()
    if parquet_path is not None:
        try:
            import pandas as pd
        except ImportError:
            raise _fail("--parquet needs pandas and pyarrow (pip install pandas pyarrow); --csv needs nothing") from None
        rows = [{"step": m.step, **m.config, **m.size, "mean_s": m.mean, "std_s": m.std, "metric": m.metric}
                for m in measurements]
        pd.DataFrame(rows).to_parquet(parquet_path)
    fits = fit_varmc_run(measurements) if info["strategy"] == "hierarchical" else []
    if as_json:
        _print_json({"run": info, "measurements": len(measurements),
                     "models": [{"name": f.name, "formula": f.formula, "constants": f.constants, "errors": f.errors,
                                 "rms_relative_error": f.rms_relative_error, "points": int(f.x.size)} for f in fits]})
    else:
        console.print(f"[bold]run {run_id}[/]: {info['strategy']} on {info['environment']['device']}, "
                      f"{len(measurements)} measurements, started {info['started']}"
                      f"{'' if info['finished'] else ' (unfinished)'}", highlight=False)
        if info["result"]:
            console.print(f"  best {info['result']['best']}: {info['result']['metric']:,.0f} mpps", highlight=False)
        for fit in fits:
            constants = ", ".join(f"{k} = {v:.4g} ± {fit.errors.get(k, 0):.2g}" for k, v in fit.constants.items())
            console.print(f"  {fit.name}: {fit.formula}\n      {constants}; rms error {fit.rms_relative_error:.1%} "
                          f"over {fit.x.size} points", highlight=False)
        if not fits:
            console.print("  (partial models are fitted to the steps of hierarchical runs)")
    for path in (csv_path, parquet_path):
        if path is not None:
            (errors if as_json else console).print(f"wrote {path}", highlight=False)
    if output is not None and fits:
        from perfcast.plots.tuning import partial_models_figure

        save_figure(partial_models_figure(fits, f"Hierarchical tuning run {run_id}: measured vs partial models"), output)
        (errors if as_json else console).print(f"wrote {output}", highlight=False)


def main() -> None:
    """Run the perfcast command line."""
    app()


if __name__ == "__main__":
    main()
