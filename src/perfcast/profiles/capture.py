"""Running a profiler around a program: exactly the metrics the models need, the tool's raw output kept.

One entry per tool in TOOLS (the registry `perfcast profile --tool` offers): how to find it, the command line
around the user's program, and how its output becomes a ProfileSet.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from perfcast.errors import ToolError
from perfcast.models.caches import CacheHierarchy
from perfcast.profiles.metrics import ncu_metric_names, nvprof_metric_names
from perfcast.profiles.ncu import read_ncu
from perfcast.profiles.nvprof import read_nvprof
from perfcast.profiles.oclgrind import read_oclgrind
from perfcast.profiles.profile import ProfileError, ProfileSet
from perfcast.profiles.trace_plugin import TraceSampling, build_trace_plugin, trace_environment
from perfcast.profiles.traffic import LaunchTrace, apply_traffic, simulate_trace

__all__ = [
    "TOOLS",
    "Capture",
    "IrMark",
    "TrafficRequest",
    "capture",
    "collect_oclgrind_ir",
    "describe_hierarchy",
    "capture_ncu_source",
    "default_tool",
    "ncu_arguments",
    "ncu_failure",
    "ncu_source_arguments",
    "mark_oclgrind_ir",
    "oclgrind_ir_turn",
    "oclgrind_environment",
    "oclgrind_runtime",
    "oclgrind_version",
]

OCLGRIND_IR_DIR = Path("/tmp")  # Oclgrind writes --dump-spir files there, whatever TMPDIR says


@dataclass(frozen=True)
class Capture:
    """What a profiling run leaves: the profile, the raw output file and the IR files kept beside it."""

    profile: ProfileSet
    raw: Path
    extra: tuple[Path, ...] = ()


def ncu_arguments(raw: Path) -> list[str]:
    """Return the Nsight Compute options perfcast profiles with (one CSV row per launch, base units)."""
    return ["--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
            "--metrics", ",".join(ncu_metric_names()), "--target-processes", "all", "--log-file", str(raw)]


def ncu_source_arguments(page: Path) -> list[str]:
    """Return the Nsight Compute options of the source-page run: threads executed per SASS instruction, as CSV."""
    return ["--section", "SourceCounters", "--csv", "--page", "source", "--print-source", "sass",
            "--target-processes", "all", "--log-file", str(page)]


def _version(executable: str) -> str | None:
    """Return the version a tool prints of itself, or None."""
    try:
        done = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"(?:version|release|oclgrind)\s+(\d[\w.\-]*)", done.stdout + done.stderr, re.IGNORECASE)
    return match[1] if match else None


def _gpu_name() -> str | None:
    """Return the first NVIDIA GPU's name from nvidia-smi, or None."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        done = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else None


def _run(arguments: list[str], env: dict[str, str] | None, timeout: float | None, stdout: Path | None) -> None:
    """Run a profiler command; stdout to a file when given (else to the terminal); raise ToolError on failure."""
    try:
        if stdout is None:
            done = subprocess.run(arguments, env=env, timeout=timeout)
        else:
            with stdout.open("w", encoding="utf-8") as handle:
                done = subprocess.run(arguments, env=env, timeout=timeout, stdout=handle)
    except subprocess.TimeoutExpired:
        raise ToolError(f"the profiled program ran past {timeout:g} s: {shlex.join(arguments)}") from None
    except OSError as error:
        raise ToolError(f"cannot run {arguments[0]}: {error.strerror or error}") from None
    if done.returncode != 0:
        raise ToolError(f"{shlex.join(arguments)} exited with status {done.returncode}; its output is kept in "
                        f"{stdout or 'the terminal above'}")


# Rented and containerised GPUs often keep the counters to administrators; ncu then profiles nothing, and may
# still exit with status 0. Its log says ERR_NVGPUCTRPERM.
NCU_COUNTERS_RESTRICTED = (
    "the GPU's performance counters are restricted to administrators (ERR_NVGPUCTRPERM): run as root, or load "
    "the driver with NVreg_RestrictProfilingToAdminUsers=0 (a container needs --cap-add=SYS_ADMIN); see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM")


