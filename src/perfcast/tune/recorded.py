"""Tuning spaces measured before: KernelTuner's JSON cache and the T4 results format, read and written.

A `RecordedSpace` is one kernel on one device at one problem size: its parameters with their values and, per
configuration measured, a `Record` with its status (`ok`, or the failure: `compile`, `runtime`, `wrong`,
`timeout`) and its times in seconds. Configurations a space's constraints rule out are simply absent.

KernelTuner's cache (its `cache` files, schema 1.0.0/1.1.0 and the older unversioned ones) keeps one entry
per configuration keyed by its values joined with commas; `time` is the mean in ms, or the failure's name
(`CompilationFailedConfig`, `RuntimeFailedConfig`, `InvalidConfig`), `times` the runs in ms. The T4 results
format (the FAIR autotuning schema) keeps a list of results with `configuration`, `times.runtimes` (ms),
`invalidity` and `measurements`. Both are read from plain or gzip-compressed files.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfcast.errors import InputError

__all__ = ["FORMATS", "STATUSES", "Record", "RecordedSpace", "RecordedSpaceError", "Value", "read_recorded",
           "space_from_run", "to_kerneltuner", "to_t4"]

Value = int | float | str
STATUSES = ("ok", "compile", "runtime", "wrong", "timeout")
MAX_BYTES = 512 * 2**20  # a decompressed space larger than this is refused, not read
_MS = 1e-3
# KernelTuner's failure names and T4's invalidity values, as perfcast's statuses.
_KT_FAILURES = {"CompilationFailedConfig": "compile", "RuntimeFailedConfig": "runtime", "InvalidConfig": "wrong"}
_KT_NAMES = {"compile": "CompilationFailedConfig", "runtime": "RuntimeFailedConfig", "wrong": "InvalidConfig",
             "timeout": "RuntimeFailedConfig"}
_T4_STATUSES = {"correct": "ok", "compile": "compile", "runtime": "runtime", "correctness": "wrong",
                "timeout": "timeout"}


class RecordedSpaceError(InputError):
    """A recorded tuning space perfcast cannot read: not KernelTuner's cache nor T4, or inconsistent."""


@dataclass(frozen=True)
class Record:
    """One configuration as measured: status, mean time (s, ok only), the runs (s), other reported numbers."""

    config: dict[str, Value]
    status: str
    time: float | None
    times: tuple[float, ...] = ()
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class RecordedSpace:
    """A kernel's tuning space on one device as measured: parameters, objective, and every record."""

    kernel: str
    device: str
    problem_size: tuple[int, ...]
    parameters: dict[str, tuple[Value, ...]]
    records: list[Record]
    objective: str = "time"
    origin: str = ""
    tuner: str = ""  # what chose the configurations, where the file says (perfcast's live tuning writes it)

    def __post_init__(self) -> None:
        if not self.parameters:
            raise RecordedSpaceError(f"{self.origin}: the space has no tuning parameters")
        self._by_key = {self.key(r.config): r for r in self.records}

    def key(self, config: dict[str, Value]) -> tuple[Value, ...]:
        """Return a configuration's values in parameter order (its identity in the space)."""
        return tuple(config[name] for name in self.parameters)

    def record(self, config: dict[str, Value]) -> Record | None:
        """Return the record of `config`, or None where the space's constraints excluded it."""
        try:
            return self._by_key.get(self.key(config))
        except KeyError:
            return None

    def valid(self) -> list[Record]:
        """Return the records that ran correctly."""
        return [r for r in self.records if r.status == "ok"]

    def optimum(self) -> Record:
        """Return the fastest correct record."""
        valid = self.valid()
        if not valid:
            raise RecordedSpaceError(f"{self.origin}: no configuration of the space ran correctly")
        return min(valid, key=lambda r: r.time or math.inf)


def _number(value: Any) -> float | None:
    """Return `value` as a finite float, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


_KT_FAILED_TIME = 1e20  # ms: how KernelTuner before 0.4 wrote a configuration that failed


def _scalar(value: Any) -> bool:
    """Return whether `value` can be a parameter's value: a number, a name or a truth value."""
    return isinstance(value, int | float | str | bool) and not (isinstance(value, float) and not math.isfinite(value))


