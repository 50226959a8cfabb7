"""Boat hull equations (spec §2.3–2.5): hand-computed values and properties."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfcast.models.boathull import (
    ELEMENTARY_OPS,
    ClassVariables,
    CpuFigures,
    GpuFigures,
    issue_floor,
    predict_application,
    predict_cpu,
    predict_gpu,
    priced_complexity,
    transfer_time,
    with_conversions,
)

ELEMENTWISE = ClassVariables(w=1e6, m=1, o=16, d=2e6, c=2e6, u=0, floors=("c1",))
SCATTER = ClassVariables(w=1e6, m=1, o=16, d=2e6, c=2e6, u=0, floors=("c1", "m1"))
GPU = GpuFigures(p_compute=1e12, p_coalesced=1e11, p_uncoalesced=1e10, b_bus=1e10)
CPU = CpuFigures(p_compute=1e11, p_memory=2e10, n_threads=4, w_vector_bits=256)


CONVOLUTION = ClassVariables(w=1e6, m=9, o=64, d=2e6, c=2e6, u=0, floors=("c1", "i1"))


class TestIssueFloor:
    """i1: the operator's instructions and one on-chip load per application share the GPU's instruction issue."""

    def test_by_hand(self):
        share_one = GpuFigures(p_compute=1e12, p_coalesced=1e11, p_uncoalesced=1e10, issue_share=1.0)
        p = predict_gpu(CONVOLUTION, share_one, [2])
        # c0 = 1e6·(2·9 + 64)/1e12 = 82 µs; i1 without FMA = 1e6·(9·(2·2 + 2) + 2·64)/1e12 = 182 µs
        assert p.terms["c0"][0] == pytest.approx(82e-6)
        assert p.terms["i1"][0] == pytest.approx(182e-6)
        assert p.upper[0] == pytest.approx(182e-6) and p.upper_term[0] == "i1"
        assert p.lower[0] == pytest.approx(82e-6)  # the lower end assumes loads in spare issues or registers
        # With FMA assumed: 1e6·(9·(2 + 2) + 64)/1e12 = 100 µs, still above c0.
        fma = predict_gpu(CONVOLUTION, share_one, [2], assume=["fma"])
        assert fma.terms["i1"][0] == pytest.approx(100e-6) and fma.upper[0] == pytest.approx(100e-6)

    def test_half_share_leaves_the_range_as_the_spec_has_it(self):
        # Loads issued in the spare half of the issues: i1 = w(m(f + 1) + o)/P stays under c1 = 2w(fm + o)/P
        # wherever f >= 1 - o/m (here m < o: every f).
        half = GpuFigures(p_compute=1e12, p_coalesced=1e11, p_uncoalesced=1e10, issue_share=0.5)
        plain = GpuFigures(p_compute=1e12, p_coalesced=1e11, p_uncoalesced=1e10)
        f = np.array([0.5, 2, 16, 256])
        np.testing.assert_allclose(predict_gpu(CONVOLUTION, half, f).upper, predict_gpu(CONVOLUTION, plain, f).upper)
        assert (predict_gpu(CONVOLUTION, half, f).terms["i1"] <= predict_gpu(CONVOLUTION, half, f).terms["c1"]).all()

    def test_half_share_binds_an_operator_of_one_op_whose_load_doubles_its_instructions(self):
        # A 15x15 window (m = 225 > o = 64): at f = 0.5, i1 = 1e6(225·1.5 + 64)/1e12 = 401.5 µs above
        # c1 = 2e6(112.5 + 64)/1e12 = 353 µs; at f = 2 below it (739 against 1028 µs).
        wide = ClassVariables(w=1e6, m=225, o=64, d=2e6, c=2e6, u=0, floors=("c1", "i1"))
        half = GpuFigures(p_compute=1e12, p_coalesced=1e11, p_uncoalesced=1e10, issue_share=0.5)
        p = predict_gpu(wide, half, [0.5, 2])
        np.testing.assert_allclose(p.terms["i1"], [401.5e-6, 739e-6])
        np.testing.assert_allclose(p.terms["c1"], [353e-6, 1028e-6])
        assert list(p.upper_term) == ["i1", "c1"]

    @given(share=st.floats(0.05, 1.0), f=st.floats(0.0, 1e3))
    def test_grows_with_the_share_and_falls_with_fma(self, share, f):
        f_array = np.array([f])
        with_fma = issue_floor(CONVOLUTION, f_array, 1e12, share, fma=True)
        without = issue_floor(CONVOLUTION, f_array, 1e12, share, fma=False)
        assert with_fma[0] <= without[0]
        assert issue_floor(CONVOLUTION, f_array, 1e12, min(1.0, share * 1.5), fma=True)[0] >= with_fma[0]

    def test_registers_rule_it_out_and_without_a_share_it_is_unpriced(self):
        share_one = GpuFigures(p_compute=1e12, p_coalesced=1e11, p_uncoalesced=1e10, issue_share=1.0)
        ruled = predict_gpu(CONVOLUTION, share_one, [2], assume=["registers"])
        assert ruled.ruled_out == ("i1",) and ruled.upper_term[0] == "c1"
        unknown = predict_gpu(CONVOLUTION, GPU, [2])
        assert "i1" not in unknown.terms and unknown.unpriced == ("i1",) and unknown.floors == ("c1",)
        elementwise = predict_gpu(ELEMENTWISE, share_one, [2])
        assert elementwise.unpriced == () and "i1" not in elementwise.terms  # not a floor of the class: no term

    def test_share_must_be_a_fraction(self):
        for share in (0.0, 1.5, float("nan")):
            with pytest.raises(ValueError, match="issue share"):
                GpuFigures(p_compute=1e12, p_coalesced=1e11, p_uncoalesced=1e10, issue_share=share)


class TestGpu:
    def test_terms_by_hand(self):
        p = predict_gpu(ELEMENTWISE, GPU, [1, 100])
        np.testing.assert_allclose(p.terms["c0"], [17e-6, 116e-6])  # w(f·m + o)/P
        np.testing.assert_allclose(p.terms["m0"], [8e-5, 8e-5])  # s·c/P_coal
        np.testing.assert_allclose(p.terms["c1"], [34e-6, 232e-6])
        np.testing.assert_allclose(p.terms["m1"], [8e-4, 8e-4])  # s·d/P_uncoal
        np.testing.assert_allclose(p.terms["t0"], [8e-4, 8e-4])  # s·d/B_bus

    def test_range_and_binding_terms(self):
        p = predict_gpu(ELEMENTWISE, GPU, [1, 100])
        np.testing.assert_allclose(p.lower, [80e-6, 116e-6])
        np.testing.assert_allclose(p.upper, [80e-6, 232e-6])
        assert list(p.lower_term) == ["m0", "c0"]
        assert list(p.upper_term) == ["m0", "c1"]
        assert p.floors == ("c1",) and p.ruled_out == ()

    def test_floor_that_does_not_apply_is_left_out(self):
        p = predict_gpu(ELEMENTWISE, GPU, [1])
        assert p.upper[0] < p.terms["m1"][0]  # m1 is not a floor of this class

    def test_scatter_floor(self):
        p = predict_gpu(SCATTER, GPU, [1])
        assert p.upper[0] == pytest.approx(8e-4) and p.upper_term[0] == "m1"
        q = predict_gpu(SCATTER, GPU, [1], assume=["coalesced"])
        assert q.upper[0] == pytest.approx(80e-6) and q.ruled_out == ("m1",)

    def test_all_floors_ruled_out_gives_a_point(self):
        p = predict_gpu(SCATTER, GPU, [1, 10, 1000], assume=["fma", "coalesced"])
        np.testing.assert_array_equal(p.lower, p.upper)

    def test_uncoalesced_class_memory_term(self):
        histogram = ClassVariables(w=1e6, m=1, o=64, d=1e6 + 256, c=256, u=1e6, floors=("c1",))
        p = predict_gpu(histogram, GPU, [1])
        assert p.terms["m0"][0] == pytest.approx(4 * 256 / 1e11 + 4 * 1e6 / 1e10)

    def test_transfers_add_t0_to_both_ends(self):
        plain = predict_gpu(ELEMENTWISE, GPU, [1, 100])
        moved = predict_gpu(ELEMENTWISE, GPU, [1, 100], transfers=True)
        np.testing.assert_allclose(moved.lower - plain.lower, 8e-4)
        np.testing.assert_allclose(moved.upper - plain.upper, 8e-4)
        assert moved.transfer == pytest.approx(8e-4)

    def test_transfers_need_a_bus(self):
        with pytest.raises(ValueError, match="B_bus"):
            predict_gpu(ELEMENTWISE, GpuFigures(1e12, 1e11, 1e10), [1], transfers=True)

    def test_element_size_scales_memory_terms(self):
        four = predict_gpu(ELEMENTWISE, GPU, [1])
        eight = predict_gpu(ELEMENTWISE, GPU, [1], element_bytes=8)
        assert eight.terms["m0"][0] == pytest.approx(2 * four.terms["m0"][0])
        assert eight.terms["c0"][0] == pytest.approx(four.terms["c0"][0])


class TestCpu:
    def test_terms_by_hand(self):
        p = predict_cpu(ELEMENTWISE, CPU, [1])  # lanes L = 256 / 32 = 8
        assert p.terms["c0"][0] == pytest.approx(1.7e-4)
        assert p.terms["m0"][0] == pytest.approx(4e-4)
        assert p.terms["c1"][0] == pytest.approx(8 * 1.7e-4)
        assert p.terms["c2"][0] == pytest.approx(4 * 1.7e-4)
        assert p.terms["c3"][0] == pytest.approx(32 * 1.7e-4)
        assert (p.lower[0], p.lower_term[0]) == (pytest.approx(4e-4), "m0")
        assert (p.upper[0], p.upper_term[0]) == (pytest.approx(5.44e-3), "c3")

    def test_assumptions(self):
        vectorised = predict_cpu(ELEMENTWISE, CPU, [1], assume=["vectorised"])
        assert vectorised.floors == ("c2",) and vectorised.upper[0] == pytest.approx(6.8e-4)
        both = predict_cpu(ELEMENTWISE, CPU, [1], assume=["vectorized", "multithreaded"])
        assert both.floors == () and both.upper[0] == both.lower[0]

    def test_the_lanes_the_compiler_used_set_the_no_simd_floors(self):
        """Vectorised at 2 of 8 lanes: c1 = 4 c0 and c3 = 4 N c0; at 8 of 8, c1 = c0; unknown: the spec's."""
        half = predict_cpu(ELEMENTWISE, CPU, [1], vector_lanes=2)
        assert half.terms["c1"][0] == pytest.approx(4 * 1.7e-4)
        assert half.terms["c3"][0] == pytest.approx(16 * 1.7e-4)
        assert half.terms["c2"][0] == pytest.approx(4 * 1.7e-4)  # one thread at full width: unchanged
        full = predict_cpu(ELEMENTWISE, CPU, [1], vector_lanes=8, assume=["multithreaded"])
        assert full.terms["c1"][0] == pytest.approx(1.7e-4) and full.upper[0] == full.lower[0]
        assert predict_cpu(ELEMENTWISE, CPU, [1], vector_lanes=1).terms["c1"][0] == pytest.approx(8 * 1.7e-4)
        wider = predict_cpu(ELEMENTWISE, CPU, [1], vector_lanes=16)  # wider than the figures say: no floor below c0
        assert wider.terms["c1"][0] == pytest.approx(1.7e-4)
        with pytest.raises(ValueError, match="at least 1"):
            predict_cpu(ELEMENTWISE, CPU, [1], vector_lanes=0)

    def test_gpu_assumptions_are_reported_not_applied(self):
        p = predict_cpu(ELEMENTWISE, CPU, [1], assume=["fma", "vectorised"])
        assert p.ignored_assumptions == ("fma",)

    def test_unknown_assumption(self):
        with pytest.raises(ValueError, match="unknown assumption"):
            predict_cpu(ELEMENTWISE, CPU, [1], assume=["magic"])


