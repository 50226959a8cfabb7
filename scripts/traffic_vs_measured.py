#!/usr/bin/env python3
"""Simulated bytes per level against a GPU campaign's measured ones, per work-item: a Markdown table.

    python scripts/traffic_vs_measured.py ARCHIVE.zip GROUPS SIMULATED.yaml [SIMULATED.yaml ...]

ARCHIVE is a CUDA campaign (its profile.yaml: Nsight Compute's l1tex__t_bytes, lts__t_bytes, dram__bytes at the
run's sizes); each SIMULATED profile is `perfcast profile --tool oclgrind --traffic simulate --device D -- python
-m perfcast.campaign.oclgrind_driver GROUPS LISTING` over the same kernels at the same sizes (LISTING: the
archive's sizes; `name=n@g` for another number of work-groups). GROUPS is the driver's default work-groups.
A kernel in several SIMULATED profiles is taken from the last. `--measured NCU.csv` takes the measured side
from another Nsight Compute raw page of the same kernels at the same sizes (the `l2` step of
scripts/gpu-measure.sh, which also records the L2's requests from the L1) instead of the archive's profile.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from perfcast.campaign.archive import Archive
from perfcast.campaign.traffic_measured import compare_traffic, level_medians
from perfcast.errors import PerfcastError
from perfcast.kernels.campaign import KERNELS
from perfcast.profiles import read_profile
from perfcast.profiles.ncu import read_ncu
from perfcast.profiles.profile import ProfileSet
from perfcast.safe_yaml import load_yaml_text


def main() -> int:
    """Print the comparison table; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archive", type=Path)
    parser.add_argument("groups", type=int)
    parser.add_argument("simulated", type=Path, nargs="+")
    parser.add_argument("--measured", type=Path, help="an Nsight Compute raw page to take the measured bytes from")
    args = parser.parse_args()
    archive = Archive.read(args.archive)
    if args.measured is not None:
        try:
            measured = read_ncu(args.measured.read_text(encoding="utf-8", errors="replace"))
        except (OSError, PerfcastError) as error:
            raise SystemExit(f"--measured {args.measured}: {getattr(error, 'strerror', None) or error}") from None
    elif archive.profile_yaml is None:
        raise SystemExit(f"{args.archive}: the campaign has no profiles (ncu could not read the counters?)")
    else:
        measured = ProfileSet.from_mapping(load_yaml_text(archive.profile_yaml), f"{args.archive}:profile.yaml")
    sizes = {name: int(entry["n"]) for name, entry in archive.manifest["kernels"].items()}
    by_name = {k.name: k for k in KERNELS}
    found = {}  # (kernel, level) -> row: a later profile's kernel replaces an earlier one's
    for path in args.simulated:
        simulated = read_profile(path)
        groups = _groups(simulated.source.command or "", args.groups)
        simulated_items = {k: by_name[k].profile_launch(sizes[k], g).items for k, g in groups.items() if k in sizes}
        measured_items = {k: by_name[k].launch(sizes[k]).items for k in simulated_items}
        found.update({(r.kernel, r.level): r for r in compare_traffic(simulated, measured, simulated_items,
                                                                       measured_items)})
    rows = list(found.values())
    print("| kernel | level | simulated B / work-item | measured B / work-item | simulated / measured |")
    print("|---|---|---|---|---|")
    for row in rows:
        ratio = f"{row.ratio:.2f}" if math.isfinite(row.ratio) else "—"
        print(f"| {row.kernel} | {row.level} | {row.simulated:.4g} | {row.measured:.4g} | {ratio} |")
    print()
    print("Median ratio per level: " + ", ".join(f"{level} {value:.2f}" for level, value in level_medians(rows).items()))
    return 0


def _groups(command: str, default: int) -> dict[str, int]:
    """Return each kernel's work-groups from the driver's command line (`name=n` or `name=n@g`)."""
    listing = next((word for word in command.split() if "=" in word), "")
    found = {}
    for item in listing.split(","):
        name, _, spec = item.partition("=")
        _, _, groups = spec.partition("@")
        if name:
            found[name] = int(groups) if groups.isdigit() else default
    return found


if __name__ == "__main__":
    sys.exit(main())
