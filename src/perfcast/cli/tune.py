"""`perfcast tune`: auto-tuning of the VaR kernel, and reports of tuning runs."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from perfcast.cli.common import (
    CSV_HELP,
    app,
    check_chart_path,
    check_csv,
    console,
    errors,
    fail,
    measuring_progress,
    print_json,
    printable,
    registry_help,
    text_out,
    write_rows_csv,
)
from perfcast.output_files import check_writable, replaced
from perfcast.plots.files import save_figure
from perfcast.tune.strategies import STRATEGIES

tune_app = typer.Typer(help="Auto-tuning of OpenCL kernels (the Monte Carlo VaR case study), and replay of recorded spaces.",
                       no_args_is_help=True)
app.add_typer(tune_app, name="tune")


# Options the tuning commands share.
Repetitions = Annotated[int, typer.Option("--repetitions", "-r", min=1, help="Timed runs per configuration.")]
StorePath = Annotated[Path, typer.Option("--store", help="Results database (SQLite).")]
DEFAULT_STORE = Path(".perfcast/results.sqlite")
Seed = Annotated[int, typer.Option("--seed", help="Random strategy seed.")]
JsonText = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
Workers = Annotated[int, typer.Option("--workers", min=1, help="Measure on this many identical devices at once, one Ray worker each (local by default; needs perfcast[ray]). Batches of configurations (exhaustive, random, unguided sweeps) spread over them.")]
RayAddress = Annotated[str | None, typer.Option("--ray", help="Join a running Ray cluster ('auto', or HOST:PORT) instead of starting one on this machine.")]
# Strategies whose measurements come in batches, which workers take in parallel; the others decide each next
# configuration from the last measurement, so their workers take one configuration at a time.
BATCHED = {"exhaustive", "random", "hierarchical-measured"}


def _cluster(workers: int, address: str | None) -> Any:
    """Return the cluster options of --workers and --ray."""
    from perfcast.tune.cluster import ClusterOptions

    return ClusterOptions(workers, address)


def _tune_once(tunable: Any, strategy: str, store: Any, repetitions: int, budget: int | None, seed: int,
               cluster: Any = None, factory: Any = None) -> tuple[Any, int, bool]:
    """Run one strategy with a progress line (on a pool of workers with `cluster`); return (result, run id, resumed)."""
    from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

    from perfcast.tune.strategies import Session, run_strategy

    run_id, resumed = store.open_run(tunable.name, strategy, tunable.environment(), tunable.target(), repetitions)
    pool = None
    try:
        with measuring_progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn()) as bar:
            task = bar.add_task(f"{strategy}: starting", total=None)

            def progress(label: str) -> None:
                bar.update(task, description=f"{strategy} #{session.measured + 1}: {label}", refresh=True)

            if cluster is not None and cluster.parallel:
                from perfcast.tune.cluster import DevicePool, ParallelSession

                if strategy not in BATCHED:
                    errors.print(f"{strategy} is mostly sequential (a measurement decides the next): its workers "
                                 "take one configuration at a time except in the sweeps it does not guide; "
                                 f"{', '.join(sorted(BATCHED))} measure in parallel throughout", highlight=False)
                # A GPU per worker: Ray then shows each worker only its own GPU, which the device selector finds.
                gpu = bool(getattr(getattr(tunable, "device", None), "type", 0) & 4)  # CL_DEVICE_TYPE_GPU
                pool = DevicePool(factory, cluster, progress=lambda label: errors.print(printable(label),
                                                                                       highlight=False), gpu=gpu,
                                  driver=tunable)
                session: Session = ParallelSession(tunable, store, run_id, repetitions, progress=progress, pool=pool)
            else:
                session = Session(tunable, store, run_id, repetitions, progress=progress)
            result = run_strategy(session, strategy, budget, seed)
    finally:
        if pool is not None:
            pool.close()
    store.finish(run_id, {"best": result.best, "metric": result.measurement.metric, "mean_s": result.measurement.mean,
                          "std_s": result.measurement.std, "evaluations": result.evaluations, "steps": result.steps})
    return result, run_id, resumed


def _varmc_on_device(npos: int, nsim: int, quick: bool, device_id: str | None, index: int) -> Any:
    """Return the VaR tunable on OpenCL device `device_id` (a worker's: it runs in the worker's process)."""
    from perfcast.bench.opencl import OpenClBackend
    from perfcast.kernels.varmc import default_market, reference_portfolio
    from perfcast.tune.varmc import VarmcTunable, default_space

    device = OpenClBackend.open(device_id, 1).device
    return VarmcTunable(reference_portfolio(npos), default_market(), nsim, default_space(quick), device)


def _kernel_on_device(spec: Any, source: str, device_id: str | None, index: int) -> Any:
    """Return a spec's kernel as a tunable on OpenCL device `device_id` (a worker's: it runs in the worker's process)."""
    from perfcast.bench.opencl import OpenClBackend
    from perfcast.tune.kernel_spec import tunable

    return tunable(spec, source, OpenClBackend.open(device_id, 1).device)


