"""The launch log of an unmodified OpenCL program: building the interposer, the environment, reading what it wrote.

`opencl_launch_log.c` is preloaded into the program (LD_PRELOAD, ahead of the ICD loader or of Oclgrind's runtime);
it turns on profiling for every queue and writes one line per kernel launch with its NDRange and its device
timestamps, one file per process. This module builds it like perfcast's other native code, says how to run a
program with it, and reads the logs back (formats 1 and 2, named on each file's first line; 2 adds the program
each kernel was built in, with its build options).
"""

from __future__ import annotations

import ctypes.util
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from perfcast.errors import InputError, ToolError
from perfcast.kernels.native import build_shared_object

__all__ = ["LOG_FORMAT", "LOG_VARIABLE", "Launch", "LaunchCounter", "LaunchLog", "LaunchLogError",
           "build_launch_logger", "launch_environment", "read_launch_logs"]

LOGGER_SOURCE = Path(__file__).with_name("opencl_launch_log.c")
LOG_VARIABLE = "PERFCAST_LAUNCH_LOG"
LOG_FORMAT = 3
# Format 1 (before 2026-11-27) has no program field and no P lines; format 2 (before the evening of the 27th) no
# faults field.
READ_FORMATS = ("1", "2", "3")
_HEADER = "#perfcast-launch-log"


class LaunchLogError(InputError):
    """A launch log that cannot be read: another format, a truncated or foreign file."""


@dataclass(frozen=True)
class Launch:
    """One kernel launch as the program made it: its NDRange, queue, thread and device timestamps (ns)."""

    seq: int  # enqueue order within the process
    pid: int
    queue: str
    thread: int
    kernel: str
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None  # None: the program let the runtime choose (NULL)
    offset: tuple[int, ...] | None
    queued: int = 0
    submitted: int = 0
    start: int = 0
    end: int = 0
    status: int = 0  # 0: completed; < 0: the OpenCL error the launch or its timing ended with
    enqueue_failed: bool = False
    build: str | None = None  # the build options of the program the kernel came from; None: not logged (format 1)
    # The process's minor page faults while the launch ran (its CL_RUNNING to its CL_COMPLETE callback): the pages
    # it touched first, on a CPU device. None: not logged (formats 1, 2, a runtime without CL_RUNNING callbacks, or
    # one whose CL_RUNNING callback came late, so the count would miss the launch's first faults).
    faults: int | None = None

    @property
    def work_items(self) -> int:
        """Return the work-items of the NDRange."""
        items = 1
        for size in self.global_size:
            items *= size
        return items

    @property
    def timed(self) -> bool:
        """Return True when the device timed the launch (it completed on a profiling queue)."""
        return not self.enqueue_failed and self.status == 0 and self.end >= self.start > 0

    @property
    def duration(self) -> float:
        """Return the device time of the launch in s (end - start)."""
        return (self.end - self.start) * 1e-9

    def shape(self) -> str:
        """Return the launch's NDRange as text: global[/local]."""
        text = "x".join(map(str, self.global_size))
        return f"{text}/{'x'.join(map(str, self.local_size))}" if self.local_size else text


@dataclass(frozen=True)
class LaunchLog:
    """Every launch of a program run, from every process it made, in enqueue order per process."""

    launches: tuple[Launch, ...]
    queues: Mapping[tuple[int, str], str] = field(default_factory=dict)  # (pid, queue) -> device name
    unprofiled_queues: tuple[tuple[int, str], ...] = ()  # queues a device would not profile
    processes: tuple[int, ...] = ()
    unfinished: int = 0  # launches whose completion their process never saw before it exited
    exited: tuple[int, ...] = ()  # processes that ended normally (their log has its last line)

    @property
    def devices(self) -> list[str]:
        """Return the devices the program's queues were on, in order of first use."""
        return list(dict.fromkeys(self.queues.values()))

    def timed(self) -> list[Launch]:
        """Return the launches the device timed."""
        return [launch for launch in self.launches if launch.timed]


def build_launch_logger() -> Path:
    """Return the compiled interposer library (built on first use, then cached); ToolError naming what is missing."""
    loader = ctypes.util.find_library("OpenCL")
    if loader is None:
        raise ToolError("no OpenCL ICD loader (libOpenCL.so) here: the launch log needs one (apt-get install "
                        "ocl-icd-libopencl1 ocl-icd-opencl-dev)")
    header = Path("/usr/include/CL/cl.h")
    if not header.exists() and not any(Path(p).joinpath("CL/cl.h").exists()
                                       for p in os.environ.get("CPATH", "").split(":") if p):
        raise ToolError("no OpenCL headers (CL/cl.h): the launch log is compiled against them (apt-get install "
                        "opencl-c-headers)")
    # Linked against the loader by name (-l:...), kept even where the linker drops unused libraries, so the
    # library's own calls (event info, callbacks) resolve whether or not the program links OpenCL itself.
    flags = ("-O2", "-fPIC", "-shared", "-Wall", "-Wl,--no-as-needed", f"-l:{loader}", "-ldl", "-lpthread")
    path, _, _ = build_shared_object(LOGGER_SOURCE, flags, compiler="gcc")
    return path


