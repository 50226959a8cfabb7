"""`perfcast validate`: measured validations of the models and benchmarks on this machine."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from perfcast.cli.common import (
    HOST,
    CsvOutput,
    app,
    check_chart_path,
    check_csv,
    console,
    errors,
    fail,
    format_time,
    measuring_progress,
    print_json,
    print_table,
    printable,
    resolve_device,
    text_out,
)
from perfcast.output_files import check_writable, write_text_atomic
from perfcast.plots.files import save_figure
from perfcast.units import Dimension, Precision, format_quantity

validate_app = typer.Typer(help="Measured validations of the models on this machine.", no_args_is_help=True)
app.add_typer(validate_app, name="validate")


def _complexities(quick: bool) -> Callable[[Any], Any]:
    """Return which complexities f of a primitive to time: every other one with --quick."""
    return lambda primitive: primitive.complexities[::2] if quick else primitive.complexities


def _command_line(default: str) -> str:
    """Return the command line this process was run with, for a report's "reproduce with" (else `default`)."""
    import shlex
    import sys

    # Only a process started as perfcast (the script, or python -m perfcast) has perfcast's arguments in argv;
    # called from Python (a test, a notebook) argv belongs to that program.
    program = Path(sys.argv[0]) if sys.argv else Path()
    started_as_perfcast = program.name == "perfcast" or (program.name == "__main__.py"
                                                         and program.parent.name == "perfcast")
    if not started_as_perfcast or not sys.argv[1:]:
        return default
    return "perfcast " + " ".join(shlex.quote(arg) for arg in sys.argv[1:])


