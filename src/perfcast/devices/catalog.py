"""Reading and writing device files, and the catalog shipped with perfcast."""

from __future__ import annotations

import functools
import warnings
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from perfcast.devices.schema import Device
from perfcast.errors import InputError, NotFound
from perfcast.output_files import write_text_atomic
from perfcast.safe_yaml import YamlInputError, load_yaml_file, load_yaml_text
from perfcast.units import Dimension, exact_quantity

__all__ = [
    "DEVICE_SCHEMA",
    "PROFILES_DIR",
    "DeviceFileError",
    "known_devices",
    "local_profiles",
    "catalog",
    "device_to_yaml",
    "get_device",
    "load_device_file",
    "parse_device_text",
    "save_device",
]


class DeviceFileError(InputError):
    """A device file that cannot be read, with every problem named by field."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        listing = "\n".join(f"  {problem}" for problem in problems)
        super().__init__(f"{source}: invalid device description\n{listing}")


def _field_path(location: tuple[Any, ...]) -> str:
    """Return a pydantic error location as a dotted field path ('memory[2].bandwidth')."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        elif str(part).startswith("function-") or part == "[key]":
            continue  # pydantic's internal steps, not fields of the file
        else:
            path += f".{part}" if path else str(part)
    return path or "(top level)"


def parse_device_text(text: str, source: str = "<string>") -> Device:
    """Return the Device described by YAML `text`; errors name `source` and each bad field."""
    try:
        data = load_yaml_text(text, source)
    except YamlInputError as error:
        raise DeviceFileError(source, [str(error).removeprefix(f"{source}: ")]) from None
    return _device_from_data(data, source)


# The device-file format: `schema: N` at the top. Raise DEVICE_SCHEMA with every change a reader must know
# of, say here what changed, and raise OLDEST_DEVICE_SCHEMA when perfcast stops reading an old one.
DEVICE_SCHEMA = 3
OLDEST_DEVICE_SCHEMA = 1
SCHEMA_CHANGES: dict[int, str] = {
    1: "the first versioned format: figures with provenance (spec, measured, estimated), memory levels, clocks, "
       "compute and bandwidth ceilings, host link",
    2: "tdp (thermal design power, W) and prices (list, street or rental, each with reference and date); "
       "a schema-1 file is read unchanged",
    3: "fp32_issue_share (a GPU's share of instruction issues fp32 must fill to reach its fp32 peak); schema-1 and "
       "schema-2 files are read unchanged",
}


def _schema_version(data: dict[str, Any], source: str) -> int:
    """Return the file's `schema` (1 where a file predates the field); refuse newer and retired versions."""
    version = data.pop("schema", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise DeviceFileError(source, [f"schema: expected a positive whole number, got {version!r}"])
    if version > DEVICE_SCHEMA:
        raise DeviceFileError(source, [f"schema: {version} is newer than this perfcast reads "
                                       f"({OLDEST_DEVICE_SCHEMA}..{DEVICE_SCHEMA}): update perfcast"])
    if version < OLDEST_DEVICE_SCHEMA:
        since = "; ".join(f"{n}: {SCHEMA_CHANGES[n]}" for n in range(version + 1, DEVICE_SCHEMA + 1)
                          if n in SCHEMA_CHANGES)
        raise DeviceFileError(source, [f"schema: {version} is no longer read (oldest: {OLDEST_DEVICE_SCHEMA}); "
                                       f"changed since: {since}"])
    return version


def _device_from_data(data: Any, source: str) -> Device:
    """Return the Device of parsed YAML `data`; errors name `source` and each bad field."""
    if not isinstance(data, dict):
        raise DeviceFileError(source, [f"expected a mapping of fields, got {type(data).__name__}"])
    data = dict(data)
    _schema_version(data, source)
    try:
        return Device.from_mapping(data)
    except ValidationError as error:
        problems = []
        for item in error.errors(include_url=False):
            message = item["msg"].removeprefix("Value error, ")
            if item["type"] == "missing":
                message = "required field is missing"
            problems.append(f"{_field_path(item['loc'])}: {message}")
        raise DeviceFileError(source, problems) from None


def load_device_file(path: str | Path) -> Device:
    """Return the Device described by the YAML file at `path`."""
    path = Path(path)
    try:
        data = load_yaml_file(path)
    except YamlInputError as error:
        raise DeviceFileError(str(path), [str(error).removeprefix(f"{path}: ")]) from None
    return _device_from_data(data, str(path))


@functools.cache
def catalog() -> dict[str, Device]:
    """Return the shipped catalog, spec sheets and measured profiles, keyed by device name."""
    root = resources.files("perfcast.devices") / "catalog"
    devices: dict[str, Device] = {}
    folders = [("catalog", root), ("catalog/measured", root / "measured")]
    for label, folder in folders:
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir(), key=lambda item: item.name):
            if not entry.name.endswith(".yaml"):
                continue
            source = f"{label}/{entry.name}"
            device = parse_device_text(entry.read_text(encoding="utf-8"), source=source)
            if device.name in devices:
                raise DeviceFileError(source, [f"name: {device.name!r} is used by another catalog file"])
            devices[device.name] = device
    return devices


