"""Cross-GPU projection (spec §4): every intermediate against values computed by hand, edge cases, properties."""

import pytest

from perfcast.models.projection import GpuMaxima, ProjectedKernel, kernel_ceilings, project, target_maxima

SOURCE = GpuMaxima(fma=10e12, add_mul=5e12, l1=20e12, l2=5e12, dram=1e12, shared=20e12)
TARGET = GpuMaxima(fma=20e12, add_mul=10e12, l1=40e12, l2=8e12, dram=2e12, shared=40e12)


def kernel(**changes):
    values = dict(n_fma=600, n_add=200, n_mul=200, active_threads=24, hits={"L1": 4000, "L2": 2000, "DRAM": 1000},
                  shared_bytes=1000, shared_efficiency=0.5, flop=1600, time=1e-9)
    values.update(changes)
    return ProjectedKernel(**values)


def test_ceilings_by_hand():
    c = kernel_ceilings(kernel(), SOURCE)
    assert c.perf_mix == pytest.approx(10e12 * 0.6 + 5e12 * 0.4)
    assert c.perf_ceil == pytest.approx(0.75 * 8e12)  # 24 of 32 threads active
    assert c.times == pytest.approx({"L1": 2e-10, "L2": 4e-10, "DRAM": 1e-9, "shared": 1e-10})
    assert c.bandwidth_ceilings == pytest.approx({"L1": 8000 / 1.7e-9, "L2": 3000 / 1.4e-9, "DRAM": 1e12})
    assert c.intensities == pytest.approx({"L1": 0.2, "L2": 1600 / 3000, "DRAM": 1.6})
    assert c.rooflines == pytest.approx({"L1": 8000 / 1.7e-9 * 0.2, "L2": 3000 / 1.4e-9 * 1600 / 3000, "DRAM": 1.6e12})


def test_projection_by_hand():
    p = project(kernel(), SOURCE, TARGET)
    assert p.measured_performance == pytest.approx(1.6e12)
    assert p.per_level == pytest.approx({"L1": 1.7 * 8000 / 9e-10 * 0.2, "L2": 1.4 * 4e12 * 1600 / 3000,
                                         "DRAM": 3.2e12})
    assert (p.lower, p.upper) == pytest.approx((1.4 * 4e12 * 1600 / 3000, 3.2e12))
    assert p.middle == pytest.approx((p.lower + p.upper) / 2)
    assert p.time == pytest.approx(1600 / p.middle)
    assert p.time_range == pytest.approx((1600 / 3.2e12, 1600 / p.lower))
    assert not p.left_out


def test_compute_bound_kernel_scales_with_the_compute_ceilings():
    heavy = kernel(flop=1e9, time=1e9 / 5e12)  # intensity far above every ridge
    p = project(heavy, SOURCE, TARGET)
    assert p.lower == pytest.approx(p.upper) == pytest.approx(5e12 * 12e12 / 6e12)


def test_untouched_levels_are_left_out_and_said():
    only_l1 = kernel(hits={"L1": 4000, "L2": 0, "DRAM": 0}, shared_bytes=0)
    c = kernel_ceilings(only_l1, SOURCE)
    assert set(c.rooflines) == {"L1"}
    assert c.left_out == {"L2": "no bytes traverse this level", "DRAM": "no bytes traverse this level"}
    p = project(only_l1, SOURCE, TARGET)
    assert set(p.per_level) == {"L1"} and p.lower == p.upper
    with pytest.raises(ValueError, match="moves no bytes"):
        kernel_ceilings(kernel(hits={}, shared_bytes=0), SOURCE)


def test_a_level_the_profile_did_not_count_is_left_out_not_taken_as_zero():
    """Oclgrind counts L1 and DRAM bytes, not L2: the L2 roofline is left out, not drawn from DRAM's bytes."""
    counted = kernel(hits={"L1": 4000, "DRAM": 1000})
    c = kernel_ceilings(counted, SOURCE)
    assert set(c.rooflines) == {"L1", "DRAM"}
    assert c.left_out == {"L2": "the profile has no byte count for this level"}
    assert c.bandwidth_ceilings["L1"] == pytest.approx(6000 / (2e-10 + 1e-10 + 1e-9))


