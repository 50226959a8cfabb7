"""`perfcast bench`: measure a device's ceilings and write its measured profile."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from perfcast.bench.backends import BACKENDS
from perfcast.cli.common import (
    app,
    check_chart_path,
    console,
    errors,
    fail,
    measuring_progress,
    print_json,
    printable,
    registry_help,
)
from perfcast.output_files import check_writable
from perfcast.plots.files import save_figure
from perfcast.units import Dimension, format_quantity

if TYPE_CHECKING:  # the schema (pydantic) loads when a command runs, not for --help
    from perfcast.devices.schema import Device, Figure


def _compare_rows(
    before: Device | None, after: Device, tool: str
) -> list[tuple[str, float, float | None, Callable[[float], str]]]:
    """Return (figure, measured, previous or None, how to show it) for every figure of `after` that `tool` measured."""
    def ours(figure: Figure | None) -> bool:
        return figure is not None and (figure.provenance.tool or "").startswith(tool)

    def old(getter: Any) -> float | None:
        try:
            figure = getter(before) if before is not None else None
        except LookupError:
            return None
        return figure.value if figure is not None else None

    compute = partial(format_quantity, dimension=Dimension.COMPUTE)
    bandwidth = partial(format_quantity, dimension=Dimension.BANDWIDTH)
    calls = partial(format_quantity, dimension=Dimension.COMPUTE, unit="call/s")
    rows: list[tuple[str, float, float | None, Callable[[float], str]]] = []
    for precision, kinds in after.peak.items():
        for kind, figure in kinds.items():
            if ours(figure):
                rows.append((f"peak {precision.value} {kind.value}", figure.value,
                             old(lambda d, p=precision, k=kind: d.peak.get(p, {}).get(k)), compute))
    for level in after.memory:
        if ours(level.bandwidth):
            assert level.bandwidth is not None
            rows.append((f"{level.level} bandwidth", level.bandwidth.value,
                         old(lambda d, n=level.level: d.memory_level(n).bandwidth), bandwidth))
    for name, figure in after.bandwidth_ceilings.items():
        if ours(figure):
            rows.append((f"bandwidth: {name}", figure.value, old(lambda d, n=name: d.bandwidth_ceilings.get(n)),
                         bandwidth))
    for name, figure in after.compute_ceilings.items():
        if ours(figure):
            rows.append((f"fp32 FMA: {name}", figure.value, old(lambda d, n=name: d.compute_ceilings.get(n)),
                         compute))
    for precision, figure in after.elementary.items():
        if ours(figure):
            rows.append((f"{precision.value} exp/log/sin calls", figure.value,
                         old(lambda d, p=precision: d.elementary.get(p)), calls))
    loads = partial(format_quantity, dimension=Dimension.COMPUTE, unit="load/s")
    for served_by, figure in after.random_loads.items():
        if ours(figure):
            rows.append((f"random loads in {served_by}", figure.value,
                         old(lambda d, n=served_by: d.random_loads.get(n)), loads))
    for served_by, sizes in after.random_loads_by_size.items():
        for size, figure in sorted(sizes.items()):
            if ours(figure):
                rows.append((f"random loads in {served_by}, {size / 2**20:.4g} MiB", figure.value,
                             old(lambda d, n=served_by, b=size: d.random_loads_by_size.get(n, {}).get(b)), loads))
    for served_by, figure in after.set_walk_loads.items():
        if ours(figure):
            rows.append((f"loads in one L1 set, {served_by}", figure.value,
                         old(lambda d, n=served_by: d.set_walk_loads.get(n)), loads))
    from perfcast.devices.schema import COUNTED_RATES  # here: the CLI starts without pydantic

    for rate in COUNTED_RATES:
        figure = getattr(after, rate.name)
        if figure is not None and ours(figure):
            rows.append((rate.label, figure.value, old(lambda d, n=rate.name: getattr(d, n)),
                         partial(format_quantity, dimension=Dimension.COMPUTE, unit=rate.unit)))
    if after.host_link is not None and ours(after.host_link.bandwidth):
        rows.append(("host link", after.host_link.bandwidth.value,
                     old(lambda d: d.host_link.bandwidth if d.host_link else None), bandwidth))
    return rows


@app.command("bench")
def bench_command(
    backend_name: Annotated[str, typer.Option("--backend", "-b", help=registry_help(BACKENDS))] = "cpu",
    device_id: Annotated[str | None, typer.Option("--device", "-d", help="opencl: PLATFORM:DEVICE index or a name part; cuda: GPU index.")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Fewer sizes and repetitions (seconds, for tests and demos).")] = False,
    repetitions: Annotated[int, typer.Option("--repetitions", "-r", min=1, help="Timed repetitions per measurement.")] = 5,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Also write the measured profile (YAML) here.")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Draw the measured roofline (.png, .svg or .pdf).")] = None,
    csv_path: Annotated[Path | None, typer.Option("--csv", help="Write every raw measurement to CSV.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Make every self-check warning an error (no profile is written).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Measure a device's real ceilings with micro-benchmarks and write its measured profile."""
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

    from perfcast.bench.backends import BackendUnavailable, open_backend
    from perfcast.bench.suite import measured_device, self_checks, write_suite_csv
    from perfcast.devices.catalog import PROFILES_DIR, save_device

    try:
        check_chart_path(plot, "--plot")
        check_writable(output, "--output", (".yaml", ".yml"))
        check_writable(csv_path, "--csv")
        with console.status(f"preparing the {backend_name} backend…"):
            backend, base = open_backend(backend_name, device_id, repetitions)
    except (BackendUnavailable, ValueError) as error:
        raise fail(str(error)) from None
    with measuring_progress(TextColumn("{task.description:<36}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                            TimeElapsedColumn()) as bar:
        task = bar.add_task("starting", total=1.0)
        suite = backend.run(quick, lambda label, fraction: bar.update(task, description=label, completed=fraction,
                                                                      refresh=True))
    before = base.before()  # the description the measurements are compared with
    warnings = self_checks(suite, before)
    for warning in warnings:
        errors.print(f"[yellow]warning:[/] {printable(warning)}", highlight=False)
    if strict and warnings:
        raise fail(f"--strict: {len(warnings)} self-check(s) failed; no profile written")
    try:
        profile = measured_device(base, suite, warnings=warnings)
    except ValueError as error:
        raise fail(f"the measurements do not make a valid profile: {error}") from None
    saved = save_device(profile, PROFILES_DIR / f"{profile.name}.yaml")
    if output is not None:
        save_device(profile, output)
    if csv_path is not None:
        write_suite_csv(suite, csv_path)
    rows = _compare_rows(before, profile, suite.tool)
    if as_json:
        print_json({
            "profile": profile.model_dump(mode="json"),
            "saved": str(saved),
            "compared": [{"figure": f, "measured": m, "before": b} for f, m, b, _ in rows],
            "warnings": warnings,
            "intensity_sweep": [{"intensity": p.intensity, "performance": p.performance.value} for p in suite.mix],
        })
    else:
        table = Table(box=box.SIMPLE_HEAD, title=f"{printable(profile.full_name)} — {printable(suite.tool)}",
                      title_justify="left")
        for column in ("figure", "measured", "before", "measured / before"):
            table.add_column(column, justify="left" if column == "figure" else "right")
        for label, measured, previous, shown in rows:
            table.add_row(label, shown(measured), shown(previous) if previous else "—",
                          f"{measured / previous:.2f}" if previous else "—")
        console.print(table)
        if before is not None:
            console.print(f"  'before' is the description the profile starts from ({before.provenance.source}: "
                          f"{printable(before.provenance.describe())})", highlight=False)
    for path in (saved, output, csv_path):
        if path is not None:
            (errors if as_json else console).print(f"wrote {printable(path)}", highlight=False)
    if plot is not None:
        from perfcast.devices.roofline_view import device_roofline
        from perfcast.plots.roofline import roofline_figure

        roof = device_roofline(profile, "fp32")
        sweep = [(p.intensity, p.performance.value) for p in suite.mix]
        chart = roofline_figure(roof, levels=profile.level_bandwidths(), sweep=sweep,
                                title=f"Measured roofline — {profile.full_name} (fp32)")
        save_figure(chart, plot)
        (errors if as_json else console).print(f"wrote {printable(plot)}", highlight=False)