@contextmanager
def _tuning_store(store_path: Path) -> Iterator[Any]:
    """Yield the locked results store of one tuning command: device and build errors said, Ctrl-C kept.

    The store is opened first, so that one that cannot be used is said before any device work.
    """
    from perfcast.bench.backends import BackendUnavailable
    from perfcast.tune.store import ResultsStore

    store = ResultsStore(store_path)
    try:
        store.lock()
        yield store
    except (BackendUnavailable, RuntimeError, ValueError) as error:
        raise fail(str(error)) from None
    except KeyboardInterrupt:
        errors.print(f"interrupted: every completed measurement is kept in {printable(store_path)}; "
                     "run the same command again to resume", highlight=False)
        raise typer.Exit(code=130) from None
    finally:
        store.close()


@tune_app.command("varmc")
def tune_varmc_command(
    device_id: Annotated[str | None, typer.Option("--device", "-d", help="OpenCL device: PLATFORM:DEVICE index or a name part.")] = None,
    strategy: Annotated[str, typer.Option("--strategy", "-s", help=registry_help(STRATEGIES))] = "hierarchical",
    budget: Annotated[int | None, typer.Option("--budget", min=1, help="random: configurations to measure (default 20); hierarchical: the evaluations past which it begins no order-free move and reviews no other descent's result; the chosen result's review always runs (default: none).")] = None,
    nsim: Annotated[int, typer.Option("--nsim", min=1, help="Simulations of the target problem.")] = 2**14,
    npos: Annotated[int, typer.Option("--npos", min=1, help="Positions of the reference portfolio.")] = 2**14,
    repetitions: Repetitions = 10,
    store_path: StorePath = DEFAULT_STORE,
    quick: Annotated[bool, typer.Option("--quick", help="A small parameter space (seconds, for tests).")] = False,
    compare: Annotated[bool, typer.Option("--compare-exhaustive", help="Also run (or reuse) exhaustive search and report the fraction of its optimum.")] = False,
    seed: Seed = 0,
    workers: Workers = 1,
    ray_address: RayAddress = None,
    as_json: JsonText = False,
) -> None:
    """Tune the Monte Carlo VaR kernel on an OpenCL device; an interrupted run resumes where it stopped."""
    if strategy not in STRATEGIES:
        raise fail(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    cluster = _cluster(workers, ray_address)
    factory = partial(_varmc_on_device, npos, nsim, quick, device_id)
    with _tuning_store(store_path) as store:
        tunable = factory(0)  # the driver's own, built as each worker builds its
        device = tunable.device
        result, run_id, resumed = _tune_once(tunable, strategy, store, repetitions, budget, seed, cluster, factory)
        failures = store.failures(run_id)
        optimum = None
        if compare and strategy != "exhaustive":
            optimum, _, _ = _tune_once(tunable, "exhaustive", store, repetitions, budget, seed, cluster, factory)
    m = result.measurement
    summary = {
        "run": run_id, "resumed": resumed, "strategy": strategy, "device": device.name.strip(),
        "best": result.best, "mpps": m.metric, "mean_s": m.mean, "std_s": m.std, "evaluations": result.evaluations,
        "space_size": tunable.space.size(), "steps": result.steps, "store": str(store_path),
        "failures": [{k: f[k] for k in ("config", "status", "message")} for f in failures],
        "notes": list(result.notes),
        "interval_mpps": list(result.interval) if result.interval else None,
        "finalists": [{"config": c, "ratio": [r.estimate, r.low, r.high], "round_spread": spread}
                      for c, r, spread in result.finalists],
    }
    if optimum is not None:
        summary |= {"exhaustive_best": optimum.best, "exhaustive_mpps": optimum.measurement.metric,
                    "exhaustive_evaluations": optimum.evaluations,
                    "fraction_of_optimum": m.metric / optimum.measurement.metric}
    if as_json:
        print_json(summary)
        return
    console.print(f"[bold]{strategy}[/] tuning of varmc on {printable(summary['device'])} (run {run_id}"
                  f"{', resumed' if resumed else ''}; nsim={nsim}, npos={npos})", highlight=False)
    console.print(f"  best: {printable(result.best)}", highlight=False)
    if result.interval:
        console.print(f"  {m.metric:,.0f} mpps, 95 % interval {result.interval[0]:,.0f} – {result.interval[1]:,.0f} "
                      f"(kernel {m.mean * 1e3:.3f} ms, {len(m.samples)} final rounds, raced round-robin)", highlight=False)
        for config, ratio, spread in result.finalists:
            if config == result.best:
                continue
            console.print(f"    finalist {printable(config)}: {ratio.estimate:.1%} of the winner "
                          f"[{ratio.low:.1%} – {ratio.high:.1%}], round spread {spread:.0%}", highlight=False)
    else:
        console.print(f"  {m.metric:,.0f} mpps (kernel {m.mean * 1e3:.3f} ± {m.std * 1e3:.3f} ms over {repetitions} runs)",
                      highlight=False)
    console.print(f"  evaluations: {result.evaluations} measurements (configuration x problem size); "
                  f"the space has {summary['space_size']} configurations", highlight=False)
    for note in result.notes:
        console.print(f"  {printable(note)}", highlight=False)
    if failures:
        statuses = ", ".join(f"{sum(f['status'] == s for f in failures)} {s}" for s in sorted({f["status"] for f in failures}))
        console.print(f"  {len(failures)} configuration(s) failed and were stored as such ({statuses}); "
                      "--json lists them", highlight=False)
    if optimum is not None:
        console.print(f"  exhaustive optimum: {printable(optimum.best)}, {optimum.measurement.metric:,.0f} mpps after "
                      f"{optimum.evaluations} evaluations; this run reached "
                      f"{summary['fraction_of_optimum']:.1%} of it", highlight=False)
    console.print(f"  results in {printable(store_path)}; draw the step models with: perfcast tune report {run_id}", highlight=False)


@tune_app.command("kernel")
def tune_kernel_command(
    spec_path: Annotated[Path, typer.Argument(help="A tuning spec (YAML): kernel, source, problem, parameters with their level, arguments, NDRange (docs/tuning.md).")],
    device_id: Annotated[str | None, typer.Option("--device", "-d", help="OpenCL device: PLATFORM:DEVICE index or a name part.")] = None,
    strategy: Annotated[str, typer.Option("--strategy", "-s", help=registry_help(STRATEGIES))] = "hierarchical",
    budget: Annotated[int | None, typer.Option("--budget", min=1, help="random: configurations to measure (default 20); hierarchical: the evaluations past which it begins no order-free move and reviews no other descent's result; the chosen result's review always runs.")] = None,
    repetitions: Repetitions = 10,
    store_path: StorePath = DEFAULT_STORE,
    seed: Seed = 0,
    workers: Workers = 1,
    ray_address: RayAddress = None,
    as_json: JsonText = False,
) -> None:
    """Tune any OpenCL kernel described by a spec file; an interrupted run resumes where it stopped."""
    from perfcast.tune.kernel_spec import load_kernel_spec

    if strategy not in STRATEGIES:
        raise fail(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    spec, source = load_kernel_spec(spec_path)  # a spec with a mistake is said before any device work
    cluster = _cluster(workers, ray_address)
    factory = partial(_kernel_on_device, spec, source, device_id)
    with _tuning_store(store_path) as store:
        kernel = factory(0)  # the driver's own, built as each worker builds its
        device = kernel.device
        result, run_id, resumed = _tune_once(kernel, strategy, store, repetitions, budget, seed, cluster, factory)
        failures = store.failures(run_id)
    m = result.measurement
    summary = {
        "run": run_id, "resumed": resumed, "strategy": strategy, "kernel": spec.kernel, "device": device.name.strip(),
        "best": result.best, "work_per_s": m.metric, "mean_s": m.mean, "std_s": m.std,
        "evaluations": result.evaluations, "space_size": kernel.space.size(), "steps": result.steps,
        "store": str(store_path), "notes": list(result.notes),
        "failures": [{k: f[k] for k in ("config", "status", "message")} for f in failures],
    }
    if as_json:
        print_json(summary)
        return
    console.print(f"[bold]{strategy}[/] tuning of {printable(spec.kernel)} on {printable(summary['device'])} (run "
                  f"{run_id}{', resumed' if resumed else ''}; {printable(dict(spec.problem))})", highlight=False)
    console.print(f"  best: {printable(result.best)}", highlight=False)
    console.print(f"  {m.metric:.4g} work/s ({spec.work} per run; kernel {m.mean * 1e3:.4g} ms)", highlight=False)
    console.print(f"  evaluations: {result.evaluations}; the space has {summary['space_size']} configurations",
                  highlight=False)
    for note in result.notes:
        console.print(f"  {printable(note)}", highlight=False)
    if failures:
        console.print(f"  {len(failures)} configuration(s) failed and were stored as such; --json lists them",
                      highlight=False)
    console.print(f"  results in {printable(store_path)}; perfcast tune report {run_id} --store {printable(store_path)}",
                  highlight=False)


@tune_app.command("report")
def tune_report_command(
    run_id: Annotated[int, typer.Argument(help="Tuning run id (printed by perfcast tune varmc).")],
    store_path: StorePath = DEFAULT_STORE,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Draw measured vs model per step (.png, .svg, .pdf).")] = None,
    csv_path: Annotated[Path | None, typer.Option("--csv", help="Export the run's measurements to CSV.")] = None,
    parquet_path: Annotated[Path | None, typer.Option("--parquet", help="Export to Parquet (needs pandas + pyarrow).")] = None,
    kerneltuner_path: Annotated[Path | None, typer.Option("--kerneltuner", help="Export the target-size measurements and failures as a KernelTuner cache (.json).")] = None,
    t4_path: Annotated[Path | None, typer.Option("--t4", help="Export them in the T4 results format (.json).")] = None,
    as_json: JsonText = False,
) -> None:
    """Fit the partial models of each step of a hierarchical run, print the constants and draw the step plots."""
    from perfcast.tune.partial_models import fit_varmc_run
    from perfcast.tune.store import ResultsStore

    if not store_path.is_file():
        raise fail(f"no results database at {store_path}")
    check_chart_path(output)
    check_writable(csv_path, "--csv", inputs=[store_path])
    check_writable(parquet_path, "--parquet", (".parquet",), inputs=[store_path])
    check_writable(kerneltuner_path, "--kerneltuner", (".json",), inputs=[store_path])
    check_writable(t4_path, "--t4", (".json",), inputs=[store_path])
    store = ResultsStore(store_path, create=False)
    try:
        info = store.run_info(run_id)
        measurements = store.measurements(run_id)
        failures = store.failures(run_id)
        if csv_path is not None:
            store.export_csv(run_id, csv_path)
    except (LookupError, ValueError) as error:
        raise fail(str(error)) from None
    finally:
        store.close()
    if parquet_path is not None:
        try:
            import pandas as pd
        except ImportError:
            raise fail("--parquet needs pandas and pyarrow (pip install pandas pyarrow); --csv needs nothing") from None
        rows = [{"step": m.step, **m.config, **m.size, "mean_s": m.mean, "std_s": m.std, "metric": m.metric}
                for m in measurements]
        with replaced(parquet_path) as partial:
            pd.DataFrame(rows).to_parquet(partial)
    fits = fit_varmc_run(measurements) if info["strategy"].startswith("hierarchical") else []
    if as_json:
        print_json({"run": info, "measurements": len(measurements),
                     "models": [{"name": f.name, "formula": f.formula, "constants": f.constants, "errors": f.errors,
                                 "rms_relative_error": f.rms_relative_error, "points": int(f.x.size)} for f in fits]})
    else:
        console.print(f"[bold]run {run_id}[/]: {printable(info['strategy'])} on "
                      f"{printable(info['environment']['device'])}, "
                      f"{len(measurements)} measurements, started {printable(info['started'])}"
                      f"{'' if info['finished'] else ' (unfinished)'}", highlight=False)
        if info["result"]:
            console.print(f"  best {printable(info['result']['best'])}: {info['result']['metric']:,.0f} mpps", highlight=False)
        for fit in fits:
            constants = ", ".join(f"{k} = {v:.4g} ± {fit.errors.get(k, 0):.2g}" for k, v in fit.constants.items())
            console.print(f"  {fit.name}: {fit.formula}\n      {constants}; rms error {fit.rms_relative_error:.1%} "
                          f"over {fit.x.size} points", highlight=False)
        if not fits:
            console.print("  (partial models are fitted to the steps of hierarchical runs)")
    if kerneltuner_path is not None or t4_path is not None:
        import json

        from perfcast.output_files import write_text_atomic
        from perfcast.tune.recorded import space_from_run, to_kerneltuner, to_t4

        recorded = space_from_run(info, measurements, failures)
        for path, convert in ((kerneltuner_path, to_kerneltuner), (t4_path, to_t4)):
            if path is not None:
                write_text_atomic(path, json.dumps(convert(recorded), indent=1))
    for path in (csv_path, parquet_path, kerneltuner_path, t4_path):
        if path is not None:
            (errors if as_json else console).print(f"wrote {printable(path)}", highlight=False)
    if output is not None and fits:
        from perfcast.plots.tuning import partial_models_figure

        save_figure(partial_models_figure(fits, f"Hierarchical tuning run {run_id}: measured vs partial models"), output)
        (errors if as_json else console).print(f"wrote {printable(output)}", highlight=False)


@tune_app.command("replay")
def tune_replay_command(
    cache: Annotated[Path, typer.Argument(help="A KernelTuner cache or T4 results file (.json or .json.gz) of measured configurations.")],
    strategies: Annotated[list[str] | None, typer.Option("--strategy", "-s", help=registry_help(STRATEGIES) + " Repeatable; default: all.")] = None,
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Runs per strategy, seeds 0..N-1.")] = 10,
    item: Annotated[str | None, typer.Option("--item", help="Work-item parameters, comma-separated (default: every parameter not of the work-group).")] = None,
    group: Annotated[str | None, typer.Option("--group", help="Work-group parameters, comma-separated (default: block_size_*, local/work-group sizes).")] = None,
    budget: Annotated[int | None, typer.Option("--budget", min=1, help="random: configurations to evaluate (default: the whole space); hierarchical: the evaluations past which it begins no extra (order-free moves, other descents' reviews).")] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Spread the (strategy, seed) runs over this many Ray workers (needs perfcast[ray]); the result is the same.")] = 1,
    ray_address: RayAddress = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    csv_to: Annotated[Path | None, typer.Option("--csv", help=CSV_HELP + " One row per strategy and seed.")] = None,
) -> None:
    """Replay strategies on recorded measurements: evaluations each needs to reach 90/97/99 % of the space's optimum."""
    from rich import box
    from rich.table import Table

    from perfcast.tune.recorded import read_recorded
    from perfcast.tune.replay import FRACTIONS, levels, replay

    check_csv(csv_to)
    recorded = read_recorded(cache)
    chosen = list(strategies or STRATEGIES)

    def names(text: str | None) -> list[str] | None:
        return [n.strip() for n in text.split(",") if n.strip()] if text else None

    item_levels, group_levels = levels(recorded, names(item), names(group))
    results = replay(recorded, chosen, seeds, item_levels, group_levels, budget, _cluster(workers, ray_address))
    optimum = recorded.optimum()
    assert optimum.time is not None  # the optimum ran
    failed = sum(r.status != "ok" for r in recorded.records)
    if as_json:
        print_json({
            "cache": str(cache), "kernel": recorded.kernel, "device": recorded.device,
            "configurations": len(recorded.records), "failed": failed, "optimum": optimum.config,
            "optimum_s": optimum.time, "levels": {"item": list(item_levels), "group": list(group_levels)},
            "strategies": [{"strategy": r.strategy, "seeds": r.seeds,
                            "evaluations_to_reach": {f"{f:.0%}": r.to_reach[f] for f in FRACTIONS},
                            "chosen_fraction": r.chosen, "evaluations": r.evaluations} for r in results],
        })
        return
    out = text_out(csv_to)
    out.print(f"[bold]{printable(recorded.kernel)}[/] on {printable(recorded.device or 'an unnamed device')}: "
                  f"{len(recorded.records)} configurations recorded ({failed} failed), optimum "
                  f"{optimum.time * 1e3:.4g} ms at {printable(optimum.config)}", highlight=False, soft_wrap=True)
    out.print(f"levels: work-item {printable(', '.join(item_levels))}; work-group {printable(', '.join(group_levels))}",
                  highlight=False, soft_wrap=True)
    table = Table(box=box.SIMPLE_HEAVY, title=f"evaluations to reach a fraction of the optimum, over {seeds} seed(s): "
                  "median [min – max] (runs that reached it)")
    for column in ("strategy", *(f"{f:.0%}" for f in FRACTIONS), "chosen (median)", "evaluations (median)"):
        table.add_column(column, justify="left" if column == "strategy" else "right")
    for r in results:
        cells = []
        for fraction in FRACTIONS:
            median, reached, low, high = r.summary(fraction)
            cells.append("never" if median is None else
                         f"{median:.0f} [{low}–{high}]" + (f" ({reached}/{r.seeds})" if reached < r.seeds else ""))
        table.add_row(r.strategy, *cells, f"{statistics.median(r.chosen):.1%}", f"{statistics.median(r.evaluations):.0f}")
    out.print(table)
    out.print("Each distinct configuration evaluated counts once, failed ones too; configurations the space's "
                  "constraints excluded are not in the record and cost nothing.", highlight=False)
    if csv_to is not None:
        write_rows_csv([{"strategy": r.strategy, "seed": seed, "evaluations": r.evaluations[seed],
                         "chosen_fraction": r.chosen[seed],
                         **{f"evaluations_to_{f:.0%}".replace("%", "pct"): r.to_reach[f][seed] for f in FRACTIONS}}
                        for r in results for seed in range(r.seeds)], csv_to)


@tune_app.command("convert")
def tune_convert_command(
    source: Annotated[Path, typer.Argument(help="A KernelTuner cache or T4 results file (.json or .json.gz).")],
    output: Annotated[Path, typer.Argument(help="The file to write (.json).")],
    to: Annotated[str, typer.Option("--to", help="kerneltuner or t4.")] = "t4",
) -> None:
    """Convert a recorded tuning space between KernelTuner's cache and the T4 results format."""
    import json

    from perfcast.errors import InputError
    from perfcast.output_files import write_text_atomic
    from perfcast.tune.recorded import FORMATS, read_recorded, to_kerneltuner, to_t4

    if to not in FORMATS:
        raise InputError(f"--to {to!r}: one of {', '.join(FORMATS)}")
    check_writable(output, "output", (".json",), inputs=[source])
    recorded = read_recorded(source)
    data = to_kerneltuner(recorded) if to == "kerneltuner" else to_t4(recorded)
    write_text_atomic(output, json.dumps(data, indent=1))
    console.print(f"wrote {printable(output)} ({len(recorded.records)} configurations)", highlight=False)
