"""`perfcast devices`: the catalog and measured profiles, one device in detail, this machine."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from perfcast.cli.common import (
    HOST,
    CsvOutput,
    app,
    check_csv,
    console,
    errors,
    fail,
    print_json,
    print_table,
    printable,
    resolve_device,
)
from perfcast.output_files import check_writable
from perfcast.units import Dimension, Precision, format_quantity

if TYPE_CHECKING:  # the schema (pydantic) and the catalog load when a command runs, not for --help
    from perfcast.devices.schema import Device, Figure

devices_app = typer.Typer(help="Device descriptions: the catalog, one device in detail, this machine.", no_args_is_help=True)
app.add_typer(devices_app, name="devices")


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
    csv_to: CsvOutput = None,
) -> None:
    """List the catalog and measured profiles with their peaks, DRAM bandwidth and fp32 ridge point (op/B)."""
    from perfcast.devices.catalog import DeviceFileError, known_devices

    check_csv(csv_to)

    try:
        rows = [_device_row(device) for device in known_devices().values()]
    except DeviceFileError as error:
        raise fail(str(error)) from None
    if as_json:
        print_json(rows)
        return
    table = Table(title="perfcast device catalog", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("name", no_wrap=True)
    table.add_column("device", min_width=14)
    table.add_column("kind\nfigures")
    for heading in ("fp32\nGFLOP/s", "fp64\nGFLOP/s", "DRAM\nGB/s", "ridge\nop/B"):
        table.add_column(heading, justify="right", min_width=7)
    for row in rows:
        table.add_row(
            printable(row["name"]), printable(row["full_name"]), f"{row['kind']}\n{row['origin']}",
            f"{row['fp32_peak'] / 1e9:.5g}" if row["fp32_peak"] else "—",
            f"{row['fp64_peak'] / 1e9:.5g}" if row["fp64_peak"] else "—",
            f"{row['dram_bandwidth'] / 1e9:.5g}",
            f"{row['ridge_fp32']:.3g}" if row["ridge_fp32"] else "—",
        )
    print_table(table, csv_to)


def _print_device(device: Device) -> None:
    """Print `device` for a human: its structure, then every figure with its provenance."""
    console.print(f"[bold]{printable(device.full_name)}[/]  ({printable(device.name)})", highlight=False)
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
            console.print(f"  {label:<20} {printable(value)}", highlight=False)
    default = device.provenance
    console.print(f"  {'figures':<20} {default.source}: {printable(default.describe())}",
                  highlight=False)
    table = Table(show_header=True, header_style="bold")
    for column in ("figure", "value", "source", "details"):
        table.add_column(column, overflow="fold")
    rows: list[tuple[str, Figure, Dimension | None]] = []  # None: a plain number (a share)
    units: dict[str, str] = {}  # label -> unit, where a rate is not in FLOP/s
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
    for name, figure in device.compute_ceilings.items():
        rows.append((f"compute ({name})", figure, Dimension.COMPUTE))
    for precision, figure in device.elementary.items():
        rows.append((f"{precision.value} exp/log/sin calls", figure, Dimension.COMPUTE))
        units[rows[-1][0]] = "call/s"
    for served_by, figure in device.random_loads.items():
        rows.append((f"random loads in {served_by}", figure, Dimension.COMPUTE))
        units[rows[-1][0]] = "load/s"
    for curves, how in ((device.random_loads_by_size, ""), (device.random_loads_computed, ", computed addresses")):
        for served_by, sizes in curves.items():
            for size, figure in sorted(sizes.items()):
                rows.append((f"random loads in {served_by}, {size / 2**20:.4g} MiB{how}", figure, Dimension.COMPUTE))
                units[rows[-1][0]] = "load/s"
    for served_by, figure in device.set_walk_loads.items():
        rows.append((f"loads in one L1 set, {served_by}", figure, Dimension.COMPUTE))
        units[rows[-1][0]] = "load/s"
    from perfcast.devices.schema import COUNTED_RATES  # here: the CLI starts without pydantic

    for rate in COUNTED_RATES:
        if (figure := getattr(device, rate.name)) is not None:
            rows.append((rate.label, figure, Dimension.COMPUTE))
            units[rate.label] = rate.unit
    if device.host_link is not None:
        rows.append((f"host link ({device.host_link.name})", device.host_link.bandwidth, Dimension.BANDWIDTH))
    if device.tdp is not None:
        rows.append(("TDP", device.tdp, Dimension.POWER))
    if device.fp32_issue_share is not None:
        rows.append(("fp32 issue share", device.fp32_issue_share, None))
    if device.conversions is not None:
        rows.append(("int/fp32 conversions", device.conversions, Dimension.COMPUTE))
        units["int/fp32 conversions"] = "conv/s"
    # The measured maxima the cross-device projection reads before any peak (spec §4).
    for path, figure in device.maxima.figures().items():
        measured_as = Dimension.COMPUTE if path.startswith("compute.") else Dimension.BANDWIDTH
        rows.append((f"measured maximum {path.split('.', 1)[1].replace('.', ' ')}", figure, measured_as))
    for label, figure, dimension in rows:
        same = figure.provenance == default
        value = (format_quantity(figure.value, dimension, unit=units.get(label)) if dimension is not None
                 else f"{figure.value:g}")
        table.add_row(label, value, figure.provenance.source,
                      "(as above)" if same else printable(figure.provenance.describe()))
    for price in device.prices:
        per = "per hour" if price.per == "hour" else "per unit"
        table.add_row(f"price ({price.kind})", f"${price.usd:,.2f} {per}", str(price.date),
                      printable(price.reference + (f"; {price.note}" if price.note else "")))
    console.print(table)
    if device.notes:
        console.print(f"  [dim]{printable(device.notes)}[/]", highlight=False)


@devices_app.command("show")
def devices_show(
    name: Annotated[str, typer.Argument(help="Catalog name, path of a device YAML file, or 'host'.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    as_yaml: Annotated[bool, typer.Option("--yaml", help="Print the device file (YAML).")] = False,
) -> None:
    """Show one device: every figure with its provenance (spec, measured or estimated)."""
    device = resolve_device(name)
    if as_json:
        print_json(device.model_dump(mode="json"))
    elif as_yaml:
        from perfcast.devices.catalog import device_to_yaml

        typer.echo(device_to_yaml(device), nl=False)
    else:
        _print_device(device)


@devices_app.command("detect")
def devices_detect(
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the description to this YAML file.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Detect this machine's CPU (model, cores, SIMD width, caches), estimate its peaks and probe its DRAM bandwidth."""
    check_writable(output, "--output", (".yaml", ".yml"))
    device = resolve_device(HOST)
    if as_json:
        print_json(device.model_dump(mode="json"))
    else:
        _print_device(device)
    if output is not None:
        from perfcast.devices.catalog import save_device

        save_device(device, output)
        (errors if as_json else console).print(f"wrote {printable(output)}", highlight=False)
