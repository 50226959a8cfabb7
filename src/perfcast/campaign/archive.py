"""A campaign archive: one compressed file holding everything a run measured, readable by `campaign report`.

While a run goes on it writes into a working folder beside the archive (`ARCHIVE.partial/`), saving the
manifest after every kernel, so that an interrupted run keeps what it measured and the next run with the same
output resumes there. A finished run packs the folder into ARCHIVE (a zip file, deflated) and removes it.

Layout (inside the zip and the folder alike):
  manifest.json   format, version, command, environment, and per kernel its size, times, check and profile notes
  device.yaml     the device's measured profile (perfcast bench): each figure the best of the runs below
  device-run-N.yaml  each run of perfcast bench, the first before the kernels were timed, the others after
  profile.yaml    the kernels' profiles (perfcast-profile), scaled to the run's sizes
  raw/            the profiler's own outputs
"""

from __future__ import annotations

import json
import shutil
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfcast.errors import InputError
from perfcast.output_files import replaced, write_text_atomic
from perfcast.units import Precision

__all__ = ["ARCHIVE_FORMAT", "ARCHIVE_VERSION", "MAX_ARCHIVE_BYTES", "MAX_MEMBER_BYTES", "Archive", "ArchiveError",
           "copy_with",
           "WorkingFolder"]

ARCHIVE_FORMAT = "perfcast-campaign"
ARCHIVE_VERSION = 1
MAX_ARCHIVE_BYTES = 16 * 2**20
MAX_MEMBER_BYTES = 64 * 2**20  # what one member may decompress to when read: a small zip can hold gigabytes


class ArchiveError(InputError):
    """A campaign archive that cannot be read: not one, another version, or damaged."""


@dataclass
class WorkingFolder:
    """The folder a run writes into before it is packed: resumable."""

    path: Path

    @classmethod
    def for_archive(cls, archive: Path) -> WorkingFolder:
        """Return the working folder of `archive` (ARCHIVE.partial beside it)."""
        return cls(archive.with_name(archive.name + ".partial"))

    def exists(self) -> bool:
        """Return True when an earlier run left a working folder."""
        return (self.path / "manifest.json").exists()

    def manifest(self) -> dict[str, Any]:
        """Return the manifest saved so far."""
        origin = str(self.path / "manifest.json")
        try:
            text = (self.path / "manifest.json").read_text(encoding="utf-8")
            return _manifest(_json(text, origin), str(self.path))
        except (OSError, UnicodeDecodeError) as error:
            raise ArchiveError(f"{origin}: cannot read the manifest ({error})") from None

    def save_manifest(self, manifest: dict[str, Any]) -> None:
        """Save the manifest (atomically: an interruption leaves the previous one)."""
        self.path.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.path / "manifest.json", json.dumps(manifest, indent=1, default=str))

    def file(self, name: str) -> Path:
        """Return the path of a member file, its folder made."""
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def pack(self, archive: Path) -> Path:
        """Write the folder into `archive` (zip, deflated), check its size, and remove the folder."""
        with replaced(archive) as partial, zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
            for member in sorted(self.path.rglob("*")):
                if member.is_file() and not member.name.startswith("."):
                    z.write(member, member.relative_to(self.path).as_posix())
        size = archive.stat().st_size
        if size > MAX_ARCHIVE_BYTES:
            raise ArchiveError(f"{archive}: {size / 2**20:.1f} MiB, above the {MAX_ARCHIVE_BYTES // 2**20} MiB an "
                               "archive may take; the working folder is kept")
        shutil.rmtree(self.path)
        return archive

    def discard(self) -> None:
        """Remove the working folder (a fresh start)."""
        shutil.rmtree(self.path, ignore_errors=True)


def _member(z: zipfile.ZipFile, name: str, path: Path) -> bytes:
    """Return a member's bytes, refusing one that decompresses past MAX_MEMBER_BYTES (its header may lie)."""
    with z.open(name) as member:
        data = member.read(MAX_MEMBER_BYTES + 1)
    if len(data) > MAX_MEMBER_BYTES:
        raise ArchiveError(f"{path}: {name} decompresses to more than {MAX_MEMBER_BYTES // 2**20} MiB; "
                           "no campaign writes one that large")
    return data