def _print_comparisons(title: str, other: str, comparisons: Any) -> None:
    """Print perfcast's medians beside another program's, and their ratio, one row per figure."""
    import numpy as np

    table = Table(box=box.SIMPLE_HEAD, title=printable(title), title_justify="left")
    for column in ("figure", "perfcast (median)", f"{other} (median)", "ratio", "90 % interval"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for c in comparisons:
        ours, theirs = float(np.median(c.perfcast)), float(np.median(c.reference))
        if c.unit == "launch/s":  # shown as the latency it is the inverse of
            table.add_row(c.figure, f"{1e6 / ours:.3g} µs", f"{1e6 / theirs:.3g} µs", f"{c.ratio:.3f}",
                          c.interval_text())
            continue
        dimension = Dimension.BANDWIDTH if c.unit == "B/s" else Dimension.COMPUTE
        table.add_row(c.figure, format_quantity(ours, dimension), format_quantity(theirs, dimension), f"{c.ratio:.3f}",
                      c.interval_text())
    console.print(table)


# Options the validations share.
CpuDevice = Annotated[str, typer.Option("--device", "-d", help="Description of this CPU: a YAML file, or 'host' to detect it now.")]
Quick = Annotated[bool, typer.Option("--quick", help="Small arrays and fewer points or rounds (seconds, for tests).")]
Repetitions = Annotated[int, typer.Option("--repetitions", "-r", min=1, help="Timed runs per point.")]
Markdown = Annotated[Path | None, typer.Option("--markdown", help="Write the report (Markdown) to this file.")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def _timing_rounds(rounds: int, work: Callable[[Callable[[int], None]], Any], label: str = "timing rounds") -> Any:
    """Return work(progress) run under a progress bar of `rounds` rounds; a ValueError or a failing tool is a CLI error."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    with measuring_progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) as bar:
        task = bar.add_task(label, total=rounds)
        try:
            return work(lambda done: bar.update(task, completed=done, refresh=True))
        except (ValueError, RuntimeError) as error:
            raise fail(str(error)) from None


@validate_app.command("classify")
def validate_classify_command(
    corpus: Annotated[list[Path] | None, typer.Option("--corpus", "-c", help="Annotated C files or folders ('/* expect: SPECIES */' or Bones' '#pragma species kernel'); repeatable. Default: the source tree's PolyBench and Bones corpora.")] = None,
    measure: Annotated[bool, typer.Option("--measure", help="Also classify perfcast's C primitives, predict them with the boat hull and time them on --device.")] = False,
    device_name: CpuDevice = HOST,
    quick: Quick = False,
    repetitions: Repetitions = 10,
    markdown: Markdown = None,
    as_json: Json = False,
    csv_to: CsvOutput = None,
) -> None:
    """Score classify against loop nests annotated by hand (exact / partial / wrong / unclassified); --measure times the primitives too."""
    from perfcast.validation.classify_corpus import CorpusError, corpus_markdown, default_corpora, score_corpus

    try:
        check_writable(markdown, "--markdown")
        check_csv(csv_to)
        chosen_corpora = list(corpus or default_corpora())
        if not chosen_corpora:
            raise CorpusError("no corpus: give --corpus PATH (the annotated corpora live in a source checkout, "
                              "under tests/data/classify)")
        scores = [(_corpus_name(path), score_corpus([path])) for path in chosen_corpora]
    except (ValueError, CorpusError) as error:
        raise fail(str(error)) from None
    measured = _measure_classified(device_name, quick, repetitions) if measure else None
    if as_json:
        print_json({
            "corpora": [{"corpus": name, "files": len(score.files), "counts": score.counts(),
                         "exact_share": score.exact_fraction(), "nests": [s.to_json() for s in score.scored]}
                        for name, score in scores],
            **(measured[3] if measured else {}),
        })
    else:
        table = Table(box=box.SIMPLE_HEAD, title="classify against species written by hand", title_justify="left")
        for column in ("corpus", "nests", "exact", "partial", "wrong", "unclassified", "exact share"):
            table.add_column(column, justify="left" if column == "corpus" else "right")
        for name, score in scores:
            counts = score.counts()
            table.add_row(printable(name), str(len(score.scored)), *(str(counts[v]) for v in
                          ("exact", "partial", "wrong", "unclassified")), f"{100 * score.exact_fraction():.1f} %")
        print_table(table, csv_to)
        for name, score in scores:
            for s in score.scored:
                if s.verdict != "exact":
                    where = f"{Path(s.annotation.path).name}:{s.annotation.line}"
                    got = s.nest.species if s.nest and s.nest.species else "no species"
                    text_out(csv_to).print(f"  [yellow]{s.verdict}[/] {printable(name)} {printable(where)}: "
                                  f"{printable(got)} ({printable(s.detail)})", highlight=False)
        if measured:
            _print_measured_classification(*measured[:3])
    if markdown is not None:
        command = _command_line("perfcast validate classify")
        text = corpus_markdown(scores, command, {"polybench": "≥ 90 % exact (issue 32)"})
        if measured:
            from perfcast.validation.classify_primitives import classify_markdown

            chosen, run, inputs, _ = measured
            text += "\n" + "\n".join(("#" + line if line.startswith("#") else line)
                                       for line in classify_markdown(chosen, run, inputs, command).splitlines()) + "\n"
        write_text_atomic(markdown, text)
        (errors if as_json else console).print(f"wrote {printable(markdown)}", highlight=False)


def _corpus_name(path: Path) -> str:
    """Return how a corpus is named in reports: its folder (or file) name."""
    return path.name or str(path)


def _measure_classified(device_name: str, quick: bool, repetitions: int) -> tuple[Any, Any, Any, dict[str, Any]]:
    """Classify the C primitives, predict them on the device and time them; return the run and its JSON."""
    from perfcast.devices.hull_view import hull_inputs
    from perfcast.kernels.native import NativeBuildError
    from perfcast.validation.classify_primitives import classified_primitives, validate_classified

    try:
        device = resolve_device(device_name)
        inputs = hull_inputs(device, Precision.FP32, 4)
        chosen = classified_primitives(quick)
    except (ValueError, LookupError, NativeBuildError) as error:
        raise fail(str(error)) from None
    run = _timing_rounds(repetitions, lambda progress: validate_classified(
        inputs, chosen, repetitions, _complexities(quick), progress=progress))
    data = {
        "device": run.device, "date": run.date, "repetitions": run.repetitions, "inputs": inputs.sources,
        "classified": [{"primitive": c.primitive.name, "species": c.species,
                        "hand_written_species": c.primitive.species, "problem": c.problem,
                        "nests": {str(f): n.location for f, n in c.nests.items()},
                        "f_agrees": {str(f): ok for f, ok in c.f_agrees.items()}} for c in chosen],
        "points": [{**p.__dict__, "error_percent": p.error, "in_range": p.in_range} for p in run.points],
    }
    return chosen, run, inputs, data


def _print_measured_classification(chosen: Any, run: Any, inputs: Any) -> None:
    """Print the primitives' classification and their measured times against the predicted ranges."""
    for c in chosen:
        text = c.species if c.species is not None else f"not classified: {c.problem}"
        console.print(f"{c.primitive.name:<14} classified {printable(text)}  (hand-written: "
                      f"{printable(c.primitive.species)})", highlight=False)
    table = Table(box=box.SIMPLE_HEAD, title=f"classify -> predict -> measure on {run.device}", title_justify="left")
    for column in ("primitive", "f", "measured", "predicted range", "in range"):
        table.add_column(column, justify="left" if column == "primitive" else "right")
    for p in run.points:
        table.add_row(p.primitive, str(p.f), format_time(p.measured),
                      f"{format_time(p.range_lower)} – {format_time(p.range_upper)}", "yes" if p.in_range else "no")
    console.print(table)


@validate_app.command("boathull")
def validate_boathull_command(
    device_name: CpuDevice = HOST,
    quick: Quick = False,
    repetitions: Repetitions = 10,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the measured-vs-predicted chart.")] = None,
    markdown: Markdown = None,
    as_json: Json = False,
) -> None:
    """Time synthetic primitives (elementwise, reduction, 5x5 neighbourhood) and compare with the boat hull prediction."""
    from perfcast.devices.hull_view import hull_inputs
    from perfcast.kernels.native import NativeBuildError
    from perfcast.validation.boathull_primitives import (
        primitives_for,
        summary,
        validate_boathull,
        validation_markdown,
    )

    try:
        check_chart_path(output)
        check_writable(markdown, "--markdown")
        device = resolve_device(device_name)
        inputs = hull_inputs(device, Precision.FP32, 4)
        primitives = primitives_for(quick)
    except (ValueError, LookupError, NativeBuildError) as error:
        raise fail(str(error)) from None

    run = _timing_rounds(repetitions, lambda progress: validate_boathull(
        inputs, primitives, repetitions=repetitions, complexities=_complexities(quick), progress=progress))
    rows = summary(run.points)
    if as_json:
        print_json({
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
            table.add_row(p.primitive, str(p.f), format_time(p.measured), f"{p.spread:.0%}",
                          format_time(p.predicted), p.binding, f"{p.error:.1f} %", "yes" if p.in_range else "no")
        console.print(table)
        for name, row in rows.items():
            console.print(f"  {name:<14} median error {row['median_error']:5.1f} %, max {row['max_error']:5.1f} %, "
                          f"inside the range {row['in_range']:.0%}", highlight=False)
    if output is not None:
        import numpy as np

        from perfcast.plots.boathull import HullPanel, MeasuredPoints, hull_figure
        from perfcast.species.application import predict_primitive

        dense = np.geomspace(1, 1e4, 161)
        panels = []
        for primitive in primitives:
            mine = [p for p in run.points if p.primitive == primitive.name]
            curve = predict_primitive(primitive.species, inputs.figures, dense).prediction
            measured = MeasuredPoints([p.f for p in mine], [p.measured for p in mine],
                                      f"measured (median of {repetitions})")
            panels.append(HullPanel(f"{primitive.name}: {mine[0].class_name}\n{primitive.species}", curve, measured))
        save_figure(hull_figure(panels, suptitle=f"Boat hull vs measured — {run.device}"), output)
        (errors if as_json else console).print(f"wrote {printable(output)}", highlight=False)
    if markdown is not None:
        command = _command_line("perfcast validate boathull")
        chart = None
        if output is not None:
            chart = os.path.relpath(output.resolve(), markdown.resolve().parent)
        write_text_atomic(markdown, validation_markdown(run, inputs, command, chart))
        (errors if as_json else console).print(f"wrote {printable(markdown)}", highlight=False)


@validate_app.command("bench")
def validate_bench_command(
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Side-by-side rounds (each runs both, alternating order).")] = 7,
    quick: Quick = False,
    markdown: Markdown = None,
    against: Annotated[list[str] | None, typer.Option("--against", help="Also run beside these installed peer programs, comma-separated: likwid (likwid-bench), clpeak (OpenCL).")] = None,
    as_json: Json = False,
) -> None:
    """Run perfcast's CPU triad and FMA peak beside a reference STREAM triad and peak-FMA loop in C, and peers."""
    from perfcast.bench.detect import detect_cpu
    from perfcast.bench.peers import (
        PEERS,
        compare_with_peers,
        huge_page_note,
        huge_page_policy,
        l1_per_cycle,
        numpy_asks_for_huge_pages,
        peers_markdown,
    )
    from perfcast.bench.reference import compare_with_references, comparison_markdown
    from perfcast.kernels.native import NativeBuildError

    check_writable(markdown, "--markdown")
    peer_names = [name.strip() for value in against or [] for name in value.split(",") if name.strip()]
    unknown = [name for name in peer_names if name not in PEERS]
    if unknown:
        raise fail(f"--against {', '.join(unknown)}: unknown; peers: {', '.join(PEERS)}")
    try:
        with console.status("detecting this machine…"):
            host = detect_cpu(probe_bytes=64 * 2**20, repetitions=3)
        peer_figures = {name: PEERS[name][1](host) for name in peer_names}  # a missing peer is said before timing
    except (ValueError, NativeBuildError) as error:
        raise fail(str(error)) from None
    largest = max((lvl.size.value for lvl in host.memory if lvl.size is not None and lvl.level != "DRAM"),
                  default=32 * 2**20)
    elements = int((2 if quick else 8) * largest // 8)
    rounds = 2 if quick else rounds
    results = _timing_rounds(rounds, partial(compare_with_references, host.threads, elements, rounds),
                             "side-by-side rounds")
    peer_results = {
        name: _timing_rounds(rounds, partial(compare_with_peers, figures, rounds), f"rounds beside {name}")
        for name, figures in peer_figures.items()
    }
    likwid_notes = ""
    boost = host.clock.boost  # detection measured it under load, on every core, when the command started
    if "likwid" in peer_results and boost is not None and boost.provenance.source == "measured":
        from perfcast.kernels.native import vector_isa

        likwid_notes = l1_per_cycle(peer_results["likwid"], boost.value, host.threads, vector_isa().vector_bytes)
    if "likwid" in peer_results:
        likwid_notes += huge_page_note(huge_page_policy(), numpy_asks_for_huge_pages())
    if as_json:
        print_json({"device": host.full_name, "threads": host.threads, "elements_per_array": elements,
                     "comparisons": [{"figure": c.figure, "unit": c.unit, "perfcast": c.perfcast,
                                      "reference": c.reference, "ratio": c.ratio, "interval": c.interval()}
                                     for c in results],
                     "peers": {name: [{"figure": c.figure, "unit": c.unit, "perfcast": c.perfcast, "peer": c.reference,
                                       "ratio": c.ratio, "interval": c.interval()} for c in found]
                               for name, found in peer_results.items()},
                    "notes": [note.strip() for note in likwid_notes.split("\n\n") if note.strip()]})
    else:
        _print_comparisons(f"perfcast against the references on {host.full_name}", "reference", results)
        for name, found in peer_results.items():
            _print_comparisons(f"perfcast beside {name}", name, found)
        if likwid_notes:
            console.print(likwid_notes.strip(), highlight=False)
    if markdown is not None:
        command = _command_line("perfcast validate bench --markdown docs/validation/bench-cpu.md")
        text = comparison_markdown(results, host, elements, largest, rounds, command)
        text += "".join(peers_markdown(name, peer_figures[name], found, rounds) + (likwid_notes if name == "likwid" else "")
                        for name, found in peer_results.items())
        write_text_atomic(markdown, text)
        (errors if as_json else console).print(f"wrote {printable(markdown)}", highlight=False)


@validate_app.command("tuning")
def validate_tuning_command(
    runs: Annotated[int, typer.Option("--runs", min=1, help="Independent tuning runs.")] = 7,
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="The strategy validated.")] = "hierarchical",
    budget: Annotated[int | None, typer.Option("--budget", min=1, help="The strategy's budget (hierarchical: the evaluations past which it begins no extra, the chosen result's review always runs; random: how many).")] = None,
    nsim: Annotated[int, typer.Option("--nsim", min=1, help="Simulations of the target problem.")] = 8192,
    npos: Annotated[int, typer.Option("--npos", min=1, help="Positions of the reference portfolio.")] = 8192,
    rounds: Annotated[int, typer.Option("--rounds", min=2, help="Round-robin rounds of the final re-measurement.")] = 15,
    launches: Annotated[int, typer.Option("--launches", min=1, help="Launches per configuration and round of the final re-measurement; the round counts their median.")] = 3,
    device_id: Annotated[str | None, typer.Option("--device", "-d", help="OpenCL device: PLATFORM:DEVICE index or a name part.")] = None,
    folder: Annotated[Path, typer.Option("--stores", help="Folder for the runs' results stores.")] = Path(".perfcast/validate-tuning"),
    quick: Annotated[bool, typer.Option("--quick", help="The small parameter space (seconds, for tests).")] = False,
    also: Annotated[list[Path] | None, typer.Option("--also", help="JSON of other tuners' choices on this machine (docs/validation/tuning-live/kerneltuner_varmc.py writes one), re-measured in the same rounds. Repeatable.")] = None,
    export_arrays: Annotated[Path | None, typer.Option("--export-arrays", help="Only write the kernel's portfolio and market arrays (.npz) for another tuner, and stop.")] = None,
    markdown: Markdown = None,
    as_json: Json = False,
) -> None:
    """Tune the VaR kernel in independent runs; re-measure their choices with the best known, round-robin."""
    import shutil
    import statistics

    from perfcast.bench.opencl import OpenClBackend
    from perfcast.kernels.varmc import default_market, reference_portfolio
    from perfcast.tune.strategies import STRATEGIES
    from perfcast.tune.validation import read_other_choices, validate_tuning
    from perfcast.tune.varmc import VarmcTunable, default_space

    if strategy not in STRATEGIES:
        raise fail(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    check_writable(markdown, "--markdown", (".md",))
    portfolio, market = reference_portfolio(npos), default_market()
    if export_arrays is not None:
        import numpy as np

        from perfcast.output_files import replaced

        check_writable(export_arrays, "--export-arrays", (".npz",))
        with replaced(export_arrays) as partial, partial.open("wb") as handle:
            np.savez(handle, types=portfolio.types, amounts=portfolio.amounts, maturities=portfolio.maturities,
                     packed=market.packed(), nsim=nsim, npos=npos)
        console.print(f"wrote {printable(export_arrays)} (nsim {nsim}, npos {npos})")
        return
    others = [choice for path in also or [] for choice in read_other_choices(path)]
    device = OpenClBackend.open(device_id, 1).device

    def make() -> VarmcTunable:
        return VarmcTunable(portfolio, market, nsim, default_space(quick), device)

    shutil.rmtree(folder, ignore_errors=True)  # independent runs: nothing measured before may answer
    with console.status("validating the tuner") as status:
        try:
            found = validate_tuning(make, folder, runs=runs, strategy=strategy, rounds=rounds, launches=launches,
                                    budget=budget, others=others,
                                    progress=lambda label: status.update(printable(label)[:100]))
        except (ValueError, RuntimeError) as error:
            raise fail(str(error)) from None
    fractions = found.fractions()
    summary = {
        "strategy": strategy, "runs": len(found.runs), "median_fraction": statistics.median(fractions),
        "min_fraction": min(fractions), "max_evaluations": max(r.evaluations for r in found.runs),
        "max_wall_s": max(r.wall_s for r in found.runs), "best_known": found.best_known,
        "exhaustive_evaluations": found.exhaustive_evaluations, "exhaustive_wall_s": found.exhaustive_wall_s,
        "rounds": found.rounds, "launches_per_round": found.launches, "environment": found.environment,
        "per_run": [{"config": r.config, "evaluations": r.evaluations, "wall_s": r.wall_s, "fraction": r.fraction,
                     "interval": list(r.interval)} for r in found.runs],
        "remeasured": [{"config": c, "median_mpps": m, "round_spread": s} for c, m, s in found.remeasured],
        "others": [{"label": label, "config": r.config, "evaluations": r.evaluations, "wall_s": r.wall_s,
                    "fraction": r.fraction, "interval": list(r.interval)} for label, r in found.others],
    }
    lines = [
        "# Tuning validated on this machine: independent runs, their choices re-measured together", "",
        "Reproduce with:", "", "```sh", _command_line(f"perfcast validate tuning --runs {runs}"), "```", "",
        f"- device: {found.environment.get('device')} ({found.environment.get('platform')}); host "
        f"{found.environment.get('host')}",
        f"- kernel: Monte Carlo VaR, nsim = {nsim}, npos = {npos}; space: "
        + ", ".join(f"{k} {list(v)}" for k, v in default_space(quick).items()),
        f"- best known: the exhaustive run's best {min(5, found.exhaustive_evaluations)} configurations "
        f"({found.exhaustive_evaluations} evaluations, {found.exhaustive_wall_s:.0f} s) and every run's choice, "
        f"re-measured together round-robin for {found.rounds} rounds (each round the median of {found.launches} "
        f"launches back to back); the best (lowest median time) is "
        f"`{found.best_known}`",
        f"- each run: a new store and a new kernel object; {strategy}, decisions by round-robin races; its "
        "fraction is the median per-round ratio of its choice to the best known over the final rounds, with its "
        "distribution-free 95 % interval", "",
        f"**{strategy}: median {summary['median_fraction']:.1%}, minimum {summary['min_fraction']:.1%} of the best "
        f"known; at most {summary['max_evaluations']} evaluations and {summary['max_wall_s']:.0f} s per run.**", "",
        "| run | chosen configuration | evaluations | wall | fraction of the best known [95 % interval] |",
        "|---|---|---|---|---|",
    ]
    for i, r in enumerate(found.runs, 1):
        lines.append(f"| {i} | `{r.config}` | {r.evaluations} | {r.wall_s:.0f} s | {r.fraction:.1%} "
                     f"[{r.interval[0]:.1%} – {r.interval[1]:.1%}] |")
    if found.others:
        labels = list(dict.fromkeys(label for label, _ in found.others))
        lines += ["", "Other tuners' choices on this machine, re-measured in the same rounds:", "",
                  "| tuner | runs | median fraction | minimum | evaluations (max) | wall (max) |",
                  "|---|---|---|---|---|---|",
                  f"| perfcast {strategy} | {len(found.runs)} | {summary['median_fraction']:.1%} | "
                  f"{summary['min_fraction']:.1%} | {summary['max_evaluations']} | {summary['max_wall_s']:.0f} s |"]
        for label in labels:
            mine = [r for other_label, r in found.others if other_label == label]
            lines.append(f"| {label} | {len(mine)} | {statistics.median(r.fraction for r in mine):.1%} | "
                         f"{min(r.fraction for r in mine):.1%} | {max(r.evaluations for r in mine)} | "
                         f"{max(r.wall_s for r in mine):.0f} s |")
    lines += ["", "Every configuration re-measured (median over the rounds; spread = (max − min) / median):", "",
              "| configuration | median | round spread |", "|---|---|---|"]
    lines += [f"| `{c}` | {m:,.0f} mpps | {s:.0%} |" for c, m, s in sorted(found.remeasured, key=lambda x: -x[1])]
    lines.append("")
    if markdown is not None:
        write_text_atomic(markdown, "\n".join(lines))
    if as_json:
        print_json(summary)
    else:
        console.print("\n".join(line for line in lines if not line.startswith("```")), highlight=False, soft_wrap=True)
    if markdown is not None:
        (errors if as_json else console).print(f"wrote {printable(markdown)}")


def _machine() -> str:
    """Return this machine in a few words: CPU model, cores, Python."""
    import platform

    first: dict[str, str] = {}  # each cpuinfo field as the first core gives it
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            first.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    model = first.get("model name") or platform.processor() or platform.machine()
    flags = set(first.get("flags", "").split())
    isa = next((f", {name}" for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2")) if flag in flags), "")
    return f"{model}{isa}, {os.cpu_count()} cores, Python {platform.python_version()}"


@validate_app.command("gpu-corpus")
def validate_gpu_corpus_command(
    corpus_dir: Annotated[Path | None, typer.Option("--corpus", help="Corpus folder (corpus.yaml and KERNEL.csv.gz); default: the one perfcast ships.")] = None,
    kernels: Annotated[list[str] | None, typer.Option("--kernel", "-k", help="Score only this corpus kernel. Repeatable.")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Project every 25th configuration only (and each GPU's best), replay tuning with 2 seeds and 100 evaluations: seconds, for tests.")] = False,
    seeds: Annotated[int, typer.Option("--replay-seeds", min=0, help="Seeds of random search in the tuning replay (0: no replay).")] = 20,
    budget: Annotated[int, typer.Option("--replay-budget", min=1, help="Evaluations of each random search run.")] = 500,
    markdown: Markdown = None,
    as_json: Json = False,
) -> None:
    """Score every model on published GPU measurements (the corpus): roofline, hull, projection, portability, tuning."""
    import dataclasses
    import json
    import time

    from perfcast.devices.catalog import get_device
    from perfcast.errors import NotFound
    from perfcast.validation.corpus import CORPUS_DIR, read_corpus
    from perfcast.validation.gpu_report import corpus_json, corpus_markdown, format_percent, summary, write_charts
    from perfcast.validation.gpu_scores import replay_gap, replay_scores, score_corpus
    from perfcast.validation.kernel_work import kernel_work

    check_writable(markdown, "--markdown", (".md",))
    started = time.perf_counter()
    corpus = read_corpus(corpus_dir or CORPUS_DIR, kernels)
    devices = {}
    for name in corpus.devices():
        try:
            devices[name] = get_device(name)
        except NotFound:  # scored without it; the report lists what was left out
            continue
    works = {k.name: kernel_work(k.name, k.configs, k.parameters, k.problem) for k in corpus.kernels.values()}
    with console.status("scoring the GPU corpus") as status:
        scores = score_corpus(list(corpus.kernels.values()), works, devices, quick=quick,
                              progress=lambda label: status.update(printable(label)[:100]))
        if seeds:
            replays = replay_scores(list(corpus.kernels.values()), scores.usable, 2 if quick else seeds,
                                    min(budget, 100) if quick else budget,
                                    progress=lambda label: status.update(printable(label)[:100]),
                                    broken=scores.broken())
            gaps = [gap for k in corpus.kernels.values() for d in scores.usable.get(k.name, ())
                    if (gap := replay_gap(k, d))]
            scores = dataclasses.replace(scores, replays=replays, skipped=scores.skipped + gaps)
    elapsed = time.perf_counter() - started
    data = corpus_json(scores, corpus)
    if markdown is not None:
        folder = markdown.with_suffix("")
        charts = {name: f"{folder.name}/{path.name}" for name, path in write_charts(scores, folder).items()}
        command = _command_line("perfcast validate gpu-corpus --markdown " + str(markdown))
        write_text_atomic(markdown, corpus_markdown(scores, corpus, devices, command, charts, elapsed, _machine()))
        write_text_atomic(markdown.with_suffix(".json"), json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    if as_json:
        print_json(data)
    else:
        head = summary(scores)
        table = Table(box=box.SIMPLE_HEAD, title="perfcast on the GPU corpus", title_justify="left")
        for column in ("model", "score", "result"):
            table.add_column(column, overflow="fold")
        roof = head["roofline"]
        table.add_row("roofline", "violations naive / hierarchical",
                      f"{roof['naive_violations']} / {roof['hierarchical_violations']} of {roof['configurations']} "
                      f"({roof['implausible']} broken records)")
        hull = head["hull"]
        table.add_row("boat hull", "best time in a range <= 3x", f"{hull['contained_within_width']} of {hull['pairs']}")
        for group, figures in head["projection"].items():
            best = figures["best_mape"]
            table.add_row(f"projection, {group}", "MAPE best: perfcast / §4 as written / bw / FLOP / max",
                          " / ".join(format_percent(best[m]) for m in best))
        for strategy, figures in head["tuning_replay"].items():
            table.add_row(f"tuning replay, {strategy}", f"final fraction over {figures['spaces']} spaces: median / lowest",
                          f"{format_percent(figures['final_median'])} / {format_percent(figures['final_lowest'])}")
        port = head["portability"]
        table.add_row("portability", "median: source's best / top-5 projected",
                      f"{format_percent(port['best_carried_median'])} / "
                      f"{format_percent(port['projected_top_median']['5'])}")
        console.print(table)
        for line in scores.skipped:
            errors.print(f"note: {printable(line)}")
    if markdown is not None:
        (errors if as_json else console).print(f"wrote {printable(markdown)}, its .json and charts")


@validate_app.command("gpu-corpus-build")
def validate_gpu_corpus_build_command(
    hub: Annotated[Path, typer.Argument(help="A checkout of AutoTuningAssociation/benchmark_hub (its files, LFS ones included).")],
    commit: Annotated[str, typer.Option("--commit", help="The hub's commit the checkout holds (written into the manifest).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Corpus folder to write.")] = Path("corpus"),
    kernels: Annotated[list[str] | None, typer.Option("--kernel", "-k", help="Build only this kernel. Repeatable.")] = None,
    caches: Annotated[list[str] | None, typer.Option("--cache", help="KERNEL:DEVICE=PATH: add a column measured elsewhere (a KernelTuner cache of the hub's kernel on a catalog device, e.g. from scripts/hub-tune.py). Repeatable.")] = None,
) -> None:
    """Rebuild the GPU corpus (compressed CSVs and manifest) from the benchmark hub's KernelTuner caches."""
    from perfcast.validation.corpus_build import build_corpus

    if not hub.is_dir():
        raise fail(f"{printable(hub)} is not a folder (a checkout of the benchmark hub)")
    extra: dict[str, dict[str, Path]] = {}
    for text in caches or []:
        kernel, _, rest = text.partition(":")
        device, _, path = rest.partition("=")
        if not (kernel and device and path):
            raise fail(f"--cache {printable(text)}: expected KERNEL:DEVICE=PATH")
        extra.setdefault(kernel, {})[device] = Path(path)
    with console.status("reading the hub's caches"):
        rows = build_corpus(hub, output, commit, kernels, extra)
    for name, count in rows.items():
        console.print(f"{printable(name)}: {count} configurations")
    console.print(f"wrote {printable(output)}")


@validate_app.command("choose")
def validate_choose_command(
    kernels: Annotated[list[str] | None, typer.Option("--kernel", "-k", help="Check only this corpus kernel. Repeatable.")] = None,
    archives: Annotated[list[Path] | None, typer.Option("--archive", help="A campaign archive of the kernel suite, one per device (repeatable; default: the suite campaigns under docs/validation, where this folder has them).")] = None,
    markdown: Markdown = None,
    as_json: Json = False,
) -> None:
    """Check perfcast choose against measured orders: corpus kernels tuned on one GPU, and suite kernels over archives."""
    from perfcast.choose.bands import CAMPAIGN_SOURCES
    from perfcast.choose.check import (
        CORPUS_ABOUT,
        CORPUS_FOOTNOTE,
        SUITE_ABOUT,
        SUITE_FOOTNOTE,
        CheckSection,
        check_archives,
        check_corpus,
        check_markdown,
        summarise_cases,
    )
    from perfcast.devices.catalog import known_devices

    check_writable(markdown, "--markdown", (".md",))
    if archives is None:
        archives = [Path(p) for p in CAMPAIGN_SOURCES if Path(p).exists()]
    sections = []
    with console.status("ranking the corpus kernels and the suite"):
        cases = check_corpus(known_devices(), kernels)
        sections.append(CheckSection("GPU corpus: cross-GPU projection", CORPUS_ABOUT, "projection", "tuned on",
                                     cases, summarise_cases(cases), CORPUS_FOOTNOTE))
        if archives:
            cases = check_archives(archives)
            sections.append(CheckSection("Kernel suite: quantitative roofline over campaign archives", SUITE_ABOUT,
                                         "quantitative", "profiled on", cases, summarise_cases(cases),
                                         SUITE_FOOTNOTE))
    if markdown is not None:
        command = _command_line("perfcast validate choose --markdown " + str(markdown))
        write_text_atomic(markdown, check_markdown(sections, command, _machine()))
    if as_json:  # print_json writes NaN (no pair told apart, tau of two devices) as null
        print_json({section.title: {"summary": vars(section.summary), "cases": [
            {"kernel": c.workload, "source": c.source, "devices": list(c.devices), "predicted_s": list(c.predicted),
             "measured_s": list(c.measured), "tau": c.tau, "top1": c.top(1), "top2": c.top(2)}
            for c in section.cases]} for section in sections})
        return
    table = Table(box=box.SIMPLE_HEAD, title="perfcast choose against measured orders", title_justify="left")
    for column in ("data", "ranking", "cases", "Kendall tau (median)", "best first", "best in top 2",
                   "told apart: right"):
        table.add_column(column)
    for section in sections:
        summary = section.summary
        table.add_row(section.title, f"perfcast choose ({section.model})", str(summary.cases),
                      f"{summary.tau_median:.2f}", f"{summary.top1:.0%}", f"{summary.top2:.0%}",
                      f"{summary.told_apart_correct:.0%} of {summary.told_apart_pairs}" if summary.told_apart_pairs
                      else "no pair told apart")
        for method, rates in summary.baselines.items():
            table.add_row("", method, "", f"{rates['tau_median']:.2f}", f"{rates['top1']:.0%}", f"{rates['top2']:.0%}",
                          "")
    print_table(table)
    if markdown is not None:
        console.print(f"wrote {printable(markdown)}", highlight=False)
