"""Simulated bytes per memory level set beside a profiler's measured bytes, per work-item (issue 26's check).

The simulation runs a kernel's OpenCL twin through the target's caches at a reduced NDRange; the profiler
measured the CUDA kernel at its full launch. Both are divided by their own work-items, so that a ratio of 1
means the simulation moves, per work-item, the bytes the hardware moved. Inputs are two profiles and each
kernel's work-items on both sides; outputs are frozen rows a report prints.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from perfcast.profiles.profile import ProfileSet

__all__ = ["LEVELS", "LevelComparison", "compare_traffic", "level_medians"]

LEVELS = (("L1", "l1_bytes"), ("L2", "l2_bytes"), ("DRAM", "dram_bytes"))  # (level, profile metric)


@dataclass(frozen=True)
class LevelComparison:
    """One kernel at one level: simulated and measured bytes per work-item (B)."""

    kernel: str
    level: str
    simulated: float
    measured: float

    @property
    def ratio(self) -> float:
        """Return simulated / measured bytes (NaN where the hardware moved none)."""
        return self.simulated / self.measured if self.measured > 0 else math.nan


def compare_traffic(simulated: ProfileSet, measured: ProfileSet, simulated_items: Mapping[str, int],
                    measured_items: Mapping[str, int]) -> list[LevelComparison]:
    """Return every (kernel, level) both profiles have, in the simulated profile's order (B per work-item).

    A kernel missing from either side, or without its work-items, is left out; a level either profile lacks is
    left out of that kernel.
    """
    rows = []
    measured_names = {k.name for k in measured.kernels}
    for kernel in simulated.kernels:
        if kernel.name not in measured_names or not simulated_items.get(kernel.name) \
                or not measured_items.get(kernel.name):
            continue
        other = measured.kernel(kernel.name)
        for level, metric in LEVELS:
            if metric in kernel.metrics and metric in other.metrics:
                rows.append(LevelComparison(kernel.name, level, kernel.metrics[metric] / simulated_items[kernel.name],
                                            other.metrics[metric] / measured_items[kernel.name]))
    return rows


def level_medians(rows: Sequence[LevelComparison]) -> dict[str, float]:
    """Return each level's median ratio over the kernels with a finite one."""
    found: dict[str, list[float]] = {}
    for row in rows:
        if math.isfinite(row.ratio):
            found.setdefault(row.level, []).append(row.ratio)
    return {level: statistics.median(values) for level, values in found.items()}
