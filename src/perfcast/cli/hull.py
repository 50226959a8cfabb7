"""`perfcast hull` and `perfcast app`: boat hull predictions of a primitive and of an application."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from perfcast.cli.common import (
    CSV_HELP,
    app,
    check_chart_path,
    check_csv,
    console,
    errors,
    fail,
    format_time,
    print_json,
    printable,
    resolve_device,
    text_out,
    write_rows_csv,
)
from perfcast.plots.files import save_figure
from perfcast.units import Dimension, Precision, parse_quantity

if TYPE_CHECKING:  # numpy, the models and the species load when a command runs, not for --help
    from perfcast.models.boathull import ClassVariables, HullPrediction
    from perfcast.species.classes import HaloTile


def _split_list(values: list[str] | None, option: str = "") -> list[str]:
    """Return the items of repeatable, comma-separated options; an empty item (1,,2) is an error."""
    items = [item.strip() for value in values or [] for item in value.split(",")]
    if option and any(not item for item in items):
        raise ValueError(f"{option} {','.join(values or [])!r}: an empty item between commas")
    return [item for item in items if item]


def _parse_bind(values: list[str] | None) -> dict[str, int]:
    """Return symbol values from --bind A=2048 options."""
    bound: dict[str, int] = {}
    for item in _split_list(values, "--bind"):
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not (value.isascii() and value.isdigit()) or int(value) < 1:
            raise ValueError(f"--bind {item!r}: expected SYMBOL=POSITIVE_INTEGER, e.g. A=2048")
        if name in bound and bound[name] != int(value):
            raise ValueError(f"--bind: {name} is bound twice ({bound[name]} and {value})")
        bound[name] = int(value)
    return bound


def _check_bind(species: str, bound: dict[str, int]) -> None:
    """Raise ValueError for bound names the species does not use (a typo would otherwise go unnoticed)."""
    from perfcast.species.grammar import parse_species

    symbols = parse_species(species).symbols
    unused = sorted(set(bound) - symbols)
    if unused:
        used = ", ".join(sorted(symbols)) or "none"
        raise ValueError(f"--bind {', '.join(unused)}: not a symbol of {species!r} (its symbols: {used})")


def _check_assumptions(assume: list[str], kinds: set[str]) -> None:
    """Raise ValueError for an assumption that rules out a floor of none of the devices given."""
    from perfcast.models.boathull import CPU_ASSUMPTIONS, GPU_ASSUMPTIONS

    for name in assume:
        key = name.lower().replace("vectorized", "vectorised")
        owners = {kind for kind, table in (("cpu", CPU_ASSUMPTIONS), ("gpu", GPU_ASSUMPTIONS)) if key in table}
        if owners and not owners & kinds:
            raise ValueError(f"--assume {name}: it rules out a {'/'.join(sorted(owners)).upper()} floor, "
                             f"and no device given is a {'/'.join(sorted(owners)).upper()}")


def _parse_tile(text: str) -> HaloTile:
    """Return the work-group tile given as TXxTY."""
    from perfcast.species.classes import HaloTile

    tx, sep, ty = text.lower().partition("x")
    if not sep or not (tx.isascii() and tx.isdigit() and ty.isascii() and ty.isdigit()):
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
    assume: Annotated[list[str] | None, typer.Option("--assume", help="Rule out floors: fma, coalesced, registers (GPU); vectorised, multithreaded (CPU).")] = None,
    bind: Annotated[list[str] | None, typer.Option("--bind", help="Bind a size symbol, e.g. A=2048. Repeatable or comma-separated.")] = None,
    element_size: Annotated[float, typer.Option("--element-size", help="Bytes per element.")] = 4,
    precision: Annotated[Precision, typer.Option("--precision", "-p", help="Precision of the compute peak.")] = Precision.FP32,
    tile: Annotated[str, typer.Option("--tile", help="Work-group tile (outputs) staged for neighbourhoods, TXxTY.")] = "16x16",
    transfers: Annotated[bool, typer.Option("--transfers", help="Add host<->device copies (t0) to both ends (GPUs).")] = False,
    lanes: Annotated[int | None, typer.Option("--vector-lanes", min=1, help="CPU: the SIMD lanes the compiler gave the loop (its vectorisation report: gcc -fopt-info-vec, PoCL's remarks); the no-SIMD floors become (L / lanes)·c0.")] = None,
    calls: Annotated[float, typer.Option("--elementary-calls", min=0, help="Elementary-function calls (exp, log, sin, ...) each f holds at 8 ops; a device measured by perfcast bench prices them at its own cost.")] = 0.0,
    conversions: Annotated[float, typer.Option("--conversions", min=0, help="int/fp32 conversions per application (e.g. 1 where bytes are summed in fp32), each at the device's conversion rate (the catalog's `conversions`).")] = 0.0,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the boat hull chart (.png, .svg or .pdf).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    csv_to: Annotated[Path | None, typer.Option("--csv", help=CSV_HELP + " One row per device and f, times in s.")] = None,
) -> None:
    """Boat hull: predicted execution time range of a primitive from its algorithmic species."""
    from perfcast.devices.hull_view import conversion_ops, elementary_ops, hull_inputs, unpriced_conversions
    from perfcast.models.boathull import priced_complexity, with_conversions
    from perfcast.species.application import predict_primitive

    devices = [resolve_device(name) for name in device_names]

    def on_cpu(device: Any) -> int | None:  # --vector-lanes sets a CPU's floors; a GPU takes none
        return lanes if device.kind == "cpu" else None

    try:
        f = [parse_quantity(item, Dimension.WORK) for item in _split_list([f_values], "--f")]
        if not f:
            raise ValueError("--f: give at least one complexity")
        if not element_size > 0 or element_size == float("inf"):
            raise ValueError(f"--element-size {element_size:g}: bytes per element must be positive")
        options: dict[str, Any] = dict(bind=_parse_bind(bind), element_bytes=element_size,
                                       assume=_split_list(assume, "--assume"), tile=_parse_tile(tile))
        _check_bind(species, options["bind"])
        _check_assumptions(options["assume"], {device.kind for device in devices})
        if lanes is not None and all(device.kind != "cpu" for device in devices):
            raise ValueError("--vector-lanes: the lanes a compiler used set a CPU's floors; no device here is a CPU")
        if conversions and precision is not Precision.FP32:
            raise ValueError(f"--conversions is priced at fp32 only (-p fp32): the conversion rate is of int32 <-> "
                             f"fp32, not {precision.value}")
        check_chart_path(output)
        check_csv(csv_to)
        results = []
        conversion_costs: dict[str, float] = {}  # device -> ops one conversion costs, where --conversions priced it
        for device in devices:
            inputs = hull_inputs(device, precision, element_size)
            priced = f
            if calls:
                cost = elementary_ops(device, precision)
                priced = [priced_complexity(value, calls, cost.extra) for value in f]
                inputs = replace(inputs, sources={**inputs.sources, "elementary call": f"{calls:g} per f, {cost.source}"})
            if conversions:
                conversion = conversion_ops(device, precision)
                if conversion is None:
                    raise ValueError(f"--conversions: {unpriced_conversions(device, precision)}")
                priced = [with_conversions(value, conversions, conversion.ops) for value in priced]
                conversion_costs[device.name] = conversion.ops
                inputs = replace(inputs, sources={**inputs.sources,
                                                  "conversion": f"{conversions:g} per application, {conversion.source}"})
            if on_cpu(device) is not None:
                inputs = replace(inputs, sources={**inputs.sources, "vector lanes": f"{lanes} (--vector-lanes: the "
                                                  "compiler's vectorisation report)"})
            wants_bus = transfers and device.kind == "gpu"
            results.append((inputs, predict_primitive(species, inputs.figures, priced, transfers=wants_bus,
                                                      vector_lanes=on_cpu(device), **options)))
    except (LookupError, ValueError) as error:
        raise fail(str(error)) from None
    bound, variables = results[0][1].species, results[0][1].variables
    if as_json:
        print_json({
            "species": species,
            "bound_species": str(bound),
            "class": {"origin": variables.origin, "name": variables.name, "floors": list(variables.floors),
                      **{k: getattr(variables, k) for k in ("w", "m", "o", "d", "c", "u")}},
            "element_size": element_size,
            "devices": [
                {"name": inputs.device.name, "kind": inputs.device.kind, "inputs": inputs.sources,
                 "assume": options["assume"], "vector_lanes": on_cpu(inputs.device),
                 "floors": list(r.prediction.floors),
                 "ruled_out": list(r.prediction.ruled_out),
                 "ignored_assumptions": list(r.prediction.ignored_assumptions),
                 "unpriced_floors": list(r.prediction.unpriced),
                 "transfer": r.prediction.transfer, "f_given": f,
                 "conversions_per_application": conversions,
                 "ops_per_conversion": conversion_costs.get(inputs.device.name),
                 "rows": _hull_rows(r.prediction)}
                for inputs, r in results
            ],
        })
    else:
        out = text_out(csv_to)
        out.print(f"[bold]{printable(bound)}[/]", highlight=False)
        out.print(f"  class: {variables.name} ({variables.origin})", highlight=False)
        out.print(f"  {_class_line(variables)}", highlight=False)
        for inputs, r in results:
            _print_hull(inputs, r.prediction, out)
        if csv_to is not None:
            write_rows_csv([{"device": inputs.device.name, **_csv_row(row)}
                            for inputs, r in results for row in _hull_rows(r.prediction)], csv_to)
    if output is not None:
        import numpy as np

        from perfcast.plots.boathull import HullPanel, hull_figure

        dense = np.geomspace(1, 1e4, 241)
        panels = []
        for inputs, _ in results:
            wants_bus = transfers and inputs.device.kind == "gpu"
            curve = predict_primitive(species, inputs.figures, dense, transfers=wants_bus,
                                      vector_lanes=on_cpu(inputs.device), **options).prediction
            panels.append(HullPanel(inputs.device.full_name, curve, show_transfer=wants_bus))
        save_figure(hull_figure(panels, suptitle=f"{bound}  —  {variables.name} ({variables.origin})"), output)
        (errors if as_json else text_out(csv_to)).print(f"wrote {printable(output)}", highlight=False)


def _csv_row(row: dict[str, Any]) -> dict[str, Any]:
    """Return a hull row flat for CSV: times in s, each term a column."""
    flat = {"f": row["f"], "lower_s": row["lower"], "upper_s": row["upper"], "lower_term": row["lower_term"],
            "upper_term": row["upper_term"]}
    return {**flat, **{f"{name}_s": value for name, value in row["terms"].items()}}


def _print_hull(inputs: Any, prediction: HullPrediction, out: Any = console) -> None:
    """Print one device's inputs and predicted ranges for a human."""
    device = inputs.device
    out.print(f"\n[bold]{printable(device.full_name)}[/] ({device.kind})", highlight=False)
    for name, source in inputs.sources.items():
        out.print(f"  {name:<14}{printable(source)}", highlight=False)
    if prediction.ruled_out:
        out.print(f"  ruled out by assumptions: {', '.join(prediction.ruled_out)}", highlight=False)
    if prediction.ignored_assumptions:
        out.print(f"  assumptions with no floor on a {device.kind}: {', '.join(prediction.ignored_assumptions)}",
                  highlight=False)
    if prediction.unpriced:
        out.print(f"  floors left out, no figure of the device prices them: {', '.join(prediction.unpriced)} "
                  "(i1 needs the catalog's fp32_issue_share, and fp32: the share is the fp32 peak's)", highlight=False)
    if prediction.transfer:
        out.print(f"  transfers t0 = {format_time(prediction.transfer)} added to both ends", highlight=False)
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
            f"{f:g}", format_time(prediction.lower[i]), format_time(prediction.upper[i]),
            f"{prediction.lower_term[i]} / {prediction.upper_term[i]}",
            *(format_time(prediction.terms[name][i]) for name in shown),
        )
    out.print(table)


