"""Reuse distances (sampled LRU stack distances) and their extrapolation from two profiled sizes, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from perfcast.models.caches import CacheHierarchy, CacheLevel
from perfcast.profiles.reuse import (
    COLD,
    REUSE_BINS,
    ReuseTracker,
    beyond,
    extrapolate,
    extrapolate_levels,
    extrapolated_metrics,
    histogram_from_metrics,
    histogram_metrics,
)
from perfcast.profiles.traffic import RECORD, SPACE_GLOBAL, LaunchTrace, simulate_launch, traffic_metrics


def _tracked(sequence, max_lines=1 << 13, scattered=None) -> ReuseTracker:
    tracker = ReuseTracker(max_lines)
    lines = np.asarray(sequence, dtype=np.uint64)
    hashes = tracker.hashed(lines)
    # Fed in pieces, as the simulation sends a stream: the threshold may fall between pieces.
    for start in range(0, len(lines), 97):
        piece = slice(start, start + 97)
        keep = np.flatnonzero(tracker.followed(hashes[piece]))
        tracker.add(lines[piece][keep].tolist(), hashes[piece][keep].tolist(),
                    [bool(x) for x in (scattered[piece][keep] if scattered is not None else np.zeros(len(keep)))])
    return tracker


def _histogram(pairs: dict[float, float], cold: float = 0.0) -> np.ndarray:
    """A histogram from {distance: accesses} (each distance at its bin) and first touches."""
    found = np.zeros(REUSE_BINS + 1)
    for distance, count in pairs.items():
        found[0 if distance < 1 else 1 + int(np.floor(4 * np.log2(distance)))] += count
    found[COLD] = cold
    return found


def test_a_cyclic_walk_is_reused_at_its_length_less_one():
    # 0..99 four times: 100 first touches, then 300 reuses, each after the 99 other lines.
    tracker = _tracked(list(range(100)) * 4)
    assert tracker.accesses[COLD] == 100
    assert tracker.accesses.sum() == 400
    assert beyond(tracker.accesses, 90) == pytest.approx(1.0)  # 99 lies in the bin [2**(26/4), 2**(27/4)) = [90.5, 107.6)
    assert beyond(tracker.accesses, 108) == pytest.approx(0.25)  # the first touches alone
    assert np.flatnonzero(tracker.accesses[:COLD]).tolist() == [1 + int(np.floor(4 * np.log2(99)))]


def test_a_line_touched_again_next_is_at_distance_zero_and_never_missed():
    tracker = _tracked([5, 5, 5, 7, 7])
    assert tracker.accesses[0] == 3 and tracker.accesses[COLD] == 2
    assert beyond(tracker.accesses, 1) == pytest.approx(2 / 5)


def test_a_large_footprint_is_sampled_and_its_distances_scaled_up():
    # 40 000 lines walked 3 times through a tracker that follows 2048: about 1 in 20 lines, each access counting
    # for the lines it stands for, so the totals and the distances come out near the whole walk's.
    tracker = _tracked(list(range(40_000)) * 3, max_lines=2048)
    assert len(tracker.last) <= 2048 and tracker.threshold < 1 << 32
    assert tracker.accesses.sum() == pytest.approx(120_000, rel=0.1)
    assert tracker.accesses[COLD] / tracker.accesses.sum() == pytest.approx(1 / 3, rel=0.1)
    assert beyond(tracker.accesses, 30_000) == pytest.approx(1.0, abs=0.01)
    assert beyond(tracker.accesses, 50_000) == pytest.approx(1 / 3, rel=0.1)


def test_scattered_loads_have_a_histogram_of_their_own():
    sequence = [1, 2, 1, 2]
    tracker = _tracked(sequence, scattered=np.array([False, False, True, False]))
    assert tracker.scattered.sum() == 1 and tracker.scattered[1 + 0] == 1  # distance 1: bin 1 ([1, 2**0.25))


def test_histograms_travel_as_metrics_and_back():
    accesses, scattered = _histogram({0: 3, 100: 2}, cold=1), _histogram({100: 1})
    metrics = histogram_metrics(accesses, scattered)
    assert metrics["reuse_cold"] == 1 and metrics["reuse_0"] == 3 and len(metrics) == 4
    assert np.array_equal(histogram_from_metrics(metrics), accesses)
    assert np.array_equal(histogram_from_metrics(metrics, "reuse_scattered"), scattered)
    assert histogram_from_metrics({"l1_bytes": 1.0}) is None


def test_beyond_by_hand():
    histogram = _histogram({16: 2, 1024: 1}, cold=1)  # 16 and 1024 lines start their bins
    assert beyond(histogram, 8) == 1.0
    assert beyond(histogram, 100) == pytest.approx(0.5)  # 1024 and the first touch
    assert beyond(histogram, 2 ** 20) == pytest.approx(0.25)
    # Inside a bin the mass is spread over the logarithm: half of [16, 16 * 2**0.25) lies beyond 16 * 2**0.125.
    assert beyond(histogram, 16 * 2 ** 0.125) == pytest.approx((1 + 1 + 1) / 4)
    assert beyond(np.zeros(REUSE_BINS + 1), 1) == 0.0


def test_a_growing_distance_grows_on_and_a_constant_one_stays():
    # Half the reuses at 4 lines at both sizes (a record's fields), half at the problem's size (a sweep):
    # 1000 lines at the base size, 250 at a quarter of it. Carried to 16 times the base: 4 and 16 000 lines.
    base = _histogram({4: 50, 1000: 50}, cold=10)
    other = _histogram({4: 50, 250: 50}, cold=10)
    timed, exponents = extrapolate(base, other, ratio=0.25, onward=16.0)
    assert sorted(set(np.round(exponents, 1))) == [0.0, 1.0]
    assert timed.sum() == pytest.approx(base.sum()) and timed[COLD] == 10
    assert beyond(timed, 100) == pytest.approx((50 + 10) / 110)
    assert beyond(timed, 10_000) == pytest.approx((50 + 10) / 110)
    assert beyond(timed, 30_000) == pytest.approx(10 / 110)  # no distance beyond 16 000 x 2**0.25
    # Nothing grows where the two sizes agree.
    same, flat = extrapolate(base, base * 2, ratio=4.0, onward=16.0)
    assert not flat.any() and beyond(same, 100) == pytest.approx(beyond(base, 100))


def test_exponents_are_clipped_and_sizes_checked():
    base, other = _histogram({10: 1}), _histogram({10_000_000: 1})
    _, exponents = extrapolate(base, other, ratio=2.0, onward=2.0)
    assert exponents.max() == 3.0
    _, shrinking = extrapolate(other, base, ratio=2.0, onward=2.0)
    assert shrinking.min() == 0.0  # a distance that falls as the problem grows is taken as staying
    with pytest.raises(ValueError):
        extrapolate(base, other, ratio=1.0, onward=2.0)


def test_levels_lose_the_hits_the_timed_size_misses_one_line_each():
    # L1 holds 100 lines (over its instances), L2 10 000. Base: reuses at 8 and 80 lines, all L1 hits. They grow
    # as the problem (other = a quarter of the base: 2 and 20); timed at 1000 times the base: 8 000 and 80 000.
    base = histogram_metrics(_histogram({8: 500, 80: 500}, cold=100), _histogram({80: 10}))
    other = histogram_metrics(_histogram({2: 500, 20: 500}, cold=100), _histogram({20: 10}))
    found = extrapolate_levels(base, other, ratio=0.25, onward=1000.0, capacities=[("L1", 100), ("L2", 10_000)])
    assert found is not None
    assert found.missed["L1"] == pytest.approx(1000 / 1100)  # every reuse now misses L1 (the cold missed before)
    assert found.missed["L2"] == pytest.approx(500 / 1100, rel=0.02)  # the 80 000-line ones miss L2 as well
    # The scaled profile: its histogram counts the timed launch's 11 000 accesses (scaled by 10).
    scaled = {**{k: v * 10 for k, v in base.items()}, "l1_bytes": 44_000.0, "l2_bytes": 6400.0,
              "dram_bytes": 6400.0, "dram_read": 200.0, "scattered_l1": 100.0, "scattered_l2": 0.0,
              "scattered_dram": 0.0}
    changed, moved = extrapolated_metrics(scaled, found, [("L1", 64), ("L2", 64)])
    assert changed["l2_bytes"] == pytest.approx(6400 + 10_000 * 64)
    assert changed["dram_bytes"] == pytest.approx(6400 + 5000 * 64, rel=0.02)
    assert changed["dram_read"] == pytest.approx(200 + 5000 * 2, rel=0.02)
    assert changed["unextrapolated_l2_bytes"] == 6400.0 and moved["L2"] == (6400.0, changed["l2_bytes"])
    # The scattered loads (at 80 lines, all in L1) now come from DRAM: 80 000 lines lie past L2.
    assert changed["scattered_dram"] == pytest.approx(100.0)
    assert changed.get("scattered_l1", 0.0) == pytest.approx(0.0, abs=1e-6)
    assert "grows with the problem" in found.describe(moved)
    # Loads that walk one L1 set go with the scattered loads they are among: 60 of the 100, all now at DRAM.
    walking = {**scaled, "set_walk_l1": 60.0, "set_walk_l2": 0.0, "set_walk_dram": 0.0}
    carried, _ = extrapolated_metrics(walking, found, [("L1", 64), ("L2", 64)])
    assert carried["set_walk_dram"] == pytest.approx(60.0) and carried["set_walk_l1"] == pytest.approx(0.0, abs=1e-6)
    assert carried["unextrapolated_set_walk_l1"] == 60.0


def test_no_histogram_no_extrapolation():
    assert extrapolate_levels({}, {"reuse_0": 1.0}, 2.0, 2.0, [("L1", 10)]) is None


def test_the_simulation_counts_each_access_at_its_reuse_distance():
    # One work-item walks 256 lines (16 KiB) twice, a 4-byte load per line: 256 first touches, then 256 reuses
    # at 255 lines; the histogram travels in the profile metrics.
    addresses = np.tile(np.arange(256) * 64, 2)
    records = np.zeros(len(addresses), dtype=RECORD)
    records["address"], records["size"], records["space"] = addresses, 4, SPACE_GLOBAL
    records["lane"], records["ordinal"] = 0, np.arange(len(addresses))
    hierarchy = CacheHierarchy("cpu", (CacheLevel("L1", 4096, 64, 4, 1), CacheLevel("L2", 65536, 64, 8, 1)),
                               lanes=1, interleave_warps=False, local_in_cache=True)
    launch = LaunchTrace("walk", (1, 1, 1), (1, 1, 1), (0, 0, 0), {0: records}, groups_run=1, complete=True)
    traffic = simulate_launch(launch, hierarchy, reuse=True)
    histogram = np.asarray(traffic.reuse)
    assert histogram[COLD] == 256 and histogram.sum() == 512
    assert beyond(histogram, 200) == pytest.approx(1.0) and beyond(histogram, 300) == pytest.approx(0.5)
    metrics = traffic_metrics([traffic])
    assert metrics["reuse_cold"] == 256


def test_accesses_to_the_line_just_touched_are_counted_at_distance_zero_in_bulk():
    # A vector of 16 work-items reads 16 words of one line: 16 lines a row, each touched once cold and 15 times
    # again at once; read twice, the second pass finds each line 15 lines back.
    addresses = np.tile(np.arange(256) * 4, 2)
    records = np.zeros(len(addresses), dtype=RECORD)
    records["address"], records["size"], records["space"] = addresses, 4, SPACE_GLOBAL
    records["lane"] = np.arange(len(addresses)) % 16
    records["ordinal"] = np.arange(len(addresses)) // 16
    hierarchy = CacheHierarchy("cpu", (CacheLevel("L1", 4096, 64, 4, 1), CacheLevel("L2", 65536, 64, 8, 1)),
                               lanes=16, interleave_warps=False, local_in_cache=True)
    launch = LaunchTrace("rows", (16, 1, 1), (16, 1, 1), (0, 0, 0), {0: records}, groups_run=1, complete=True)
    histogram = np.asarray(simulate_launch(launch, hierarchy, reuse=True).reuse)
    assert histogram.sum() == 512 and histogram[COLD] == 16
    assert histogram[0] == 2 * 16 * 15
    assert beyond(histogram, 13) == pytest.approx((16 + 16) / 512) and beyond(histogram, 16) == pytest.approx(16 / 512)


def test_reuse_distances_are_counted_only_where_asked_for():
    records = np.zeros(4, dtype=RECORD)
    records["address"], records["size"], records["space"] = [0, 64, 0, 64], 4, SPACE_GLOBAL
    hierarchy = CacheHierarchy("cpu", (CacheLevel("L1", 4096, 64, 4, 1),), lanes=1, interleave_warps=False,
                               local_in_cache=True)
    launch = LaunchTrace("k", (1, 1, 1), (1, 1, 1), (0, 0, 0), {0: records}, groups_run=1, complete=True)
    plain = simulate_launch(launch, hierarchy)
    assert plain.reuse == () and "reuse_cold" not in traffic_metrics([plain])
    assert simulate_launch(launch, hierarchy, reuse=True).reuse[COLD] == 2
