"""Reader of Nsight Compute CSV output, both layouts.

- raw page (`ncu --csv --page raw`): a header with one column per metric, usually a units row under it, then
  one row per launch;
- details page (`ncu --csv`, the default): one row per launch x metric, with "Metric Name", "Metric Unit"
  and "Metric Value" columns, rule rows whose metric fields are empty, values with thousands separators.

Lines before the header (`==PROF==`, the program's own output) and `==...==` lines after it are skipped.
Launches of one kernel are summed; a launch whose value of a model metric is `nan` or `n/a` (a failed or
skipped launch) is left out of every sum, with a note.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

from perfcast.profiles.metrics import ALL_METRICS, NCU_DURATION
from perfcast.profiles.profile import KernelProfile, ProfileError, ProfileSet, ProfileSource

__all__ = ["looks_like_ncu", "parse_ncu_value", "read_ncu"]

_KERNEL_COLUMNS = ("Kernel Name", "Function Name")
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_COUNT_UNITS = {"", "inst", "instruction", "sector", "warp", "thread", "request", "cycle", "wavefront", "transaction",
                "block", "count"}
_BYTE_UNITS = {"byte", "B"}
_TIME_UNITS = {"nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3,
               "second": 1.0, "s": 1.0}
_WANTED = {name for spec in ALL_METRICS for name, _ in spec.ncu} | {NCU_DURATION}
_MEANS = {spec.name for spec in ALL_METRICS if spec.aggregate == "mean"}
# A clock: ncu 2025 writes sm__cycles_elapsed.avg.per_second in "hz" with --print-units base (older ones in
# cycle/nsecond, which the rate rule below reads); the prefix's case varies between versions.
_FREQUENCY_UNITS = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
_UNIT = re.compile(r"^(?P<prefix>[KMGT]?)(?P<base>[A-Za-z]*)$")


def unit_factor(unit: str, kernel: str, metric: str) -> tuple[float, str]:
    """Return (factor to base units, kind: count, byte or second) of an Nsight Compute unit, or raise."""
    unit = unit.strip()
    if unit in _TIME_UNITS:
        return _TIME_UNITS[unit], "second"
    if unit.lower() in _FREQUENCY_UNITS:
        return _FREQUENCY_UNITS[unit.lower()], "rate"
    if unit.count("/") == 1 and unit.split("/")[1] in _TIME_UNITS:  # a rate: cycle/second, byte/nsecond
        numerator, per = unit.split("/")
        factor, _ = unit_factor(numerator, kernel, metric)
        return factor / _TIME_UNITS[per], "rate"
    match = _UNIT.match(unit)
    if match:
        prefix, base = match["prefix"], match["base"]
        if base in _BYTE_UNITS:
            return _PREFIX[prefix], "byte"
        if base in _COUNT_UNITS:
            return _PREFIX[prefix], "count"
        if prefix and base == "":
            return _PREFIX[prefix], "count"
    raise ProfileError(f"kernel {kernel!r}, metric {metric}: unknown unit {unit!r}")


def parse_ncu_value(text: str, kernel: str, metric: str) -> float | None:
    """Return a metric value as a float: thousands separators dropped; None for 'nan' / 'n/a' (a failed launch)."""
    cleaned = text.strip().replace(",", "")
    if cleaned.lower() in ("nan", "n/a", "-nan", ""):
        return None
    try:
        value = float(cleaned)
    except ValueError:
        raise ProfileError(f"kernel {kernel!r}, metric {metric}: {text!r} is not a number") from None
    if not math.isfinite(value):
        return None
    return value


def looks_like_ncu(text: str) -> bool:
    """Return True when `text` holds an Nsight Compute CSV header."""
    return any(line.startswith('"ID",') and any(f'"{c}"' in line for c in _KERNEL_COLUMNS)
               for line in text.splitlines()[:400])


def _table(text: str) -> list[list[str]]:
    """Return the CSV rows from the header on, without `==...==` tool lines."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise ProfileError("no Nsight Compute CSV header (a line starting with \"ID\",) in the output: was it "
                           "written with --csv? (ncu's own messages: "
                           + "; ".join([line for line in lines if line.startswith("==")][:3]) + ")")
    kept = [lines[start]] + [line for line in lines[start + 1:] if line.strip() and not line.startswith("==")]
    return [row for row in csv.reader(io.StringIO("\n".join(kept)))]


