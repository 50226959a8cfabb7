"""The GPU corpus: published, brute-forced tuning spaces of real kernels on real GPUs, as perfcast keeps them.

One kernel is one gzip-compressed CSV (`KERNEL.csv.gz`): a row per configuration, the tuning parameters first,
then two columns per GPU, `time_ms@GPU` (the median of the recorded runs, in ms, or the failure's name:
`compile`, `runtime`, `wrong`, `absent` where the GPU's space lacks the row) and `spread@GPU` (the runs'
standard deviation over their median). The manifest `corpus.yaml` (format `perfcast-gpu-corpus`, `version`)
names, per kernel, where every column came from (repository, commit, path, licence), the problem size, the
catalog device of every GPU column, and what was left out. `build_kernel` makes a kernel's file from the
original KernelTuner caches, so that anyone can rebuild the corpus from the public repository.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from perfcast.errors import InputError, NotFound
from perfcast.safe_yaml import load_yaml_file
from perfcast.tune.recorded import Record, RecordedSpace, Value, read_recorded

__all__ = ["CORPUS_DIR", "CORPUS_FORMAT", "CORPUS_VERSION", "Corpus", "CorpusError", "CorpusKernel", "KernelSource",
           "build_kernel", "read_corpus", "write_kernel_csv"]

CORPUS_FORMAT = "perfcast-gpu-corpus"
CORPUS_VERSION = 1
CORPUS_DIR = Path(__file__).parent / "corpus"
FAILURES = ("compile", "runtime", "wrong", "timeout", "absent")
MAX_ROWS = 200_000  # a kernel file with more configurations than this is refused, not read
MAX_BYTES = 256 * 2**20  # nor one that decompresses to more than this
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")  # a kernel's name is also its file's: no folders


class CorpusError(InputError):
    """A corpus file perfcast cannot read: wrong format or version, inconsistent columns, bad numbers."""


@dataclass(frozen=True)
class KernelSource:
    """Where one GPU's column came from: the recorded file, the GPU it names, and the catalog device it is."""

    device: str  # catalog name
    path: str  # path of the KernelTuner cache in the source repository
    recorded_name: str  # the device name the cache records
    measured_by: str = ""  # who measured it where not the repository's authors (e.g. perfcast on a lent GPU)


@dataclass(frozen=True)
class CorpusKernel:
    """One kernel's measured space on several GPUs: configurations (rows) x GPUs (columns).

    times: seconds per (row, GPU), NaN where the configuration failed or was not measured there (`status` says
    which); spreads: relative standard deviation of the runs (NaN where unknown).
    """

    name: str
    title: str
    parameters: tuple[str, ...]
    configs: NDArray[np.int64]  # rows x parameters
    devices: tuple[str, ...]
    times: NDArray[np.float64]  # rows x devices, s
    spreads: NDArray[np.float64]
    status: NDArray[np.str_]  # rows x devices: ok or a failure name
    problem: dict[str, Any]
    sources: tuple[KernelSource, ...]
    repository: dict[str, str]
    notes: tuple[str, ...] = ()
    work_group: tuple[str, ...] = ()  # the parameters that shape a work-group (the tuner's group level)
    source: str = ""  # the kernel's source file(s) in the repository

    def config(self, row: int) -> dict[str, int]:
        """Return configuration `row` as a parameter mapping."""
        return {name: int(value) for name, value in zip(self.parameters, self.configs[row])}

    def column(self, device: str) -> int:
        """Return the column of `device`; NotFound naming the GPUs the kernel has."""
        if device not in self.devices:
            raise NotFound(f"{self.name} was not measured on {device} (it was on: {', '.join(self.devices)})")
        return self.devices.index(device)

    def measured(self, device: str) -> NDArray[np.bool_]:
        """Return which rows ran correctly on `device`."""
        return np.asarray(self.status[:, self.column(device)] == "ok")

    def best_row(self, device: str) -> int:
        """Return the row of the fastest correct configuration on `device`."""
        times = np.where(self.measured(device), self.times[:, self.column(device)], np.inf)
        if not np.isfinite(times).any():
            raise CorpusError(f"{self.name}: no configuration ran correctly on {device}")
        return int(np.argmin(times))

    def recorded_space(self, device: str, broken: Sequence[int] = ()) -> RecordedSpace:
        """Return the kernel on `device` as a recorded tuning space (failures kept: they cost a tuner evaluations).

        `broken` rows (records that cannot be the kernel) are given as failed runs, never as times.
        """
        column = self.column(device)
        records = []
        kept_out = set(int(r) for r in broken)
        for row in range(len(self.configs)):
            state = "wrong" if row in kept_out else str(self.status[row, column])
            if state == "absent":
                continue
            time = float(self.times[row, column]) if state == "ok" else None
            config: dict[str, Value] = dict(self.config(row))
            records.append(Record(config, state, time, (time,) if time is not None else ()))
        values: dict[str, tuple[Value, ...]] = {
            name: tuple(sorted({int(v) for v in self.configs[:, i]})) for i, name in enumerate(self.parameters)}
        size = tuple(int(v) for v in self.problem.get("size", ()))
        return RecordedSpace(self.name, device, size, values, records, origin=f"gpu corpus {self.name} on {device}")

    def subset(self, rows: Sequence[int] | NDArray[np.int64]) -> CorpusKernel:
        """Return the kernel with only `rows` (a reduced corpus for quick scoring)."""
        index = np.asarray(rows, dtype=np.int64)
        return CorpusKernel(self.name, self.title, self.parameters, self.configs[index], self.devices,
                            self.times[index], self.spreads[index], self.status[index], self.problem, self.sources,
                            self.repository, self.notes, self.work_group, self.source)


