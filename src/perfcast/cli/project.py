"""`perfcast project`: a kernel profiled on one device, projected onto others (spec §4), with intervals and totals."""

from __future__ import annotations

import math
import re
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from perfcast.cli.common import app, check_chart_path, console, errors, format_time, print_json, printable, resolve_device
from perfcast.errors import InputError

if TYPE_CHECKING:  # the library loads when a command runs, keeping `perfcast --help` fast
    from perfcast.campaign.projection import KernelProjection
    from perfcast.devices.schema import Device

_DURATION = re.compile(r"^\s*([0-9.]+(?:e[-+]?\d+)?)\s*(s|ms|us|µs|ns)?\s*$", re.IGNORECASE)
_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def _is_archive(path: Path) -> bool:
    """Return True when `path` is a campaign archive (a zip) or an unfinished run's working folder."""
    return path.suffix.lower() == ".zip" or (path.is_dir() and (path / "manifest.json").exists())


def _durations(items: list[str]) -> dict[str, float]:
    """Return KERNEL=DURATION options as seconds per kernel ('triad=1.5ms')."""
    found = {}
    for item in items:
        name, _, text = item.partition("=")
        match = _DURATION.match(text)
        if not name or not match:
            raise InputError(f"--time {item!r}: write KERNEL=DURATION, e.g. triad=1.5ms (units s, ms, us, ns)")
        seconds = float(match.group(1)) * _SECONDS[(match.group(2) or "s").lower()]
        if not math.isfinite(seconds) or seconds <= 0:
            raise InputError(f"--time {item!r}: the duration must be positive")
        found[name] = seconds
    return found


def _row(p: KernelProjection) -> dict[str, Any]:
    """Return one projection as JSON-ready numbers."""
    j = p.projection
    scored = p.scored()
    return {
        "kernel": p.kernel, "source": p.source.device.name, "target": p.target.device.name,
        "precision": p.precision, "flop_ratio": p.flop_ratio, "measured_performance_op_s": j.measured_performance,
        "per_level_op_s": j.per_level, "interval_op_s": [j.lower, j.upper], "middle_op_s": j.middle,
        "time_s": j.time, "time_range_s": list(j.time_range), "left_out": j.left_out,
        "fp_issue_share": j.fp_issue_share, "fp_issue_share_measured": j.fp_issue_measured,
        "ceilings": {side: {"perf_mix": c.perf_mix, "perf_ceil": c.perf_ceil, "issue_factor": c.issue_factor,
                            "perf_core": c.perf_core,
                            "times_s": c.times,
                            "bandwidth_ceilings": c.bandwidth_ceilings, "intensities": c.intensities,
                            "rooflines": c.rooflines} for side, c in (("source", j.source), ("target", j.target))},
        "measured_target_s": p.measured, "ape": scored.ape if scored else None,
        "contained": scored.contained if scored else None, "notes": list(p.notes),
    }


def _executed_counts(path: Path) -> dict[str, dict[int, tuple[str, float]]]:
    """Return per kernel base name: offset -> (opcode, threads executed), from Nsight Compute's source page."""
    from perfcast.campaign.projection import kernel_base_name
    from perfcast.profiles.ncu_source import looks_like_ncu_source, read_ncu_source

    if not path.is_file():
        raise InputError(f"--sass-counts {path}: no such file")
    text = path.read_text(errors="replace")
    if not looks_like_ncu_source(text):
        raise InputError(f"--sass-counts {path}: not Nsight Compute's source page (a '\"Kernel Name\",' line and an "
                         "Address/Source header): write it with perfcast profile --tool ncu --sass-counts")
    return {kernel_base_name(name): {c.offset: (c.opcode, c.threads) for c in counts}
            for name, counts in read_ncu_source(text).items()}


def _sass_ratios(sass: Path, defines: list[str], source: Device, targets: list[Device],
                 counts: Path | None = None) -> tuple[dict[tuple[str, str], float], dict[str, str]]:
    """Return FLOP_t / FLOP_s per (kernel, target) from `sass` compiled for both archs, and per kernel its basis.

    The basis says how the blocks were weighed: by the threads that executed them (`counts`), or each once.
    """
    from perfcast.campaign.projection import kernel_base_name
    from perfcast.profiles.sass import compare_sass

    if not sass.is_file():
        raise InputError(f"--sass {sass}: no such file")
    executed = _executed_counts(counts) if counts else {}
    ratios, basis = {}, {}
    with tempfile.TemporaryDirectory() as folder:
        for target in targets:
            found = compare_sass(sass, source.sm_architecture, target.sm_architecture, Path(folder),
                                 [f"-D{d}" for d in defines])
            for c in found:
                name = kernel_base_name(c.kernel)
                if counts is not None and name in executed:
                    ratios[(name, target.name)] = c.executed_flop_ratio(executed[name])
                    basis[name] = f"SASS blocks weighed by the threads that executed them ({counts.name})"
                else:
                    ratios[(name, target.name)] = c.flop_ratio
                    basis[name] = ("SASS blocks counted once each"
                                   + (f": {counts.name} has no kernel {name}" if counts else " (no --sass-counts)"))
    return ratios, basis


