"""Running a user's program watched: its output to files, progress while it runs, a memory cap, a clean interrupt.

The program runs in a session of its own, so every process it starts (a shell, forked workers) is counted in
its memory and stopped with it. Memory is the resident set of the whole session, read from /proc every quarter
second: a program (or Oclgrind simulating it) that grows past the cap is stopped and the caller told so in
words, instead of the system's out-of-memory killer ending it with a bare "status -9".
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfcast.errors import ToolError

__all__ = ["ProgramFailed", "WatchedRun", "available_memory", "run_watched", "session_memory"]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_POLL_S = 0.25


class ProgramFailed(ToolError):
    """A watched program that exited with an error, was stopped for memory or time, or could not start."""


@dataclass(frozen=True)
class WatchedRun:
    """How a watched program ended: its exit status, wall time (s) and the peak resident memory (B) seen."""

    returncode: int
    wall_s: float
    peak_memory: int


def available_memory() -> int | None:
    """Return MemAvailable from /proc/meminfo in B, or None where there is none."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def session_memory(session: int) -> int:
    """Return the resident memory in B of every process in `session` (0 where /proc cannot tell)."""
    total = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # the process ended while we looked
        # The command name is in parentheses and may hold spaces: the fields start after the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        try:
            if int(fields[3]) == session:  # field 6 of stat: the session id
                total += int(fields[21]) * _PAGE  # field 24: resident pages
        except (IndexError, ValueError):
            continue
    return total


def _tail(path: Path | None, lines: int = 12) -> str:
    """Return the last lines of a file (the program's stderr), or an empty string."""
    if path is None or not path.exists():
        return ""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 8192))
        text = handle.read().decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a program's whole session: SIGINT, then SIGTERM, a second apart, then SIGKILL to what is left."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=1.0)
            break
        except subprocess.TimeoutExpired:
            continue
    _kill_rest(process)


def _kill_rest(process: subprocess.Popen[bytes]) -> None:
    """Kill whatever of a program's process group outlived it (a child it left behind), and reap the leader."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        pass


def run_watched(command: Sequence[str], *, env: Mapping[str, str] | None = None, stdout: Path | None = None,
                stderr: Path | None = None, timeout: float | None = None, memory_limit: int | None = None,
                progress: Callable[[float], None] | None = None, what: str = "the program",
                advice: str = "") -> WatchedRun:
    """Run `command` to completion under watch; return how it ended, or raise ProgramFailed saying why in words.

    `progress` is called with the seconds elapsed about every quarter second. `memory_limit` (B) caps the
    resident memory of the program and every process it starts. `advice` is added to a memory or time failure.
    On KeyboardInterrupt the program's session is stopped and the interrupt raised again.
    """
    if not command:
        raise ProgramFailed(f"no command to run for {what}")
    out: Any = subprocess.DEVNULL
    err: Any = subprocess.DEVNULL
    started = time.perf_counter()
    peak = 0
    try:
        out = stdout.open("wb") if stdout else out
        err = stderr.open("wb") if stderr else err
        try:
            process = subprocess.Popen(list(command), env=dict(env) if env is not None else None, stdout=out,
                                       stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            raise ProgramFailed(f"cannot run {what} ({shlex.join(command)}): {error.strerror or error}") from None
        try:
            while True:
                try:
                    returncode = process.wait(timeout=_POLL_S)
                    _kill_rest(process)  # children it left running would go on writing what is read next
                    break
                except subprocess.TimeoutExpired:
                    pass
                elapsed = time.perf_counter() - started
                memory = session_memory(process.pid)
                peak = max(peak, memory)
                if memory_limit is not None and memory > memory_limit:
                    _stop(process)
                    raise ProgramFailed(
                        f"{what} used {memory / 2**30:.1f} GiB of memory, more than the {memory_limit / 2**30:.1f} "
                        f"GiB allowed, and was stopped after {elapsed:.0f} s{'; ' + advice if advice else ''}")
                if timeout is not None and elapsed > timeout:
                    _stop(process)
                    raise ProgramFailed(f"{what} ran past {timeout:g} s and was stopped"
                                        f"{'; ' + advice if advice else ''}")
                if progress is not None:
                    progress(elapsed)
        except BaseException:
            if process.poll() is None:
                _stop(process)
            raise
    finally:
        for handle in (out, err):
            if hasattr(handle, "close"):
                handle.close()
    wall = time.perf_counter() - started
    if returncode != 0:
        why = (f"was killed by signal {-returncode} ({signal.Signals(-returncode).name})" if returncode < 0
               and -returncode in signal.valid_signals() else f"exited with status {returncode}")
        if returncode in (-9, 137):
            why += " (the system may have run out of memory)"
        tail = _tail(stderr)
        raise ProgramFailed(f"{what} {why}: {shlex.join(command)}"
                            + (f"\nthe end of its error output ({stderr}):\n{tail}" if tail else ""))
    return WatchedRun(returncode, wall, peak)