def _json(text: str | bytes, origin: str) -> Any:
    """Return JSON data, refusing a key given twice in one object (the last would win without a word)."""
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, value in items:
            if key in found:
                raise ArchiveError(f"{origin}: the key {key!r} appears twice in one object")
            found[key] = value
        return found

    try:
        return json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as error:
        raise ArchiveError(f"{origin}: not valid JSON ({error})") from None
    except ArchiveError:
        raise  # a key given twice, already said (an InputError is a ValueError too)
    except ValueError as error:  # a number of thousands of digits
        raise ArchiveError(f"{origin}: a value perfcast cannot read ({error})") from None
    except RecursionError:
        raise ArchiveError(f"{origin}: nested too deeply to read") from None


# Fields of a kernel's record and what each must be: a number at least 0 (or above 0), a list of such numbers.
# A program's launch may last 0 on a coarse timer, so only a suite kernel's median must be above 0.
_NON_NEGATIVE = ("n", "work_items", "launches", "spread", "range_spread", "wall_s", "median_s", "min_s", "max_s",
                 "total_s", "faults")
_MAPPINGS = ("host", "variables", "environment", "profiling", "timed_run", "scaling", "fanout", "species",
             "vectorisation", "incore")
_PRECISIONS = {precision.value for precision in Precision}


def _number(value: Any) -> bool:
    """Return whether `value` is a finite int or float (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value and abs(value) != float("inf")


def _whole(value: Any) -> bool:
    """Return whether `value` is a positive whole number (a JSON integer, not a boolean)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _manifest(data: Any, origin: str) -> dict[str, Any]:
    """Return a manifest after checking its format, version and the types and ranges of what the scores read."""
    if not isinstance(data, dict) or data.get("format") != ARCHIVE_FORMAT:
        raise ArchiveError(f"{origin}: not a perfcast campaign archive (no 'format: {ARCHIVE_FORMAT}')")
    if data.get("version") != ARCHIVE_VERSION:
        raise ArchiveError(f"{origin}: campaign archive version {data.get('version')!r}; this perfcast reads "
                           f"version {ARCHIVE_VERSION}")
    if "kernels" not in data:
        raise ArchiveError(f"{origin}: the manifest lists no 'kernels'")
    kernels = data["kernels"]
    if not isinstance(kernels, dict):
        raise ArchiveError(f"{origin}: 'kernels' must map each kernel's name to its record")
    for name in _MAPPINGS:
        if name in data and data[name] is not None and not isinstance(data[name], dict):
            raise ArchiveError(f"{origin}: '{name}' must be a mapping")
    fanout = data.get("fanout")
    if fanout is not None and not (isinstance(fanout.get("id"), str)
                                   and all(_whole(fanout.get(k)) for k in ("worker", "workers"))
                                   and fanout["worker"] <= fanout["workers"]):
        raise ArchiveError(f"{origin}: 'fanout' needs an id (text) and worker <= workers (positive whole numbers)")
    species = data.get("species")
    if species is not None and not all(isinstance(k, str) and k and isinstance(v, str) for k, v in species.items()):
        raise ArchiveError(f"{origin}: 'species' must map each kernel's name to its species, as text")
    vectorisation = data.get("vectorisation")
    if vectorisation is not None:
        lanes, threads = vectorisation.get("lanes"), vectorisation.get("threads")
        if not (isinstance(lanes, dict) and all(isinstance(k, str) and _whole(v) for k, v in lanes.items())
                and (threads is None or _whole(threads))):
            raise ArchiveError(f"{origin}: 'vectorisation' needs lanes (kernel -> a positive whole number) and "
                               "threads (a positive whole number)")
    incore = data.get("incore")
    if incore is not None:
        found = incore.get("kernels")
        if not (isinstance(found, dict) and all(
                isinstance(k, str) and isinstance(v, dict) and _number(v.get("cycles_per_item"))
                and v["cycles_per_item"] >= 0 for k, v in found.items())):
            raise ArchiveError(f"{origin}: 'incore' needs kernels (kernel -> a record with cycles_per_item, a number "
                               "at least 0)")
    if not isinstance(data.get("notes", []), list):
        raise ArchiveError(f"{origin}: 'notes' must be a list")
    for kernel, record in kernels.items():
        where = f"{origin}: kernel {kernel!r}"
        if not isinstance(record, dict):
            raise ArchiveError(f"{where}: its record must be a mapping")
        for field in _NON_NEGATIVE:
            if field in record and record[field] is not None and not (_number(record[field]) and record[field] >= 0):
                raise ArchiveError(f"{where}: {field} must be a number at least 0, not {record[field]!r}")
        times = record.get("times_s")
        if times is not None and not (isinstance(times, list) and all(_number(t) and t >= 0 for t in times)):
            raise ArchiveError(f"{where}: times_s must be a list of times in seconds (numbers at least 0)")
        for field in ("global_size", "local_size"):
            sizes = record.get(field)
            if sizes is not None and not (isinstance(sizes, list)
                                          and all(_whole(v) for v in sizes)):
                raise ArchiveError(f"{where}: {field} must be a list of positive integers")
        if "profile" in record and record["profile"] is not None and not isinstance(record["profile"], dict):
            raise ArchiveError(f"{where}: profile must be a mapping")
        if "skipped" in record or record.get("check"):
            if not isinstance(record.get("skipped", ""), str) or not isinstance(record.get("check") or "", str):
                raise ArchiveError(f"{where}: 'skipped' and 'check' must be texts (why it was not scored)")
            continue
        # A record the scores read: a time and its spread; a suite kernel also its size and precision.
        if "median_s" not in record and data.get("kind") != "program":
            continue  # not timed yet (an unfinished run's folder): reported as such
        for field in ("median_s", "spread"):
            if not _number(record.get(field)):
                raise ArchiveError(f"{where}: a timed kernel needs {field} (a number)")
        if data.get("kind") != "program":
            if not record["median_s"] > 0:
                raise ArchiveError(f"{where}: median_s must be a positive number of seconds, not {record['median_s']!r}")
            if not _whole(record.get("n")):
                raise ArchiveError(f"{where}: a suite kernel needs n, its size (a positive integer)")
            if record.get("precision") not in _PRECISIONS:
                raise ArchiveError(f"{where}: precision {record.get('precision')!r} is not one of "
                                   f"{', '.join(sorted(_PRECISIONS))}")
    return data


