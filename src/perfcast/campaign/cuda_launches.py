"""CUDA kernel launches with their device times, read from the GPU traces NVIDIA's tools write.

The CUDA twin of the OpenCL launch log: the same `LaunchLog` of `Launch` records (name, NDRange, stream, device
start and end in ns), so a CUDA program becomes a campaign through the same grouping and scoring.
- Nsight Systems: `nsys profile --trace=cuda -o REPORT CMD`, then `nsys stats --report cuda_gpu_trace
  --format csv` (columns Start (ns), Duration (ns), CorrId, GrdX..Z, BlkX..Z, ..., Strm, Name);
- nvprof (GPUs before Volta): `nvprof --print-gpu-trace --csv` (Start and Duration in the unit its second
  header line gives).
Copies and memsets (names in brackets) are not launches. A launch's global size is grid × block per dimension,
its local size the block, as OpenCL counts them.
"""

from __future__ import annotations

import csv
import io
import math
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from perfcast.campaign.launch_log import Launch, LaunchLog, LaunchLogError
from perfcast.errors import ToolError

__all__ = ["TRACE_READERS", "nsys_trace_commands", "read_nsys_gpu_trace", "read_nvprof_gpu_trace",
           "read_gpu_trace"]

_UNIT_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
_CORRELATION = re.compile(r"\s+\[\d+\]$")  # nvprof appends each launch's correlation id to its name


def _rows(text: str, first_column: str) -> tuple[list[str], list[list[str]]]:
    """Return the CSV header starting with `first_column` and the rows after it (a tool's chatter before it skipped)."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.lstrip('"').startswith(first_column):
            table = list(csv.reader(io.StringIO("\n".join(lines[index:]))))
            return table[0], [row for row in table[1:] if row]
    raise LaunchLogError(f"no GPU trace table (a header starting with {first_column!r}) in the text")


def _int(value: str, where: str) -> int:
    number = _float(value, where)
    if number < 1 or number != int(number):
        raise LaunchLogError(f"{where}: {value!r} is not a grid or block size (a whole number, at least 1)")
    return int(number)


def _float(value: str, where: str) -> float:
    try:
        number = float(value.replace(",", ""))
    except ValueError:
        raise LaunchLogError(f"{where}: {value!r} is not a number") from None
    if not math.isfinite(number) or number < 0:
        raise LaunchLogError(f"{where}: {value!r} is not a time or a size (finite, at least 0)")
    return number


def _launch(seq: int, name: str, stream: str, grid: Sequence[int], block: Sequence[int], start: float,
            duration: float) -> Launch:
    dims = 3 if grid[2] > 1 or block[2] > 1 else 2 if grid[1] > 1 or block[1] > 1 else 1
    global_size = tuple(g * b for g, b in zip(grid, block, strict=True))[:dims]
    return Launch(seq, 0, stream, 0, name, global_size, tuple(block[:dims]), None, 0, 0, round(start),
                  round(start + duration), 0)


def _trace_launches(rows: Sequence[list[str]], column: dict[str, int], keys: Sequence[str], to_ns: dict[str, float],
                    first_row: int, clean: Callable[[str], str] = lambda name: name) -> LaunchLog:
    """Return the kernel launches of a GPU trace's rows; `keys` name its grid x y z, block x y z and stream columns."""
    launches: list[Launch] = []
    devices: dict[tuple[int, str], str] = {}
    width = max(column.values()) + 1
    for number, row in enumerate(rows, start=first_row):
        where = f"GPU trace row {number}"
        if len(row) < width:
            if number == first_row + len(rows) - 1:
                break  # the last row of a file cut short
            raise LaunchLogError(f"{where}: {len(row)} columns where the header has {width}")
        name = clean(row[column["Name"]])
        if not row[column[keys[0]]].strip() or name.startswith("["):
            continue  # a copy or a memset
        grid = [_int(row[column[k]], where) for k in keys[0:3]]
        block = [_int(row[column[k]], where) for k in keys[3:6]]
        start = _float(row[column["Start"]], where) * to_ns["Start"]
        duration = _float(row[column["Duration"]], where) * to_ns["Duration"]
        if not math.isfinite(start + duration) or start + duration > 1e21:  # ns: 30 000 years
            raise LaunchLogError(f"{where}: a start or duration no trace could hold")
        launch = _launch(len(launches), name, row[column[keys[6]]], grid, block, start, duration)
        launches.append(launch)
        if "Device" in column:
            devices[(0, launch.queue)] = re.sub(r"\s*\(\d+\)$", "", row[column["Device"]])
    return LaunchLog(tuple(launches), devices, processes=(0,), exited=(0,))


