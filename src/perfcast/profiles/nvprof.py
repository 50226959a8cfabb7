"""Reader of nvprof metric CSV output (`nvprof --csv --metrics ...`).

After a `==PID==` preamble comes a header "Device","Kernel","Invocations","Metric Name","Metric Description",
"Min","Max","Avg" and one row per (kernel, metric). A kernel's count is Avg x Invocations. Metrics the models
do not read are skipped whatever their format (percentages, throughputs with units, "Low (1)").
"""

from __future__ import annotations

import csv
import io
import re

from perfcast.profiles.metrics import ALL_METRICS
from perfcast.profiles.profile import KernelProfile, ProfileError, ProfileSet, ProfileSource

__all__ = ["looks_like_nvprof", "read_nvprof"]

_HEADER = '"Device","Kernel","Invocations","Metric Name"'
_BY_NVPROF = {spec.nvprof: spec.name for spec in ALL_METRICS if spec.nvprof.replace("_", "").isalnum()}
_VERSION = re.compile(r"nvprof.*?release (\S+)", re.IGNORECASE)


def looks_like_nvprof(text: str) -> bool:
    """Return True when `text` holds an nvprof metric CSV header."""
    return any(line.startswith(_HEADER) for line in text.splitlines()[:400])


def _number(text: str, kernel: str, metric: str) -> float:
    """Return an nvprof count (thousands separators allowed), or raise naming the kernel and metric."""
    try:
        value = float(text.strip().replace(",", ""))
    except ValueError:
        raise ProfileError(f"kernel {kernel!r}, metric {metric}: {text!r} is not a count "
                           "(nvprof wrote a unit or a text there)") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ProfileError(f"kernel {kernel!r}, metric {metric}: {text!r} is not a finite count")
    if value < 0:
        raise ProfileError(f"kernel {kernel!r}, metric {metric}: negative count {text}")
    return value


def read_nvprof(text: str, *, command: str | None = None, raw: str | None = None) -> ProfileSet:
    """Return the kernels of an nvprof metric CSV, each count = Avg x Invocations."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(_HEADER)), None)
    if start is None:
        raise ProfileError('no nvprof metric table (a header starting "Device","Kernel","Invocations") in the '
                           "output: was it written with --csv --metrics?")
    body = [line for line in lines[start:] if line.strip() and not line.startswith("==")]
    rows = list(csv.reader(io.StringIO("\n".join(body))))
    header = rows[0]
    col = {name: header.index(name) for name in header}
    for needed in ("Kernel", "Invocations", "Metric Name", "Avg"):
        if needed not in col:
            raise ProfileError(f"the nvprof table has no {needed!r} column")
    kernels: dict[tuple[str, str], tuple[int, dict[str, float]]] = {}
    seen: set[tuple[str, str, str]] = set()
    short = 0
    for row in rows[1:]:
        if len(row) < len(header):
            short += 1  # said below: a file cut short ends in a partial row
            continue
        device, kernel = row[col["Device"]] if "Device" in col else "", row[col["Kernel"]]
        metric = row[col["Metric Name"]]
        try:
            invocations = int(row[col["Invocations"]])
        except ValueError:
            raise ProfileError(f"kernel {kernel!r}: invocations {row[col['Invocations']]!r} is not a count") from None
        if invocations < 0:
            raise ProfileError(f"kernel {kernel!r}: invocations {invocations} is negative")
        if (device, kernel, metric) in seen:
            raise ProfileError(f"kernel {kernel!r}: metric {metric} given twice; the table was edited or two "
                               "captures were joined")
        seen.add((device, kernel, metric))
        launches, metrics = kernels.setdefault((device, kernel), (invocations, {}))
        if invocations != launches:
            raise ProfileError(f"kernel {kernel!r}: {launches} invocations in one row and {invocations} in another "
                               f"({metric}); nvprof writes one count per kernel")
        if metric in _BY_NVPROF:
            metrics[_BY_NVPROF[metric]] = _number(row[col["Avg"]], kernel, metric) * invocations
    if not kernels:
        raise ProfileError("the nvprof table lists no kernel")
    notes = ((f"left out {short} row(s) with fewer columns than the header: the file is cut short or was edited",)
             if short else ())
    devices = sorted({device for device, _ in kernels if device})
    several = len(devices) > 1
    profiles = tuple(
        KernelProfile(f"{kernel} @ {device}" if several else kernel, launches, metrics)
        for (device, kernel), (launches, metrics) in kernels.items()
    )
    version = next((m[1] for line in lines[:start] if (m := _VERSION.search(line))), None)
    source = ProfileSource("nvprof", version=version, device=", ".join(devices) or None, command=command, raw=raw)
    return ProfileSet(source, profiles, notes)