PROFILES_DIR = Path(".perfcast") / "profiles"


def local_profiles(folder: Path = PROFILES_DIR) -> dict[str, Device]:
    """Return the measured profiles `perfcast bench` saved under ./.perfcast/profiles, keyed by name."""
    if not folder.is_dir():
        return {}
    found: dict[str, Device] = {}
    for path in sorted(folder.glob("*.yaml")):
        try:
            device = load_device_file(path)
        except DeviceFileError as error:
            # One broken profile must not stop every lookup in the catalog.
            warnings.warn(f"skipping the local profile {error}", ProfileSkipped, stacklevel=2)
            continue
        found[device.name] = device
    return found


class ProfileSkipped(UserWarning):
    """A measured profile under .perfcast/profiles that could not be read and was left out."""


def known_devices() -> dict[str, Device]:
    """Return the catalog and this folder's measured profiles (a local profile may shadow nothing)."""
    devices = dict(catalog())
    for name, device in local_profiles().items():
        devices.setdefault(name, device)
    return devices


def get_device(name_or_path: str) -> Device:
    """Return a device by name (catalog or local measured profile), or the device in a YAML file if given a path."""
    if not isinstance(name_or_path, (str, Path)):
        raise TypeError(f"a device is named by a string or a path, not {type(name_or_path).__name__}")
    name_or_path = str(name_or_path)
    if name_or_path.endswith((".yaml", ".yml")) or Path(name_or_path).is_file():
        return load_device_file(name_or_path)
    devices = known_devices()
    if name_or_path in devices:
        return devices[name_or_path]
    lowered = name_or_path.lower()
    matches = [d for d in devices.values() if lowered in (d.name, d.full_name.lower())]
    if len(matches) == 1:
        return matches[0]
    raise NotFound(
        f"no device {name_or_path!r} in the catalog; known: {', '.join(sorted(devices))} "
        "(or give the path of a device YAML file)"
    )


_DIMENSION_OF_FIELD = {
    "peak": Dimension.COMPUTE,
    "compute": Dimension.COMPUTE,
    "bandwidth": Dimension.BANDWIDTH,
    "bandwidth_ceilings": Dimension.BANDWIDTH,
    "size": Dimension.BYTES,
    "base": Dimension.FREQUENCY,
    "boost": Dimension.FREQUENCY,
    "tdp": Dimension.POWER,
    # Rates of things other than FLOP (the schema's ComputeFigure), written in the compute unit.
    **{name: Dimension.COMPUTE for name in (
        "compute_ceilings", "elementary", "random_loads", "random_loads_by_size", "random_loads_computed",
        "set_walk_loads", "int_divisions", "scalar_instructions", "atomics", "first_touches", "launches",
        "work_groups", "local_loads", "barriers", "barrier_values", "conversions")},
}
# Fields whose keys are names a user or the bench chooses (a ceiling called 'launches' is still a bandwidth), and
# how many levels of such keys lie below each: no key there is looked up as a field.
_NAMED_LEVELS = {"bandwidth_ceilings": 1, "compute_ceilings": 1, "elementary": 1, "random_loads": 1,
                 "random_loads_by_size": 2, "random_loads_computed": 2, "set_walk_loads": 1}


def _plain(node: Any, default: dict[str, Any], dimension: Dimension | None, named: int = 0) -> Any:
    """Return `node` (a dumped model) with figures written as unit strings for YAML.

    `named`: how many levels of keys below `node` are names, not fields (their dimension is `node`'s).
    """
    if isinstance(node, dict) and set(node) == {"value", "provenance"}:
        # A figure without a dimension is a plain number (fp32_issue_share).
        quantity = exact_quantity(node["value"], dimension) if dimension is not None else node["value"]
        provenance = {key: val for key, val in node["provenance"].items() if val is not None}
        if provenance == default:
            return quantity
        return {"value": quantity, **provenance}
    if isinstance(node, dict):
        return {
            key: _plain(val, default, dimension, named - 1) if named > 0
            else _plain(val, default, _DIMENSION_OF_FIELD.get(key, dimension), _NAMED_LEVELS.get(key, 0))
            for key, val in node.items()
            if val is not None and val != {} and val != []
        }
    if isinstance(node, list):
        return [_plain(item, default, dimension) for item in node]
    return node


def device_to_yaml(device: Device) -> str:
    """Return `device` as YAML text that `parse_device_text` reads back to an equal Device."""
    data = device.model_dump(mode="json")
    default = {key: val for key, val in data["provenance"].items() if val is not None}
    plain = {key: _plain(val, default, _DIMENSION_OF_FIELD.get(key), _NAMED_LEVELS.get(key, 0))
             for key, val in data.items()}
    plain["provenance"] = default
    plain = {key: val for key, val in plain.items() if val is not None and val != {} and val != []}
    return yaml.safe_dump({"schema": DEVICE_SCHEMA, **plain}, sort_keys=False, allow_unicode=True, width=100)


def save_device(device: Device, path: str | Path) -> Path:
    """Write `device` as YAML to `path` and return the path."""
    return write_text_atomic(path, device_to_yaml(device))
