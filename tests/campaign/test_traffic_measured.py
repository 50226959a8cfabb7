"""Simulated against measured bytes per work-item: the division, what is left out, the medians."""

import math

import pytest

from perfcast.campaign.traffic_measured import compare_traffic, level_medians
from perfcast.profiles.profile import KernelProfile, ProfileSet, ProfileSource


def _profiles(**kernels: dict[str, float]) -> ProfileSet:
    return ProfileSet(ProfileSource("test"), tuple(KernelProfile(name, 1, metrics) for name, metrics in kernels.items()))


def test_bytes_are_compared_per_work_item_on_each_side():
    simulated = _profiles(triad={"l1_bytes": 12.0 * 1024, "l2_bytes": 12.0 * 1024, "dram_bytes": 12.0 * 1024})
    # the hardware: 1 M work-items, 12 B each at L1, 18 B at L2, 11.3 B from DRAM
    measured = _profiles(triad={"l1_bytes": 12.0 * 2**20, "l2_bytes": 18.0 * 2**20, "dram_bytes": 11.3 * 2**20})
    rows = compare_traffic(simulated, measured, {"triad": 1024}, {"triad": 2**20})
    assert [(r.level, r.simulated) for r in rows] == [("L1", 12.0), ("L2", 12.0), ("DRAM", 12.0)]
    assert [r.ratio for r in rows] == pytest.approx([1.0, 12 / 18, 12 / 11.3])


def test_kernels_or_levels_one_side_lacks_are_left_out_and_zero_measured_bytes_give_no_ratio():
    simulated = _profiles(a={"l1_bytes": 4.0, "dram_bytes": 4.0}, b={"l1_bytes": 1.0}, c={"l1_bytes": 1.0})
    measured = _profiles(a={"l1_bytes": 8.0, "l2_bytes": 2.0, "dram_bytes": 0.0}, b={"l1_bytes": 1.0})
    rows = compare_traffic(simulated, measured, {"a": 1, "b": 1, "c": 1}, {"a": 1})  # b: no work-items given
    assert [(r.kernel, r.level) for r in rows] == [("a", "L1"), ("a", "DRAM")]
    assert math.isnan(rows[1].ratio)
    assert level_medians(rows) == {"L1": 0.5}