def test_an_unknown_bandwidth_is_refused_only_where_bytes_hit():
    no_l2 = GpuMaxima(fma=10e12, add_mul=5e12, l1=20e12, l2=None, dram=1e12, shared=None)
    with pytest.raises(ValueError, match="bytes through L2, whose bandwidth the device does not give"):
        kernel_ceilings(kernel(), no_l2)
    fine = kernel_ceilings(kernel(hits={"L1": 4000, "DRAM": 1000}, shared_bytes=0), no_l2)
    assert set(fine.rooflines) == {"L1", "DRAM"}


@pytest.mark.parametrize("factor", [0.5, 2.0, 3.7])
def test_scaling_every_bandwidth_of_a_memory_bound_target_scales_its_projection(factor):
    streaming = kernel(flop=100, n_fma=0, n_add=100, n_mul=0, time=1e-9)  # intensity far below every ridge
    base = project(streaming, SOURCE, TARGET)
    assert all(r < c.perf_ceil for c in (base.target,) for r in c.rooflines.values())  # memory bound everywhere
    scaled = GpuMaxima(TARGET.fma, TARGET.add_mul, TARGET.l1 * factor, TARGET.l2 * factor, TARGET.dram * factor,
                       TARGET.shared * factor)
    faster = project(streaming, SOURCE, scaled)
    for level in base.per_level:
        assert faster.per_level[level] == pytest.approx(base.per_level[level] * factor)
    assert faster.time == pytest.approx(base.time / factor)


def test_an_unused_level_changes_nothing():
    """No shared memory: the shared bandwidth of either device is irrelevant, even unknown."""
    plain = kernel(shared_bytes=0)
    base = project(plain, SOURCE, TARGET)
    for shared in (1e9, 1e15, None):
        other = GpuMaxima(TARGET.fma, TARGET.add_mul, TARGET.l1, TARGET.l2, TARGET.dram, shared)
        assert project(plain, SOURCE, other).per_level == pytest.approx(base.per_level)


def test_flop_ratio_from_the_sass_comparison():
    p = project(kernel(), SOURCE, TARGET, flop_ratio=1.5)
    assert p.flop_target == 2400
    assert p.target.intensities["DRAM"] == pytest.approx(2.4)
    assert p.time == pytest.approx(2400 / p.middle)


def test_target_maxima_keep_the_source_efficiency():
    peaks_s = GpuMaxima(20e12, 10e12, 40e12, 10e12, 2e12, 40e12)
    peaks_t = GpuMaxima(40e12, 20e12, 80e12, 16e12, 3e12, 80e12)
    estimated = target_maxima(SOURCE, peaks_s, peaks_t)
    assert estimated.fma == pytest.approx(20e12) and estimated.dram == pytest.approx(1.5e12)
    unknown = target_maxima(SOURCE, peaks_s, GpuMaxima(40e12, 20e12, 80e12, None, 3e12, 80e12))
    assert unknown.l2 is None and unknown.l1 == pytest.approx(40e12)


@pytest.mark.parametrize(("change", "message"), [
    ({"n_fma": 0, "n_add": 0, "n_mul": 0}, "scales arithmetic"),
    ({"active_threads": 33}, "active threads"),
    ({"shared_efficiency": 0}, "shared_efficiency"),
    ({"hits": {"L3": 5}}, "unknown memory level"),
    ({"time": 0}, "time must be positive"),
    ({"n_add": float("nan")}, "n_add"),
])
def test_bad_input(change, message):
    with pytest.raises(ValueError, match=message):
        kernel(**change)


def test_faster_target_never_projects_slower():
    """Every maximum of the target at least the source's: every level's projection at least the measurement."""
    p = project(kernel(), SOURCE, TARGET)
    assert all(value >= p.measured_performance for value in p.per_level.values())
    same = project(kernel(), SOURCE, SOURCE)
    assert same.lower == pytest.approx(same.upper) == pytest.approx(same.measured_performance)