def read_nsys_gpu_trace(text: str) -> LaunchLog:
    """Return the kernel launches of an `nsys stats --report cuda_gpu_trace --format csv` table (times in ns)."""
    header, rows = _rows(text, "Start")
    column = {name.split(" (")[0].strip(): i for i, name in enumerate(header)}
    needed = ("Start", "Duration", "GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ", "Strm", "Name")
    missing = [name for name in needed if name not in column]
    if missing:
        raise LaunchLogError(f"the Nsight Systems GPU trace lacks the column(s) {', '.join(missing)}")
    scale = {}
    for key in ("Start", "Duration"):
        unit = re.search(r"\((\w+)\)", header[column[key]])
        scale[key] = _UNIT_NS.get(unit[1] if unit else "ns", 1.0)
    keys = ("GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ", "Strm")
    return _trace_launches(rows, column, keys, scale, 2)


def read_nvprof_gpu_trace(text: str) -> LaunchLog:
    """Return the kernel launches of an `nvprof --print-gpu-trace --csv` log (its unit row read for the times)."""
    header, rows = _rows(text, "Start")
    column = {name: i for i, name in enumerate(header)}
    needed = ("Start", "Duration", "Grid X", "Grid Y", "Grid Z", "Block X", "Block Y", "Block Z", "Stream", "Name")
    missing = [name for name in needed if name not in column]
    if missing:
        raise LaunchLogError(f"the nvprof GPU trace lacks the column(s) {', '.join(missing)}")
    units = (rows[0] if rows and len(rows[0]) > max(column["Start"], column["Duration"])
             and rows[0][column["Start"]] in _UNIT_NS and rows[0][column["Duration"]] in _UNIT_NS else None)
    if units is None:
        raise LaunchLogError("the nvprof GPU trace has no unit row under its header (ms, us or ns)")
    to_ns = {key: _UNIT_NS[units[column[key]]] for key in ("Start", "Duration")}
    keys = ("Grid X", "Grid Y", "Grid Z", "Block X", "Block Y", "Block Z", "Stream")
    return _trace_launches(rows[1:], column, keys, to_ns, 3, lambda name: _CORRELATION.sub("", name))


def read_gpu_trace(text: str) -> LaunchLog:
    """Return the launches of a GPU trace from either tool, told apart by their headers."""
    reader = read_nvprof_gpu_trace if '"Grid X"' in text or "Grid X," in text else read_nsys_gpu_trace
    return reader(text)


def nsys_trace_commands(command: Sequence[str], report: Path) -> tuple[list[str], list[str], Path]:
    """Return the nsys command that runs `command` with a CUDA trace, the one that exports it, and the CSV's path."""
    nsys = shutil.which("nsys")
    if nsys is None:
        raise ToolError("nsys (NVIDIA Nsight Systems) is not on PATH: it times a CUDA program's launches")
    run = [nsys, "profile", "--trace=cuda", "--sample=none", "--cpuctxsw=none", "--force-overwrite=true",
           "-o", str(report), *command]
    export = [nsys, "stats", "--report", "cuda_gpu_trace", "--format", "csv", "--force-export=true",
              "--output", str(report), f"{report}.nsys-rep"]
    return run, export, report.with_name(f"{report.name}_cuda_gpu_trace.csv")


def find_qdstrm_importer(nsys: str | None = None) -> Path | None:
    """Return Nsight Systems' QdstrmImporter: the one beside the nsys given (or on PATH), else one on PATH.

    The nsys inside Nsight Compute (seen on the lent GPU machines) lives in `host/target-linux-x64/` and its
    importer in a sibling `host/linux-desktop-glibc_*-x64/`: the importer of that nsys's own release.
    """
    nsys = nsys or shutil.which("nsys")
    if nsys is not None:
        folder = Path(nsys).resolve().parent
        candidates = sorted([*folder.glob("QdstrmImporter"), *folder.parent.glob("*/QdstrmImporter")])
        if candidates:
            return candidates[0]
    found = shutil.which("QdstrmImporter")
    return Path(found) if found else None


def missing_libraries(program: Path) -> list[str]:
    """Return the shared libraries `program` needs that the dynamic loader cannot find (ldd's 'not found')."""
    import subprocess

    try:
        done = subprocess.run(["ldd", str(program)], capture_output=True, text=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.split("=>")[0].strip() for line in done.stdout.splitlines() if "not found" in line]


# The readers the program campaign can take launch times from, by tool: a name -> (what, reader).
TRACE_READERS: dict[str, tuple[str, Callable[[str], LaunchLog]]] = {
    "nsys": ("Nsight Systems: nsys stats --report cuda_gpu_trace --format csv", read_nsys_gpu_trace),
    "nvprof": ("nvprof --print-gpu-trace --csv", read_nvprof_gpu_trace),
}
