"""`perfcast campaign run` and `perfcast campaign report`: measure a kernel suite on a device, score every model."""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from perfcast.cli.common import app, console, errors, fail, measuring_progress, print_json, printable
from perfcast.output_files import check_writable

if TYPE_CHECKING:
    from perfcast.campaign.program import ProgramOptions

SPECIES_HELP = ("Program: KERNEL=SPECIES[; f=F][; s=B], the kernel's (or one group's, kernel[NDRange]) algorithmic species "
                "for the boat hull. Sizes bound per NDRange: N its work-items, X, Y, Z its global size in dimensions "
                "0, 1, 2 (0 the fastest: a row-major array is YxX). f: ops per application of the element operator "
                "(default: the profile's FLOP over the species' w·m applications). s: bytes per element (default: 4, 8 for "
                "fp64 work). Repeatable.")

campaign_app = typer.Typer(help="Measure the kernel suite on a device, then score every model against it.",
                           no_args_is_help=True)
app.add_typer(campaign_app, name="campaign")


def _reproducing_command() -> str:
    """Return this `perfcast campaign ...` command line with the variables that shaped the run, or ""."""
    from perfcast.campaign.run import runtime_variables

    if sys.argv[1:2] != ["campaign"]:
        return ""
    command = shlex.join(["perfcast", "campaign", *sys.argv[2:]])
    return " ".join([*(f"{name}={shlex.quote(value)}" for name, value in runtime_variables().items()), command])


def _nothing_after_separator() -> bool:
    """Return whether this `perfcast campaign run` command line ends with `--` and no program after it."""
    return sys.argv[1:3] == ["campaign", "run"] and sys.argv[-1] == "--"