def ncu_failure(log: Path, error: Exception) -> str:
    """Return why an Nsight Compute run gave no profile: its own ==ERROR== lines from `log` first, then `error`."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    if "ERR_NVGPUCTRPERM" in text:
        return f"Nsight Compute profiled nothing: {NCU_COUNTERS_RESTRICTED}"
    own = [line.strip() for line in text.splitlines() if line.startswith("==ERROR==") and line.strip() not in str(error)]
    said = f"; ncu said: {' | '.join(own[:3])[:600]}" if own else ""  # what the reader's message did not quote
    return f"{error}{said} (ncu's log: {log})"


def _capture_ncu(executable: str, command: Sequence[str], raw: Path, timeout: float | None) -> Capture:
    try:
        _run([executable, *ncu_arguments(raw), *command], None, timeout, None)
        profile = read_ncu(raw.read_text(encoding="utf-8", errors="replace"), command=shlex.join(command),
                           raw=raw.name)
    except (ToolError, ProfileError) as error:
        raise ToolError(ncu_failure(raw, error)) from None
    source = replace(profile.source, version=_version(executable), device=_gpu_name() or profile.source.device)
    return Capture(replace(profile, source=source), raw)


def _capture_nvprof(executable: str, command: Sequence[str], raw: Path, timeout: float | None) -> Capture:
    arguments = [executable, "--csv", "--metrics", ",".join(nvprof_metric_names()), "--log-file", str(raw), *command]
    _run(arguments, None, timeout, None)
    profile = read_nvprof(raw.read_text(encoding="utf-8", errors="replace"), command=shlex.join(command),
                          raw=raw.name)
    return Capture(replace(profile, source=replace(profile.source, version=_version(executable))), raw)


@dataclass(frozen=True)
class TrafficRequest:
    """Simulate the bytes each kernel moves through a device's caches (Oclgrind only): the caches, the sampling."""

    hierarchy: CacheHierarchy
    sampling: TraceSampling = TraceSampling()
    keep_trace: bool = False
    progress: Callable[[str], None] | None = None
    # Per kernel: the work-groups of the full launch that the profiled (reduced) launch is a sample of.
    total_groups: Mapping[str, int] | None = None
    repeated: bool = False  # each launch stands for many identical ones back to back (a timed kernel)
    lanes: Mapping[str, int] | None = None  # per kernel: work-items per vector its compiler used (CPU)


@dataclass(frozen=True)
class IrMark:
    """The IR files Oclgrind's --dump-spir had left in OCLGRIND_IR_DIR before a run, and when it began."""

    started: float
    before: frozenset[Path]


def mark_oclgrind_ir() -> IrMark:
    """Return the mark to take before a run whose dumped IR `collect_oclgrind_ir` will gather."""
    return IrMark(time.time() - 1, frozenset(OCLGRIND_IR_DIR.glob("oclgrind_*")))


@contextmanager
def oclgrind_ir_turn(waiting: Callable[[], None] | None = None) -> Iterator[IrMark]:
    """Hold this user's turn at Oclgrind's shared IR folder for one run; yield its mark.

    Oclgrind dumps IR into /tmp under names of its own, so two captures at once cannot tell their files
    apart: one run at a time per user takes them (a second waits, `waiting` is told once). The lock is an
    flock on a file of the user's own, released when the run ends or dies.
    """
    import fcntl

    lock = OCLGRIND_IR_DIR / f"perfcast-oclgrind-ir-{os.getuid()}.lock"
    try:
        handle = open(lock, "a+")  # noqa: SIM115 - held for the block
    except OSError as error:  # a file of that name planted by another user, a read-only /tmp
        raise ToolError(f"cannot take a turn at Oclgrind's IR folder: {lock}: {error.strerror or error}") from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting()
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield mark_oclgrind_ir()
    finally:
        handle.close()


def collect_oclgrind_ir(mark: IrMark, folder: Path) -> list[Path]:
    """Move the .ll files a run dumped since `mark` into `folder` (made when needed); return them, sorted.

    Only this user's plain files are taken; the run's other dumped files (binaries) are removed.
    """
    dumped = [p for p in set(OCLGRIND_IR_DIR.glob("oclgrind_*")) - mark.before
              if _ours(p) and p.stat().st_mtime >= mark.started]
    kept = []
    for path in sorted(dumped):
        if path.suffix == ".ll":
            folder.mkdir(parents=True, exist_ok=True)
            kept.append(Path(shutil.move(str(path), folder / path.name)))
        else:
            path.unlink(missing_ok=True)
    return kept