@dataclass
class _Launch:
    kernel: str
    device: str | None
    id: str = ""  # ncu's own launch ID (the CSV's ID column)
    values: dict[str, float | None] = field(default_factory=dict)  # metric -> base-unit value
    kinds: dict[str, str] = field(default_factory=dict)


def _require(col: dict[str, int], names: tuple[str, ...], page: str) -> None:
    """Raise ProfileError naming the columns a page's table lacks."""
    missing = [name for name in names if name not in col]
    if missing:
        raise ProfileError(f"the Nsight Compute {page} page lacks the column(s) {', '.join(missing)}")


def _launches_details(header: list[str], rows: list[list[str]]) -> list[_Launch]:
    """Return the launches of a details-page table (one row per launch x metric)."""
    col = {name: header.index(name) for name in header}
    _require(col, ("ID", "Metric Name", "Metric Value"), "details")
    kernel_col = next(col[c] for c in _KERNEL_COLUMNS if c in col)
    launches: dict[str, _Launch] = {}
    for row in rows:
        if len(row) <= col["Metric Value"] or not row[col["Metric Name"]].strip():
            continue  # a rule row, or a trailing fragment
        launch_id, kernel, metric = row[col["ID"]], row[kernel_col], row[col["Metric Name"]].strip()
        device = row[col["Device"]] if "Device" in col else None
        launch = launches.setdefault(launch_id, _Launch(kernel, device, launch_id))
        if launch.kernel != kernel:
            raise ProfileError(f"launch ID {launch_id} names two kernels, {launch.kernel!r} and {kernel!r}: the CSV "
                               "was edited or two captures were joined")
        if metric in _WANTED:  # other metrics may carry units (Mbyte/second, inst/cycle) the models never read
            unit = row[col["Metric Unit"]] if "Metric Unit" in col else ""
            before = launch.values.get(metric)
            given = metric in launch.values
            _store(launch, metric, unit, row[col["Metric Value"]])
            # A section and --metrics may both list one metric: the same value twice is fine, two values not.
            if given and launch.values[metric] != before:
                raise ProfileError(f"kernel {kernel!r}, launch ID {launch_id}: metric {metric} given twice, with "
                                   f"two values ({before} and {launch.values[metric]})")
    return list(launches.values())


def _launches_raw(header: list[str], rows: list[list[str]], notes: list[str]) -> list[_Launch]:
    """Return the launches of a raw-page table (one column per metric, an optional units row)."""
    col = {name: header.index(name) for name in header}
    _require(col, ("ID",), "raw")
    kernel_col = next(col[c] for c in _KERNEL_COLUMNS if c in col)
    units = [""] * len(header)
    if rows and not rows[0][col["ID"]].strip():
        units, rows = rows[0] + [""] * (len(header) - len(rows[0])), rows[1:]
    else:
        notes.append("no units row under the header: values taken in base units (write with --print-units base)")
    launches = []
    seen: dict[tuple[str, str], str] = {}
    process = col.get("Process ID")
    for row in rows:
        if len(row) < len(header):
            # A file cut short (an interrupted capture) ends in a partial row: say so, never drop it silently.
            notes.append(f"left out a row of {len(row)} of the header's {len(header)} columns"
                         + (f" (launch ID {row[col['ID']]})" if len(row) > col["ID"] else "")
                         + ": the file is cut short or was edited")
            continue
        launch_id = row[col["ID"]]
        key = (row[process] if process is not None else "", launch_id)  # IDs are per process where ncu says so
        if key in seen:
            raise ProfileError(f"launch ID {launch_id} appears twice ({seen[key]!r} and {row[kernel_col]!r}): "
                               "the CSV was edited or two captures were joined")
        seen[key] = row[kernel_col]
        device = row[col["Device"]] if "Device" in col else None
        launch = _Launch(row[kernel_col], device, launch_id)
        for name in _WANTED & set(col):
            _store(launch, name, units[col[name]], row[col[name]])
        launches.append(launch)
    return launches


