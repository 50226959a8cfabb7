"""The results store: every run and every measurement in SQLite, so that an interrupted run resumes."""

from __future__ import annotations

import csv
import datetime as _dt
import functools
import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from perfcast.errors import InputError, NotFound
from perfcast.output_files import replaced

__all__ = ["DEFAULT_STORE", "FAILURE_STATUSES", "STORE_VERSION", "Measurement", "ResultsStore", "StoreError"]

DEFAULT_STORE = Path(".perfcast") / "results.sqlite"
# PRAGMA user_version; raise it with every change of the tables, and say what changed.
# 2: the failures table (configurations that failed to build, to run, or gave a wrong result). A version-1
#    store opened for writing gets the table and version 2; its runs and measurements are kept as they are.
STORE_VERSION = 2
FAILURE_STATUSES = ("compile", "runtime", "wrong", "timeout")


class StoreError(InputError):
    """A results store perfcast will not use: a folder, not SQLite, damaged, foreign, newer, or in use."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    identity TEXT NOT NULL,         -- kernel, strategy, device and problem: what makes a run resumable
    kernel TEXT NOT NULL,
    strategy TEXT NOT NULL,
    environment TEXT NOT NULL,      -- JSON: platform, device, driver, compiler, host
    problem TEXT NOT NULL,          -- JSON
    repetitions INTEGER NOT NULL,
    started TEXT NOT NULL,
    finished TEXT,
    result TEXT                     -- JSON summary once finished
);
CREATE TABLE IF NOT EXISTS measurements (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    step TEXT NOT NULL,             -- which step of the strategy measured it
    config TEXT NOT NULL,           -- JSON, keys sorted
    size TEXT NOT NULL,             -- JSON: the problem size of this measurement
    mean REAL NOT NULL,             -- seconds
    std REAL NOT NULL,
    samples TEXT NOT NULL,          -- JSON list of seconds
    metric REAL NOT NULL,           -- throughput, higher is better
    measured TEXT NOT NULL,
    PRIMARY KEY (run_id, step, config, size)
);
CREATE TABLE IF NOT EXISTS failures (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    config TEXT NOT NULL,           -- JSON, keys sorted
    size TEXT NOT NULL,             -- JSON
    status TEXT NOT NULL CHECK (status IN ('compile', 'runtime', 'wrong', 'timeout')),
    message TEXT NOT NULL,
    measured TEXT NOT NULL,
    PRIMARY KEY (run_id, config, size)
);
"""


@dataclass(frozen=True)
class Measurement:
    """One configuration measured at one problem size: mean and standard deviation (s) and throughput."""

    step: str
    config: dict[str, int]
    size: dict[str, int]
    mean: float
    std: float
    samples: tuple[float, ...]
    metric: float


def _key(mapping: Mapping[str, Any]) -> str:
    return json.dumps(dict(mapping), sort_keys=True)


T = TypeVar("T")