def oclgrind_runtime() -> Path:
    """Return Oclgrind's runtime library (the OpenCL it preloads into a program), or ToolError."""
    executable = shutil.which("oclgrind")
    if executable is None:
        raise ToolError("oclgrind is not on PATH (apt-get install oclgrind)")
    prefix = Path(executable).resolve().parent.parent
    for candidate in (*prefix.glob("lib/oclgrind/liboclgrind-rt.so"), *prefix.glob("lib*/liboclgrind-rt.so"),
                      *prefix.glob("lib/*/oclgrind/liboclgrind-rt.so"), *prefix.glob("lib/*/liboclgrind-rt.so")):
        return candidate
    raise ToolError(f"Oclgrind's runtime liboclgrind-rt.so is not under {prefix}/lib: is Oclgrind installed whole?")


def oclgrind_environment(plugins: Sequence[Path] = ()) -> tuple[dict[str, str], Path]:
    """Return the variables the oclgrind launcher sets for --inst-counts --dump-spir [--plugins], and its runtime.

    For running a program under Oclgrind with another library preloaded first (the launcher would replace
    LD_PRELOAD): preload the runtime after it and add its folder to LD_LIBRARY_PATH.
    """
    variables = {"OCLGRIND_INST_COUNTS": "1", "OCLGRIND_DUMP_SPIR": "1", "PYOPENCL_NO_CACHE": "1"}
    if plugins:
        variables["OCLGRIND_PLUGINS"] = ":".join(str(p) for p in plugins)
    return variables, oclgrind_runtime()


def oclgrind_version() -> str | None:
    """Return the version of the oclgrind on PATH, or None."""
    executable = shutil.which("oclgrind")
    return _version(executable) if executable else None


def _capture_oclgrind(executable: str, command: Sequence[str], raw: Path, timeout: float | None,
                      traffic: TrafficRequest | None = None) -> Capture:
    # pyopencl caches built programs and would hand Oclgrind a binary, leaving no IR to dump: turn its cache off.
    env = {**os.environ, "PYOPENCL_NO_CACHE": "1"}
    arguments = [executable, "--inst-counts", "--dump-spir"]
    trace = raw.with_name(raw.name.removesuffix(".txt") + ".trace")
    if traffic is not None:
        arguments += ["--plugins", str(build_trace_plugin())]
        env.update(trace_environment(trace, traffic.sampling))
        trace.unlink(missing_ok=True)
    with oclgrind_ir_turn(lambda: print("waiting for another perfcast capture under Oclgrind to end",
                                        file=sys.stderr)) as mark:
        try:
            _run([*arguments, *command], env, timeout, raw)
        finally:
            kept = collect_oclgrind_ir(mark, raw.with_name(raw.name.removesuffix(".txt") + ".ir"))
            if traffic is not None and not traffic.keep_trace and sys.exc_info()[0] is not None:
                trace.unlink(missing_ok=True)  # a failed or interrupted run: its trace (maybe gigabytes) goes
    ir = [path.read_text(encoding="utf-8", errors="replace") for path in kept]
    profile = read_oclgrind(raw.read_text(encoding="utf-8", errors="replace"), ir=ir, command=shlex.join(command),
                            raw=raw.name)
    if traffic is not None:
        try:
            profile = _simulated(profile, trace, traffic)
        finally:
            if not traffic.keep_trace:
                trace.unlink(missing_ok=True)
        if traffic.keep_trace:
            kept.append(trace)
    return Capture(replace(profile, source=replace(profile.source, version=_version(executable))), raw, tuple(kept))


def _simulated(profile: ProfileSet, trace: Path, traffic: TrafficRequest) -> ProfileSet:
    """Return `profile` with its bytes per level simulated from the memory trace Oclgrind's run left."""
    if not trace.is_file():
        raise ToolError(f"Oclgrind ran, but its memory trace {trace} is missing: the perfcast plugin did not load")

    def heard(launch: LaunchTrace) -> None:
        if traffic.progress is not None:
            traffic.progress(f"simulating {launch.kernel}: {len(launch.groups)} work-groups, "
                             f"{launch.accesses:,} accesses")

    launches = simulate_trace(trace, traffic.hierarchy, heard, traffic.total_groups, traffic.repeated,
                              lanes=traffic.lanes)
    if not launches:
        raise ToolError(f"the memory trace {trace} holds no kernel launch")
    simulated = apply_traffic(profile, launches, traffic.sampling.describe())
    return replace(simulated, notes=(*simulated.notes, describe_hierarchy(traffic.hierarchy)))