def _from_kerneltuner(data: dict[str, Any], origin: str) -> RecordedSpace:
    """Return the space of a KernelTuner cache (times in ms in the file)."""
    missing = [k for k in ("tune_params_keys", "tune_params", "cache") if k not in data]
    if missing:
        raise RecordedSpaceError(f"{origin}: a KernelTuner cache needs {', '.join(missing)}")
    keys = data["tune_params_keys"]
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise RecordedSpaceError(f"{origin}: tune_params_keys must be a list of parameter names")
    params = data["tune_params"]
    if not isinstance(params, dict) or set(keys) - set(params):
        raise RecordedSpaceError(f"{origin}: tune_params lacks "
                                 f"{sorted(set(keys) - set(params if isinstance(params, dict) else {}))}")
    for key in keys:
        if not isinstance(params[key], list) or not all(_scalar(v) for v in params[key]):
            raise RecordedSpaceError(f"{origin}: tune_params[{key!r}] must be a list of numbers or names")
    if not isinstance(data["cache"], dict):
        raise RecordedSpaceError(f"{origin}: 'cache' must map each configuration's key to its entry")
    # KernelTuner 1.5 writes the objective as a list (one per objective); earlier versions as a string.
    objectives = data.get("objective", "time")
    if isinstance(objectives, list):
        if len(objectives) != 1:
            raise RecordedSpaceError(f"{origin}: the cache has {len(objectives)} objectives ({objectives}); "
                                     "perfcast replays spaces of one")
        objectives = objectives[0]
    objective = str(objectives)
    records = []
    for entry_key, entry in data["cache"].items():
        if not isinstance(entry, dict):
            raise RecordedSpaceError(f"{origin}: cache entry {entry_key!r} is not an object")
        absent = [k for k in keys if k not in entry]
        if not absent and "time" not in entry and "__error__" in entry:
            # KernelTuner 1.5 records a failed configuration under __error__, with no time.
            entry = {**entry, "time": entry["__error__"]}
        if absent or "time" not in entry:
            raise RecordedSpaceError(f"{origin}: cache entry {entry_key!r} lacks {', '.join(absent or ['time'])}")
        config = {k: entry[k] for k in keys}
        odd = [k for k, v in config.items() if not _scalar(v)]
        if odd:
            raise RecordedSpaceError(f"{origin}: cache entry {entry_key!r}: {odd[0]} is {config[odd[0]]!r}, not a "
                                     "number or a name")
        raw = entry["time"]
        if isinstance(raw, str):
            if raw not in _KT_FAILURES:
                raise RecordedSpaceError(f"{origin}: cache entry {entry_key!r} has time {raw!r}; expected a number "
                                         f"or one of {', '.join(_KT_FAILURES)}")
            records.append(Record(config, _KT_FAILURES[raw], None))
            continue
        mean = _number(raw)
        if mean is None or mean <= 0 or mean >= _KT_FAILED_TIME:
            # Old KernelTuner versions wrote failures as 1e20 ms; that, and anything not a positive time, is one.
            records.append(Record(config, "runtime", None))
            continue
        runs = entry.get("times") or []
        if not isinstance(runs, list):
            raise RecordedSpaceError(f"{origin}: cache entry {entry_key!r}: times must be a list")
        times = tuple(t * _MS for t in runs if _number(t))
        metrics = {k: float(v) for k, v in entry.items()
                   if k not in keys and k not in ("time", "times") and _number(v) is not None}
        records.append(Record(config, "ok", mean * _MS, times, metrics))
    problem = data.get("problem_size") or []
    problem = problem if isinstance(problem, list) else [problem]
    if not all(isinstance(p, int) and not isinstance(p, bool) for p in problem):
        problem = []  # KernelTuner writes "callable" for a size given as a function: unknown, not an error
    tuner = data.get("tuner")
    return RecordedSpace(str(data.get("kernel_name", "kernel")), str(data.get("device_name", "")),
                         tuple(problem),
                         {k: tuple(params[k]) for k in keys}, records, objective, origin,
                         tuner if isinstance(tuner, str) else "")