def _damage_is_a_store_error(method: Callable[..., T]) -> Callable[..., T]:
    """Return `method` with a damaged store's errors (SQLite's, undecodable text or JSON) as StoreError.

    A damaged file is bad input, not a crash: the error names the store.
    """

    @functools.wraps(method)
    def guarded(self: ResultsStore, *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError as error:  # locked, read-only, disk full: the store may be fine
            raise StoreError(f"{self.path}: cannot use the store now ({error})") from None
        except (sqlite3.DatabaseError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise StoreError(f"{self.path}: the store is damaged ({type(error).__name__}: {error})") from None

    return guarded


class ResultsStore:
    """An SQLite file of tuning runs and their measurements."""

    def __init__(self, path: str | Path = DEFAULT_STORE, *, create: bool = True) -> None:
        """Open the store at `path`; with create=False (reading) a missing or empty store is an error.

        A file that is not SQLite, is damaged, or holds another program's tables is refused and never written.
        """
        self.path = Path(path)
        self._lock: Any = None
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a folder, not a results store")
        if not create and not self.path.is_file():
            raise StoreError(f"{self.path}: no results store here")
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, timeout=10)
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot open: {error}") from None
        try:
            self._check_or_create(create)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
            self.db.close()
            raise StoreError(f"{self.path}: not a readable results store ({error})") from None
        except StoreError:
            self.db.close()
            raise

    def _check_or_create(self, create: bool) -> None:
        """Refuse a damaged, foreign or newer store; create the tables in an empty one when allowed."""
        check = self.db.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != "ok":
            raise StoreError(f"{self.path}: the database is damaged ({check[0] if check else 'no answer'})")
        version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
        tables = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        tables.discard("sqlite_sequence")
        if not tables:
            if not create:
                raise StoreError(f"{self.path}: an empty database, not a results store")
            self.db.executescript(_SCHEMA)
            self.db.execute(f"PRAGMA user_version = {STORE_VERSION}")
            self.db.commit()
            self._has_failures = True
            return
        if version > STORE_VERSION:
            raise StoreError(f"{self.path}: written by a newer perfcast (store version {version}); "
                             f"this one reads version {STORE_VERSION}")
        if not {"runs", "measurements"} <= tables:
            raise StoreError(f"{self.path}: not a perfcast results store (it holds {', '.join(sorted(tables))})")
        if version < STORE_VERSION and create:
            # Version 0 (before versions were recorded) and 1 have the runs and measurements of today: add what
            # later versions added (CREATE ... IF NOT EXISTS) and mark the store, when writing.
            self.db.executescript(_SCHEMA)
            self.db.execute(f"PRAGMA user_version = {STORE_VERSION}")
            self.db.commit()
        self._has_failures = "failures" in tables or create

    def lock(self) -> None:
        """Hold this store for one tuning process; a second one is refused instead of mixing its rows in."""
        import fcntl

        # A lock file beside the database's real path: a symbolic link or a ../ spelling of the same store
        # takes the same lock. (Not the database file itself: on NFS, flock becomes an fcntl lock there and
        # would fight SQLite's own.) A hard link under another name is not caught.
        real = self.path.resolve()
        handle = open(real.with_name(real.name + ".lock"), "a+")  # noqa: SIM115 - held until close
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise StoreError(f"{self.path}: another perfcast process is tuning into this store; "
                             "wait for it, or give another --store") from None
        self._lock = handle

    def close(self) -> None:
        """Close the database and release the store's lock."""
        self.db.close()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    @_damage_is_a_store_error
    def open_run(self, kernel: str, strategy: str, environment: Mapping[str, Any], problem: Mapping[str, Any],
                 repetitions: int) -> tuple[int, bool]:
        """Return (run id, resumed): the unfinished run of the same identity if there is one, else a new run."""
        identity = _key({"kernel": kernel, "strategy": strategy, "device": environment.get("device"),
                         "problem": dict(problem), "repetitions": repetitions})
        row = self.db.execute(
            "SELECT id FROM runs WHERE identity = ? AND finished IS NULL ORDER BY id DESC LIMIT 1", (identity,)
        ).fetchone()
        if row:
            return int(row[0]), True
        cursor = self.db.execute(
            "INSERT INTO runs (identity, kernel, strategy, environment, problem, repetitions, started) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (identity, kernel, strategy, _key(environment), _key(problem), repetitions,
             _dt.datetime.now().isoformat(timespec="seconds")),
        )
        self.db.commit()
        assert cursor.lastrowid is not None
        return int(cursor.lastrowid), False

    @_damage_is_a_store_error
    def find(self, run_id: int, config: Mapping[str, int], size: Mapping[str, int]) -> Measurement | None:
        """Return the measurement this run already has of `config` at `size` (from whichever step took it)."""
        row = self.db.execute(
            "SELECT step, mean, std, samples, metric FROM measurements WHERE run_id=? AND config=? AND size=? "
            "ORDER BY rowid LIMIT 1",
            (run_id, _key(config), _key(size)),
        ).fetchone()
        if row is None:
            return None
        return Measurement(row[0], dict(config), dict(size), row[1], row[2], tuple(json.loads(row[3])), row[4])

    @_damage_is_a_store_error
    def distinct_measurements(self, run_id: int) -> int:
        """Return how many (configuration, size) pairs this run has evaluated: measured, or failed."""
        failed = "UNION SELECT config, size FROM failures WHERE run_id = ?" if self._has_failures else ""
        row = self.db.execute(
            f"SELECT COUNT(*) FROM (SELECT config, size FROM measurements WHERE run_id = ? {failed})",
            (run_id, run_id) if failed else (run_id,),
        ).fetchone()
        return int(row[0])

    @_damage_is_a_store_error
    def record_failure(self, run_id: int, config: Mapping[str, int], size: Mapping[str, int], status: str,
                       message: str) -> None:
        """Store a configuration that failed (compile, runtime, wrong, timeout) at once, with the message."""
        if status not in FAILURE_STATUSES:
            raise ValueError(f"failure status {status!r}; one of {', '.join(FAILURE_STATUSES)}")
        self.db.execute(
            "INSERT OR REPLACE INTO failures (run_id, config, size, status, message, measured) VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, _key(config), _key(size), status, message[:2000], _dt.datetime.now().isoformat(timespec="seconds")),
        )
        self.db.commit()

    @_damage_is_a_store_error
    def find_failure(self, run_id: int, config: Mapping[str, int], size: Mapping[str, int] | None = None
                     ) -> tuple[str, str] | None:
        """Return (status, message) where this run found `config` failing (at `size`, or at any size if None)."""
        if not self._has_failures:
            return None
        query = "SELECT status, message FROM failures WHERE run_id = ? AND config = ?"
        arguments: tuple[Any, ...] = (run_id, _key(config))
        if size is not None:
            query += " AND size = ?"
            arguments += (_key(size),)
        row = self.db.execute(query + " LIMIT 1", arguments).fetchone()
        return (row[0], row[1]) if row else None

    @_damage_is_a_store_error
    def failures(self, run_id: int) -> list[dict[str, Any]]:
        """Return the run's failed configurations: config, size, status, message, in the order they failed."""
        if not self._has_failures:
            return []
        rows = self.db.execute("SELECT config, size, status, message FROM failures WHERE run_id = ? ORDER BY rowid",
                               (run_id,)).fetchall()
        return [{"config": json.loads(r[0]), "size": json.loads(r[1]), "status": r[2], "message": r[3]} for r in rows]

    @_damage_is_a_store_error
    def record(self, run_id: int, measurement: Measurement) -> None:
        """Store one measurement at once (committed: nothing is lost if the run is interrupted)."""
        self.db.execute(
            "INSERT OR REPLACE INTO measurements (run_id, step, config, size, mean, std, samples, metric, measured) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, measurement.step, _key(measurement.config), _key(measurement.size), measurement.mean,
             measurement.std, json.dumps(list(measurement.samples)), measurement.metric,
             _dt.datetime.now().isoformat(timespec="seconds")),
        )
        self.db.commit()

    @_damage_is_a_store_error
    def file_under(self, run_id: int, measurement: Measurement, step: str) -> None:
        """File an existing measurement under `step` too, keeping the time it was taken (a copy, not a new run)."""
        self.db.execute(
            "INSERT OR IGNORE INTO measurements (run_id, step, config, size, mean, std, samples, metric, measured) "
            "SELECT run_id, ?, config, size, mean, std, samples, metric, measured FROM measurements "
            "WHERE run_id = ? AND step = ? AND config = ? AND size = ?",
            (step, run_id, measurement.step, _key(measurement.config), _key(measurement.size)),
        )
        self.db.commit()

    @_damage_is_a_store_error
    def finish(self, run_id: int, result: Mapping[str, Any]) -> None:
        """Mark a run finished with its summary."""
        self.db.execute("UPDATE runs SET finished = ?, result = ? WHERE id = ?",
                        (_dt.datetime.now().isoformat(timespec="seconds"), json.dumps(dict(result)), run_id))
        self.db.commit()

    @_damage_is_a_store_error
    def run_info(self, run_id: int) -> dict[str, Any]:
        """Return a run's row as a dict (JSON fields decoded)."""
        self.db.row_factory = sqlite3.Row
        try:
            row = self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        finally:
            self.db.row_factory = None
        if row is None:
            raise NotFound(f"no tuning run {run_id} in {self.path}")
        info = dict(row)
        for key in ("environment", "problem", "result"):
            info[key] = json.loads(info[key]) if info[key] else None
        return info

    @_damage_is_a_store_error
    def measurements(self, run_id: int) -> list[Measurement]:
        """Return every measurement of a run, in the order they were taken."""
        rows = self.db.execute(
            "SELECT step, config, size, mean, std, samples, metric FROM measurements WHERE run_id = ? ORDER BY rowid",
            (run_id,),
        ).fetchall()
        return [Measurement(r[0], json.loads(r[1]), json.loads(r[2]), r[3], r[4], tuple(json.loads(r[5])), r[6])
                for r in rows]

    @_damage_is_a_store_error
    def export_csv(self, run_id: int, path: str | Path) -> Path:
        """Write a run's measurements to CSV (one column per parameter and size entry) and return the path."""
        rows = self.measurements(run_id)
        params = sorted({k for m in rows for k in m.config})
        sizes = sorted({k for m in rows for k in m.size})
        path = Path(path)
        with replaced(path) as partial, partial.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["step", *params, *sizes, "mean_s", "std_s", "repetitions", "metric"])
            for m in rows:
                writer.writerow([m.step, *(m.config.get(p, "") for p in params), *(m.size.get(s, "") for s in sizes),
                                 m.mean, m.std, len(m.samples), m.metric])
        return path