class TestInputs:
    @pytest.mark.parametrize("f", [[-1.0], [np.nan], [np.inf], [[1.0, 2.0]]])
    def test_bad_complexity(self, f):
        with pytest.raises(ValueError, match="f must"):
            predict_gpu(ELEMENTWISE, GPU, f)

    def test_bad_figures(self):
        with pytest.raises(ValueError, match="P_uncoalesced"):
            GpuFigures(1e12, 1e11, 0.0)
        with pytest.raises(ValueError, match="N_threads"):
            CpuFigures(1e11, 1e10, 0, 256)

    def test_bad_class_variables(self):
        with pytest.raises(ValueError, match="class variable c"):
            ClassVariables(1, 1, 1, 1, -1, 0, ())
        with pytest.raises(ValueError, match="unknown GPU floor"):
            ClassVariables(1, 1, 1, 1, 1, 0, ("c9",))


class TestApplication:
    def test_sum_of_ranges_plus_transfers(self):
        a = predict_gpu(ELEMENTWISE, GPU, [100])  # 116 µs – 232 µs
        b = predict_gpu(SCATTER, GPU, [1])  # 80 µs – 800 µs
        moves = [("in", transfer_time(2e6, 4, 1e10))]  # 800 µs
        total = predict_application([("a", a), ("b", b)], moves)
        assert total.lower == pytest.approx(116e-6 + 80e-6 + 8e-4)
        assert total.upper == pytest.approx(232e-6 + 8e-4 + 8e-4)

    def test_one_complexity_per_primitive(self):
        with pytest.raises(ValueError, match="one complexity"):
            predict_application([("a", predict_gpu(ELEMENTWISE, GPU, [1, 2]))])


