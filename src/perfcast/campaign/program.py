"""`perfcast campaign run -- CMD`: any OpenCL program as a campaign, unmodified.

Steps, each saved as soon as it is done (a failed step leaves no archive; the next run with the same output
starts at the first missing step):
1. the program runs once with the launch log preloaded (`opencl_launch_log.c`): every kernel launch's name,
   NDRange, queue and device time; progress is the launches seen so far;
2. the device its queues ran on is measured (`perfcast bench`, OpenCL), unless a profile is given;
3. the program (or the smaller `--profile-cmd`, once or twice) runs under Oclgrind, with the launch log too, so
   each launch's instruction histogram is matched to its NDRange; its memory accesses are traced and their
   bytes per level simulated through the measured device's caches (docs/traffic.md). Oclgrind runs under a
   memory cap;
4. launches of the same kernel and NDRange are grouped (median time, spread); each group gets the profile of
   the same launches (one command) or the profiled counts scaled to its work-items as declared: counts ∝
   work-items^p, p = 1 unless `--scaling KERNEL=p` says otherwise. Profiled at two sizes, the declaration is
   checked and a kernel that does not follow it is refused with the numbers.
The archive is the suite's (`campaign report` scores it); its manifest says `kind: program`.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import shutil
import statistics
import tempfile
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perfcast.campaign.archive import ArchiveError, WorkingFolder
from perfcast.campaign.launch_log import (
    Launch,
    LaunchCounter,
    LaunchLog,
    build_launch_logger,
    launch_environment,
    log_files,
    read_launch_logs,
)
from perfcast.campaign.program_species import KernelSpecies
from perfcast.campaign.watched_run import ProgramFailed, available_memory, run_watched
from perfcast.errors import InputError, ToolError
from perfcast.models.caches import CacheLevel
from perfcast.profiles.profile import KernelProfile, ProfileSet, ProfileSource

__all__ = ["SCALING_CHECK_TOLERANCE", "TIMERS", "ProgramOptions", "build_tags", "cuda_group_profiles",
           "group_launches", "parse_scaling", "run_program_campaign", "scaling_check"]

Progress = Callable[[str, float], None]
SCALING_CHECK_TOLERANCE = 0.05  # counts at two profile sizes must follow the declared scaling this closely
# The counts whose scaling is checked: the work the models price (memory and arithmetic instructions).
CHECKED_METRICS = ("ldst", "inst_warp", "fp32", "fp64", "int")
TRACE_LAUNCH_MB = 64  # trace records kept per launch (24 B each, about 2.8 M accesses); the rest is estimated
TRACE_TOTAL_MB = 2048


@dataclass(frozen=True)
class ProgramOptions:
    """What `campaign run -- CMD` was asked to do."""

    command: tuple[str, ...]
    output: Path
    profile_commands: tuple[tuple[str, ...], ...] = ()  # smaller runs to profile (0, 1 or 2)
    device: str | None = None  # the OpenCL device to measure (default: the one the program's queues used)
    device_profile: Path | None = None
    fresh: bool = False
    scaling: Mapping[str, float] = field(default_factory=dict)  # kernel -> p in counts ∝ work-items^p
    memory_limit: int | None = None  # B that Oclgrind may use (None: half the memory available at the start)
    timeout: float | None = None  # s, each run of the program
    traffic: bool = True  # simulate the bytes per level from a memory trace
    quick: bool = False  # the quick bench
    record: str = ""  # the command line that reproduces the run
    timer: str = "opencl"  # opencl: the launch log (LD_PRELOAD); nsys: a CUDA program under Nsight Systems
    species: Mapping[str, KernelSpecies] = field(default_factory=dict)  # kernel -> the species the user gave it
    device_runs: int = 1  # runs of perfcast bench after the program's, the profile the best of them (no --device-profile)


def parse_scaling(items: Sequence[str]) -> dict[str, float]:
    """Return KERNEL=p declarations as a mapping (p > 0: counts grow as work-items^p)."""
    found = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            exponent = float(value)
        except ValueError:
            exponent = math.nan
        if not sep or not name or not math.isfinite(exponent) or exponent <= 0:
            raise InputError(f"--scaling {item!r}: write KERNEL=p with p > 0 (counts grow as work-items^p; "
                             "1 for one work-item per element, 1.5 for a dense n×n matrix product)")
        found[name] = exponent
    return found


# ------------------------------------------------------------------ grouping


@dataclass(frozen=True)
class LaunchGroup:
    """Launches of one kernel at one NDRange: the unit the campaign scores."""

    name: str  # the kernel, with its build where it came from several, and its NDRange where it ran at several
    kernel: str
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    launches: tuple[Launch, ...]
    build: str | None = None  # the build options of its program, where the kernel's name came from several builds

    @property
    def work_items(self) -> int:
        """Return the work-items of one launch."""
        return self.launches[0].work_items


Identity = tuple[str, str | None]  # (kernel name, build options where its name came from several builds, else None)


def rebuilt_kernels(launches: Sequence[Launch]) -> set[str]:
    """Return the kernel names the launches came from under more than one program build (options apart).

    A program that builds one source twice (SHOC's md: single and double precision, one kernel name) launches two
    kernels under one name: their launches are grouped, profiled and scored apart.
    """
    builds: dict[str, set[str]] = defaultdict(set)
    for launch in launches:
        if launch.build is not None:
            builds[launch.kernel].add(launch.build)
    return {kernel for kernel, found in builds.items() if len(found) > 1}


def launch_identity(launch: Launch, rebuilt: set[str]) -> Identity:
    """Return the kernel a launch ran: its name, with its build where that name came from several (`rebuilt`)."""
    return (launch.kernel, launch.build if launch.kernel in rebuilt else None)


def build_tags(builds: Sequence[str]) -> dict[str, str]:
    """Return a tag per build of one kernel, unique: the options only it has, else 'build N: OPTIONS'.

    Builds whose own options read alike (the same options in another order) are numbered, with all their options.
    """
    tokens = [build.split() for build in builds]
    common = set.intersection(*(set(t) for t in tokens)) if tokens else set()
    tags = {}
    for build, words in zip(builds, tokens, strict=True):
        own = " ".join(word for word in words if word not in common)
        tags[build] = own or ("no options" if not words else "common options")
    if len(set(tags.values())) < len(tags):
        tags = {build: f"build {n}: {build or 'no options'}" for n, build in enumerate(builds, start=1)}
    return tags


def group_launches(launches: Sequence[Launch]) -> list[LaunchGroup]:
    """Return launches grouped by kernel (build apart, `rebuilt_kernels`) and NDRange, in order of first launch; names unique."""
    rebuilt = rebuilt_kernels(launches)
    groups: dict[tuple[Identity, tuple[int, ...], tuple[int, ...] | None], list[Launch]] = {}
    for launch in launches:
        groups.setdefault((launch_identity(launch, rebuilt), launch.global_size, launch.local_size), []).append(launch)
    shapes: dict[Identity, int] = defaultdict(int)
    builds: dict[str, list[str]] = defaultdict(list)
    for identity, _, _ in groups:
        shapes[identity] += 1
        if identity[1] is not None and identity[1] not in builds[identity[0]]:
            builds[identity[0]].append(identity[1])
    tags = {kernel: build_tags(found) for kernel, found in builds.items()}
    found = []
    for (identity, global_size, local_size), members in groups.items():
        kernel, build = identity
        name = kernel if build is None else f"{kernel} ({tags[kernel][build]})"
        if shapes[identity] > 1:
            name = f"{name}[{members[0].shape()}]"
        found.append(LaunchGroup(name, kernel, global_size, local_size, tuple(members), build))
    return found


def _timing_record(group: LaunchGroup) -> dict[str, Any]:
    """Return a group's manifest record: NDRange, launches, median time, spread (sigma / t), range, page faults."""
    times = [launch.duration for launch in group.launches]
    faults = [launch.faults for launch in group.launches if launch.faults is not None]
    median = statistics.median(times)
    return {"kernel": group.kernel, **({"build": group.build} if group.build is not None else {}),
            "global_size": list(group.global_size),
            "local_size": list(group.local_size) if group.local_size else None, "n": group.work_items,
            "work_items": group.work_items, "launches": len(times), "median_s": median,
            "spread": statistics.pstdev(times) / median if median > 0 else 0.0,
            "range_spread": (max(times) - min(times)) / median if median > 0 else 0.0,
            "min_s": min(times), "max_s": max(times), "total_s": sum(times),
            # The page faults of the median launch (docs/models.md §3.7), where the log counted most launches' (a
            # launch whose CL_RUNNING callback came late is left uncounted: the others still say what one makes).
            **({"faults": statistics.median(faults)} if 2 * len(faults) > len(times) else {})}


# ------------------------------------------------------------------ the timed run


def _species_texts(options: ProgramOptions) -> dict[str, str]:
    """Return the species the user gave, as the manifest keeps them (kernel -> 'SPECIES[; f=F][; s=B]')."""
    return {name: species.text() for name, species in options.species.items()}


def _fresh_manifest(options: ProgramOptions) -> dict[str, Any]:
    from perfcast.campaign.run import manifest_base

    return {**manifest_base(options.record), "kind": "program", "backend": "opencl",
            "program": list(options.command), "profile_programs": [list(c) for c in options.profile_commands],
            "scaling": dict(options.scaling), "species": _species_texts(options), "device_selector": options.device,
            "quick": options.quick,
            "repetitions": None, "timed_run": None}


def _describe_log(log: LaunchLog) -> dict[str, Any]:
    """Return what a launch log says about the run as a whole (manifest entry)."""
    return {"launches": len(log.launches), "timed": len(log.timed()), "processes": len(log.processes),
            "devices": log.devices, "unfinished": log.unfinished,
            "enqueue_failures": sum(1 for launch in log.launches if launch.enqueue_failed),
            "untimed": sum(1 for launch in log.launches if not launch.timed and not launch.enqueue_failed),
            "unprofiled_queues": len(log.unprofiled_queues),
            "exited_normally": len(log.exited)}


def _empty_log(folder: WorkingFolder, name: str) -> Path:
    """Return the prefix of a launch log in the working folder, cleared of an earlier, failed run's files."""
    prefix = folder.file(name)
    for old in log_files(prefix):
        old.unlink()  # a run that failed earlier: its launches are not this run's
    return prefix


def _opencl_timed_run(options: ProgramOptions, folder: WorkingFolder, progress: Progress) -> tuple[LaunchLog, float]:
    """Run an OpenCL program with the launch log; return its log and wall time (s)."""
    logger = build_launch_logger()
    prefix = _empty_log(folder, "raw/timed/launches")
    counter = LaunchCounter(prefix)

    def heard(elapsed: float) -> None:
        progress(f"running the program: {counter.count():,} launches timed ({elapsed:.0f} s)", 0.02)

    try:
        watched = run_watched(options.command, env=launch_environment(prefix, logger),
                              stdout=folder.file("raw/program.out"), stderr=folder.file("raw/program.err"),
                              timeout=options.timeout, progress=heard, what="the program")
    except KeyboardInterrupt:
        _keep_interrupted(folder, prefix)
        raise
    return read_launch_logs(prefix), watched.wall_s


def _cuda_timed_run(options: ProgramOptions, folder: WorkingFolder, progress: Progress) -> tuple[LaunchLog, float]:
    """Run a CUDA program under Nsight Systems (CUDA trace); return its launches and wall time (s)."""
    import subprocess

    from perfcast.campaign.cuda_launches import nsys_trace_commands, read_nsys_gpu_trace

    run, export, table = nsys_trace_commands(options.command, folder.file("raw/timed/report"))
    watched = run_watched(run, stdout=folder.file("raw/program.out"), stderr=folder.file("raw/program.err"),
                          timeout=options.timeout, what="the program under Nsight Systems",
                          progress=lambda s: progress(f"running the program under Nsight Systems ({s:.0f} s)", 0.02))
    report = Path(f"{folder.file('raw/timed/report')}.nsys-rep")
    if not report.exists():
        # Seen on a GPU machine (2026-11-26): an nsys without its QdstrmImporter records a .qdstrm and stops there;
        # `nsys stats` would then only print its usage.
        raw = sorted(report.parent.glob("*.qdstrm"))
        said = folder.file("raw/program.err").read_text(encoding="utf-8", errors="replace")
        why = " (nsys says: Importer error)" if "Importer error" in said else ""
        raise ToolError(f"Nsight Systems wrote no report{why}: "
                        + (f"only {raw[0].name}, its raw recording, which this nsys cannot import "
                           f"({_importer_trouble(run[0])})" if raw else "see its output in raw/program.err")
                        + f". The program's output is in {folder.path / 'raw'}")
    done = subprocess.run(export, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not table.exists():
        raise ToolError(f"nsys stats could not export the CUDA trace ({' '.join(export)}): "
                        f"{(done.stderr or done.stdout).strip()[-600:]}")
    return read_nsys_gpu_trace(table.read_text(encoding="utf-8", errors="replace")), watched.wall_s


def _importer_trouble(nsys: str | None = None) -> str:
    """Return why nsys may have failed to import its recording: the importer missing, or a library it lacks."""
    from perfcast.campaign.cuda_launches import find_qdstrm_importer, missing_libraries

    importer = find_qdstrm_importer(nsys)
    if importer is None:
        return "its QdstrmImporter is missing: install the full Nsight Systems, not the copy inside Nsight Compute"
    lacking = missing_libraries(importer)
    if lacking:
        # Seen on the lent H100 (2026-11-26): Nsight Compute's importer needs elfutils' libdw, absent from the image.
        return (f"{importer} cannot load {', '.join(lacking)}: install it (libdw.so.1: elfutils' libdw1) or put its "
                "folder on LD_LIBRARY_PATH")
    return f"{importer} is there and loads: see nsys's output in raw/program.err"


# How a program's launches are timed: a name -> (what, runner). The CLI's --timer choices come from here.
TIMERS: dict[str, tuple[str, Callable[[ProgramOptions, WorkingFolder, Progress], tuple[LaunchLog, float]]]] = {
    "opencl": ("an OpenCL program: the launch log preloaded (every queue profiled)", _opencl_timed_run),
    "nsys": ("a CUDA program: Nsight Systems' CUDA trace", _cuda_timed_run),
}


def _time_program(options: ProgramOptions, folder: WorkingFolder, manifest: dict[str, Any],
                  progress: Progress) -> None:
    """Run the program once with its launches timed; record each kernel group's times in the manifest."""
    if options.timer not in TIMERS:
        raise InputError(f"unknown timer {options.timer!r}; choose one of {', '.join(TIMERS)}")
    log, wall = TIMERS[options.timer][1](options, folder, progress)
    if not log.launches:
        raise ProgramFailed(
            "the program ran (status 0) but launched no kernel"
            + (" through clEnqueueNDRangeKernel or clEnqueueTask: is it an OpenCL program linked to the ICD loader "
               "(libOpenCL.so) dynamically?" if options.timer == "opencl" else " that the CUDA trace saw")
            + f" Its output is in {folder.path / 'raw'}")
    if not log.timed():
        why = ("its queues could not be profiled" if log.unprofiled_queues
               else "no launch completed while the program ran (it exited before its queues finished?)")
        raise ProgramFailed(f"the program launched {len(log.launches)} kernel(s) but none was timed: {why}")
    timed = log.timed()
    devices = log.devices
    chosen = next((d for d in devices if options.device and options.device.lower() in d.lower()),
                  devices[0] if devices else None)
    if len(devices) > 1 and chosen is not None:
        # One device is measured: the groups hold that device's launches only (a kernel run on two devices
        # would otherwise mix two devices' times).
        timed = [x for x in timed if log.queues.get((x.pid, x.queue), chosen) == chosen]
        manifest["notes"].append(f"the program used {len(devices)} devices ({', '.join(devices)}); only the "
                                 f"launches on {chosen} are scored")
    manifest["notes"] = [n for n in manifest["notes"] if not n.startswith("interrupted:")]
    manifest["timed_run"] = {**_describe_log(log), "wall_s": wall, "timer": options.timer, "device": chosen}
    manifest["kernels"] = {group.name: _timing_record(group) for group in group_launches(timed)}
    folder.save_manifest(manifest)


def _keep_interrupted(folder: WorkingFolder, prefix: Path) -> None:
    """On Ctrl-C during the timed run: keep what was recorded in the working folder's manifest, marked interrupted."""
    manifest = folder.manifest()
    try:
        log = read_launch_logs(prefix)
    except InputError:
        return
    if not log.timed():
        return
    manifest["timed_run"] = {**_describe_log(log), "interrupted": True}
    manifest["kernels"] = {group.name: _timing_record(group) for group in group_launches(log.timed())}
    manifest["notes"].append(f"interrupted: the program was stopped after {len(log.timed())} timed launches; "
                             "they are kept in this folder; a new run starts the program over")
    folder.save_manifest(manifest)


# ------------------------------------------------------------------ the device


def _bench_options(options: ProgramOptions, manifest: dict[str, Any]) -> Any:
    """Return the bench's options for the device the program's queues used (a GPU index for a CUDA program)."""
    from perfcast.campaign.run import CampaignOptions

    devices = manifest["timed_run"]["devices"]
    selector = options.device or manifest["timed_run"].get("device") or (devices[0] if devices else None)
    backend = "cuda" if options.timer == "nsys" else "opencl"
    if backend == "cuda":
        selector = options.device  # a GPU index; the trace names the GPU, CuPy counts them
    return CampaignOptions(backend, options.output, selector, options.quick, device_profile=options.device_profile,
                           device_runs=_device_runs(options))


_DEVICE_SHARE = 0.3  # of a program campaign's progress, from 0.1: every run of the bench


def _device_runs(options: ProgramOptions) -> int:
    """Return the runs of perfcast bench the device gets: none beyond the first with a given profile."""
    return 1 if options.device_profile is not None else options.device_runs


def _measure_device(options: ProgramOptions, folder: WorkingFolder, manifest: dict[str, Any],
                    progress: Progress) -> None:
    """Measure the device the program's queues used (perfcast bench on OpenCL), or copy the given profile."""
    from perfcast.campaign.run import measure_device

    bench = _bench_options(options, manifest)
    progress(f"measuring {bench.device or 'the device'} (perfcast bench)", 0.1)
    first = _DEVICE_SHARE / bench.device_runs
    manifest["device"] = measure_device(bench, folder, progress, 0.1, first)
    manifest["device_runs"] = 1
    if manifest["environment"] is None:
        manifest["environment"] = {"device": bench.device or "?", "platform": "the program's own"}
    folder.save_manifest(manifest)
    _measure_device_again(options, folder, manifest, progress)


def _measure_device_again(options: ProgramOptions, folder: WorkingFolder, manifest: dict[str, Any],
                          progress: Progress) -> None:
    """Run the bench until the device has its runs (also on resuming), each figure the best of them.

    The best of several, as the suite's campaign takes it: a noisy host has slow spells.
    """
    from perfcast.campaign.run import measure_device_again

    bench = _bench_options(options, manifest)
    if manifest.get("device_runs", 1) >= bench.device_runs:
        return
    first = _DEVICE_SHARE / bench.device_runs
    measure_device_again(bench, folder, manifest, progress, 0.1 + first, _DEVICE_SHARE - first)


def _record_vectorisation(options: ProgramOptions, folder: WorkingFolder, manifest: dict[str, Any],
                          progress: Progress) -> None:
    """Record the SIMD lanes PoCL's vectoriser gave each kernel the program launched, where PoCL ran them.

    One more run of the program (its first profile command, which is smaller, else the timed one) with PoCL's
    remarks on and a fresh kernel cache, so that every kernel is compiled and remarked on. The boat hull rules
    its CPU floors out by the lanes (`score.compiler_floors`). Another platform, a CUDA program, or a run that
    fails records None (the latter with a note): the spec's floors stay.
    """
    from perfcast.campaign.vector_evidence import pocl_device, pocl_remark_environment, pocl_vector_lanes

    found = None
    device = pocl_device(manifest["timed_run"].get("device") or "") if options.timer == "opencl" else None
    if device is not None and manifest["kernels"]:
        tool, units = device
        command = (options.profile_commands or (options.command,))[0]
        progress("reading PoCL's vectoriser remarks (one more run of the program)", 0.42)
        out, err = folder.file("raw/vectorisation.txt"), folder.file("raw/vectorisation.err")
        try:
            with tempfile.TemporaryDirectory(prefix="perfcast-pocl-") as cache:
                run_watched(command, env={**os.environ, **pocl_remark_environment(cache)}, stdout=out, stderr=err,
                            timeout=options.timeout, what="the program with PoCL's vectoriser remarks")
        except ProgramFailed as error:
            manifest["notes"].append(f"no vectorisation report: {error}")
        else:
            remarks = out.read_text(errors="replace") + "\n" + err.read_text(errors="replace")
            names = {record.get("kernel", name) for name, record in manifest["kernels"].items()}
            lanes = pocl_vector_lanes(remarks, names)
            if lanes:
                found = {"tool": tool, "lanes": lanes, "threads": units, "raw": "raw/vectorisation.txt",
                         "command": shlex.join(command)}
            else:
                manifest["notes"].append(f"no vectorisation report: PoCL remarked on none of the kernels when "
                                         f"running {shlex.join(command)}")
    manifest["vectorisation"] = found
    folder.save_manifest(manifest)


def _record_incore(options: ProgramOptions, folder: WorkingFolder, manifest: dict[str, Any],
                   progress: Progress) -> None:
    """Record the in-core cycles of each kernel the program launched on PoCL's CPU device (docs/models.md §3.5).

    Two more runs of its first profile command (else the timed one): on PoCL with -g and a fresh kernel cache,
    and under Oclgrind with the block-count plugin. Another platform or a CUDA program records None; a run or a
    tool that fails records None with a note.
    """
    from perfcast.campaign.incore_evidence import run_program_incore
    from perfcast.campaign.vector_evidence import pocl_device

    found = None
    name = manifest["timed_run"].get("device") or ""
    if options.timer == "opencl" and pocl_device(name) is not None and manifest["kernels"]:
        command = list((options.profile_commands or (options.command,))[0])
        progress("reading the compiled code's inner loops (two more runs of the program)", 0.9)
        try:
            found = run_program_incore(command, name)
        except (ToolError, InputError, OSError) as error:
            manifest["notes"].append(f"no in-core floor: {error}")
    manifest["incore"] = found
    folder.save_manifest(manifest)


# ------------------------------------------------------------------ profiling under Oclgrind


@dataclass(frozen=True)
class ProfiledRun:
    """One run under Oclgrind: each launch's NDRange (from the log) with its counts (and simulated bytes)."""

    command: tuple[str, ...]
    launches: tuple[tuple[Launch, KernelProfile], ...]
    notes: tuple[str, ...] = ()


def _match_histograms(log: LaunchLog, histograms: Sequence[KernelProfile]) -> list[tuple[Launch, KernelProfile]]:
    """Pair each of Oclgrind's launch histograms (in the order it ran them) with the launch the log recorded.

    Oclgrind prints a histogram as each launch ends; per kernel, the i-th histogram is the i-th launch of that
    kernel to end (by its end timestamp, enqueue order on a tie).
    """
    ended: dict[str, list[Launch]] = defaultdict(list)
    done = [x for x in log.launches if not x.enqueue_failed]
    # A launch whose timing failed has no end: it goes after the timed ones, in enqueue order, not first.
    for launch in sorted(done, key=lambda x: (not x.timed, x.end if x.timed else 0, x.pid, x.seq)):
        ended[launch.kernel].append(launch)
    taken: dict[str, int] = defaultdict(int)
    pairs = []
    for histogram in histograms:
        index = taken[histogram.name]
        if index >= len(ended[histogram.name]):
            raise ToolError(f"Oclgrind ran kernel {histogram.name!r} {index + 1} time(s) but the launch log holds "
                            f"{len(ended[histogram.name])} launch(es) of it: the two cannot be matched")
        taken[histogram.name] += 1
        launch = ended[histogram.name][index]
        pairs.append((launch, replace(histogram, work_items=launch.work_items)))
    return pairs


def _profile_run(options: ProgramOptions, folder: WorkingFolder, index: int, command: Sequence[str],
                 progress: Progress) -> ProfiledRun:
    """Run `command` under Oclgrind with the launch log (and the trace); return each launch with its counts."""
    from perfcast.devices.cache_view import cache_hierarchy
    from perfcast.devices.catalog import load_device_file
    from perfcast.profiles.capture import collect_oclgrind_ir, oclgrind_environment, oclgrind_ir_turn
    from perfcast.profiles.oclgrind import read_oclgrind_launches
    from perfcast.profiles.trace_plugin import TraceSampling, build_trace_plugin, trace_environment
    from perfcast.profiles.traffic import simulate_trace, traffic_metrics

    logger = build_launch_logger()
    prefix = _empty_log(folder, f"raw/profile-{index}/launches")
    raw = folder.file(f"raw/profile-{index}/oclgrind.txt")
    trace = raw.with_name("oclgrind.trace")
    plugins, notes = [], []
    if options.traffic:
        try:
            plugins.append(build_trace_plugin())
        except ToolError as error:
            notes.append(f"no memory trace ({error}): each launch's DRAM bytes are its global bytes, no cache")
    variables, runtime = oclgrind_environment(plugins)
    env = launch_environment(prefix, logger, before=[str(runtime)])
    env.update(variables)
    env["LD_LIBRARY_PATH"] = ":".join(p for p in (str(runtime.parent), env.get("LD_LIBRARY_PATH", "")) if p)
    sampling = TraceSampling(max_mb=TRACE_LAUNCH_MB, total_mb=TRACE_TOTAL_MB)
    if plugins:
        env.update(trace_environment(trace, sampling))
    limit = options.memory_limit
    if limit is None:
        available = available_memory()
        limit = available // 2 if available else None
    counter = LaunchCounter(prefix)
    smaller = ("profile a smaller problem: give the program's arguments for one with --profile-cmd"
               if not options.profile_commands else "profile a smaller problem with --profile-cmd")
    turn = oclgrind_ir_turn(lambda: progress("waiting for another perfcast capture under Oclgrind to end", 0.45))
    try:
        with turn as mark:
            run_watched(command, env=env, stdout=raw, stderr=raw.with_name("oclgrind.err"), timeout=options.timeout,
                        memory_limit=limit, what="the program under Oclgrind", advice=smaller,
                        progress=lambda s: progress(f"profiling under Oclgrind: {counter.count():,} launches "
                                                    f"({s:.0f} s)", 0.45 + 0.15 * index))
            ir = [path.read_text(encoding="utf-8", errors="replace")
                  for path in collect_oclgrind_ir(mark, raw.with_name("ir"))]
    except ProgramFailed as error:
        trace.unlink(missing_ok=True)  # maybe gigabytes
        errors = raw.with_name("oclgrind.err")
        if errors.exists() and "m_kernelInvocation == NULL" in errors.read_text(errors="replace"):
            raise ProgramFailed(f"{error}\nOclgrind runs one kernel at a time and this program launched kernels from "
                                "several host threads at once: profile a single-threaded run of it with "
                                "--profile-cmd") from None
        raise
    except BaseException:
        trace.unlink(missing_ok=True)
        raise
    log = read_launch_logs(prefix)
    histograms = read_oclgrind_launches(raw.read_text(encoding="utf-8", errors="replace"), ir=ir)
    if not histograms:
        raise ToolError(f"Oclgrind ran the program but printed no instruction histogram ({raw}): did it launch a "
                        "kernel on Oclgrind's device?")
    pairs = _match_histograms(log, histograms)
    if plugins and trace.exists():
        try:
            device = load_device_file(folder.path / "device.yaml")
            hierarchy = cache_hierarchy(device)
            # Each kernel's work-items in vectors as wide as PoCL made them (recorded before profiling).
            manifest_lanes = (folder.manifest().get("vectorisation") or {}).get("lanes")
            traffic = simulate_trace(trace, hierarchy, lambda launch: progress(
                f"simulating {launch.kernel}'s bytes ({launch.accesses:,} accesses)", 0.45 + 0.15 * index),
                carry_caches=True, lanes=(manifest_lanes or None), reuse=len(options.profile_commands) == 2)
            if [t.kernel for t in traffic] != [h.name for h in histograms]:
                notes.append("the memory trace's launches are not Oclgrind's histograms: bytes are global bytes")
            else:
                pairs = [(launch, profile.with_metrics(
                    f"bytes per level simulated through {device.name}'s caches (carried over from the launches before, "
                    f"{sampling.describe()}, "
                    f"at most {TRACE_LAUNCH_MB} MB of records per launch)", f"simulated for {device.name}",
                    **traffic_metrics([t]))) for (launch, profile), t in zip(pairs, traffic)]
        finally:
            trace.unlink(missing_ok=True)
    return ProfiledRun(tuple(command), tuple(pairs), tuple(notes))


def _cached_profile_run(options: ProgramOptions, folder: WorkingFolder, index: int, command: Sequence[str],
                        progress: Progress) -> ProfiledRun:
    """Return the profiled run of `command`, from the working folder when an earlier attempt finished it.

    A campaign refused for a scaling that does not hold is run again with --scaling: Oclgrind need not run again.
    """
    import json

    from perfcast.profiles.profile import load_profile

    saved = folder.path / f"raw/profile-{index}/launches.json"
    counts = saved.with_name("launches.yaml")
    if saved.exists() and counts.exists():
        record = json.loads(saved.read_text())
        if record.get("command") == list(command) and record.get("traffic") == options.traffic:
            profiles = load_profile(counts).kernels
            launches = [Launch(**{**item, "global_size": tuple(item["global_size"]),
                                  "local_size": None if item["local_size"] is None else tuple(item["local_size"]),
                                  "offset": None if item["offset"] is None else tuple(item["offset"])})
                        for item in record["launches"]]
            pairs = tuple((launch, replace(profile, name=launch.kernel))
                          for launch, profile in zip(launches, profiles, strict=True))
            return ProfiledRun(tuple(command), pairs, tuple(record["notes"]))
    run = _profile_run(options, folder, index, command, progress)
    source = ProfileSource("Oclgrind", command=shlex.join(command))
    # One entry per launch, in the order Oclgrind ran them, named "N:kernel" (a profile file names each once).
    ProfileSet(source, tuple(replace(profile, name=f"{n}:{profile.name}")
                             for n, (_, profile) in enumerate(run.launches))).save(counts)
    from dataclasses import asdict

    saved.write_text(json.dumps({"command": list(command), "traffic": options.traffic, "notes": list(run.notes),
                                 "launches": [asdict(launch) for launch, _ in run.launches]}))
    return run


# ------------------------------------------------------------------ counts for each timed group


def _median_pages(values: Sequence[float], launches: int | None) -> float:
    """Return the first-touched pages of a group's median launch, from its profiled launches' (count).

    A launch that finds pages fresh pays for them alone (the first over a buffer), and a group is timed by its
    median launch. A timed group of more launches than were profiled (more iterations of the same program) adds
    launches that find their pages mapped: buffers are made once, so the fresh ones stay as many.
    """
    padded = [*values, *[0.0] * max(0, (launches or 0) - len(values))]
    return statistics.median(padded)


def _mean_profile(name: str, profiles: Sequence[KernelProfile], work_items: int,
                  launches: int | None = None) -> KernelProfile:
    """Return the mean per launch of several launches' profiles (counts and bytes), named `name`.

    The first-touched pages are their median launch's, over `launches` (the timed group's) where given
    (`_median_pages`).
    """
    from perfcast.profiles.traffic import FIRST_TOUCH_METRICS

    keys = set().union(*(p.metrics for p in profiles))
    metrics = {k: _median_pages([p.metrics.get(k, 0.0) for p in profiles], launches) if k in FIRST_TOUCH_METRICS
               else statistics.fmean(p.metrics.get(k, 0.0) for p in profiles) for k in keys}
    notes = tuple(dict.fromkeys(n for p in profiles for n in p.notes))
    return KernelProfile(name, 1, metrics, work_items=work_items, notes=notes, bytes_from=profiles[0].bytes_from)


def _launches_by_kernel(run: ProfiledRun, rebuilt: set[str]) -> dict[Identity, list[tuple[Launch, KernelProfile]]]:
    """Return a profiled run's launches per kernel (its build apart where `rebuilt`), in the order they ran."""
    by_kernel: dict[Identity, list[tuple[Launch, KernelProfile]]] = defaultdict(list)
    for launch, profile in run.launches:
        by_kernel[launch_identity(launch, rebuilt)].append((launch, profile))
    return by_kernel


def _per_kernel(run: ProfiledRun, rebuilt: set[str]) -> dict[Identity, tuple[KernelProfile, float]]:
    """Return, per kernel (its build apart where `rebuilt`), its mean profile per launch and mean work-items per launch."""
    found = {}
    for identity, pairs in _launches_by_kernel(run, rebuilt).items():
        items = statistics.fmean(launch.work_items for launch, _ in pairs)
        found[identity] = (_mean_profile(identity[0], [p for _, p in pairs], round(items)), items)
    return found


def _identity_text(identity: Identity) -> str:
    """Return a kernel's identity in words: 'scale', or "md (built with '-DSINGLE_PRECISION')"."""
    kernel, build = identity
    return kernel if build is None else f"{kernel} (built with {build!r})"


def scaling_check(kernel: str, small: tuple[KernelProfile, float], large: tuple[KernelProfile, float],
                  exponent: float) -> tuple[str, float, float, float] | None:
    """Return the worst metric breaking counts ∝ work-items^p between two sizes (metric, seen, expected, fitted p).

    None when every checked count follows the declaration within SCALING_CHECK_TOLERANCE.
    """
    (p_small, w_small), (p_large, w_large) = small, large
    expected = (w_large / w_small) ** exponent
    worst = None
    for metric in CHECKED_METRICS:
        a, b = p_small.metrics.get(metric, 0.0), p_large.metrics.get(metric, 0.0)
        if a <= 0 or b <= 0:
            if a != b and max(a, b) > 0:
                worst = worst or (metric, b / a if a else math.inf, expected, math.nan)
            continue
        seen = b / a
        if abs(seen / expected - 1) > SCALING_CHECK_TOLERANCE:
            fitted = math.log(seen) / math.log(w_large / w_small) if w_large != w_small else math.nan
            if worst is None or abs(seen / expected - 1) > abs(worst[1] / worst[2] - 1):
                worst = (metric, seen, expected, fitted)
    return worst


def _group_profiles(options: ProgramOptions, manifest: dict[str, Any], runs: Sequence[ProfiledRun],
                    levels: Sequence[CacheLevel] = ()) -> tuple[list[KernelProfile], list[str]]:
    """Return a profile per timed group (per launch), and notes; refuse kernels that do not scale as declared.

    A group whose kernel and NDRange the (last) profiled run launched too takes the mean of those launches;
    any other takes its kernel's mean counts scaled to its work-items as declared, and, where both profiled
    runs launched it at different work-items and `levels` (the device's caches) are known, its bytes per level
    carried to the timed size by its reuse distances (`_with_reuse`).
    """
    notes: list[str] = []
    # The kernels the timed run launched from several builds: their profiles are matched build by build.
    rebuilt = {record["kernel"] for record in manifest["kernels"].values() if "build" in record}
    unchecked: set[Identity] = set()  # kernels the two profiled commands ran at the same work-items
    sizes: list[dict[Identity, tuple[KernelProfile, float]]] = []
    # Kernels whose scattered loads gathered from the same buffers at both profiled sizes: their buffers do not
    # grow with the NDRange, so scaled to more work-items their first fetches from DRAM are capped at them.
    same_buffers: set[Identity] = set()
    if len(runs) == 2:
        sizes = [_per_kernel(run, rebuilt) for run in runs]
        refused = []
        for identity in sorted(set(sizes[0]) & set(sizes[1]), key=lambda found: (found[0], found[1] or "")):
            kernel, words = identity[0], _identity_text(identity)
            exponent = options.scaling.get(kernel, 1.0)
            small, large = sorted((sizes[0][identity], sizes[1][identity]), key=lambda item: item[1])
            if small[1] == large[1]:
                unchecked.add(identity)
            caps = [size[identity][0].metrics.get("scattered_first_cap", 0.0) for size in sizes]
            if caps[0] > 0 and abs(caps[0] - caps[1]) <= 0.01 * caps[0]:
                same_buffers.add(identity)
            broken = scaling_check(kernel, small, large, exponent)
            if broken:
                metric, seen, expected, fitted = broken
                hint = (f"; its counts grow as work-items^{fitted:.2f}: declare it with --scaling {kernel}={fitted:.2f}"
                        if math.isfinite(fitted) else
                        f"; both profiled runs launched it at {small[1]:.0f} work-items (an NDRange that does not "
                        "grow with the problem, or one rounded up to the same work-groups) while its work grew: profile "
                        "two sizes whose NDRanges differ, or the timed size itself (leave out --profile-cmd)"
                        if small[1] == large[1] else "")
                refused.append(f"{words}: from {small[1]:.0f} to {large[1]:.0f} work-items per launch its {metric} "
                               f"grew {seen:.4g}x, not the {expected:.4g}x declared (work-items^{exponent:g}){hint}")
        if refused:
            raise InputError("the profiled counts do not scale as declared, so they cannot be carried to the timed "
                             "size:\n" + "\n".join(f"  {line}" for line in refused))
    last = runs[-1]
    exact: dict[tuple[Identity, tuple[int, ...], tuple[int, ...] | None], list[KernelProfile]] = defaultdict(list)
    for launch, profile in last.launches:
        exact[(launch_identity(launch, rebuilt), launch.global_size, launch.local_size)].append(profile)
    per_kernel = _per_kernel(last, rebuilt)
    of_kernel = _launches_by_kernel(last, rebuilt)  # each kernel's launches, for their pages
    profiles, scaled_any = [], False
    scaled_kernels: set[Identity] = set()
    for name, record in manifest["kernels"].items():
        kernel = record["kernel"]
        group: Identity = (kernel, record.get("build"))
        key = (group, tuple(record["global_size"]), tuple(record["local_size"]) if record["local_size"] else None)
        if exact.get(key):
            profiles.append(_mean_profile(name, exact[key], record["work_items"], record.get("launches")))
        elif group in per_kernel:
            profile, items = per_kernel[group]
            exponent = options.scaling.get(kernel, 1.0)
            factor = (record["work_items"] / items) ** exponent
            growth = 1.0 if group in same_buffers else record["work_items"] / items
            scaled = _with_pages(_with_touched(replace(profile.scaled(factor, record["work_items"]), name=name),
                                               profile.metrics.get("touched_bytes"), growth),
                                 [launched for _, launched in of_kernel[group]], growth, record.get("launches"))
            scaled = _capped_first_fetches(scaled, factor) if group in same_buffers else scaled
            if sizes and levels and group in sizes[0] and sizes[0][group][1] != items:
                other, other_items = sizes[0][group]
                scaled = _with_reuse(scaled, profile, other, other_items / items, record["work_items"] / items,
                                     levels)
            profiles.append(scaled)
            scaled_any = True
            scaled_kernels.add(group)
        else:
            notes.append(f"{name}: the profiled run never launched {_identity_text(group)}")
    if scaled_any and len(runs) == 1:
        notes.append("counts profiled at another NDRange were scaled to the timed one as declared (work-items^p), "
                     "not checked: give --profile-cmd twice to check the scaling")
    scaled_unchecked = sorted(_identity_text(identity) for identity in unchecked & scaled_kernels)
    if scaled_unchecked:
        notes.append(f"{', '.join(scaled_unchecked)}: both profiled commands ran it at the same work-items, so its "
                     "scaling to the timed NDRange is declared, not checked: profile two problem sizes")
    return profiles, notes


def _with_reuse(scaled: KernelProfile, base: KernelProfile, other: KernelProfile, ratio: float, onward: float,
                levels: Sequence[CacheLevel]) -> KernelProfile:
    """Return a scaled profile with its bytes per level and scattered loads carried to the timed size by reuse.

    `base`: the profiled run's mean launch it was scaled from; `other`: the other profiled run's; `ratio`: the
    other's work-items over the base's; `onward`: the timed group's over the base's (docs/campaign-programs.md).
    """
    from perfcast.profiles.reuse import extrapolate_levels, extrapolated_metrics

    line = max(level.line for level in levels)
    capacities = [(level.name, level.capacity / line) for level in levels]
    found = extrapolate_levels(base.metrics, other.metrics, ratio, onward, capacities)
    if found is None:
        return scaled
    changed, moved = extrapolated_metrics(scaled.metrics, found, [(level.name, level.line) for level in levels])
    if not changed:
        return scaled
    return scaled.with_metrics(found.describe(moved), None, **changed)


def _cache_levels(folder: WorkingFolder) -> tuple[CacheLevel, ...]:
    """Return the working folder's device's cache levels, innermost first; none where it gives no cache sizes."""
    from perfcast.devices.cache_view import cache_hierarchy
    from perfcast.devices.catalog import load_device_file

    try:
        return cache_hierarchy(load_device_file(folder.path / "device.yaml")).levels
    except (InputError, OSError):
        return ()  # no cache sizes: the traffic was not simulated either


def _outgrown_note(folder: WorkingFolder, profiles: Sequence[KernelProfile]) -> str | None:
    """Return a note naming the groups whose profiled problem found hits in caches the timed one outgrows, or None."""
    from perfcast.campaign.profile_size import profile_outgrows

    levels = _cache_levels(folder)
    if not levels:
        return None
    found = [(profile.name, outgrown) for profile in profiles
             if (outgrown := profile_outgrows(profile.metrics, levels)) is not None]
    if not found:
        return None
    listed = "; ".join(f"{name} ({', '.join(level for level, _ in o.levels)})" for name, o in found[:6])
    more = f" and {len(found) - 6} more" if len(found) > 6 else ""
    return (f"the profiled problem found hits in caches the timed one outgrows, so its bytes per level may count "
            f"as hits what the timed run misses: {listed}{more}; profile a larger problem with --profile-cmd (the "
            f"report's reasons give each group's sizes)")


def _with_touched(profile: KernelProfile, profiled: float | None, growth: float) -> KernelProfile:
    """Return a scaled profile with its launch's touched bytes at the profiled size and at the timed one (B).

    The timed one grows with the work-items (`growth`: their ratio, 1 for a kernel whose buffers do not grow),
    not with the counts, which may grow faster (a matrix product's work-items^1.5).
    """
    if not profiled:
        return profile
    from perfcast.campaign.profile_size import PROFILED, TIMED

    return replace(profile, metrics={**profile.metrics, PROFILED: profiled, TIMED: profiled * growth})


def _with_pages(scaled: KernelProfile, launches: Sequence[KernelProfile], growth: float,
                timed_launches: int | None) -> KernelProfile:
    """Return a scaled profile with its kernel's first-touched pages grown as its buffers (`growth`), not its counts.

    `launches`: the kernel's profiled launches, whose median over the timed group's launches is taken
    (`_median_pages`). A buffer grows with the work-items over it (a matrix product's counts grow faster:
    work-items^1.5). A kernel launched at several NDRanges mixes them here, as its counts do (lud's, SHOC
    reduction's): the median then describes the kernel's launches, not one timed group's.
    """
    from perfcast.profiles.traffic import FIRST_TOUCH_METRICS

    pages = {k: _median_pages([p.metrics.get(k, 0.0) for p in launches], timed_launches) * growth
             for k in FIRST_TOUCH_METRICS if any(k in p.metrics for p in launches)}
    return replace(scaled, metrics={**scaled.metrics, **pages}) if pages else scaled


def _capped_first_fetches(profile: KernelProfile, factor: float) -> KernelProfile:
    """Return a profile scaled by `factor` with its scattered first fetches from DRAM capped at its buffers' lines."""
    from perfcast.profiles.traffic import cap_first_fetches, scattered_by_level, set_walks_shared_out

    metrics = dict(profile.metrics)
    scattered = scattered_by_level(metrics)
    caches = sorted(level for level in scattered if level.startswith("L"))
    if not caches:
        return profile
    cap = metrics.get("scattered_first_cap", 0.0) / factor  # scaled with the rest: the buffers' own lines
    moved = cap_first_fetches(scattered, metrics.get("scattered_first", 0.0), cap, caches[-1])
    if not moved:
        return profile
    metrics.update(set_walks_shared_out(metrics, scattered))
    metrics.update({f"scattered_{level.lower()}": value for level, value in scattered.items()})
    metrics["scattered_first"] -= moved
    note = (f"{moved:.4g} scattered first fetches from DRAM, scaled with the work-items, are served by {caches[-1]}: "
            f"both profiled sizes gathered from the same buffers ({cap:.4g} lines), which come from DRAM once")
    return replace(profile, metrics=metrics, notes=(*profile.notes, note))


def cuda_group_profiles(manifest: Mapping[str, Any], captured: ProfileSet) -> tuple[list[KernelProfile], list[str]]:
    """Return a profile per timed group of a CUDA program from an ncu profile of the same command.

    ncu sums each kernel's launches; every group of a kernel takes its mean per launch (kernels matched by their
    bare names: a trace's demangled signature, ncu's mangled or demangled one).
    """
    from perfcast.campaign.projection import kernel_base_name

    by_name = {kernel_base_name(profile.name): profile for profile in captured.kernels}
    profiles, notes = [], []
    shapes: dict[str, int] = defaultdict(int)
    for record in manifest["kernels"].values():
        shapes[record["kernel"]] += 1
    for name, record in manifest["kernels"].items():
        found = by_name.get(kernel_base_name(record["kernel"]))
        if found is None:
            notes.append(f"{name}: Nsight Compute profiled no launch of it")
            continue
        mean = found.scaled(1 / found.launches, record["work_items"])
        profiles.append(replace(mean, name=name, launches=1))
        if shapes[record["kernel"]] > 1:
            notes.append(f"{name}: ncu's counts are the mean over the kernel's launches at all its NDRanges")
    return profiles, notes


def _profile_cuda(options: ProgramOptions, folder: WorkingFolder, manifest: dict[str, Any],
                  progress: Progress) -> None:
    """Profile a CUDA program under Nsight Compute; save a profile per timed group."""
    from perfcast.profiles.capture import capture

    command = options.command
    if options.profile_commands:
        raise InputError("--profile-cmd: a CUDA program is profiled at its timed size (ncu measures, it does not "
                         "simulate); leave it out")
    progress("profiling under Nsight Compute", 0.5)
    captured = capture("ncu", command, folder.file("raw/profile-0/ncu.yaml"), timeout=options.timeout).profile
    profiles, notes = cuda_group_profiles(manifest, captured)
    if not profiles:
        raise ToolError("Nsight Compute profiled none of the timed kernels")
    ProfileSet(captured.source, tuple(profiles), (*captured.notes, *notes)).save(folder.file("profile.yaml"))
    manifest["profiling"] = {"tool": f"Nsight Compute {captured.source.version or ''}".strip(),
                             "profiled": [shlex.join(command)]}
    if notes:
        manifest["profiling"]["note"] = "; ".join(notes)
    folder.save_manifest(manifest)


def _profile_program(options: ProgramOptions, folder: WorkingFolder, manifest: dict[str, Any],
                     progress: Progress) -> None:
    """Profile the program (or its smaller commands) under Oclgrind; save a profile per timed group."""
    if options.timer == "nsys":
        _profile_cuda(options, folder, manifest, progress)
        return
    if shutil.which("oclgrind") is None:
        manifest["profiling"] = {"tool": None, "incomplete": True,
                                 "note": "oclgrind is not installed: no profiles, so no predictions"}
        folder.save_manifest(manifest)
        return
    commands = options.profile_commands or (options.command,)
    runs = [_cached_profile_run(options, folder, index, command, progress) for index, command in enumerate(commands)]
    profiles, notes = _group_profiles(options, manifest, runs, _cache_levels(folder))
    for run in runs:
        notes.extend(run.notes)
    outgrown = _outgrown_note(folder, profiles)
    if outgrown:
        notes.append(outgrown)
    from perfcast.profiles.capture import oclgrind_version

    version = oclgrind_version()
    source = ProfileSource("Oclgrind", device="Oclgrind simulator", version=version,
                           command=" ; ".join(shlex.join(c) for c in commands), raw="raw/profile-*/oclgrind.txt")
    if not profiles:
        raise ToolError("Oclgrind profiled none of the timed kernels")
    ProfileSet(source, tuple(profiles), tuple(dict.fromkeys(notes))).save(folder.file("profile.yaml"))
    for profile in profiles:
        manifest["kernels"][profile.name]["profile"] = {"work_items": profile.work_items,
                                                         "bytes_from": profile.bytes_from}
    manifest["profiling"] = {"tool": f"Oclgrind {version or ''}".strip(),
                             "profiled": [shlex.join(c) for c in commands],
                             "launches": [len(run.launches) for run in runs]}
    if notes:
        manifest["profiling"]["note"] = "; ".join(dict.fromkeys(notes))
    folder.save_manifest(manifest)


# ------------------------------------------------------------------ the whole run


def run_program_campaign(options: ProgramOptions, progress: Progress = lambda label, done: None) -> Path:
    """Run (or resume) a campaign of an unmodified OpenCL program and return the archive it packed."""
    if not options.command:
        raise InputError("give the program after --, e.g. perfcast campaign run -o app.zip -- ./app 4096")
    if len(options.profile_commands) > 2:
        raise InputError("--profile-cmd: one smaller command, or two to check the scaling, not more")
    folder = WorkingFolder.for_archive(options.output)
    if options.fresh:
        folder.discard()
    if folder.exists():
        manifest = folder.manifest()
        if manifest.get("kind") != "program" or manifest.get("program") != list(options.command):
            raise ArchiveError(f"{folder.path} holds an unfinished run of another command; finish it with the same "
                               "command or start again with --fresh")
        manifest["scaling"] = dict(options.scaling)  # a run refused for its scaling resumes with a new declaration
        manifest["profile_programs"] = [list(c) for c in options.profile_commands]
        manifest["species"] = _species_texts(options)  # a species is read when scoring: it may change on resuming
    else:
        manifest = _fresh_manifest(options)
        folder.save_manifest(manifest)
    if manifest["timed_run"] is None or manifest["timed_run"].get("interrupted"):
        _time_program(options, folder, manifest, progress)
    if manifest["device"] is None or not (folder.path / "device.yaml").exists():
        _measure_device(options, folder, manifest, progress)
    else:  # interrupted between two runs of the bench: the others still run
        _measure_device_again(options, folder, manifest, progress)
    if "vectorisation" not in manifest:
        _record_vectorisation(options, folder, manifest, progress)
    if not (folder.path / "profile.yaml").exists() and manifest.get("profiling") is None:
        _profile_program(options, folder, manifest, progress)
    if "incore" not in manifest:
        _record_incore(options, folder, manifest, progress)
    progress("packing the archive", 0.98)
    archive = folder.pack(options.output)
    progress("done", 1.0)
    return archive


def program_label(manifest: Mapping[str, Any]) -> str:
    """Return the program a program archive ran, as a shell command line (short)."""
    text = shlex.join(manifest.get("program") or [])
    return re.sub(r"\s+", " ", text)[:160]