@dataclass(frozen=True)
class Corpus:
    """Every kernel of the corpus, with the manifest's provenance."""

    kernels: dict[str, CorpusKernel]
    origin: str
    manifest: dict[str, Any] = field(default_factory=dict)

    def devices(self) -> list[str]:
        """Return every GPU of the corpus, in order of first appearance."""
        seen: dict[str, None] = {}
        for kernel in self.kernels.values():
            seen.update(dict.fromkeys(kernel.devices))
        return list(seen)


def _median_and_spread(times_ms: Sequence[float]) -> tuple[float, float]:
    """Return the median (ms) of recorded runs and their standard deviation over the median."""
    runs = [t for t in times_ms if isinstance(t, int | float) and math.isfinite(t) and t > 0]
    if not runs:
        raise CorpusError("a configuration recorded as correct has no positive run time")
    median = statistics.median(runs)
    spread = statistics.pstdev(runs) / median if len(runs) > 1 else math.nan
    return median, spread


def build_kernel(spaces: Mapping[str, Path], parameters: Sequence[str] | None = None
                 ) -> tuple[tuple[str, ...], list[tuple[int, ...]], dict[str, dict[tuple[int, ...], tuple[str, float, float]]]]:
    """Return parameters, configurations (union, sorted) and per device {config: (status, median ms, spread)}.

    `spaces` maps a catalog device name to its KernelTuner cache. The runs come from each cache's `times`
    (median and spread over them); a cache without `times` for a row falls back on its mean `time`.
    """
    per_device: dict[str, dict[tuple[int, ...], tuple[str, float, float]]] = {}
    names: tuple[str, ...] | None = tuple(parameters) if parameters else None
    for device, path in spaces.items():
        space = read_recorded(path)
        own = tuple(space.parameters)
        if names is None:
            names = own
        missing = set(names) - set(own)
        if missing:
            raise CorpusError(f"{path}: lacks the parameter(s) {sorted(missing)} of the kernel's other spaces")
        rows: dict[tuple[int, ...], tuple[str, float, float]] = {}
        for record in space.records:
            try:
                key = tuple(int(record.config[name]) for name in names)
            except (TypeError, ValueError) as error:
                raise CorpusError(f"{path}: a parameter value is not an integer ({error})") from error
            if record.status == "ok":
                runs = [t * 1e3 for t in record.times] or [float(record.time or math.nan) * 1e3]
                median, spread = _median_and_spread(runs)
                rows[key] = ("ok", median, spread)
            else:
                rows[key] = (record.status, math.nan, math.nan)
        per_device[device] = rows
    if names is None:
        raise CorpusError("no space given")
    configs = sorted({key for rows in per_device.values() for key in rows})
    return names, configs, per_device


