"""Tests of campaign/profile_size.py: which caches a smaller profiled problem fits in and the timed one outgrows."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfcast.campaign.profile_size import PROFILED, TIMED, level_hits, outgrown_caches, profile_outgrows
from perfcast.models.caches import CacheLevel

KIB, MIB = 1024, 1024 * 1024
# The developers' VM as the campaign simulates it: 48 KiB L1 and 2 MiB L2 per core (2 cores), a shared L3.
LEVELS = (CacheLevel("L1", 48 * KIB, 64, 12, 2), CacheLevel("L2", 2 * MIB, 64, 16, 2),
          CacheLevel("L3", 480 * MIB, 64, 16, 1))


def test_levels_the_profiled_launch_fits_and_the_timed_one_outgrows_by_hand():
    # A launch of 36 KiB at the profiled size, 256 times the work-items timed (9 MiB); L1 and L2 served it 12 MiB
    # and 1 MiB of hits (scaled).
    found = outgrown_caches(36 * KIB, 256 * 36 * KIB, LEVELS, {"L1": 12.0 * MIB, "L2": 1.0 * MIB, "L3": 5.0 * MIB})
    assert found is not None
    assert found.levels == (("L1", 96.0 * KIB), ("L2", 4.0 * MIB))  # capacity: every core's copy
    assert found.hits == 13.0 * MIB  # L3 holds both sizes: its hits stay
    text = found.describe()
    assert "36 KiB" in text and "L1 (96 KiB), L2 (4" in text and "13 MiB of hits" in text and "outgrows L2 too" in text


def test_a_stream_or_the_first_level_alone_is_not_named():
    # Fewer hits in the outgrown levels than the timed launch touches: a stream from DRAM, nothing to lose.
    assert outgrown_caches(36 * KIB, 9 * MIB, LEVELS, {"L1": 8.0 * MIB, "L2": 0.5 * MIB}) is None
    assert outgrown_caches(36 * KIB, 9 * MIB, LEVELS, {"L1": 8.0 * MIB, "L2": 1.0 * MIB}) is not None
    # Past L1 only: neighbours' re-reads, however many.
    assert outgrown_caches(36 * KIB, 200 * KIB, LEVELS, {"L1": 100.0 * MIB}) is None


@pytest.mark.parametrize(("profiled", "timed"), [
    (36 * KIB, 90 * KIB),  # both fit in L1
    (200 * KIB, 3 * MIB),  # both past L1, both in L2
    (5 * MIB, 400 * MIB),  # both in L3 only
    (36 * KIB, 36 * KIB),  # not grown
    (36 * KIB, 20 * KIB),  # shrunk
    (0.0, 9 * MIB),  # nothing touched at the profiled size: nothing to compare
])
def test_no_level_is_named_where_both_sizes_sit_alike(profiled, timed):
    assert outgrown_caches(profiled, timed, LEVELS, {"L1": 1e12, "L2": 1e12, "L3": 1e12}) is None


def test_a_level_exactly_full_at_the_profiled_size_still_holds_it():
    found = outgrown_caches(4 * MIB, 5 * MIB, LEVELS, {"L2": 6.0 * MIB})
    assert found is not None and [name for name, _ in found.levels] == ["L2"]
    assert outgrown_caches(4 * MIB + 1, 400 * MIB, LEVELS, {"L2": 1e12}) is None  # past L2 already, L3 holds both


def test_hits_per_level_by_hand():
    # Global requests 30 MB (local accesses, which a CPU keeps in L1, are not in them), 10 MB reach L2,
    # 4 MB L3, 3 MB DRAM: L1, L2 and L3 served 20, 6 and 1 MB of hits.
    metrics = {"global_load_bytes": 24e6, "global_store_bytes": 6e6, "l1_bytes": 90e6, "l2_bytes": 10e6,
               "l3_bytes": 4e6, "dram_bytes": 3e6}
    assert level_hits(metrics, LEVELS) == {"L1": 20e6, "L2": 6e6, "L3": 1e6}
    assert level_hits({**metrics, "dram_bytes": 5e6}, LEVELS)["L3"] == 0.0  # write-backs past the reads: no hits


def test_a_profile_without_both_sizes_says_nothing():
    bytes_ = {"global_load_bytes": 20.0 * MIB, "global_store_bytes": 7.0 * MIB, "l2_bytes": 0.3 * MIB,
              "l3_bytes": 0.2 * MIB, "dram_bytes": 0.2 * MIB}  # L1 serves 26.7 MiB of hits
    assert profile_outgrows(bytes_, LEVELS) is None
    assert profile_outgrows({**bytes_, PROFILED: 36.0 * KIB}, LEVELS) is None
    found = profile_outgrows({**bytes_, PROFILED: 36.0 * KIB, TIMED: 9.0 * MIB}, LEVELS)
    assert found is not None and found.hits == pytest.approx(26.8 * MIB)
    assert profile_outgrows({PROFILED: 36.0 * KIB, TIMED: 9.0 * MIB}, LEVELS) is None  # no bytes counted


def test_a_scaled_group_carries_its_touched_bytes_in_proportion_to_its_work_items():
    from perfcast.campaign.launch_log import Launch
    from perfcast.campaign.program import ProfiledRun, ProgramOptions, _group_profiles
    from perfcast.profiles.profile import KernelProfile

    def run(items: int) -> ProfiledRun:
        launch = Launch(0, 1, "q", 1, "k", (items,), (64,), None, 0, 0, 1000, 1100)
        metrics = {"ldst": 2.0 * items ** 1.5, "touched_bytes": 8.0 * items}
        return ProfiledRun(("p",), ((launch, KernelProfile("k", 1, metrics, work_items=items)),))

    manifest = {"kernels": {"k": {"kernel": "k", "global_size": [4096], "local_size": [64], "work_items": 4096}}}
    options = ProgramOptions(("app",), Path("a.zip"), profile_commands=(("p", "1"), ("p", "2")),
                             scaling={"k": 1.5})
    profiles, _ = _group_profiles(options, manifest, [run(512), run(1024)])
    metrics = profiles[0].metrics
    assert metrics["ldst"] == pytest.approx(2.0 * 4096 ** 1.5)  # the counts grow as declared
    assert metrics[PROFILED] == 8.0 * 1024 and metrics[TIMED] == pytest.approx(8.0 * 4096)  # the data as the items


def test_a_scored_group_says_which_caches_its_profile_outgrew():
    from perfcast.campaign.score import score_profiled
    from perfcast.devices.catalog import get_device
    from perfcast.profiles.profile import KernelProfile

    device = get_device("a100-80gb")  # L1 192 KiB x 108 SMs (21.23 MB), L2 40 MiB
    items = 2**20
    metrics = {"fma_fp32": 2.0 * items, "fp32": 2.0 * items, "fma_fp64": 0.0, "fp64": 0.0, "int": 1.0 * items,
               "ldst": 2.0 * items, "inst_warp": 6.0 * items / 32, "l1_bytes": 8.0 * items,
               "dram_bytes": 8.0 * items, "dram_read": items / 8, "dram_write": items / 8}
    record = {"median_s": 1e-4, "spread": 0.01, "global_size": [items], "work_items": items}

    def details(extra: dict[str, float]) -> dict[str, str]:
        profile = KernelProfile("k", 1, {**metrics, **extra}, work_items=items)
        return {model: p.detail for model, p in score_profiled("k", record, device, profile).predictions.items()}

    requested = {"global_load_bytes": 150.0 * MIB, "global_store_bytes": 50.0 * MIB}  # hits in L1: 200 MiB - l1
    outgrew = details({**requested, PROFILED: 1.0 * MIB, TIMED: 64.0 * MIB})
    for model in ("roofline", "quantitative"):
        assert "fits in L1 (21.23 MB), L2 (40 MiB)" in outgrew[model], outgrew[model]
    assert "smaller problem" not in details({**requested, PROFILED: 1.0 * MIB, TIMED: 2.0 * MIB})["quantitative"]
    assert "smaller problem" not in details({})["quantitative"]


def test_a_programs_profiling_note_lists_the_groups_whose_profile_outgrew(tmp_path):
    import shutil

    from perfcast.campaign.archive import WorkingFolder
    from perfcast.campaign.program import _outgrown_note
    from perfcast.profiles.profile import KernelProfile

    folder = WorkingFolder(tmp_path)
    assert _outgrown_note(folder, []) is None  # no device.yaml: nothing to compare with
    # The Xeon VM's measured profile: L1 48 KiB x 2, L2 2 MiB x 2, L3 shared.
    shutil.copy(Path(__file__).parents[2] / "docs/validation/programs/xeon-avx512-sameday/device.yaml",
                tmp_path / "device.yaml")
    rereads = {"global_load_bytes": 27.0 * MIB}  # 27 MiB of hits in L1, none past it
    profiles = [KernelProfile("Fan2", 1, {**rereads, PROFILED: 36.0 * KIB, TIMED: 9.0 * MIB}),
                KernelProfile("Fan1", 1, {**rereads, PROFILED: 6.0 * KIB, TIMED: 20.0 * KIB}),  # L1 holds both
                KernelProfile("exact", 1, {})]  # profiled at its own NDRange
    note = _outgrown_note(folder, profiles)
    assert note is not None and "Fan2 (L1, L2)" in note and "Fan1" not in note and "--profile-cmd" in note
    assert _outgrown_note(folder, profiles[1:]) is None
