"""`perfcast classify`: the algorithmic species of every loop nest in a C file, optionally predicted with the boat hull."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from perfcast.cli.common import (
    app,
    console,
    fail,
    format_time,
    print_json,
    printable,
    resolve_device,
)
from perfcast.units import Precision


def _parse_pairs(values: list[str] | None, option: str, example: str) -> dict[str, int]:
    """Return NAME=INTEGER pairs from repeatable, comma-separated options."""
    pairs: dict[str, int] = {}
    for value in values or []:
        for item in value.split(","):
            item = item.strip()
            if not item:
                continue
            name, sep, number = item.partition("=")
            name, number = name.strip(), number.strip()
            if not sep or not name.isidentifier() or not (number.isascii() and number.isdigit()):
                raise ValueError(f"{option} {item!r}: expected NAME=NON_NEGATIVE_INTEGER, e.g. {example}")
            if name in pairs and pairs[name] != int(number):
                raise ValueError(f"{option}: {name} is given twice ({pairs[name]} and {number})")
            pairs[name] = int(number)
    return pairs


@app.command("classify")
def classify_command(
    path: Annotated[Path, typer.Argument(help="C source file.")],
    function: Annotated[str | None, typer.Option("--function", "-F", help="Classify this function only.")] = None,
    define: Annotated[list[str] | None, typer.Option("--define", "-D", help="Bind a macro or size, e.g. N=1024 (repeatable, comma-separated): macros reach the preprocessor, other names bind symbols.")] = None,
    call_cost: Annotated[list[str] | None, typer.Option("--call-cost", help="Ops charged per call of a function, e.g. expf=20 (default: elementary functions 8, sqrt/min/max/abs 1).")] = None,
    predict: Annotated[bool, typer.Option("--predict", help="Predict each classified nest with the boat hull model on --device.")] = False,
    device_names: Annotated[list[str] | None, typer.Option("--device", "-d", help="Catalog name, device YAML or 'host' for --predict. Repeatable.")] = None,
    element_size: Annotated[float | None, typer.Option("--element-size", help="Bytes per element for --predict (default: the widest array type of the nest).")] = None,
    precision: Annotated[Precision | None, typer.Option("--precision", "-p", help="Precision of the compute peak for --predict (default: the nest's float type).")] = None,
    explain: Annotated[bool, typer.Option("--explain/--brief", help="Print the reason for each decision (the default), or only the species, f and doubts.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Algorithmic species and operator complexity f of each loop nest in a C file, with the reasons."""
    from perfcast.species.c_source import CSourceError, parse_c_file
    from perfcast.species.classify import (
        ELEMENTARY_FUNCTIONS,
        ClassifyError,
        bind_symbols,
        classify_source,
        conversions,
        elementary_calls,
    )

    try:
        defines = _parse_pairs(define, "--define", "N=1024")
        costs = _parse_pairs(call_cost, "--call-cost", "expf=20")
        if predict and not device_names:
            raise ValueError("--predict needs at least one --device")
        if device_names and not predict:
            raise ValueError("--device is used with --predict")
        if element_size is not None and not element_size > 0:
            raise ValueError(f"--element-size {element_size}: must be positive")
        parsed = parse_c_file(path, defines)
        result = classify_source(parsed, function, costs)
        # A measured device prices each elementary call at its own cost, unless --call-cost set one.
        overridden = sorted(set(costs) & set(ELEMENTARY_FUNCTIONS))
        calls = elementary_calls(parsed, result.nests, function, defines, costs) if predict else []
        converted = conversions(parsed, result.nests, function, defines, costs) if predict else []
    except (ClassifyError, CSourceError, ValueError) as error:
        raise fail(str(error)) from None
    devices = [resolve_device(name) for name in device_names or []] if predict else []
    predictions: dict[int, list[dict[str, Any]]] = {}
    if predict:
        try:
            for index, nest in enumerate(result.nests):
                if nest.species is not None:
                    predictions[index] = _predict(nest, devices, bind_symbols(nest, defines), defines,
                                                  element_size, precision, calls[index], overridden,
                                                  converted[index])
        except ValueError as error:
            raise fail(str(error)) from None
    if as_json:
        print_json({
            "file": str(path),
            "functions": list(result.functions),
            "unresolved_identifiers": list(result.unresolved),
            "nests": [{**nest.to_json(), **({"predictions": predictions[i]} if i in predictions else {})}
                      for i, nest in enumerate(result.nests)],
        })
        return
    _print(result, predictions, explain)