def describe_hierarchy(hierarchy: CacheHierarchy) -> str:
    """Return the simulated caches in one line, each level's assumptions named."""
    levels = []
    for level in hierarchy.levels:
        allocate = "write-allocate" if level.allocate else "no write-allocate"
        assumed = f"; assumed: {', '.join(level.assumed)}" if level.assumed else ""
        levels.append(f"{level.name} {level.size} B x {level.instances} ({level.line} B lines, {level.ways} ways, "
                      f"write-{level.write}, {allocate}{assumed})")
    return (f"caches simulated for {hierarchy.device}: " + "; ".join(levels)
            + "".join(f"; {note}" for note in hierarchy.notes))


def _ours(path: Path) -> bool:
    """Return True for a plain file this user owns (another user's file in /tmp is never read or moved)."""
    try:
        stat = path.lstat()
    except OSError:
        return False
    return path.is_file() and not path.is_symlink() and stat.st_uid == os.getuid()


Runner = Callable[[str, Sequence[str], Path, float | None], Capture]
TOOLS: dict[str, tuple[str, Runner]] = {
    "ncu": ("NVIDIA Nsight Compute (CUDA programs on NVIDIA GPUs)", _capture_ncu),
    "nvprof": ("NVIDIA nvprof (CUDA programs on GPUs before Volta)", _capture_nvprof),
    "oclgrind": ("Oclgrind (any OpenCL program, simulated: no GPU needed)", _capture_oclgrind),
}


def capture_ncu_source(command: Sequence[str], output: Path, timeout: float | None = None) -> Path:
    """Run `command` under ncu's SourceCounters section; write its source page (SASS) beside `output`; return it.

    A second run of the program: the page weighs the SASS comparison's blocks (`perfcast project --sass-counts`).
    The page is read back at once, so that a capture without the counts fails here and not in a later command.
    """
    from perfcast.profiles.ncu_source import read_ncu_source

    executable = shutil.which("ncu")
    if executable is None:
        raise ToolError(f"ncu is not on PATH ({TOOLS['ncu'][0]})")
    page = output.with_name(output.name.removesuffix(output.suffix) + ".ncu-source.csv")
    try:
        _run([executable, *ncu_source_arguments(page), *command], None, timeout, None)
        read_ncu_source(page.read_text(encoding="utf-8", errors="replace"))
    except (ToolError, ProfileError) as error:
        raise ToolError(ncu_failure(page, error)) from None
    return page


def default_tool() -> str:
    """Return the first profiler installed here, in the order ncu, oclgrind, nvprof."""
    for name in ("ncu", "oclgrind", "nvprof"):
        if shutil.which(name):
            return name
    raise ToolError("no profiler found on PATH: install Nsight Compute (ncu), Oclgrind (apt-get install oclgrind) "
                    "or nvprof")


def capture(tool: str, command: Sequence[str], output: Path, timeout: float | None = None,
            traffic: TrafficRequest | None = None) -> Capture:
    """Run `command` under `tool`, keep its raw output beside `output` and save the profile to `output`.

    `traffic`: simulate each kernel's bytes per level through a device's caches (Oclgrind only).
    """
    if tool not in TOOLS:
        raise ToolError(f"unknown profiler {tool!r}; choose one of {', '.join(TOOLS)}")
    if traffic is not None and tool != "oclgrind":
        raise ToolError(f"simulated traffic needs every memory access of the kernels: Oclgrind traces them, "
                        f"{tool} does not (it measures the traffic on the GPU it runs on)")
    if not command:
        raise ToolError("give the program to profile after --, e.g. perfcast profile -o p.yaml -- ./app 1024")
    executable = shutil.which(tool)
    if executable is None:
        raise ToolError(f"{tool} is not on PATH ({TOOLS[tool][0]})")
    raw = output.with_name(output.name.removesuffix(output.suffix) + f".{tool}.txt")
    if traffic is not None:
        result = _capture_oclgrind(executable, command, raw, timeout, traffic)
    else:
        result = TOOLS[tool][1](executable, command, raw, timeout)
    today = _dt.date.today().isoformat()
    profile = replace(result.profile, source=replace(result.profile.source, date=today))
    profile.save(output)
    return replace(result, profile=profile)