def launch_environment(prefix: Path, logger: Path, before: Iterable[str] = (),
                       base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the environment that runs a program with the launch log writing to `prefix`.<pid>.

    `before`: libraries preloaded after the log's (Oclgrind's runtime), ahead of what the environment preloads.
    """
    env = dict(os.environ if base is None else base)
    preload = [str(logger), *before, *(p for p in env.get("LD_PRELOAD", "").split(":") if p)]
    env["LD_PRELOAD"] = ":".join(preload)
    env[LOG_VARIABLE] = str(prefix)
    return env


def log_files(prefix: Path) -> list[Path]:
    """Return the log files a run with `prefix` wrote, one per process."""
    pattern = re.compile(re.escape(prefix.name) + r"\.\d+$")
    if not prefix.parent.is_dir():
        return []
    return sorted(p for p in prefix.parent.iterdir() if pattern.match(p.name) and p.is_file())


def _sizes(text: str, where: str) -> tuple[int, ...] | None:
    if text == "-":
        return None
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise LaunchLogError(f"{where}: {text!r} is not a list of sizes") from None


def _launch(fields: list[str], pid: int, where: str, failed: bool, builds: Mapping[str, str] | None,
            faults: bool = False) -> Launch:
    """Return the launch an L (timed) or X (enqueue failed) line describes.

    `builds`: program handle -> build options, from the P lines read so far (format 2); None for format 1, whose
    lines have no program field. `faults`: an L line has the faults field (format 3).
    """
    program = builds is not None
    counted = faults and not failed
    if len(fields) != (14 if not failed else 10) + program + counted:
        raise LaunchLogError(f"{where}: a launch line has {len(fields)} fields")
    build = builds.get(fields[-2], "") if builds is not None else None  # "": a kernel of no program logged
    try:
        seq, thread, dims = int(fields[1]), int(fields[3]), int(fields[4])
        global_size = (_sizes(fields[5], where) or (1,))[:dims or 1]
        local_size, offset = _sizes(fields[6], where), _sizes(fields[7], where)
        if failed:
            return Launch(seq, pid, fields[2], thread, fields[-1], global_size, local_size, offset,
                          status=int(fields[8]), enqueue_failed=True, build=build)
        queued, submitted, start, end, status = (int(v) for v in fields[8:13])
        made = int(fields[13]) if counted else -1
        return Launch(seq, pid, fields[2], thread, fields[-1], global_size, local_size, offset, queued, submitted,
                      start, end, status, build=build, faults=made if made >= 0 else None)
    except ValueError:
        raise LaunchLogError(f"{where}: a launch line with a field that is not a number") from None


def _count(text: str, where: str) -> int:
    """Return a field that must be a whole number at least 0, or LaunchLogError naming the line."""
    if not (text.strip().isascii() and text.strip().isdigit()) or len(text.strip()) > 20:
        raise LaunchLogError(f"{where}: {text[:20]!r} where the log has a count")
    return int(text)


def read_launch_logs(prefix: Path) -> LaunchLog:
    """Return the launches logged under `prefix` (every process's file), each process's in enqueue order."""
    launches: list[Launch] = []
    queues: dict[tuple[int, str], str] = {}
    unprofiled: list[tuple[int, str]] = []
    processes, exited, unfinished = [], [], 0
    for path in log_files(prefix):
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        if not lines or not lines[0].startswith(_HEADER):
            raise LaunchLogError(f"{path} is not a perfcast launch log (its first line is {lines[0][:60]!r})")
        header = lines[0].split("\t")
        if len(header) < 3 or header[1] not in READ_FORMATS:
            raise LaunchLogError(f"{path} is a launch log of format {header[1:2]}, this perfcast reads "
                                 f"formats {', '.join(READ_FORMATS)}")
        pid = _count(header[2], f"{path.name}:1")
        builds: dict[str, str] | None = {} if header[1] != "1" else None
        faults = header[1] not in ("1", "2")
        processes.append(pid)
        # The last line may be cut where the process was killed mid-write: only whole lines count.
        whole = lines[1:-1]  # the text after the last newline is a line cut by a kill, or nothing
        for number, line in enumerate(whole, start=2):
            where = f"{path.name}:{number}"
            fields = line.split("\t")
            kind = fields[0]
            if kind == _HEADER and len(fields) >= 3 and fields[1] in READ_FORMATS:
                pid = _count(fields[2], where)  # a later process given the same pid appends to the same file
                processes.append(pid)
                builds = {} if fields[1] != "1" else None
                faults = fields[1] not in ("1", "2")
            elif kind == "L" or kind == "X":
                launches.append(_launch(fields, pid, where, kind == "X", builds, faults))
            elif kind == "P" and len(fields) == 3 and builds is not None:
                builds[fields[1]] = fields[2].strip()
            elif kind == "Q" and len(fields) >= 5:
                queues[(pid, fields[1])] = fields[4]
                if not _count(fields[3], where) & 2:  # CL_QUEUE_PROFILING_ENABLE
                    unprofiled.append((pid, fields[1]))
            elif kind == "E" and len(fields) >= 3:
                exited.append(pid)
                unfinished += _count(fields[2], where)
            elif line:
                raise LaunchLogError(f"{where}: a line of unknown kind {kind[:20]!r}")
    launches.sort(key=lambda launch: (launch.pid, launch.seq))
    return LaunchLog(tuple(launches), queues, tuple(unprofiled), tuple(processes), unfinished, tuple(exited))


class LaunchCounter:
    """Counts the launches logged so far under a prefix, reading only what was added since the last call."""

    def __init__(self, prefix: Path) -> None:
        self.prefix = prefix
        self._offsets: dict[Path, int] = {}
        self._counts: dict[Path, int] = {}

    def count(self) -> int:
        """Return the launches completed so far in every process's log."""
        for path in log_files(self.prefix):
            offset = self._offsets.get(path, 0)
            try:
                with path.open("rb") as handle:
                    handle.seek(offset)
                    added = handle.read()
            except OSError:
                continue
            whole = added[: added.rfind(b"\n") + 1]
            self._offsets[path] = offset + len(whole)
            self._counts[path] = self._counts.get(path, 0) + whole.count(b"\nL\t") + whole.startswith(b"L\t")
        return sum(self._counts.values())
