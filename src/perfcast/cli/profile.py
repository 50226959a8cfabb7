"""`perfcast profile` (kernel metrics from a profiler) and `perfcast predict` (the quantitative roofline, §3)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from perfcast.cli.common import (
    CSV_HELP,
    CsvOutput,
    app,
    check_chart_path,
    check_csv,
    console,
    errors,
    format_time,
    print_json,
    print_table,
    printable,
    resolve_device,
    text_out,
    write_rows_csv,
)
from perfcast.output_files import check_writable

if TYPE_CHECKING:
    from perfcast.models.quantitative import QuantitativePrediction
    from perfcast.profiles.profile import ProfileSet

_TOOL_HELP = "ncu (Nsight Compute), nvprof, or oclgrind (any OpenCL program, no GPU needed)"


def _count(value: float | None) -> str:
    """Return a count in a short form (1.23e+09), or '—'."""
    if value is None:
        return "—"
    return f"{value:.4g}" if value < 1e5 else f"{value:.3e}"


MAX_ROWS_PRINTED = 200  # kernels in the printed table; --csv writes them all


def _print_profile(profile: ProfileSet, csv_to: Path | None = None) -> None:
    """Print the kernels of a profile: launches, time, and the counts the models read (as CSV with --csv)."""
    table = Table(box=box.SIMPLE_HEAVY, title=printable(profile.source.describe()))
    levels = [name for name in ("l1_bytes", "l2_bytes", "l3_bytes")
              if any(name in kernel.metrics for kernel in profile.kernels)]
    simulated = any(kernel.bytes_from for kernel in profile.kernels)
    for column in ("kernel", "launches", "time", "M_fp32", "M_fma32", "M_fp64", "M_int", "M_ldst", "M_inst",
                   *(f"{name[:2].upper()} B" for name in levels), "DRAM B", *(("bytes from",) if simulated else ())):
        table.add_column(column, justify="left" if column in ("kernel", "bytes from") else "right")
    # On a terminal or in a pipe a table of thousands of rows says nothing more than its first ones (and rich
    # takes minutes to lay out 100 000); --csv and the profile file hold every kernel.
    shown = profile.kernels if csv_to is not None else profile.kernels[:MAX_ROWS_PRINTED]
    for kernel in shown:
        m = kernel.metrics
        dram = (m["dram_read"] + m["dram_write"]) * 32 if "dram_read" in m and "dram_write" in m else None
        table.add_row(printable(kernel.name), str(kernel.launches),
                      format_time(kernel.duration) if kernel.duration else "—",
                      *(_count(m.get(name)) for name in ("fp32", "fma_fp32", "fp64", "int", "ldst", "inst_warp")),
                      *(_count(m.get(name)) for name in levels), _count(dram),
                      *((printable(kernel.bytes_from or "the profiler"),) if simulated else ()))
    print_table(table, csv_to)
    out = text_out(csv_to)
    if len(shown) < len(profile.kernels):
        out.print(f"… and {len(profile.kernels) - len(shown):,} more kernels: every one is in the profile file "
                  "(and in --csv)", highlight=False)
    for note in profile.notes:
        out.print(f"note: {printable(note)}")
    for kernel in shown:
        for note in kernel.notes:
            out.print(f"note ({printable(kernel.name)}): {printable(note)}")


@app.command("profile")
def profile_command(
    command: Annotated[list[str] | None, typer.Argument(help="The program to profile and its arguments, after --.")] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="The profile to write (YAML).")] = Path("profile.yaml"),
    tool: Annotated[str | None, typer.Option("--tool", "-t", help=f"Profiler: {_TOOL_HELP}. Default: the first installed of ncu, oclgrind, nvprof.")] = None,
    from_file: Annotated[Path | None, typer.Option("--from", help="Read this profiler output (ncu or nvprof CSV, Oclgrind histograms) instead of running a program.")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Stop the profiled program after this many seconds.")] = None,
    kernels: Annotated[list[str] | None, typer.Option("--kernel", "-k", help="Keep only this kernel (repeatable; exact name, name before its arguments, or a unique part).")] = None,
    sass_counts: Annotated[bool, typer.Option("--sass-counts", help="ncu only: run the program once more for Nsight Compute's source page (threads executed per SASS instruction), written beside the profile as .ncu-source.csv, for `perfcast project --sass-counts`.")] = False,
    traffic: Annotated[str, typer.Option("--traffic", help="Where the bytes per level come from: 'footprint' (the bytes the kernels touch, no cache) or 'simulate' (Oclgrind traces every access and perfcast runs it through --device's caches).")] = "footprint",
    device: Annotated[str | None, typer.Option("--device", "-d", help="--traffic simulate: the device whose caches to simulate (catalog name, YAML file, or 'host').")] = None,
    trace_window: Annotated[int, typer.Option("--trace-window", min=0, help="--traffic simulate: record windows of this many work-groups (0: every work-group).")] = 0,
    trace_stride: Annotated[int, typer.Option("--trace-stride", min=0, help="--traffic simulate: one window every this many work-groups.")] = 0,
    keep_trace: Annotated[bool, typer.Option("--keep-trace", help="--traffic simulate: keep the binary memory trace beside the profile.")] = False,
    csv_to: CsvOutput = None,
) -> None:
    """Kernel metrics for the models: run a program under a profiler (or read its output) and write a profile."""
    from dataclasses import replace

    from perfcast.profiles import READERS, read_profile
    from perfcast.profiles.capture import TOOLS, TrafficRequest, capture, capture_ncu_source, default_tool

    check_writable(output, "--output", (".yaml", ".yml"), inputs=[from_file])
    check_csv(csv_to)
    if traffic not in ("footprint", "simulate"):
        raise typer.BadParameter(f"--traffic {traffic!r}: choose footprint or simulate")
    request = None
    if traffic == "simulate":
        if from_file is not None or (tool is not None and tool != "oclgrind"):
            raise typer.BadParameter("--traffic simulate traces the program under Oclgrind: give it after -- "
                                     "with --tool oclgrind")
        if device is None:
            raise typer.BadParameter("--traffic simulate needs --device: whose caches to simulate")
        from perfcast.devices.cache_view import cache_hierarchy
        from perfcast.profiles.trace_plugin import TraceSampling

        sampling = TraceSampling(trace_window, trace_stride)
        request = TrafficRequest(cache_hierarchy(resolve_device(device)), sampling, keep_trace,
                                 lambda text: errors.print(printable(text), highlight=False))
        tool = "oclgrind"
    elif device is not None or trace_window or trace_stride or keep_trace:
        raise typer.BadParameter("--device, --trace-window, --trace-stride and --keep-trace go with --traffic simulate")
    if from_file is not None:
        if command:
            raise typer.BadParameter("give either --from FILE or a program to run, not both")
        if sass_counts:
            raise typer.BadParameter("--sass-counts runs the program under ncu: give it after --, not --from")
        if tool is not None and tool not in READERS:
            raise typer.BadParameter(f"--tool {tool!r}: choose one of {', '.join(READERS)}")
        profile = read_profile(from_file, tool)
    else:
        if not command:
            raise typer.BadParameter("give the program to profile after --, or --from FILE")
        chosen = tool or default_tool()
        if chosen not in TOOLS:
            raise typer.BadParameter(f"--tool {chosen!r}: choose one of {', '.join(TOOLS)}")
        if sass_counts and chosen != "ncu":
            raise typer.BadParameter(f"--sass-counts needs Nsight Compute (--tool ncu), not {chosen}")
        errors.print(f"profiling with {chosen}: {printable(' '.join(command))}", highlight=False)
        result = capture(chosen, command, output, timeout, request)
        profile = result.profile
        errors.print(f"raw output kept in {printable(result.raw)}"
                     + (f" and {len(result.extra)} IR file(s) beside it" if result.extra else ""), highlight=False)
        if sass_counts:
            errors.print("running it again for the SASS source page (ncu --section SourceCounters)", highlight=False)
            page = capture_ncu_source(command, output, timeout)
            errors.print(f"SASS source page in {printable(page)}: perfcast project --sass KERNEL.cu "
                         f"--sass-counts {printable(page)}", highlight=False)
    if kernels:  # a name that matches nothing, or several kernels, is an error naming the kernels there are
        profile = replace(profile, kernels=tuple(profile.select(kernels)))
    profile.save(output)
    _print_profile(profile, csv_to)
    text_out(csv_to).print(f"wrote {printable(output)}")


def _prediction_row(prediction: QuantitativePrediction) -> dict[str, Any]:
    """Return a prediction as JSON-ready numbers."""
    p = prediction
    return {
        "time_s": p.time, "bound": p.bound, "reason": p.reason, "performance_op_s": p.performance,
        "k_type": p.kernel.k_type, "w_comp_op": p.kernel.w_comp, "w_traf_b": p.kernel.w_traf,
        "e_mix": p.kernel.e_mix, "e_instr": p.e_instr, "d_ops": p.kernel.d_ops, "d_ldst": p.kernel.d_ldst,
        "d_other": p.kernel.d_other, "t_op": p.t_op, "t_op_adjusted": p.t_op_adjusted,
        "o_krn": None if p.o_krn == float("inf") else p.o_krn, "o_dev": p.o_dev,
        "w_op": p.w_op, "w_ldst": p.w_ldst, "w_other": p.w_other,
        "latency_floor_s": None if p.floor is None else p.floor.time,
        "division_time_s": None if p.divisions is None else p.divisions.time,
        "issue_floor_s": None if p.issue is None else p.issue.time,
        "atomic_time_s": None if p.atomics is None else p.atomics.time,
    }


@app.command("predict")
def predict_command(
    profile_path: Annotated[Path, typer.Argument(help="A profile (perfcast profile), or ncu/nvprof/Oclgrind output.")],
    device_names: Annotated[list[str], typer.Option("--device", "-d", help="Target: catalog name, device YAML (perfcast bench) or 'host'. Repeatable.")],
    kernels: Annotated[list[str] | None, typer.Option("--kernel", "-k", help="Predict this kernel only (repeatable; default: every kernel with the metrics).")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Quadrant-split chart (.png/.svg/.pdf); one file per kernel when there are several.")] = None,
    log: Annotated[bool, typer.Option("--log", help="Log axes on the chart.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
    csv_to: Annotated[Path | None, typer.Option("--csv", help=CSV_HELP + " One row per kernel and device, in base units.")] = None,
    scalar: Annotated[list[str] | None, typer.Option("--scalar", help="A kernel its compiler left scalar (its report: gcc -fopt-info-vec, PoCL's POCL_VECTORIZER_REMARKS): a CPU with a measured rate of scalar instructions floors its time at them (§3.3). Repeatable.")] = None,
) -> None:
    """Time of each profiled kernel on each device, by the quantitative roofline (§3), with its bound and why."""
    from perfcast.campaign.score import predict_profiled
    from perfcast.devices.quantitative_view import quantitative_inputs
    from perfcast.models.quantitative import kernel_parameters
    from perfcast.profiles import read_profile
    from perfcast.profiles.profile import ProfileError

    check_chart_path(output)
    check_csv(csv_to)
    profile = read_profile(profile_path)
    chosen = profile.select(kernels or [])
    # Resolved as --kernel is (a unique part of a name will do), and an error where the profile has no such kernel.
    scalar_names = {k.name for k in profile.select(scalar)} if scalar else set()
    devices = [resolve_device(name) for name in device_names]
    inputs = [_launch_figures_unused(quantitative_inputs(device)) for device in devices]
    results: list[tuple[str, list[tuple[str, QuantitativePrediction]]]] = []
    details: dict[tuple[str, int], str] = {}  # (kernel, device's index) -> the prediction in words, floors included
    skipped: list[str] = []
    for kernel in chosen:
        try:
            kernel_parameters(kernel.counts())  # a kernel without §3's metrics is skipped here, once
        except (ProfileError, ValueError) as error:
            if kernels:
                raise ProfileError(str(error) if isinstance(error, ProfileError)
                                   else f"kernel {kernel.name!r}: {error}") from None
            skipped.append(f"{kernel.name}: {error}")
            continue
        rows = []
        for index, info in enumerate(inputs):
            try:
                # A device with a measured rate of elementary-function calls prices them itself (Oclgrind
                # profiles only: its counts give every call a fixed cost); its measured random loads and
                # divisions give the floors of §3.1 and §3.2 where the profile has their counts; its scalar
                # instructions §3.3's for the kernels named --scalar.
                lanes = 1 if kernel.name in scalar_names else None
                prediction, details[(kernel.name, index)], _ = predict_profiled(kernel, info, lanes)
                rows.append((info.device.name, prediction))
            except ValueError as error:
                raise ProfileError(f"kernel {kernel.name!r} on {info.device.name}: {error}") from None
        results.append((kernel.name, rows))
    if not results:
        raise ProfileError("no kernel of the profile has the metrics the quantitative model needs: "
                           + "; ".join(skipped[:5]))
    if as_json:
        print_json({
            "profile": str(profile_path), "source": vars(profile.source),
            "devices": {info.device.name: info.sources for info in inputs},
            "kernels": [{"kernel": name, "predictions": {
                device: {**_prediction_row(p), "explanation": details[(name, index)]}
                for index, (device, p) in enumerate(rows)}} for name, rows in results],
            "skipped": skipped,
        })
    else:
        _print_predictions(profile, results, inputs, details, text_out(csv_to))
        for line in skipped:
            errors.print(f"skipped {printable(line)}", highlight=False)
        if csv_to is not None:
            write_rows_csv([{"kernel": name, "device": device, **_prediction_row(p)}
                            for name, rows in results for device, p in rows], csv_to)
    if output is not None:
        _save_charts(output, results, log)


# The device figures of §3.8 (the runtime's own time of a launch and of its work-groups): a campaign adds them to
# the launches it timed; a profile's kernel is predicted without them, so they are listed as not used.
_LAUNCH_FIGURES = ("launches", "work-groups")


def _launch_figures_unused(info: Any) -> Any:
    """Return a device's §3 inputs with its launch figures said to be unused by `perfcast predict`."""
    from dataclasses import replace

    def marked(lines: dict[str, str]) -> dict[str, str]:
        return {key: f"{text}; not used here (§3.8 prices a campaign's timed launches)" if key in _LAUNCH_FIGURES
                else text for key, text in lines.items()}

    return replace(info, sources=marked(info.sources), summaries=marked(info.summaries))