@app.command("project")
def project_command(
    profile_path: Annotated[Path, typer.Argument(help="A profile (perfcast profile), ncu/nvprof/Oclgrind output, or a campaign archive (campaign run -o).")],
    targets: Annotated[list[str], typer.Option("--to", help="Target: catalog name, device YAML, or a campaign archive (its device, and its times to score against). Repeatable.")],
    source_name: Annotated[str | None, typer.Option("--from", help="The device the profile was taken on (default: a campaign archive's own).")] = None,
    kernels: Annotated[list[str] | None, typer.Option("--kernel", "-k", help="Project this kernel only (repeatable).")] = None,
    times: Annotated[list[str] | None, typer.Option("--time", help="Measured time on the source, KERNEL=DURATION (e.g. triad=1.5ms), where the profile has none. Repeatable.")] = None,
    precision: Annotated[str | None, typer.Option("--precision", help="fp32, fp64 or int32 (default: per kernel, the one with more FLOP; int32 for a kernel with integer instructions and no FP arithmetic).")] = None,
    sass: Annotated[Path | None, typer.Option("--sass", help="CUDA source of the kernels: compile it for both architectures and scale the target's FLOP by its special functions' SASS.")] = None,
    define: Annotated[list[str] | None, typer.Option("--define", "-D", help="A macro for nvcc with --sass (repeatable).")] = None,
    sass_counts: Annotated[Path | None, typer.Option("--sass-counts", help="With --sass: Nsight Compute's source page of the profiled run (ncu --page source --csv --print-source sass), to weigh each SASS block by the threads that executed it.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Bar chart of the intervals (.png/.svg/.pdf); the rooflines of each kernel and target go beside it.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Projected time interval of each kernel on each target: the source's measurement through kernel-specific rooflines."""
    from perfcast.campaign.archive import Archive
    from perfcast.campaign.projection import (
        ArchiveRun,
        distinct_target,
        kernel_base_name,
        project_profiles,
        same_size_timings,
    )
    from perfcast.devices.schema import Precision
    from perfcast.profiles import read_profile
    from perfcast.profiles.profile import ProfileError

    check_chart_path(output)
    if precision not in (None, "fp32", "fp64", "int32"):
        raise InputError(f"--precision {precision!r}: the projection takes fp32, fp64 or int32")
    chosen_precision = Precision(precision) if precision else None
    given_times = _durations(times or [])
    run_precisions: dict[str, Precision] = {}
    source_sizes: dict[str, int | None] = {}
    code = None
    if _is_archive(profile_path):
        run = ArchiveRun.of(Archive.read(profile_path))
        if run.profiles is None:
            raise ProfileError(f"{profile_path}: the campaign archive has no kernel profiles")
        profiles = run.profiles
        source = resolve_device(source_name) if source_name else run.device
        given_times = {**{name: t for name, (t, _) in run.timings.items()}, **given_times}
        run_precisions, source_sizes, code = run.precisions, run.sizes, run.compiled_code()
    else:
        if source_name is None:
            raise InputError("--from: name the device the profile was taken on")
        profiles = read_profile(profile_path)
        source = resolve_device(source_name)
    devices = []
    measured: dict[tuple[str, str], tuple[float, float]] = {}
    for name in targets:
        if _is_archive(Path(name)):
            other = ArchiveRun.of(Archive.read(name))
            device = distinct_target(source, other.device)
            comparable, differing = same_size_timings(other, source_sizes)
            measured.update({(kernel, device.name): timing for kernel, timing in comparable.items()})
            for kernel, (here, there) in differing.items():
                errors.print(f"not scored on {printable(device.name)}: {printable(kernel)} ran at another size "
                             f"there (n = {there}, here {here})")
            devices.append(device)
        else:
            devices.append(resolve_device(name))
    chosen = profiles.select(kernels or [])
    precisions = {k.name: chosen_precision or run_precisions.get(k.name) for k in chosen}
    if sass_counts is not None and sass is None:
        raise InputError("--sass-counts weighs the SASS blocks --sass compiles: give --sass too")
    ratios, basis = _sass_ratios(sass, define or [], source, devices, sass_counts) if sass else ({}, {})
    results, left_out = project_profiles(
        profiles, source, devices, kernels=chosen, times=given_times,
        precisions={k: p for k, p in precisions.items() if p}, flop_ratios=ratios, measured=measured, code=code)
    results = [replace(p, notes=(*p.notes, basis[kernel_base_name(p.kernel)]))
               if kernel_base_name(p.kernel) in basis else p for p in results]
    if not results:
        raise ProfileError("no kernel could be projected: " + "; ".join(f"{k}: {v}" for k, v in
                                                                         list(left_out.items())[:5]))
    if as_json:
        print_json({
            "profile": str(profile_path), "source": source.name,
            "capabilities": {c.device.name + "/" + c.precision.value: {n: vars(f) for n, f in c.figures.items()}
                             for p in results for c in (p.source, p.target)},
            "kernels": [_row(p) for p in results], "left_out": left_out,
            "totals": {target: {"time_s": t.time, "fast_s": t.fast, "slow_s": t.slow, "measured_s": t.measured}
                       for target, t in _totals(results).items()},
        })
    else:
        _print(results, left_out)
    if output is not None:
        _charts(output, results)


@dataclass
class _Total:
    """One target's sums over its kernels (s): projected middle and interval ends, and measured where all are."""

    time: float = 0.0
    fast: float = 0.0
    slow: float = 0.0
    measured: float | None = 0.0


def _totals(results: list[KernelProjection]) -> dict[str, _Total]:
    """Return per target the summed middle times and interval ends (s) and, where all are known, measured."""
    totals: dict[str, _Total] = {}
    for p in results:
        t = totals.setdefault(p.target.device.name, _Total())
        t.time += p.projection.time
        t.fast += p.projection.time_range[0]
        t.slow += p.projection.time_range[1]
        t.measured = None if p.measured is None or t.measured is None else t.measured + p.measured
    return totals


def _print(results: list[KernelProjection], left_out: dict[str, str]) -> None:
    """Print a table of intervals, the totals, the figures each device gave and the notes."""
    scored = any(p.measured is not None for p in results)
    table = Table(box=box.SIMPLE_HEAVY, title="cross-device projection (§4): time on the target")
    columns = ["kernel", "target", "interval", "time"]
    columns += ["measured", "APE", "in"] if scored else []
    for column in columns:
        table.add_column(column, justify="left" if column in ("kernel", "target") else "right",
                         no_wrap=column != "kernel")
    for p in results:
        j = p.projection
        row = [printable(p.kernel.split("(")[0]), printable(p.target.device.name),
               f"{format_time(j.time_range[0])} – {format_time(j.time_range[1])}", format_time(j.time)]
        if scored:
            s = p.scored()
            row += [format_time(p.measured) if p.measured else "—", f"{s.ape:.1%}" if s else "—",
                    ("yes" if s.contained else "no") if s else "—"]
        table.add_row(*row)
    console.print(table)
    for p in results:
        levels = ", ".join(f"{level} {value / 1e9:.4g}" for level, value in p.projection.per_level.items())
        console.print(f"{printable(p.kernel)} -> {printable(p.target.device.name)} ({p.precision}): "
                      f"{p.projection.measured_performance / 1e9:.4g} G{p.work}/s measured; per level {levels} "
                      f"G{p.work}/s",
                      soft_wrap=True, highlight=False)
    for target, t in _totals(results).items():
        measured = f", measured {format_time(t.measured)}" if t.measured else ""
        console.print(f"total on {printable(target)}: {format_time(t.time)} ({format_time(t.fast)} – "
                      f"{format_time(t.slow)}){measured}")
    seen = set()
    for p in results:
        for c in (p.source, p.target):
            key = (c.device.name, c.precision)
            if key not in seen:
                seen.add(key)
                console.print(f"[bold]{printable(c.device.name)}[/] ({c.precision.value}): {printable(c.summary())}",
                              soft_wrap=True)
    notes = sorted({note for p in results for note in p.notes})
    for note in notes:
        console.print(f"note: {printable(note)}", soft_wrap=True, highlight=False)
    console.print("(how each figure was obtained, and every intermediate: --json)")
    for name, why in left_out.items():
        errors.print(f"left out {printable(name)}: {printable(why)}", highlight=False)


def _charts(output: Path, results: list[KernelProjection]) -> None:
    """Write the interval chart to `output` and each kernel's pair of rooflines beside it."""
    from perfcast.plots.files import save_figure
    from perfcast.plots.projection import projection_intervals_figure, projection_rooflines_figure

    rows = [p.interval_row() for p in results]
    source = results[0].source.device.name
    save_figure(projection_intervals_figure(rows, f"projected from {source}"), output)
    console.print(f"wrote {printable(output)}")
    for p in results:
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{p.kernel.split('(')[0]}-{p.target.device.name}").strip("-")[:80]
        path = output.with_name(f"{output.stem}-{slug}{output.suffix}")
        save_figure(projection_rooflines_figure(p.kernel, p.source.device.name, p.target.device.name, p.projection,
                                                p.measured, p.work), path)
        console.print(f"wrote {printable(path)}")