cls_strategy = st.builds(
    ClassVariables,
    w=st.floats(1, 1e8), m=st.floats(1, 1e3), o=st.sampled_from([1.0, 16.0, 64.0]),
    d=st.floats(1, 1e9), c=st.floats(0, 1e9), u=st.floats(0, 1e9),
    floors=st.sampled_from([("c1",), ("c1", "m1")]),
)
f_strategy = st.lists(st.floats(0, 1e4), min_size=1, max_size=8)


@given(cls_strategy, f_strategy)
def test_lower_never_above_upper(cls, f):
    for p in (predict_gpu(cls, GPU, f), predict_cpu(cls, CPU, f)):
        assert (p.lower <= p.upper).all()
        assert (p.lower > 0).all() and np.isfinite(p.upper).all()


@given(cls_strategy)
def test_time_grows_with_complexity(cls):
    f = np.geomspace(1, 1e4, 30)
    for p in (predict_gpu(cls, GPU, f), predict_cpu(cls, CPU, f)):
        assert (np.diff(p.lower) >= 0).all() and (np.diff(p.upper) >= 0).all()


@given(cls_strategy, st.floats(1.0, 100.0))
def test_faster_processor_is_never_slower(cls, factor):
    fast = GpuFigures(GPU.p_compute * factor, GPU.p_coalesced * factor, GPU.p_uncoalesced * factor, GPU.b_bus)
    slow_p, fast_p = predict_gpu(cls, GPU, [10]), predict_gpu(cls, fast, [10])
    assert fast_p.lower[0] <= slow_p.lower[0] * (1 + 1e-12)
    assert fast_p.upper[0] <= slow_p.upper[0] * (1 + 1e-12)