def test_a_wider_wavefront_on_the_target_lowers_its_compute_ceiling():
    heavy = kernel(flop=1e9, time=1e9 / 5e12, active_threads=32)
    same = project(heavy, SOURCE, TARGET)
    # 32 work-items per group fill a 32-wide warp but half a 64-wide wavefront
    wide = project(heavy, SOURCE, TARGET, on_target_kernel=kernel(flop=1e9, time=1e9 / 5e12, active_threads=32,
                                                                  warp_size=64))
    assert wide.target.perf_ceil == pytest.approx(same.target.perf_ceil / 2)
    assert wide.upper == pytest.approx(same.upper / 2)


def test_the_kernel_on_the_target_must_keep_the_profiles_counts():
    with pytest.raises(ValueError, match="hits"):
        project(kernel(), SOURCE, TARGET, on_target_kernel=kernel(hits={"L1": 1.0, "L2": 1.0, "DRAM": 1.0}))


# ---- perfcast's extension: the FP share of issued instructions against the GPU's issue share (docs/models.md)

DUAL = GpuMaxima(fma=10e12, add_mul=5e12, l1=20e12, l2=5e12, dram=1e12, shared=20e12, fp_issue_share=1.0)
SINGLE = GpuMaxima(fma=10e12, add_mul=5e12, l1=20e12, l2=5e12, dram=1e12, shared=20e12, fp_issue_share=0.5)
HEAVY = dict(flop=1e9, time=1e9 / 5e12, active_threads=32)  # compute bound everywhere


def test_issue_factor_by_hand():
    from perfcast.models.projection import issue_factor

    assert issue_factor(0.5, 1.0) == 0.5  # half the issues FP on a GPU that needs them all: half its peak
    assert issue_factor(0.5, 0.5) == 1.0
    assert issue_factor(0.8, 0.5) == 1.0  # never above the peak
    assert issue_factor(0.25, 0.5) == 0.5
    assert issue_factor(None, 1.0) == issue_factor(0.3, None) == 1.0  # unknown: §4 as written


def test_issue_shares_taken_for_the_point_and_spanned():
    from perfcast.models.projection import issue_shares

    assert issue_shares(0.6, 1.0, 0.5) == (0.6, (0.6,))  # measured: the one share
    point, span = issue_shares(None, 1.0, 0.5)
    assert point == pytest.approx(0.5**0.5) and span == (0.5, 1.0)
    assert issue_shares(None, 1.0, 1.0) == (None, (None,))  # alike: the shares cancel, §4 as written
    assert issue_shares(None, None, 0.5) == (None, (None,))
    assert issue_shares(0.3, 1.0, None) == (None, (None,))  # one side's share unknown: neither ceiling moves


def test_a_measured_share_moves_nothing_when_one_gpu_has_no_share():
    plain = GpuMaxima(fma=10e12, add_mul=5e12, l1=20e12, l2=5e12, dram=1e12, shared=20e12)
    measured = project(kernel(**HEAVY, fp_issue_share=0.3), DUAL, plain)
    assert measured.middle == pytest.approx(project(kernel(**HEAVY), SOURCE, SOURCE).middle)
    assert measured.fp_issue_share is None


def test_unknown_share_from_a_dual_issue_gpu_to_a_single_issue_one():
    """Same peaks: §4 projects the same performance; phi unknown puts the point at sqrt 2 faster, within [1x, 2x]."""
    p = project(kernel(**HEAVY), DUAL, SINGLE)
    assert p.fp_issue_share == pytest.approx(0.5**0.5) and not p.fp_issue_measured
    assert p.source.issue_factor == pytest.approx(0.5**0.5) and p.target.issue_factor == 1.0
    assert p.middle == pytest.approx(5e12 * 2**0.5)
    assert (p.lower, p.upper) == pytest.approx((5e12, 10e12))  # phi = 1 and phi = 0.5
    assert p.time_range == pytest.approx((1e9 / 10e12, 1e9 / 5e12))
    back = project(kernel(**HEAVY), SINGLE, DUAL)
    assert back.middle == pytest.approx(5e12 / 2**0.5)
    assert (back.lower, back.upper) == pytest.approx((2.5e12, 5e12))