def _from_t4(data: dict[str, Any], origin: str) -> RecordedSpace:
    """Return the space of a T4 results file (runtimes in ms); parameters' values are those that occur."""
    results = data["results"]
    if not isinstance(results, list) or not results:
        raise RecordedSpaceError(f"{origin}: the T4 file has no results")
    if not all(isinstance(result, dict) for result in results):
        raise RecordedSpaceError(f"{origin}: every result must be an object")
    first = results[0].get("configuration")
    keys: list[str] = list(first) if isinstance(first, dict) else []
    values: dict[str, set[Value]] = {k: set() for k in keys}
    records = []
    for index, result in enumerate(results):
        config = result.get("configuration")
        if not isinstance(config, dict) or list(config) != keys:
            raise RecordedSpaceError(f"{origin}: result {index} has another set of parameters than the first")
        odd = [k for k, v in config.items() if not _scalar(v)]
        if odd:
            raise RecordedSpaceError(f"{origin}: result {index}: {odd[0]} is {config[odd[0]]!r}, not a number or "
                                     "a name")
        for k, v in config.items():
            values[k].add(v)
        invalidity = result.get("invalidity", "correct")
        if invalidity not in _T4_STATUSES:
            raise RecordedSpaceError(f"{origin}: result {index} has invalidity {invalidity!r}; expected one of "
                                     f"{', '.join(_T4_STATUSES)}")
        status = _T4_STATUSES[invalidity]
        measured = {m.get("name"): m.get("value") for m in result.get("measurements") or [] if isinstance(m, dict)}
        times = result.get("times") or {}
        if not isinstance(times, dict) or not isinstance(times.get("runtimes") or [], list):
            raise RecordedSpaceError(f"{origin}: result {index}: times must be an object whose runtimes is a list")
        runtimes = tuple(t * _MS for t in times.get("runtimes") or [] if _number(t))
        mean = _number(measured.get("time"))
        if status == "ok" and mean is None and runtimes:
            mean = sum(runtimes) / len(runtimes) / _MS
        if status == "ok" and (mean is None or mean <= 0):
            raise RecordedSpaceError(f"{origin}: result {index} is correct but has no time")
        metrics = {str(k): n for k, v in measured.items() if k != "time" and (n := _number(v)) is not None}
        records.append(Record(dict(config), status, mean * _MS if status == "ok" and mean else None,
                              runtimes if status == "ok" else (), metrics))
    meta = data.get("metadata") or {}
    device = (meta.get("device") or meta.get("device_name") or "") if isinstance(meta, dict) else ""
    return RecordedSpace(str(meta.get("kernel_name", "kernel")) if isinstance(meta, dict) else "kernel",
                         str(device), (), {k: tuple(sorted(v, key=lambda x: (str(type(x)), x))) for k, v in values.items()},
                         records, "time", origin)


FORMATS = {
    "kerneltuner": "KernelTuner's JSON cache (cache, tune_params, tune_params_keys)",
    "t4": "the T4 results format (results with configuration, times, invalidity, measurements)",
}