def _significant(value: float, digits: int = 5) -> str:
    """Return `value` with `digits` significant digits (the corpus keeps no more than its runs resolve)."""
    return f"{value:.{digits}g}"


def write_kernel_csv(path: Path, parameters: Sequence[str], configs: Iterable[tuple[int, ...]],
                     per_device: Mapping[str, Mapping[tuple[int, ...], tuple[str, float, float]]]) -> int:
    """Write a kernel's gzip-compressed CSV (times in ms, 5 significant digits); return the rows written."""
    devices = list(per_device)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*parameters, *(f"{kind}@{d}" for d in devices for kind in ("time_ms", "spread"))])
    count = 0
    for key in configs:
        cells: list[str] = [str(v) for v in key]
        for device in devices:
            state, median, spread = per_device[device].get(key, ("absent", math.nan, math.nan))
            if state == "ok":
                cells += [_significant(median), "" if math.isnan(spread) else _significant(spread, 3)]
            else:
                cells += [state, ""]
        writer.writerow(cells)
        count += 1
    # mtime=0: the same data gives the same bytes, so a rebuilt corpus shows no spurious change in git.
    with gzip.GzipFile(filename="", mode="wb", fileobj=path.open("wb"), mtime=0) as out:
        out.write(buffer.getvalue().encode())
    return count


def _read_kernel_csv(path: Path) -> tuple[tuple[str, ...], list[str], NDArray[np.int64], NDArray[np.float64],
                                                      NDArray[np.float64], NDArray[np.str_]]:
    """Return parameters, devices, configurations, times (s), spreads and statuses of one kernel file."""
    try:
        with gzip.open(path, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)  # bounded: a small file may decompress to gigabytes
        text = raw.decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise CorpusError(f"{path}: not a gzip-compressed UTF-8 CSV ({error})") from error
    if len(raw) > MAX_BYTES:
        raise CorpusError(f"{path}: decompresses to more than the {MAX_BYTES // 2**20} MiB perfcast reads")
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as error:
        raise CorpusError(f"{path}: not a CSV perfcast reads ({error})") from None
    if len(rows) < 2:
        raise CorpusError(f"{path}: no configurations (a header at most)")
    header, body = rows[0], rows[1:]
    if len(body) > MAX_ROWS:
        raise CorpusError(f"{path}: {len(body)} rows, more than the {MAX_ROWS} perfcast reads")
    first = next((i for i, column in enumerate(header) if column.startswith("time_ms@")), None)
    if first is None or (len(header) - first) % 2:
        raise CorpusError(f"{path}: the header needs parameters, then time_ms@GPU and spread@GPU pairs")
    parameters = tuple(header[:first])
    devices = [column.split("@", 1)[1] for column in header[first::2]]
    if len(set(devices)) != len(devices):
        raise CorpusError(f"{path}: a GPU has two columns")
    if [c for c in header[first + 1::2]] != [f"spread@{d}" for d in devices]:
        raise CorpusError(f"{path}: every time_ms@GPU column must be followed by its spread@GPU")
    configs = np.zeros((len(body), first), dtype=np.int64)
    times = np.full((len(body), len(devices)), np.nan)
    spreads = np.full((len(body), len(devices)), np.nan)
    status = np.full((len(body), len(devices)), "ok", dtype="<U8")
    for r, row in enumerate(body):
        if len(row) != len(header):
            raise CorpusError(f"{path}: row {r + 2} has {len(row)} cells, the header {len(header)}")
        try:
            configs[r] = [int(cell) for cell in row[:first]]
        except (ValueError, OverflowError) as error:
            raise CorpusError(f"{path}: row {r + 2}: a parameter is not an integer ({error})") from error
        for d in range(len(devices)):
            cell, spread = row[first + 2 * d], row[first + 2 * d + 1]
            if cell in FAILURES:
                status[r, d] = cell
                continue
            try:
                value = float(cell)
                spread_value = float(spread) if spread else math.nan
            except ValueError as error:
                raise CorpusError(f"{path}: row {r + 2}, {devices[d]}: {error}") from error
            if not (math.isfinite(value) and value > 0) or not (math.isnan(spread_value) and not spread
                                                                  or math.isfinite(spread_value) and spread_value >= 0):
                raise CorpusError(f"{path}: row {r + 2}, {devices[d]}: time {cell!r} ms and spread {spread!r} "
                                  "must be positive and finite")
            times[r, d] = value * 1e-3
            spreads[r, d] = spread_value
    keys = {tuple(c) for c in configs.tolist()}
    if len(keys) != len(configs):
        raise CorpusError(f"{path}: a configuration is listed twice")
    return parameters, devices, configs, times, spreads, status