@campaign_app.command("run")
def run_command(
    output: Annotated[Path, typer.Option("--output", "-o", help="The archive to write (one compressed file).")],
    backend: Annotated[str, typer.Option("--backend", "-b", help="opencl (PoCL on CPUs, profiled with Oclgrind), cuda (CuPy, profiled with ncu) or cpu (C with OpenMP, its OpenCL twins profiled with Oclgrind).")] = "opencl",
    device: Annotated[str | None, typer.Option("--device", "-d", help="opencl: PLATFORM:DEVICE index or a name part; cuda: GPU index; cpu: none (OMP_NUM_THREADS).")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Smaller sizes and the quick bench (about a minute; what the tests run).")] = False,
    kernels: Annotated[list[str] | None, typer.Option("--kernel", "-k", help="Run only this kernel (repeatable).")] = None,
    repetitions: Annotated[int, typer.Option("--repetitions", "-r", min=10, help="Timed launches per kernel (at least 10).")] = 10,
    device_profile: Annotated[Path | None, typer.Option("--device-profile", help="Use this measured profile (perfcast bench -o) instead of measuring the device now.")] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Discard what an interrupted run left and start again.")] = False,
    device_runs: Annotated[int, typer.Option("--device-runs", min=1, max=5, help="Runs of perfcast bench: the suite's first before its kernels are timed, the others after (a program's all after its run); each figure of the profile is the best run's. None with --device-profile.")] = 2,
    program: Annotated[list[str] | None, typer.Argument(help="An OpenCL program to run instead of the suite, after --: every kernel launch timed, profiled and scored.")] = None,
    profile_cmd: Annotated[list[str] | None, typer.Option("--profile-cmd", help="Program: a smaller run to profile under Oclgrind (one shell-quoted command line; twice to check that the counts scale as declared).")] = None,
    scaling: Annotated[list[str] | None, typer.Option("--scaling", help="Program: KERNEL=p, the kernel's counts grow as work-items^p between sizes (default 1).")] = None,
    memory_limit: Annotated[float | None, typer.Option("--memory-limit", min=0.1, help="Program: GiB Oclgrind may use (default: half the memory available).")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", min=1, help="Program: seconds each run of it may take.")] = None,
    traffic: Annotated[bool, typer.Option("--traffic/--no-traffic", help="Program: simulate each launch's bytes per level through the device's caches (else global bytes, no cache).")] = True,
    species: Annotated[list[str] | None, typer.Option("--species", help=SPECIES_HELP)] = None,
    timer: Annotated[str, typer.Option("--timer", help="Program: how its launches are timed: opencl (an OpenCL program, the launch log preloaded) or nsys (a CUDA program under Nsight Systems, profiled with ncu).")] = "opencl",
    workers: Annotated[int, typer.Option("--workers", min=1, help="Run the suite's campaign on this many devices at once, one Ray worker each (cuda: one GPU each), one archive per device beside --output (needs perfcast[ray]).")] = 1,
    ray_address: Annotated[str | None, typer.Option("--ray", help="Join a running Ray cluster ('auto', or HOST:PORT) for --workers.")] = None,
    as_program: Annotated[bool, typer.Option("--as-program", help="Run the suite's OpenCL kernels as an ordinary program through the program path (-- CMD): launch log, Oclgrind at 1 and 2 work-groups, each kernel's species given.")] = False,
) -> None:
    """Measure the device, time and profile every kernel of the suite (or of a program given after --), and pack it all in one archive (resumable)."""
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

    from perfcast.campaign.archive import Archive
    from perfcast.campaign.run import CampaignOptions, run_campaign

    check_writable(output, "--output")
    if not program and _nothing_after_separator():
        # Click drops a trailing `--`: without this the suite's whole campaign would run where a program was meant.
        raise fail("nothing after --: give the program to time after it (-- ./my_app ARGS), or leave out -- to run "
                   "the kernel suite")
    if (workers > 1 or ray_address) and program:
        raise fail("--workers and --ray run the suite's campaign on several devices; a program runs on one")
    if species and not program:
        raise fail("--species names a program's kernels (after --); the suite's kernels have their own species")
    if as_program:
        if profile_cmd or scaling or timer != "opencl":
            raise fail("--as-program chooses the profile commands, the scaling (work-items^1) and the timer "
                       "(the launch log) itself; leave out --profile-cmd, --scaling and --timer")
        suite = _suite_as_program(output, program, backend, device, quick, kernels or [], repetitions,
                                  device_profile, fresh, workers > 1 or bool(ray_address))
        _run_program_options(replace(suite, traffic=traffic, timeout=timeout, memory_limit=None if memory_limit is None
                                     else int(memory_limit * 2**30), device_runs=device_runs))
        return
    if program:
        _run_program(output, program, profile_cmd or [], scaling or [], device, device_profile, fresh, quick,
                     memory_limit, timeout, traffic, timer, species or [], device_runs)
        return
    command = _reproducing_command()
    options = CampaignOptions(backend, output, device, quick, tuple(kernels or ()), repetitions, device_profile,
                              fresh, command or f"perfcast campaign run --backend {backend} -o {output}",
                              device_runs=device_runs)
    if workers > 1 or ray_address:
        _run_fanout(options, workers, ray_address)
        return
    with measuring_progress(TextColumn("{task.description:<52}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                            TimeElapsedColumn()) as bar:
        task = bar.add_task("starting", total=1.0)
        try:
            archive = run_campaign(options, lambda label, done: bar.update(task, description=label, completed=done,
                                                                           refresh=True))
        except KeyboardInterrupt:
            bar.stop()
            errors.print(f"interrupted: every finished step is kept in {printable(output)}.partial/; run the same "
                         "command again to resume there (--fresh starts over)", highlight=False)
            raise typer.Exit(130) from None
    console.print(f"wrote {printable(archive)} ({archive.stat().st_size / 2**10:.0f} KiB)")
    profiling = Archive.read(archive).manifest.get("profiling") or {}
    if profiling.get("note"):  # a failed or partial profiling is a warning; a caveat of the backend, a note
        label = "[yellow]warning:[/]" if profiling.get("incomplete") else "note:"
        console.print(f"{label} {printable(profiling['note'])}")


def _run_fanout(options: Any, workers: int, address: str | None) -> None:
    """Run the campaign on several workers and say which archives came back (and which workers failed)."""
    from perfcast.campaign.fanout import run_fanout
    from perfcast.tune.cluster import ClusterOptions

    result = run_fanout(options, ClusterOptions(workers, address),
                        progress=lambda line: errors.print(printable(line), highlight=False))
    for path in result.archives:
        console.print(f"wrote {printable(path)} ({path.stat().st_size / 2**10:.0f} KiB)", highlight=False)
    for failure in result.failures:
        errors.print(f"[yellow]warning:[/] {printable(failure)}")
    names = " ".join(printable(p) for p in result.archives)
    console.print(f"fan-out {result.id}: {len(result.archives)} of {workers} archives; one report of them all: "
                  f"perfcast campaign report {names}", highlight=False)


def _run_program(output: Path, program: list[str], profile_cmd: list[str], scaling: list[str], device: str | None,
                 device_profile: Path | None, fresh: bool, quick: bool, memory_limit: float | None,
                 timeout: float | None, traffic: bool, timer: str, species: list[str], device_runs: int) -> None:
    """`campaign run -- CMD`: time, profile and pack an unmodified OpenCL program."""
    from perfcast.campaign.program import TIMERS, ProgramOptions, parse_scaling
    from perfcast.campaign.program_species import parse_program_species
    from perfcast.errors import InputError

    if timer not in TIMERS:
        raise InputError(f"--timer {timer!r}: choose one of {', '.join(TIMERS)}")
    try:
        profile_commands = tuple(tuple(shlex.split(command)) for command in profile_cmd)
    except ValueError as error:
        raise InputError(f"--profile-cmd: {error}") from None
    if any(not command for command in profile_commands):
        raise InputError("--profile-cmd: an empty command")
    record = _reproducing_command()
    options = ProgramOptions(tuple(program), output, profile_commands, device, device_profile, fresh,
                             parse_scaling(scaling), None if memory_limit is None else int(memory_limit * 2**30),
                             timeout, traffic, quick, record or shlex.join(["perfcast", "campaign", "run", "-o",
                                                                            str(output), "--", *program]),
                             timer, parse_program_species(species), device_runs)
    _run_program_options(options)


def _suite_as_program(output: Path, program: list[str] | None, backend: str, device: str | None, quick: bool,
                      kernels: list[str], repetitions: int, device_profile: Path | None, fresh: bool,
                      fanout: bool) -> ProgramOptions:
    """Return the options of `campaign run --as-program`: the suite's OpenCL kernels through the program path."""
    from perfcast.campaign.suite_program import suite_as_program

    if program:
        raise fail("--as-program runs the suite as the program; give no program after --")
    if backend != "opencl":
        raise fail(f"--as-program runs the suite's OpenCL kernels; --backend {backend} has no OpenCL program to run")
    if fanout:
        raise fail("--workers and --ray fan the suite's own campaign out; --as-program runs on one device")
    if device is not None:
        raise fail("--as-program runs on the first OpenCL device, as the suite's driver does; leave out --device "
                   "(PoCL's environment, e.g. POCL_DEVICES, chooses among devices)")
    return suite_as_program(output, quick, kernels, repetitions, device_profile, fresh, _reproducing_command())


def _run_program_options(options: ProgramOptions) -> None:
    """Run a program campaign with a progress line and say what it wrote."""
    from rich.progress import TextColumn, TimeElapsedColumn

    from perfcast.campaign.archive import Archive
    from perfcast.campaign.program import run_program_campaign

    output = options.output
    with measuring_progress(TextColumn("{task.description:<72}"), TimeElapsedColumn()) as bar:
        task = bar.add_task("starting", total=1.0)
        try:
            archive = run_program_campaign(options, lambda label, done: bar.update(
                task, description=label, completed=done, refresh=True))
        except KeyboardInterrupt:
            bar.stop()
            console.print(f"stopped: what was recorded is kept in {printable(output)}.partial/ (manifest.json, "
                          "raw/timed/); run the same command again to start the program over")
            raise typer.Exit(130) from None
    manifest = Archive.read(archive).manifest
    run = manifest.get("timed_run") or {}
    console.print(f"wrote {printable(archive)} ({archive.stat().st_size / 2**10:.0f} KiB): {run.get('timed', 0)} "
                  f"launches timed in {len(manifest['kernels'])} kernel group(s)")
    profiling = manifest.get("profiling") or {}
    if profiling.get("note"):
        label = "[yellow]warning:[/]" if profiling.get("incomplete") else "note:"
        console.print(f"{label} {printable(profiling['note'])}")


@campaign_app.command("report")
def report_command(
    archives: Annotated[list[Path], typer.Argument(help="Campaign archives (campaign run -o), one per device.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for report.md and the charts.")] = Path("campaign-report"),
    species: Annotated[list[str] | None, typer.Option("--species", help=SPECIES_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print every kernel's predictions and each model's summary as JSON (the report is written too).")] = False,
) -> None:
    """Score every model on the archives' kernels: predicted against measured, APE, MAPE, ranges, violations."""
    from perfcast.campaign.program_species import parse_program_species
    from perfcast.campaign.report import scores_record, write_report

    command = shlex.join(["perfcast", "campaign", "report", *[str(a) for a in archives], "-o", str(output),
                          *[part for item in species or () for part in ("--species", item)]])
    path, results = write_report(list(archives), output, command, parse_program_species(species or []))
    if as_json:
        print_json({"report": str(path), "archives": [scores_record(result) for result in results]})
        return
    for archive, result in zip(archives, results):
        console.print(f"[bold]{printable(result.device.full_name)}[/] ({printable(archive)}):")
        for model, s in result.summaries.items():
            mape = "—" if s.mape is None else f"{s.mape:.1%}"
            extra = f", {s.contained[0]} of {s.contained[1]} in range" if s.contained else ""
            extra += f", {len(s.violations)} bound violation(s)" if model == "roofline" else ""
            console.print(f"  {model}: n = {s.n}, MAPE {mape}{extra}")
    console.print(f"wrote {printable(path)}")