def _print_predictions(profile: ProfileSet, results: list[tuple[str, list[tuple[str, QuantitativePrediction]]]],
                       inputs: list[Any], details: dict[tuple[str, int], str], out: Any = console) -> None:
    """Print one table row per kernel and device, the explanation of each, and where the device figures come from."""
    table = Table(box=box.SIMPLE_HEAVY, title=f"quantitative roofline (§3), profile: {printable(profile.source.describe())}")
    for column in ("kernel", "device", "type", "time", "bound", "T_pred", "O_krn", "O_dev", "E_mix", "E_instr"):
        table.add_column(column, justify="left" if column in ("kernel", "device", "bound") else "right")
    for name, rows in results:
        for device, p in rows:
            unit = "GOP/s" if p.kernel.k_type == "int" else "GFLOP/s"
            table.add_row(printable(name), printable(device), p.kernel.k_type, format_time(p.time), p.bound,
                          f"{p.performance / 1e9:.4g} {unit}", "∞" if p.o_krn == float("inf") else f"{p.o_krn:.3g}",
                          f"{p.o_dev:.3g}", f"{p.kernel.e_mix:.2f}", f"{p.e_instr:.2f}")
    out.print(table)
    for name, rows in results:
        for index, (device, _) in enumerate(rows):
            out.print(f"{printable(name)} on {printable(device)}: {printable(details[(name, index)])}", soft_wrap=True)
    for info in inputs:
        out.print(f"[bold]{printable(info.device.name)}[/]: " + ", ".join(
            f"{symbol} {printable(text)}" for symbol, text in info.summaries.items()), soft_wrap=True)
    out.print("(where each device figure comes from: --json)")


def _save_charts(output: Path, results: list[tuple[str, list[tuple[str, QuantitativePrediction]]]],
                 log: bool) -> None:
    """Write the quadrant-split chart of each kernel."""
    import re

    from perfcast.plots.files import save_figure
    from perfcast.plots.quadrant import quadrant_figure

    for name, rows in results:
        path = output
        if len(results) > 1:
            slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name.split("(")[0]).strip("-")[:60] or "kernel"
            path = output.with_name(f"{output.stem}-{slug}{output.suffix}")
        save_figure(quadrant_figure(name, rows, log=log), path)
        console.print(f"wrote {printable(path)}")
