"""Give campaign archives' device profiles the named figures another device profile has and they lack.

    python scripts/add_device_figures.py SOURCE.yaml OUT_DIR ARCHIVE.zip ... [--figures NAME ...]

A campaign scores its kernels with the device profile it was run against, which the archive keeps
(`device.yaml`). Where the bench learned to measure a figure after that profile was taken (§3.9's
`barrier_values`, 2026-11-29), a bench run on the same machine right after the campaign can lend it: each
archive is written again as OUT_DIR/PARENT/NAME.zip (PARENT: the archive's folder), unchanged but for its
device profile, which takes each named figure SOURCE has and it lacks, and says so in its notes. Figures it
already has are kept. By default the figures are §3.9's three: local_loads, barriers, barrier_values. A named
ceiling is FIELD:NAME, e.g. `"bandwidth_ceilings:guarded copy"` (§3.6's guarded copy, 2026-11-29). A lent figure
meets the archive's own from another run: §3.6 reads a masked load's cost as the difference of the archive's
guarded triad and the lent copy, so the pair is only as good as the two runs are alike. An amended profile that
perfcast would refuse (a lent ceiling above the archive's DRAM figure) is refused here, before it is written.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import yaml

from perfcast.campaign.archive import copy_with

FIGURES = ("local_loads", "barriers", "barrier_values")


def amend(path: Path, out: Path, source: Path, figures: tuple[str, ...] = FIGURES) -> list[str]:
    """Write `path` again under `out` with `source`'s `figures` where its device lacks them; return those taken."""
    lent = yaml.safe_load(source.read_text()) or {}
    target = out / path.parent.name / path.name
    if target.resolve() == path.resolve():
        raise OSError(f"{target} is the archive itself: give another OUT_DIR")
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path) as archive:
        device = yaml.safe_load(archive.read("device.yaml"))
        taken = [name for name in figures if _get(device, name) is None and _get(lent, name) is not None]
        for name in taken:
            field, _, key = name.partition(":")
            if key:
                device[field] = {**(device.get(field) or {}), key: lent[field][key]}
            else:
                device[field] = lent[field]
        if taken:
            from perfcast.devices.catalog import parse_device_text
            from perfcast.errors import PerfcastError

            try:
                parse_device_text(yaml.safe_dump(device), f"{path}'s amended device.yaml")
            except (PerfcastError, ValueError) as error:
                raise ValueError(f"{path}: its device profile with {', '.join(taken)} is not one perfcast reads: "
                                 f"{error}") from error
            device["notes"] = (f"{device.get('notes') or ''} {', '.join(taken)} from {source.name}, a bench run on "
                               "the same machine after the campaign (scripts/add_device_figures.py).").strip()
        copy_with(archive, target, {"device.yaml": yaml.safe_dump(device, sort_keys=False, allow_unicode=True).encode()})
    return taken


def _get(device: dict, name: str) -> object:
    """Return a device profile's figure `name` (FIELD or FIELD:KEY of a named ceiling), None where it has none."""
    field, _, key = name.partition(":")
    value = device.get(field)
    return (value or {}).get(key) if key else value


def main() -> None:
    """Amend each archive named."""
    arguments = sys.argv[1:]
    figures = FIGURES
    if "--figures" in arguments:
        at = arguments.index("--figures")
        figures, arguments = tuple(arguments[at + 1:]), arguments[:at]
    if len(arguments) < 3 or not figures or any(argument.startswith("-") for argument in arguments):
        sys.exit(__doc__)
    from perfcast.devices.schema import Device

    unknown = [name for name in figures if name.partition(":")[0] not in Device.model_fields]
    if unknown:
        sys.exit(f"--figures: {', '.join(unknown)} not a device profile's field")
    source, out = Path(arguments[0]), Path(arguments[1])
    if not source.is_file():
        sys.exit(f"{source} is not a file")
    for name in arguments[2:]:
        try:
            taken = amend(Path(name), out, source, figures)
        except (OSError, zipfile.BadZipFile, KeyError) as error:  # KeyError: a zip without device.yaml
            sys.exit(f"{name}: not a campaign archive perfcast wrote ({error})")
        except ValueError as error:
            sys.exit(str(error))
        print(f"{name}: {', '.join(taken) or 'nothing lacking'}")


if __name__ == "__main__":
    main()