def test_a_measured_share_gives_one_point():
    p = project(kernel(**HEAVY, fp_issue_share=0.6), DUAL, SINGLE)
    assert p.fp_issue_measured and p.fp_issue_share == 0.6
    assert p.lower == pytest.approx(p.upper) == pytest.approx(5e12 / 0.6)
    assert project(kernel(**HEAVY, fp_issue_share=1.0), DUAL, SINGLE).middle == pytest.approx(5e12)


def test_the_share_only_moves_the_compute_ceiling():
    streaming = kernel(flop=10, time=1e-9)  # far below every ridge: bandwidth bound on both
    assert project(streaming, DUAL, SINGLE).per_level == pytest.approx(project(streaming, SOURCE, SOURCE).per_level)
    assert project(kernel(**HEAVY), DUAL, DUAL).middle == pytest.approx(5e12)


def test_a_bad_share_is_refused():
    with pytest.raises(ValueError, match="fp_issue_share"):
        GpuMaxima(fma=1.0, add_mul=1.0, l1=None, l2=None, dram=1.0, shared=None, fp_issue_share=1.5)
    with pytest.raises(ValueError, match="FP share"):
        kernel(fp_issue_share=0.0)
    with pytest.raises(ValueError, match="fp_issue_share"):
        project(kernel(**HEAVY), DUAL, SINGLE, on_target_kernel=kernel(**HEAVY, fp_issue_share=0.5))


def test_a_core_bound_time_caps_every_level_by_hand():
    """Perf_core = FLOP / core time: 1600 FLOP in 2 ns is 0.8 TFLOP/s, under every level's roofline here."""
    c = kernel_ceilings(kernel(), SOURCE, core_time=2e-9)
    assert c.perf_core == pytest.approx(0.8e12)
    assert c.rooflines == pytest.approx({"L1": 0.8e12, "L2": 0.8e12, "DRAM": 0.8e12})
    loose = kernel_ceilings(kernel(), SOURCE, core_time=1e-12)  # 1.6e15 FLOP/s: caps nothing
    assert loose.rooflines == pytest.approx(kernel_ceilings(kernel(), SOURCE).rooflines)
    assert kernel_ceilings(kernel(), SOURCE).perf_core is None


def test_a_kernel_core_bound_on_both_devices_scales_by_its_core_times():
    """Bound by its core time on both sides, the projected time is the source's times the ratio of core times."""
    slow = kernel(time=4e-9)
    p = project(slow, SOURCE, TARGET, core_times=(3e-9, 5e-9))
    assert p.lower == pytest.approx(p.upper)
    assert p.time == pytest.approx(4e-9 * 5e-9 / 3e-9)
    assert p.source.perf_core == pytest.approx(1600 / 3e-9) and p.target.perf_core == pytest.approx(1600 / 5e-9)


def test_a_core_time_only_binds_where_it_is_below_the_bandwidth_rooflines():
    """A loose core ceiling on both sides is §4 as written; one that binds on the target alone slows only it."""
    assert project(kernel(), SOURCE, TARGET, core_times=(1e-15, 1e-15)).per_level == pytest.approx(
        project(kernel(), SOURCE, TARGET).per_level)
    bound_there = project(kernel(), SOURCE, TARGET, core_times=(1e-15, 4e-9))
    assert bound_there.per_level == pytest.approx({level: 1.6e12 * 400e9 / roof for level, roof in
                                                   kernel_ceilings(kernel(), SOURCE).rooflines.items()})


def test_a_core_time_must_be_positive():
    with pytest.raises(ValueError, match="core-bound time"):
        kernel_ceilings(kernel(), SOURCE, core_time=0.0)