def _store(launch: _Launch, metric: str, unit: str, text: str) -> None:
    """Put one metric's value of a launch, converted to base units, into the launch."""
    value = parse_ncu_value(text, launch.kernel, metric)
    if value is not None and value < 0:
        raise ProfileError(f"kernel {launch.kernel!r}, launch ID {launch.id or '?'}: metric {metric} is negative "
                           f"({text.strip()}); counts, bytes and times cannot be")
    factor, kind = unit_factor(unit, launch.kernel, metric) if unit.strip() not in ("%", "") else (1.0, "count")
    launch.values[metric] = None if value is None else value * factor
    launch.kinds[metric] = kind


def _model_metrics(launch: _Launch) -> tuple[dict[str, float], float | None, list[str]]:
    """Return the canonical metrics of one launch, its duration (s), and the metrics whose value is missing."""
    metrics: dict[str, float] = {}
    missing: list[str] = []
    for spec in ALL_METRICS:
        # The first of the metric's names the launch gives a value for; a name given without one (a failed
        # launch's nan) gives way to the next, and is missing only where none has a value.
        given = [name for name, _ in spec.ncu if name in launch.values]
        valued = [(name, factor) for name, factor in spec.ncu if launch.values.get(name) is not None]
        if valued:
            name, factor = valued[0]
            if launch.kinds[name] == "second":
                raise ProfileError(f"kernel {launch.kernel!r}, metric {name}: a time unit on a count")
            metrics[spec.name] = launch.values[name] * factor  # type: ignore[operator]
        elif given:
            missing.append(given[0])
    duration = launch.values.get(NCU_DURATION)
    if NCU_DURATION in launch.values and duration is None:
        missing.append(NCU_DURATION)
    elif duration is not None and launch.kinds.get(NCU_DURATION) != "second":
        # --print-units base writes nanoseconds as 'nsecond'; a bare number is taken as ncu's base unit, ns.
        duration *= 1e-9
    return metrics, duration, missing


def read_ncu(text: str, *, command: str | None = None, raw: str | None = None) -> ProfileSet:
    """Return the kernels of an Nsight Compute CSV (raw or details page), launches summed."""
    table = _table(text)
    header, rows = table[0], table[1:]
    if not any(c in header for c in _KERNEL_COLUMNS):
        raise ProfileError("the Nsight Compute CSV has no 'Kernel Name' column")
    notes: list[str] = []
    launches = _launches_details(header, rows) if "Metric Name" in header else _launches_raw(header, rows, notes)
    if not launches:
        raise ProfileError("the Nsight Compute CSV lists no kernel launch (were kernels filtered out, or did the "
                           "program fail before launching one?)")
    sums: dict[str, dict[str, float]] = defaultdict(dict)
    durations: dict[str, float] = defaultdict(float)
    counted: dict[str, int] = defaultdict(int)
    dropped: dict[str, list[str]] = defaultdict(list)
    devices = {launch.device for launch in launches if launch.device}
    order: dict[str, None] = {}  # the kernels in the order first met (a dict: a list's `in` is quadratic)
    for launch in launches:
        order.setdefault(launch.kernel)
        metrics, duration, missing = _model_metrics(launch)
        if missing:
            dropped[launch.kernel].append(f"launch ID {launch.id} ({', '.join(missing)} = nan)")
            continue
        counted[launch.kernel] += 1
        for name, value in metrics.items():
            sums[launch.kernel][name] = sums[launch.kernel].get(name, 0.0) + value
        if duration is not None:
            durations[launch.kernel] += duration
    kernels = []
    for name in order:
        if not counted[name]:
            notes.append(f"kernel {name!r}: every launch lacks a value ({'; '.join(dropped[name][:3])}); left out")
            continue
        kernel_notes = tuple(f"left out {d}" for d in dropped[name])
        # Ratios and clocks are averaged over the launches, counts summed.
        metrics = {m: v / counted[name] if m in _MEANS else v for m, v in sums[name].items()}
        kernels.append(KernelProfile(name, counted[name], metrics, durations.get(name) or None, notes=kernel_notes))
    source = ProfileSource("Nsight Compute", device=", ".join(sorted(devices)) or None, command=command, raw=raw)
    return ProfileSet(source, tuple(kernels), tuple(notes))
