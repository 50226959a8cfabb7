"""Experiment: `perfcast ARGS...` with the traffic simulation's caches scaled by CACHE_FACTOR (capacity only).

    CACHE_FACTOR=0.00390625 python scripts/scaled_cache_experiment.py campaign run -o A.zip --profile-cmd ... -- CMD

Each level keeps its line and at most its ways; its lines are scaled by the factor (at least one line). A
program profiled at a smaller size than it is timed has a working set that fits caches the timed run's does not;
scaling the caches by the ratio of the two working sets asks what the timed run's levels would be. Resuming a
committed program archive without its profiles (raw/profile-*, profile.yaml removed, the manifest's "profiling"
set to null) profiles it again this way and times nothing (docs/validation/programs/README.md, the §3.6 section).
Nothing here changes perfcast: the scaling exists only in this process.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace

import perfcast.devices.cache_view as cache_view
from perfcast.devices.schema import Device
from perfcast.models.caches import CacheHierarchy

_ORIGINAL = cache_view.cache_hierarchy


def _factor() -> float:
    """Return CACHE_FACTOR, in (0, 1]; exit with a message if it is missing or outside."""
    text = os.environ.get("CACHE_FACTOR", "")
    try:
        factor = float(text)
    except ValueError:
        factor = 0.0
    if not 0 < factor <= 1:
        sys.exit(f"CACHE_FACTOR={text!r}: give the caches' scale, a number in (0, 1], e.g. CACHE_FACTOR=0.00390625")
    return factor


def scaled_hierarchy(device: Device) -> CacheHierarchy:
    """Return the device's cache hierarchy with every level's capacity scaled by CACHE_FACTOR."""
    factor = _factor()
    hierarchy = _ORIGINAL(device)
    levels = []
    for level in hierarchy.levels:
        lines = max(1, int(level.size * factor) // level.line)
        ways = min(level.ways, lines)
        sets = max(1, lines // ways)
        levels.append(replace(level, size=sets * ways * level.line, ways=ways))
    print("scaled caches:", [(level.name, level.size, level.ways) for level in levels], file=sys.stderr)
    return replace(hierarchy, levels=tuple(levels))


def main() -> None:
    """Run perfcast with the scaled caches in place of the device's."""
    _factor()  # a bad factor is said before anything runs
    cache_view.cache_hierarchy = scaled_hierarchy  # the campaign imports it from the module when it profiles
    from perfcast.cli import main as perfcast_main

    sys.argv = ["perfcast", *sys.argv[1:]]
    perfcast_main()


if __name__ == "__main__":
    main()