def read_recorded(path: str | Path) -> RecordedSpace:
    """Return the tuning space in a KernelTuner cache or T4 results file (plain or .gz), format sniffed."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            with gzip.open(path) as handle:
                raw = handle.read(MAX_BYTES + 1)
    except (OSError, EOFError) as error:
        raise RecordedSpaceError(f"cannot read {path}: {getattr(error, 'strerror', None) or error}") from None
    if len(raw) > MAX_BYTES:
        raise RecordedSpaceError(f"{path}: more than {MAX_BYTES // 2**20} MiB of JSON")
    text = raw.decode("utf-8", errors="replace").rstrip()
    try:
        data = json.loads(text)
    except RecursionError:
        raise RecordedSpaceError(f"{path}: nested too deeply to read") from None
    except json.JSONDecodeError as error:
        # KernelTuner leaves its cache open (no closing braces) while it tunes: read such a file as if closed.
        try:
            data = json.loads(text.rstrip(",") + "}}") if '"cache"' in text else None
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
            data = None
        if data is None:
            raise RecordedSpaceError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from None
    except ValueError as error:  # an integer of thousands of digits
        raise RecordedSpaceError(f"{path}: a value perfcast cannot read ({error})") from None
    if not isinstance(data, dict):
        raise RecordedSpaceError(f"{path}: not a JSON object")
    if "cache" in data:
        return _from_kerneltuner(data, str(path))
    if "results" in data:
        return _from_t4(data, str(path))
    raise RecordedSpaceError(f"{path}: neither {FORMATS['kerneltuner']} nor {FORMATS['t4']}")


def to_kerneltuner(space: RecordedSpace) -> dict[str, Any]:
    """Return `space` as a KernelTuner cache (schema 1.0.0; times in ms)."""
    now = _dt.datetime.now(_dt.UTC).isoformat()
    cache = {}
    for r in space.records:
        entry: dict[str, Any] = dict(r.config)
        if r.status == "ok":
            assert r.time is not None
            entry.update(time=r.time / _MS, times=[t / _MS for t in r.times])
        else:
            entry["time"] = _KT_NAMES[r.status]
        entry.update(r.metrics)
        for name in ("compile_time", "verification_time", "benchmark_time", "strategy_time", "framework_time"):
            entry.setdefault(name, 0)
        entry.setdefault("timestamp", now)
        cache[",".join(str(v) for v in space.key(r.config))] = entry
    data = {"schema_version": "1.0.0", "device_name": space.device, "kernel_name": space.kernel,
            "problem_size": list(space.problem_size), "tune_params_keys": list(space.parameters),
            "tune_params": {k: list(v) for k, v in space.parameters.items()}, "objective": space.objective,
            "cache": cache}
    if space.tuner:
        data["tuner"] = space.tuner  # not KernelTuner's key: KernelTuner reads past it
    return data


def to_t4(space: RecordedSpace) -> dict[str, Any]:
    """Return `space` as T4 results (schema 1.0.0; times in ms)."""
    invalidity = {v: k for k, v in _T4_STATUSES.items()}
    results = []
    for r in space.records:
        measurements = [{"name": "time", "value": r.time / _MS, "unit": "ms"}] if r.time is not None else []
        measurements += [{"name": k, "value": v, "unit": ""} for k, v in r.metrics.items()]
        results.append({"configuration": dict(r.config), "invalidity": invalidity[r.status],
                        "correctness": 1 if r.status == "ok" else 0,
                        "times": {"runtimes": [t / _MS for t in r.times]}, "measurements": measurements,
                        "objectives": ["time"]})
    return {"schema_version": "1.0.0", "metadata": {"device": space.device, "kernel_name": space.kernel},
            "results": results}


def space_from_run(info: dict[str, Any], measurements: list[Any], failures: list[dict[str, Any]]) -> RecordedSpace:
    """Return a perfcast tuning run as a recorded space: its measurements and failures at the target size.

    `info`, `measurements` and `failures` are what the results store returns for the run; measurements at
    other sizes (steps 1-3 of the hierarchical method) are not the target problem and are left out.
    """
    target = dict(info["problem"])
    at_target = {json.dumps(m.config, sort_keys=True): m for m in measurements if m.size == target}
    failed = {json.dumps(f["config"], sort_keys=True): f for f in failures
              if f["size"] == target or f["status"] in ("compile", "wrong")}
    configs = [m.config for m in at_target.values()] + [f["config"] for k, f in failed.items() if k not in at_target]
    if not configs:
        raise RecordedSpaceError(f"run {info['id']} has no measurement at its target size {target}")
    names = sorted({name for c in configs for name in c})
    values = {name: tuple(sorted({c[name] for c in configs})) for name in names}
    records = [Record(dict(m.config), "ok", m.mean, tuple(m.samples), {"metric": m.metric})
               for m in at_target.values()]
    records += [Record(dict(f["config"]), f["status"], None) for k, f in failed.items() if k not in at_target]
    device = str((info.get("environment") or {}).get("device", ""))
    return RecordedSpace(str(info["kernel"]), device, tuple(int(v) for v in target.values()), values, records,
                         "time", f"perfcast run {info['id']}")