@given(cls_strategy, st.floats(1, 1e4))
def test_compute_bound_limit(cls, f):
    """For large f the compute term dominates and grows linearly in f."""
    p = predict_gpu(cls, GPU, [f * 1e6, f * 2e6], assume=["fma", "coalesced"])
    if p.lower_term[0] == "c0":
        assert p.lower[1] / p.lower[0] == pytest.approx((2e6 * f * cls.m + cls.o) / (1e6 * f * cls.m + cls.o))


def test_elementary_calls_priced_by_hand():
    assert ELEMENTARY_OPS == 8
    assert priced_complexity(35, 3, 915) == 35 + 2745  # 3 calls at 923 ops where f counted 8
    assert priced_complexity(35, 0, 915) == 35
    assert priced_complexity(10, 3, -3) == 1  # a device whose calls cost 5 ops
    with pytest.raises(ValueError, match="f = 10 counts fewer ops than its 3 elementary calls at 8 ops each"):
        priced_complexity(10, 3, -7)


def test_conversions_priced_by_hand():
    assert with_conversions(2, 1, 8) == 10  # a byte summed in fp32 on GA100: 16 conversions a clock, 64 FMA lanes
    assert with_conversions(2, 0, 16) == 2
    assert with_conversions(2, 1.5, 2) == 5
    for conversions, cost in ((-1, 8), (float("nan"), 8), (1, 0), (1, float("inf"))):
        with pytest.raises(ValueError):
            with_conversions(2, conversions, cost)


@given(st.floats(0, 1e3), st.floats(0, 16), st.floats(0.5, 64))
def test_conversions_only_add_time(f, conversions, cost):
    """More conversions, or dearer ones, never make a range faster."""
    base = predict_gpu(ELEMENTWISE, GPU, [with_conversions(f, conversions, cost)])
    more = predict_gpu(ELEMENTWISE, GPU, [with_conversions(f, conversions + 1, cost)])
    dearer = predict_gpu(ELEMENTWISE, GPU, [with_conversions(f, conversions, cost * 2)])
    assert more.lower[0] >= base.lower[0] and more.upper[0] >= base.upper[0]
    assert dearer.lower[0] >= base.lower[0] and dearer.upper[0] >= base.upper[0]