@app.command("app")
def app_command(
    path: Annotated[Path, typer.Argument(help="Application YAML file (see examples/fast-focus.yaml).")],
    device_names: Annotated[list[str], typer.Option("--device", "-d", help="Catalog name, device YAML file or 'host'. Repeatable.")],
    tile: Annotated[str, typer.Option("--tile", help="Work-group tile (outputs) staged for neighbourhoods, TXxTY.")] = "16x16",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report chart (.png, .svg or .pdf).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    csv_to: Annotated[Path | None, typer.Option("--csv", help=CSV_HELP + " One row per device and step (primitives, transfers, total), times in s.")] = None,
) -> None:
    """Boat hull prediction of a whole application, per primitive and in total, on one or more devices."""
    from perfcast.devices.hull_view import conversion_ops, elementary_ops, hull_inputs, unpriced_conversions
    from perfcast.species.application import predict_app, priced_f
    from perfcast.species.application_file import load_application

    devices = [resolve_device(name) for name in device_names]
    try:
        application = load_application(path)
        check_chart_path(output)
        check_csv(csv_to)
        halo = _parse_tile(tile)
        results = {}
        calls = any(p.elementary_calls for p in application.primitives)
        converts = any(p.conversions for p in application.primitives)
        extra: dict[str, float] = {}
        per_conversion: dict[str, float] = {}
        for device in devices:
            inputs = hull_inputs(device, application.precision, application.element_size)
            if calls:
                cost = elementary_ops(device, application.precision)
                extra[device.name] = cost.extra
                inputs = replace(inputs, sources={**inputs.sources, "elementary call": cost.source})
            if converts:
                conversion = conversion_ops(device, application.precision)
                if conversion is not None:
                    per_conversion[device.name] = conversion.ops
                source = (conversion.source if conversion is not None
                          else f"unpriced: {unpriced_conversions(device, application.precision)}")
                inputs = replace(inputs, sources={**inputs.sources, "conversion": source})
            results[device.name] = (inputs, *predict_app(application, inputs.figures, halo, extra.get(device.name, 0.0),
                                                         per_conversion.get(device.name)))
    except (LookupError, ValueError) as error:
        raise fail(str(error)) from None
    if as_json:
        print_json({
            "application": application.name,
            "devices": {
                name: {
                    "inputs": inputs.sources,
                    "primitives": [
                        {"name": p.name, "species": str(step.species), "class": step.variables.name,
                         "origin": step.variables.origin, "f": p.f, "elementary_calls": p.elementary_calls or 0.0,
                         "conversions": p.conversions or 0.0,
                         "priced_f": priced_f(p, extra.get(name, 0.0), per_conversion.get(name)),
                         "unpriced_floors": list(step.prediction.unpriced),
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
        _print_application(application, results, text_out(csv_to))
        if csv_to is not None:
            write_rows_csv(_application_rows(application, results), csv_to)
    if output is not None:
        from perfcast.plots.boathull import application_figure

        figure = application_figure({name: total for name, (_, total, _) in results.items()},
                                    title=f"{application.name} — boat hull prediction")
        save_figure(figure, output)
        (errors if as_json else text_out(csv_to)).print(f"wrote {printable(output)}", highlight=False)


def _application_rows(application: Any, results: dict[str, Any]) -> list[dict[str, Any]]:
    """Return one CSV row per device and step: primitives, transfers (host memory: empty), then the total (s)."""
    rows: list[dict[str, Any]] = []
    for name, (inputs, total, steps) in results.items():
        for primitive, step in zip(application.primitives, steps, strict=True):
            p = step.prediction
            rows.append({"device": name, "step": primitive.name, "kind": "primitive", "class": step.variables.name,
                         "lower_s": float(p.lower[0]), "upper_s": float(p.upper[0]),
                         "lower_term": str(p.lower_term[0]), "upper_term": str(p.upper_term[0])})
        for transfer, (_, seconds) in zip(application.transfers, total.transfers, strict=True):
            on_device = inputs.device.kind == "gpu"
            rows.append({"device": name, "step": transfer.name, "kind": "transfer",
                         "lower_s": seconds if on_device else None, "upper_s": seconds if on_device else None})
        rows.append({"device": name, "step": "total", "kind": "total", "lower_s": total.lower,
                     "upper_s": total.upper})
    return rows


def _print_application(application: Any, results: dict[str, Any], out: Any = console) -> None:
    """Print the per-primitive ranges, transfers and totals of every device side by side."""
    out.print(f"[bold]{printable(application.name)}[/]", highlight=False)
    if application.description:
        out.print(f"  {printable(application.description)}", highlight=False)
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
            cells.append(f"{format_time(p.lower[0])} – {format_time(p.upper[0])} ({p.lower_term[0]}/{p.upper_term[0]})")
        table.add_row(printable(primitive.name), f"{step.variables.name} ({step.variables.origin[:3]}.)", *cells)
    for index, transfer in enumerate(application.transfers):
        cells = []
        for inputs, total, _ in results.values():
            seconds = total.transfers[index][1]
            cells.append(format_time(seconds) if inputs.device.kind == "gpu" else "— (host memory)")
        table.add_row(printable(transfer.name), "transfer", *cells)
    table.add_section()
    table.add_row("[bold]total[/]", "", *(f"[bold]{format_time(t.lower)} – {format_time(t.upper)}[/]"
                                          for _, t, _ in results.values()))
    out.print(table)
    counted = [f"{printable(p.name)}: {p.elementary_calls or 0:g} elementary call(s), {p.conversions or 0:g} "
               "int-to-float conversion(s)" for p in application.primitives if p.elementary_calls or p.conversions]
    if counted:
        out.print(f"[dim]per application of each step's operator (f counts a call at 8 ops and no conversion; each "
                  f"device's inputs below say what they cost there): {'; '.join(counted)}[/]", highlight=False)
    for name, (inputs, _, steps) in results.items():
        out.print(f"[dim]{printable(name)} inputs:[/]", highlight=False)
        for label, source in inputs.sources.items():
            out.print(f"[dim]  {label:<14}{printable(source)}[/]", highlight=False)
        unpriced = [f"{floor} ({printable(primitive.name)})" for primitive, step in zip(application.primitives, steps,
                                                                                        strict=True)
                    for floor in step.prediction.unpriced]
        if unpriced:
            out.print(f"[dim]  floors left out, no figure of the device prices them: {', '.join(unpriced)}[/]",
                      highlight=False)
