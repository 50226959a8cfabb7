"""`perfcast choose`: which device runs a workload best, per run, per dollar and per joule, with error bands."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich import box
from rich.table import Table

from perfcast.cli.common import (
    CSV_HELP,
    app,
    check_chart_path,
    check_csv,
    errors,
    fail,
    format_time,
    print_json,
    print_table,
    printable,
    resolve_device,
    text_out,
    write_rows_csv,
)
from perfcast.units import Precision

if TYPE_CHECKING:
    from perfcast.choose.choice import Choice
    from perfcast.devices.schema import Device


def _candidates(names: list[str] | None, every: bool, kind: str | None) -> list[Device]:
    """Return the devices to rank: those named, or the whole catalog (of one kind) with --all."""
    from perfcast.devices.catalog import known_devices

    if names and every:
        raise fail("give either --device (repeatable) or --all, not both")
    if every:
        devices = [d for d in known_devices().values() if kind is None or d.kind == kind]
    elif names:
        devices = [resolve_device(name) for name in names]
        if kind is not None:
            dropped = [d.name for d in devices if d.kind != kind]
            devices = [d for d in devices if d.kind == kind]
            if dropped:
                errors.print(f"--kind {kind}: left out {printable(', '.join(dropped))}", highlight=False)
    else:
        raise fail("name the devices to rank with --device (repeatable), or rank the whole catalog with --all")
    if not devices:
        raise fail(f"no {kind} among the devices given")
    return devices


RUNS = ((1, "run"), (1_000, "1k runs"), (1_000_000, "1M runs"), (1_000_000_000, "1G runs"))


def _cost_scale(choice: Choice) -> tuple[int, str]:
    """Return how many runs one cost cell counts, so that the cheapest known cost reads at least a cent."""
    known = [r.cost for r in choice.ranked if r.cost is not None]
    for runs, label in RUNS:
        if not known or min(known) * runs >= 0.01:
            return runs, label
    return RUNS[-1]


def _money(usd: float | None, runs: int) -> str:
    """Return the cost of `runs` runs in USD ('—' where unknown)."""
    return "—" if usd is None else f"${usd * runs:.3g}"


def _joules(value: float | None) -> str:
    """Return an energy per run in J, mJ, µJ or nJ ('—' where unknown)."""
    if value is None:
        return "—"
    for unit, factor in (("J", 1.0), ("mJ", 1e-3), ("µJ", 1e-6)):
        if value >= factor:
            return f"{value / factor:.3g} {unit}"
    return f"{value / 1e-9:.3g} nJ"


def _interval(low: float, high: float) -> str:
    """Return a time interval (s) in words; an unbounded one says so."""
    return f"{format_time(low)} – {'no limit' if math.isinf(high) else format_time(high)}"


def _rows(choice: Choice) -> list[dict[str, Any]]:
    """Return one CSV row per device: times in s, cost in USD and energy in J per run."""
    rows = []
    for entry in choice.as_dict()["ranking"]:
        interval = entry["interval_s"] or [None, None]
        rows.append({"rank": entry["rank"], "device": entry["device"], "tier": entry["tier"],
                     "time_s": entry["time_s"], "interval_low_s": interval[0], "interval_high_s": interval[1],
                     "cost_usd": entry["cost_usd"], "energy_j": entry["energy_j"], "tdp_w": entry["tdp_w"],
                     "price_kind": entry["price"]["kind"] if entry["price"] else None,
                     "price_usd": entry["price"]["usd"] if entry["price"] else None,
                     "pareto": entry["pareto"], "measured_s": entry["measured_s"], "detail": entry["detail"]})
    return rows


def _print_choice(choice: Choice, out: Any) -> None:
    """Print the ranking table, the bands it used and the devices left out."""
    workload = choice.workload
    title = (f"{printable(workload.name)} — {workload.kind}, predicted by the {workload.model} model; "
             f"ranked by {choice.order}")
    table = Table(title=title, box=box.SIMPLE_HEAD)
    runs, per = _cost_scale(choice)
    for column in ("#", "device", "time", "validated interval", "tier (time)", f"cost/{per}", "energy/run",
                   "price", "measured", "why"):
        table.add_column(column, overflow="fold")
    for r in choice.ranked:
        e = r.estimate
        interval = "measured" if e.is_measurement else (_interval(*e.interval) if e.interval else "no band")
        price = "—" if e.price is None else (f"${e.price.usd:g}/h rental" if e.price.per_hour
                                             else f"${e.price.usd:,.0f} {e.price.kind}")
        table.add_row(str(r.rank), printable(e.device) + (" *" if r.pareto else ""), format_time(e.time), interval,
                      "—" if r.tier is None else str(r.tier), _money(r.cost, runs), _joules(r.energy), price,
                      format_time(e.measured) if e.measured else "",
                      printable("; ".join((e.detail, *r.notes))))
    print_table(table)
    bands = {r.estimate.band for r in choice.ranked if r.estimate.band is not None}
    for band in sorted(bands, key=lambda b: b.scope):
        out.print(f"band: {printable(band.describe())} — from {printable(band.source)}", highlight=False)
    out.print("tier (by time): the fastest device leads tier 1, which holds every device whose interval overlaps "
              "the leader's (the model cannot order them); the fastest device left leads tier 2, and so on (--json "
              "lists every device each one overlaps); * on the Pareto front of time against cost; cost: "
              + ("rental price x time" if choice.basis == "rental" else
                 f"purchase price spread over {choice.lifetime_years:g} years of use, x time"), highlight=False)
    for name, why in choice.left_out.items():
        errors.print(f"left out {printable(name)}: {printable(why)}", highlight=False)
    for note in choice.notes:
        out.print(f"note: {printable(note)}", highlight=False)


@app.command("choose")
def choose_command(
    workload: Annotated[str, typer.Argument(help="A profile (perfcast profile -o, ncu/nvprof/Oclgrind output), a campaign archive, an application YAML, a C file, a species ('... -> ...') or corpus:KERNEL (a recorded tuning space, with --source).")],
    device_names: Annotated[list[str] | None, typer.Option("--device", "-d", help="A device to rank: catalog name, device YAML or 'host'. Repeatable.")] = None,
    every: Annotated[bool, typer.Option("--all", help="Rank every device of the catalog (and this folder's measured profiles).")] = False,
    kind: Annotated[str | None, typer.Option("--kind", help="Only devices of this kind: cpu or gpu.")] = None,
    order: Annotated[str, typer.Option("--by", help="Rank by time, cost (per run) or energy (per run).")] = "time",
    basis: Annotated[str, typer.Option("--cost", help="Cost of a run from the rental price (per hour) or the purchase price (list or street, spread over --lifetime).")] = "rental",
    lifetime: Annotated[float, typer.Option("--lifetime", min=0.01, help="Years of use a purchase price is spread over.")] = 4.0,
    prices: Annotated[Path | None, typer.Option("--prices", help="Your prices (YAML: version: 1, prices: {DEVICE: {kind, usd, reference, date}}); they replace the catalog's for those devices.")] = None,
    source: Annotated[str | None, typer.Option("--source", help="corpus:KERNEL: the GPU the space was tuned on.")] = None,
    kernels: Annotated[list[str] | None, typer.Option("--kernel", "-k", help="Profiles: only this kernel (repeatable; default: every kernel with the metrics).")] = None,
    bind: Annotated[list[str] | None, typer.Option("--bind", help="Species and C files: bind a size, e.g. N=4096. Repeatable or comma-separated.")] = None,
    f: Annotated[float, typer.Option("--f", min=0, help="Species: ops per application of the element operator.")] = 1.0,
    element_size: Annotated[float, typer.Option("--element-size", min=0.001, help="Species: bytes per element.")] = 4.0,
    function: Annotated[str | None, typer.Option("--function", "-F", help="C files: only the loop nests of this function.")] = None,
    precision: Annotated[Precision | None, typer.Option("--precision", "-p", help="Species and C files: the precision of the compute peak (default: fp32 for a species, the loop nests' own for a C file).")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Chart of time against cost per run (energy where no price is known), Pareto front highlighted (.png/.svg/.pdf).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of the table.")] = False,
    csv_to: Annotated[Path | None, typer.Option("--csv", help=CSV_HELP + " One row per device, times in s, cost in USD, energy in J.")] = None,
) -> None:
    """Which device runs a workload best: predicted time, cost and energy per run, each with its validated error band."""
    from perfcast.choose import WorkloadOptions, choose, load_prices

    choices: dict[str, tuple[str, ...]] = {"--by": ("time", "cost", "energy"), "--cost": ("rental", "purchase"),
                                           "--kind": ("cpu", "gpu")}
    for option, value in (("--by", order), ("--cost", basis), ("--kind", kind)):
        if value is not None and value not in choices[option]:
            raise fail(f"{option} {value!r}: choose one of {', '.join(choices[option])}")
    check_chart_path(output)
    check_csv(csv_to)
    from perfcast.cli.hull import _parse_bind

    try:
        bound = _parse_bind(bind)
    except ValueError as error:
        raise fail(str(error)) from None
    devices = _candidates(device_names, every, kind)
    overrides = load_prices(prices) if prices else None
    options = WorkloadOptions(kernels=tuple(kernels or ()), bind=bound, f=f, element_size=element_size,
                              precision=precision.value if precision else None, function=function, source=source)
    by: Literal["time", "cost", "energy"] = order  # type: ignore[assignment]  # checked above
    cost: Literal["rental", "purchase"] = basis  # type: ignore[assignment]
    result = choose(workload, devices, order=by, basis=cost, lifetime_years=lifetime, prices=overrides,
                    options=options)
    if as_json:
        print_json(result.as_dict())
    else:
        _print_choice(result, text_out(csv_to))
        if csv_to is not None:
            write_rows_csv(_rows(result), csv_to)
    if output is not None:
        from perfcast.plots.choose import ChoicePoint, choice_figure
        from perfcast.plots.files import save_figure

        with_cost = any(r.cost is not None for r in result.ranked)
        points = [ChoicePoint(r.estimate.device, r.estimate.time, r.estimate.interval,
                              r.cost if with_cost else r.energy, r.pareto if with_cost else False,
                              r.estimate.measured) for r in result.ranked]
        label = (f"cost per run (USD, {'rental' if cost == 'rental' else f'purchase over {lifetime:g} years'})"
                 if with_cost else "energy per run (J, time x TDP)")
        title = f"{result.workload.name}: {result.workload.model} model over {len(points)} devices"
        save_figure(choice_figure(points, title, label), output)
        (errors if as_json else text_out(csv_to)).print(f"wrote {printable(output)}", highlight=False)