@dataclass(frozen=True)
class Archive:
    """A finished campaign, as read back: manifest, device file text and profile file text."""

    path: Path
    manifest: dict[str, Any]
    device_yaml: str
    profile_yaml: str | None

    @classmethod
    def read(cls, path: str | Path) -> Archive:
        """Return the campaign archive at `path` (a zip file, or a working folder of an unfinished run)."""
        path = Path(path)
        try:
            if path.is_dir():
                folder = WorkingFolder(path)
                profile_path = folder.path / "profile.yaml"
                return cls(path, folder.manifest(), (folder.path / "device.yaml").read_text(encoding="utf-8"),
                           profile_path.read_text(encoding="utf-8") if profile_path.exists() else None)
            with zipfile.ZipFile(path) as z:
                names = set(z.namelist())
                if "manifest.json" not in names:
                    raise ArchiveError(f"{path}: not a perfcast campaign archive (no manifest.json)")
                manifest = _manifest(_json(_member(z, "manifest.json", path), f"{path}:manifest.json"), str(path))
                if "device.yaml" not in names:
                    raise ArchiveError(f"{path}: the archive has no device.yaml")
                profile = _member(z, "profile.yaml", path).decode() if "profile.yaml" in names else None
                return cls(path, manifest, _member(z, "device.yaml", path).decode(), profile)
        except (OSError, zipfile.BadZipFile, zlib.error, UnicodeDecodeError, EOFError) as error:
            raise ArchiveError(f"{path}: cannot read the campaign archive ({error})") from None
        except (RuntimeError, NotImplementedError) as error:  # an encrypted member, a compression zipfile lacks
            raise ArchiveError(f"{path}: cannot read the campaign archive: {error}") from None


def copy_with(source: zipfile.ZipFile, target: Path, members: dict[str, bytes]) -> None:
    """Write the open archive `source` again at `target`, each member named in `members` with that content (B).

    Every other member is copied as it is, in its order and with its own date; the scripts that give committed
    archives a figure or a metric measured after them (scripts/recount_issued.py, scripts/add_device_figures.py)
    write through it.
    """
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as written:
        for info in source.infolist():
            written.writestr(info, members.get(info.filename, source.read(info)))