def _predict(nest: Any, devices: list[Any], bind: dict[str, int], defines: dict[str, int],
             element_size: float | None, precision: Precision | None, calls: float | None,
             overridden: list[str], converted: float | None = None) -> list[dict[str, Any]]:
    """Return the boat hull range of one classified nest on each device, calls and conversions at its costs."""
    from perfcast.devices.hull_view import conversion_ops, elementary_ops, hull_inputs, unpriced_conversions
    from perfcast.models.boathull import priced_complexity, with_conversions
    from perfcast.species.application import predict_primitive
    from perfcast.species.classify import launches_value

    missing = sorted(nest.parsed().symbols - set(bind))
    f = nest.f_value(defines)
    if missing or f is None:
        names = [nest.symbols.get(s, s) for s in missing] or sorted(nest.f_poly.symbols() - set(defines))
        raise ValueError(f"{nest.location}: bind {', '.join(names)} to predict, e.g. --define {names[0]}=1024")
    size = element_size or nest.element_bytes or 4
    chosen = precision or Precision(nest.precision or "fp32")
    rows = []
    for device in devices:
        inputs = hull_inputs(device, chosen, size)
        priced, call_cost = f, None
        if calls:
            if overridden:
                call_cost = f"--call-cost {', '.join(overridden)} as given"
            else:
                cost = elementary_ops(device, chosen)
                priced, call_cost = priced_complexity(f, calls, cost.extra), cost.source
        conversion_cost = None
        if converted:
            conversion = conversion_ops(device, chosen)
            if conversion is None:
                conversion_cost = f"unpriced: {unpriced_conversions(device, chosen)}"
            else:
                priced, conversion_cost = with_conversions(priced, converted, conversion.ops), conversion.source
        result = predict_primitive(nest.species, inputs.figures, [priced], bind=bind, element_bytes=size)
        p = result.prediction
        launches = launches_value(nest, defines)
        rows.append({"launches": launches,
                     "total_lower": None if launches is None else float(p.lower[0]) * launches,
                     "total_upper": None if launches is None else float(p.upper[0]) * launches,
                     "device": device.name, "f": f, "elementary_calls": calls, "priced_f": priced,
                     "elementary_call_cost": call_cost, "conversions": converted or 0.0,
                     "conversion_cost": conversion_cost, "element_bytes": size, "precision": chosen.value,
                     "class": result.variables.name, "origin": result.variables.origin,
                     "lower": float(p.lower[0]), "upper": float(p.upper[0]),
                     "lower_term": str(p.lower_term[0]), "upper_term": str(p.upper_term[0])})
    return rows


_STYLE = {"exact": "green", "unsure": "yellow", "unclassified": "red", "remainder": "dim"}


def _print(result: Any, predictions: dict[int, list[dict[str, Any]]], explain: bool = True) -> None:
    """Print each nest: status, species, f and the reasons, then its predictions."""
    if not result.nests:
        console.print(f"no loop nest in {printable(', '.join(result.functions))}", highlight=False)
    for index, nest in enumerate(result.nests):
        style = _STYLE[nest.status]
        head = f"[bold]{printable(nest.function)}[/]:{nest.line}  loop {printable(nest.loop_variable or '?')}  [{style}]{nest.status}[/]"
        console.print(head, highlight=False)
        if nest.species is not None:
            console.print(f"  species  [bold]{printable(nest.species)}[/]", highlight=False)
            console.print(f"  f        {printable(nest.f or '?')} ops per operator application "
                          f"({printable(nest.ops_per_work_unit or '?')} per work unit, m = {printable(nest.m or '?')}; "
                          f"{printable(nest.work_units or '?')} work units)", highlight=False)
            if nest.repetitions is not None:
                console.print(f"  launches {printable(nest.repetitions)} (once per iteration of loop(s) "
                              f"{printable(', '.join(nest.enclosing))} around it)", highlight=False)
            renamed = {s: c for s, c in nest.symbols.items() if s != c}
            if renamed:
                names = ", ".join(f"{s} = {c}" for s, c in renamed.items())
                console.print(f"  symbols  {printable(names)} (species symbol = C name)", highlight=False)
        for reason in nest.reasons if explain or nest.species is None else ():
            console.print(f"  [dim]because[/] {printable(reason)}", highlight=False)
        for doubt in nest.doubts:
            console.print(f"  [yellow]unsure:[/] {printable(doubt)}", highlight=False)
        rows = predictions.get(index)
        if rows:
            table = Table(box=box.SIMPLE_HEAD)
            repeated = nest.repetitions is not None
            columns = ["device", "class", "f", "lower", "upper", *(["all launches"] if repeated else []), "bound by"]
            for column in columns:
                table.add_column(column, justify="right" if column in ("f", "lower", "upper", "all launches") else "left")
            for row in rows:
                total = [] if not repeated else [
                    "bind the loop sizes" if row["total_lower"] is None else
                    f"{format_time(row['total_lower'])} – {format_time(row['total_upper'])}"]
                table.add_row(printable(row["device"]), printable(f"{row['class']} ({row['origin'][:3]}.)"),
                              f"{row['priced_f']:.4g}", format_time(row["lower"]), format_time(row["upper"]), *total,
                              f"{row['lower_term']} / {row['upper_term']}")
            console.print(table)
            for row in rows:
                if row["elementary_call_cost"]:
                    console.print(f"  [dim]{printable(row['device'])}: {row['elementary_calls']:g} elementary "
                                  f"call(s) at {printable(row['elementary_call_cost'])}[/]", highlight=False)
                if row["conversion_cost"]:
                    console.print(f"  [dim]{printable(row['device'])}: {row['conversions']:g} int-to-float "
                                  f"conversion(s) an application, {printable(row['conversion_cost'])}[/]",
                                  highlight=False)
        console.print()
    if result.unresolved:
        console.print(f"[yellow]unresolved identifiers[/] (macros without a value, kept as size symbols): "
                      f"{printable(', '.join(result.unresolved))}; bind them with --define NAME=VALUE", highlight=False)