def read_corpus(directory: Path | str = CORPUS_DIR, kernels: Sequence[str] | None = None) -> Corpus:
    """Return the corpus in `directory` (its manifest and kernel files), or only the named `kernels`."""
    directory = Path(directory)
    manifest_path = directory / "corpus.yaml"
    if not manifest_path.is_file():
        raise NotFound(f"{directory}: no corpus.yaml (the GPU corpus manifest)")
    manifest = load_yaml_file(manifest_path)
    if not isinstance(manifest, dict) or manifest.get("format") != CORPUS_FORMAT:
        raise CorpusError(f"{manifest_path}: not a {CORPUS_FORMAT} manifest")
    version = manifest.get("version")
    if not isinstance(version, int) or version < 1:
        raise CorpusError(f"{manifest_path}: version must be a positive integer, got {version!r}")
    if version > CORPUS_VERSION:
        raise CorpusError(f"{manifest_path}: version {version} is newer than this perfcast reads ({CORPUS_VERSION}): "
                          "update perfcast")
    entries = manifest.get("kernels")
    if not isinstance(entries, dict) or not entries:
        raise CorpusError(f"{manifest_path}: 'kernels' must map kernel names to their descriptions")
    bad = [k for k in entries if not isinstance(k, str) or not _NAME.match(k)]
    if bad:
        raise CorpusError(f"{manifest_path}: kernel name(s) {bad} are not plain names (letters, digits, . _ -)")
    wanted = list(entries) if kernels is None else list(kernels)
    unknown = [k for k in wanted if k not in entries]
    if unknown:
        raise NotFound(f"no kernel {', '.join(unknown)} in the corpus (it has: {', '.join(entries)})")
    repository = manifest.get("repository") or {}
    result: dict[str, CorpusKernel] = {}
    for name in wanted:
        entry = entries[name]
        if not isinstance(entry, dict) or not isinstance(entry.get("sources"), dict):
            raise CorpusError(f"{manifest_path}: kernel {name} needs 'sources' (device: cache path)")
        parameters, devices, configs, times, spreads, status = _read_kernel_csv(directory / f"{name}.csv.gz")
        sources = []
        for device in devices:
            source = entry["sources"].get(device)
            if not isinstance(source, dict) or "path" not in source:
                raise CorpusError(f"{manifest_path}: kernel {name} has a column for {device} but no source for it")
            sources.append(KernelSource(device, str(source["path"]), str(source.get("recorded_name", "")),
                                        str(source.get("measured_by", ""))))
        result[name] = CorpusKernel(
            name, str(entry.get("title", name)), parameters, configs, tuple(devices), times, spreads, status,
            dict(entry.get("problem") or {}), tuple(sources), {**repository, **(entry.get("repository") or {})},
            tuple(str(n) for n in entry.get("notes") or ()), tuple(str(p) for p in entry.get("work_group") or ()),
            str(entry.get("source", "")))
    return Corpus(result, str(directory), manifest)
