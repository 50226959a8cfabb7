"""Quantitative roofline (spec §3): every formula against values computed by hand, edge cases, properties."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfcast.models.quantitative import (
    DeviceRates,
    KernelCounts,
    atomic_cost,
    barrier_cost,
    core_time,
    cpu_ldst_rate,
    division_cost,
    first_touch_cost,
    incore_floor,
    issue_floor,
    kernel_parameters,
    latency_floor,
    launch_cost,
    predict,
    predict_counts,
    random_rate_at,
    vector_call_cost,
)

# T_SP 1 TFLOP/s, T_DP 0.5, T_int 0.4 TOP/s, T_add 0.5 Tinst/s, T_ldst 0.25 Tinst/s, B_mem 100 GB/s.
RATES = DeviceRates(t_sp=1000e9, t_dp=500e9, t_int=400e9, t_add=500e9, t_ldst=250e9, b_mem=100e9)


def counts(**given: float) -> KernelCounts:
    values = dict(fma32=0, fma64=0, ldst=0, inst_warp=100, fp32=0, fp64=0, int=0, dram_read=0, dram_write=0)
    values.update(given)
    return KernelCounts(**values)


FP32 = counts(fp32=1000, fma32=400, int=300, ldst=200, inst_warp=100, dram_read=50, dram_write=25)


class TestKernelParameters:
    def test_fp32_by_hand(self):
        k = kernel_parameters(FP32)
        assert k.k_type == "fp32"
        assert k.w_comp == 1400  # M_fp32 + M_fma32
        assert k.w_traf == 32 * 75
        assert k.e_mix == pytest.approx(1400 / 2000)
        assert k.i_total == 3200
        assert (k.d_ops, k.d_ldst, k.d_other) == pytest.approx((1000 / 3200, 200 / 3200, 1 - 1200 / 3200))

    def test_fp64_wins_over_fp32(self):
        k = kernel_parameters(counts(fp64=800, fma64=800, fp32=100, inst_warp=50, dram_read=100))
        assert k.k_type == "fp64"
        assert k.w_comp == 1600
        assert k.e_mix == 1.0  # every fp64 instruction an FMA
        assert k.d_ops == pytest.approx(0.5)

    def test_with_the_targets_rates_the_precision_whose_work_takes_longer_is_the_kernels(self):
        # SHOC's sgemmNN on PoCL: 3.4e7 fp32 ops beside 3.3e4 fp64 ones (8 a work-item of scaling).
        few = counts(fp32=16_800, fma32=16_800, fp64=33, inst_warp=1_400)
        assert kernel_parameters(few).k_type == "fp64"  # the spec's rule: any fp64 instruction
        k = kernel_parameters(few, RATES)
        assert (k.k_type, k.w_comp, k.e_mix) == ("fp32", 33_600, 1.0)
        # fp64 work at half the rate: fp64 as soon as its time at T_DP reaches fp32's at T_SP (a tie is fp64).
        assert kernel_parameters(counts(fp32=1000, fp64=500, inst_warp=100), RATES).k_type == "fp64"
        assert kernel_parameters(counts(fp32=1000, fp64=499, inst_warp=100), RATES).k_type == "fp32"
        # A device without double precision: the spec's rule, and predict says why it cannot.
        no_dp = DeviceRates(t_sp=1000e9, t_dp=None, t_int=400e9, t_add=500e9, t_ldst=250e9, b_mem=100e9)
        assert kernel_parameters(few, no_dp).k_type == "fp64"
        # One precision alone is unaffected by the rates.
        assert kernel_parameters(FP32, RATES) == kernel_parameters(FP32)

    def test_integer_kernel(self):
        k = kernel_parameters(counts(int=640, ldst=320, inst_warp=40))
        assert (k.k_type, k.w_comp, k.e_mix) == ("int", 640, 0.5)
        assert (k.d_ops, k.d_ldst, k.d_other) == pytest.approx((0.5, 0.25, 0.25))

    def test_no_fma_gives_half_mix_efficiency(self):
        assert kernel_parameters(counts(fp32=100, inst_warp=10)).e_mix == 0.5


class TestPrediction:
    def test_memory_bound_fp32_by_hand(self):
        p = predict_counts(FP32, RATES)
        assert (p.t_op, p.w_op, p.w_ldst, p.w_other) == pytest.approx((1000e9, 1.0, 2.0, 1.0))
        assert (p.c_op, p.c_ldst, p.c_other) == pytest.approx((0.3125, 0.125, 0.625))
        assert p.e_instr == pytest.approx(0.3125 / 1.0625)
        assert p.t_op_adjusted == pytest.approx(0.7 * 0.3125 / 1.0625 * 1000e9)
        assert p.o_krn == pytest.approx(1400 / 2400)
        assert p.o_dev == pytest.approx(p.t_op_adjusted / 100e9)
        assert p.bound == "memory"
        assert p.performance == pytest.approx(1400 / 2400 * 100e9)
        assert p.time == pytest.approx(2400 / 100e9)  # memory bound: traffic over bandwidth

    def test_compute_bound_fp32_by_hand(self):
        p = predict_counts(counts(fp32=1000, fma32=400, int=300, ldst=200, inst_warp=100, dram_read=1), RATES)
        assert p.o_krn == pytest.approx(1400 / 32)
        assert p.bound == "compute"
        assert p.performance == pytest.approx(205.88235294e9)
        assert p.time == pytest.approx(1400 / 205.88235294e9)

    def test_fp64_by_hand(self):
        p = predict_counts(counts(fp64=800, fma64=800, fp32=100, inst_warp=50, dram_read=100), RATES)
        assert p.t_op == 500e9
        assert p.w_op == 2.0  # T_SP / T_DP
        assert p.e_instr == pytest.approx(2 / 3)
        assert p.t_op_adjusted == pytest.approx(500e9 * 2 / 3)
        assert p.bound == "memory"
        assert p.time == pytest.approx(3200 / 100e9)

    def test_integer_without_traffic_is_compute_bound_and_stated(self):
        p = predict_counts(counts(int=640, ldst=320, inst_warp=40), RATES)
        assert p.w_op == 2.5 and p.e_instr == pytest.approx(0.625)
        assert p.t_op_adjusted == pytest.approx(125e9)
        assert (p.bound, p.reason, p.o_krn) == ("compute", "no DRAM traffic", math.inf)
        assert p.time == pytest.approx(640 / 125e9)
        assert "compute bound (no DRAM traffic)" in p.explain()

    def test_no_compute_is_memory_bound_and_stated(self):
        p = predict_counts(counts(ldst=100, inst_warp=10, dram_read=10, dram_write=10), RATES)
        assert (p.bound, p.reason, p.o_krn, p.performance) == ("memory", "no compute instructions", 0.0, 0.0)
        assert p.time == pytest.approx(640 / 100e9)

    def test_explanation_names_the_deciding_numbers(self):
        text = predict_counts(FP32, RATES).explain()
        assert text.startswith("memory bound (O_krn <= O_dev): O_krn 0.583 vs O_dev 2.06")
        assert "E_mix 0.70, E_instr 0.29" in text


class TestErrors:
    def test_negative_d_other_names_the_counts(self):
        with pytest.raises(ValueError, match=r"M_fp32 \(4000\) \+ M_ldst \(0\) exceed 32 x M_inst \(3200"):
            kernel_parameters(counts(fp32=4000, inst_warp=100))

    def test_no_instructions(self):
        with pytest.raises(ValueError, match="M_inst"):
            kernel_parameters(counts(fp32=10, inst_warp=0))

    def test_nothing_to_predict(self):
        with pytest.raises(ValueError, match="nothing to predict"):
            kernel_parameters(counts(ldst=10))

    @pytest.mark.parametrize("field", ["fp32", "ldst", "dram_read", "inst_warp"])
    @pytest.mark.parametrize("bad", [-1, math.nan, math.inf])
    def test_bad_counts(self, field, bad):
        with pytest.raises(ValueError):
            counts(**{field: bad})

    def test_more_fma_than_fp_instructions(self):
        with pytest.raises(ValueError, match="M_fma32"):
            counts(fp32=10, fma32=11)

    def test_fp64_kernel_on_a_device_without_fp64(self):
        rates = DeviceRates(1e12, None, 1e12, 1e12, 1e12, 1e11)
        with pytest.raises(ValueError, match="without double precision"):
            predict_counts(counts(fp64=10, inst_warp=1, dram_read=1), rates)
        assert predict_counts(FP32, rates).time > 0  # fp32 still predicted

    def test_rates_must_be_positive(self):
        with pytest.raises(ValueError, match="b_mem"):
            DeviceRates(1e12, 1e12, 1e12, 1e12, 1e12, 0)


counts_strategy = st.one_of(st.just(0.0), st.floats(min_value=1e-3, max_value=1e12))


@given(fp=counts_strategy, fma=st.floats(0, 1), ldst=counts_strategy, traffic=counts_strategy,
       bandwidth=st.floats(1e9, 1e13))
def test_never_nan_and_never_faster_than_either_roof(fp, fma, ldst, traffic, bandwidth):
    inst = (fp + ldst) / 32 + 1
    kernel = counts(fp32=fp, fma32=fp * fma, ldst=ldst, inst_warp=inst, dram_read=traffic)
    rates = DeviceRates(1e12, 5e11, 4e11, 5e11, 2.5e11, bandwidth)
    if fp == 0 and traffic == 0:
        with pytest.raises(ValueError):
            predict_counts(kernel, rates)
        return
    p = predict_counts(kernel, rates)
    assert math.isfinite(p.time) and p.time >= 0
    k = p.kernel
    # The time is at least the traffic over the bandwidth and at least the work over the adjusted roof.
    assert p.time >= k.w_traf / bandwidth * (1 - 1e-9)
    if k.w_comp:
        assert p.time >= k.w_comp / p.t_op_adjusted * (1 - 1e-9)
    assert 0 <= p.e_instr <= 1 and 0.5 <= k.e_mix <= 1


def test_more_bandwidth_never_slows_a_kernel():
    times = [predict(kernel_parameters(FP32), DeviceRates(1e12, 5e11, 4e11, 5e11, 2.5e11, b)).time
             for b in (1e9, 1e10, 1e11, 1e12, 1e13)]
    assert times == sorted(times, reverse=True)
    assert times[-1] == times[-2]  # past the ridge, compute bound: bandwidth no longer matters


class TestLatencyFloor:
    """perfcast's CPU addition (docs/models.md §3.1): scattered loads priced at the device's random-load rates."""

    RANDOM = {"L2": 1e9, "L3": 0.5e9, "DRAM": 0.1e9}  # load/s

    def test_floor_by_hand(self):
        floor = latency_floor({"L1": 1e9, "L2": 2e6, "L3": 1e6, "DRAM": 1e5}, self.RANDOM)
        # L1 hits cost what any load does (§3 prices them): left out.
        assert floor.per_level == pytest.approx({"L2": 2e-3, "L3": 2e-3, "DRAM": 1e-3})
        assert floor.time == pytest.approx(5e-3)
        assert floor.unpriced == () and "2e+06 at L2" in floor.explain()

    def test_a_level_without_a_rate_is_left_out_and_said(self):
        floor = latency_floor({"L2": 1e6, "L3": 1e6}, {"L2": 1e9})
        assert floor.time == pytest.approx(1e-3) and floor.unpriced == ("L3",)
        assert "L3: no measured rate" in floor.explain()
        assert latency_floor({"L3": 0.0}, {}).unpriced == ()  # nothing served there: nothing missing

    def test_loads_in_one_l1_set_by_hand(self):
        # 3e6 scattered loads at L3, 2e6 of them in the L1 set of the one before: 1e6 / 0.5e9 + 2e6 / 0.2e9.
        floor = latency_floor({"L3": 3e6, "DRAM": 1e5}, self.RANDOM, in_set={"L3": 2e6, "DRAM": 1e5},
                              set_rates={"L3": 0.2e9})
        assert floor.per_level == pytest.approx({"L3": 2e-3 + 1e-2, "DRAM": 1e-3})  # DRAM has no set rate: random
        assert floor.in_set == {"L3": 2e6} and floor.set_rates == {"L3": 0.2e9}
        assert "2e+06 in one L1 set / 2e+08 load/s" in floor.explain()
        # A count above the level's loads (extrapolated apart) is capped at them; no set rate: the random rates.
        capped = latency_floor({"L3": 1e6}, self.RANDOM, in_set={"L3": 5e6}, set_rates={"L3": 0.2e9})
        assert capped.time == pytest.approx(1e6 / 0.2e9)
        plain = latency_floor({"L3": 3e6}, self.RANDOM, in_set={"L3": 2e6})
        assert plain.time == pytest.approx(3e6 / 0.5e9) and plain.in_set == {}

    @given(st.floats(0, 1e9), st.floats(0, 1), st.floats(1e6, 1e10))
    def test_a_slower_set_walk_never_speeds_a_kernel_up(self, loads, share, set_rate):
        walk = {"L3": loads * share}
        base = latency_floor({"L3": loads}, self.RANDOM, in_set=walk, set_rates={"L3": set_rate})
        slower = latency_floor({"L3": loads}, self.RANDOM, in_set=walk, set_rates={"L3": set_rate / 2})
        assert slower.time >= base.time
        # At the random rate itself, the walk costs what random loads do.
        same = latency_floor({"L3": loads}, self.RANDOM, in_set=walk, set_rates={"L3": self.RANDOM["L3"]})
        assert same.time == pytest.approx(loads / self.RANDOM["L3"])

    def test_a_levels_rate_at_the_size_its_loads_gather_from_by_hand(self):
        curve = {2**21: 0.8e9, 2**22: 0.8e9, 2**23: 0.6e9, 2**24: 0.4e9}  # B -> load/s
        assert random_rate_at(curve, 2**20) == 0.8e9  # below the smallest set: the level's own rate
        assert random_rate_at(curve, 2**26) == 0.4e9  # beyond the largest: its rate, the slowest measured
        assert random_rate_at(curve, 2**23) == pytest.approx(0.6e9)
        # Half-way in log size between 8 and 16 MiB: half-way in log rate, sqrt(0.6 x 0.4) G/s.
        assert random_rate_at(curve, 2**23.5) == pytest.approx((0.6e9 * 0.4e9) ** 0.5)
        # 6.4e7 loads at L3 gathering from 16 MiB: 0.16 s, where the level's own rate gave 0.08 s.
        floor = latency_floor({"L3": 6.4e7}, {"L3": 0.8e9}, curves={"L3": curve}, spans={"L3": 2**24})
        assert floor.time == pytest.approx(0.16) and floor.spans == {"L3": 2**24}
        assert "L3 (gathering from 16 MiB) / 4e+08 load/s" in floor.explain()
        # Without a span, or without a curve for the level, the level's own rate.
        assert latency_floor({"L3": 6.4e7}, {"L3": 0.8e9}, curves={"L3": curve}).time == pytest.approx(0.08)
        assert latency_floor({"L3": 6.4e7}, {"L3": 0.8e9}, spans={"L3": 2**24}).time == pytest.approx(0.08)
        with pytest.raises(ValueError, match="no measured random-load rates"):
            random_rate_at({}, 1.0)

    @given(st.floats(1e3, 1e9), st.floats(1e3, 1e9))
    def test_a_larger_buffer_is_never_gathered_from_faster_where_the_curve_falls(self, a, b):
        curve = {2**21: 0.9e9, 2**22: 0.8e9, 2**23: 0.6e9, 2**24: 0.4e9}
        small, large = sorted((a * 64, b * 64))
        assert random_rate_at(curve, large) <= random_rate_at(curve, small)

    def test_bad_counts_and_rates_are_refused(self):
        with pytest.raises(ValueError, match="in one L1 set at L2"):
            latency_floor({"L2": 1.0}, self.RANDOM, in_set={"L2": -1.0})
        with pytest.raises(ValueError, match="random-load rate of L2"):
            latency_floor({"L2": 1.0}, self.RANDOM, in_set={"L2": 1.0}, set_rates={"L2": 0.0})
        with pytest.raises(ValueError, match="scattered loads at L2"):
            latency_floor({"L2": -1.0}, self.RANDOM)
        with pytest.raises(ValueError, match="random-load rate of L3"):
            latency_floor({"L3": 1.0}, {"L3": 0.0})

    def test_the_floor_decides_only_where_it_is_above_section_3(self):
        kernel = kernel_parameters(FP32)
        plain = predict(kernel, RATES)
        # Far below: §3's prediction stands, with the floor said beside it.
        low = predict(kernel, RATES, latency_floor({"DRAM": 1.0}, self.RANDOM))
        assert (low.time, low.bound) == (plain.time, plain.bound)
        assert "latency floor 1e-08 s" in low.explain()
        # Above: the floor is the time, bound "latency", the §3 bound in the reason.
        high = predict(kernel, RATES, latency_floor({"DRAM": 1e3}, self.RANDOM))
        assert high.time == pytest.approx(1e-5) and high.bound == "latency"
        assert high.performance == pytest.approx(kernel.w_comp / 1e-5)
        assert f"§3's {plain.bound}-bound" in high.reason

    @given(st.floats(0, 1e9), st.floats(1e3, 1e12))
    def test_more_scattered_loads_never_speed_a_kernel_up(self, loads, rate):
        kernel = kernel_parameters(FP32)
        fewer = predict(kernel, RATES, latency_floor({"L3": loads}, {"L3": rate}))
        more = predict(kernel, RATES, latency_floor({"L3": 2 * loads + 1}, {"L3": rate}))
        assert more.time >= fewer.time >= predict(kernel, RATES).time


class TestDivisionCost:
    """perfcast's addition (docs/models.md §3.2): integer divisions at the device's measured rate, added."""

    def test_cost_by_hand(self):
        cost = division_cost(3e6, 1e9)  # 3 M divisions at 1 G div/s: 3 ms
        assert cost.time == pytest.approx(3e-3)
        assert cost.explain() == "3e+06 integer divisions / 1e+09 div/s"

    def test_bad_counts_and_rates_are_refused(self):
        with pytest.raises(ValueError, match="integer divisions"):
            division_cost(-1.0, 1e9)
        with pytest.raises(ValueError, match="integer division rate"):
            division_cost(1.0, 0.0)

    def test_the_divisions_add_to_the_time_and_bind_where_they_are_the_larger_part(self):
        kernel = kernel_parameters(FP32)
        plain = predict(kernel, RATES)
        small = predict(kernel, RATES, divisions=division_cost(1.0, 1e9))  # 1 ns: added, the bound stands
        assert small.time == pytest.approx(plain.time + 1e-9) and small.bound == plain.bound
        assert "integer divisions add 1e-09 s" in small.reason and "division cost 1e-09 s" in small.explain()
        large = predict(kernel, RATES, divisions=division_cost(1e4, 1e9))  # 10 us
        assert large.time == pytest.approx(plain.time + 1e-5) and large.bound == "division"
        assert large.performance == pytest.approx(kernel.w_comp / large.time)
        assert f"added to the {plain.bound}-bound" in large.reason
        assert predict(kernel, RATES, divisions=division_cost(0.0, 1e9)).time == plain.time

    def test_the_divisions_add_to_the_latency_floor_where_it_decides(self):
        kernel = kernel_parameters(FP32)
        latency = latency_floor({"DRAM": 1e3}, TestLatencyFloor.RANDOM)  # 10 us, above §3's time
        both = predict(kernel, RATES, latency, division_cost(2e4, 1e9))  # + 20 us
        assert both.time == pytest.approx(3e-5) and both.bound == "division"
        assert "added to the latency-bound" in both.reason
        less = predict(kernel, RATES, latency, division_cost(5e3, 1e9))  # + 5 us: latency stays the bound
        assert less.time == pytest.approx(1.5e-5) and less.bound == "latency"

    @given(st.floats(0, 1e9), st.floats(1e3, 1e12))
    def test_more_divisions_never_speed_a_kernel_up(self, divisions, rate):
        kernel = kernel_parameters(FP32)
        fewer = predict(kernel, RATES, divisions=division_cost(divisions, rate))
        more = predict(kernel, RATES, divisions=division_cost(2 * divisions + 1, rate))
        assert more.time >= fewer.time >= predict(kernel, RATES).time


class TestIssueFloor:
    """perfcast's addition (docs/models.md §3.3): a scalar kernel's instructions at the device's scalar rate."""

    def test_floor_by_hand(self):
        floor = issue_floor(4e6, 2e10)  # 4 M instructions at 20 G inst/s: 0.2 ms
        assert floor.time == pytest.approx(2e-4)
        assert floor.explain() == "4e+06 instructions left scalar / 2e+10 inst/s"

    def test_bad_counts_and_rates_are_refused(self):
        with pytest.raises(ValueError, match="scalar instructions"):
            issue_floor(-1.0, 1e10)
        with pytest.raises(ValueError, match="scalar instruction rate"):
            issue_floor(1.0, 0.0)

    def test_the_floor_decides_only_above_the_rest(self):
        kernel = kernel_parameters(FP32)
        plain = predict(kernel, RATES)
        low = predict(kernel, RATES, issue=issue_floor(1.0, 1e10))  # 0.1 ns: §3 stands, the floor said
        assert (low.time, low.bound) == (plain.time, plain.bound)
        assert "issue floor 1e-10 s" in low.explain()
        high = predict(kernel, RATES, issue=issue_floor(1e5, 1e10))  # 10 us
        assert high.time == pytest.approx(1e-5) and high.bound == "issue"
        assert high.performance == pytest.approx(kernel.w_comp / 1e-5)
        assert f"above the {plain.bound}-bound" in high.reason

    def test_weighed_against_the_divisions_sum_not_added_to_it(self):
        # A scalar core issues the other instructions while its divider works: max(rest + divisions, floor).
        kernel = kernel_parameters(FP32)
        plain = predict(kernel, RATES)
        divided = predict(kernel, RATES, divisions=division_cost(2e4, 1e9), issue=issue_floor(1e5, 1e10))
        assert divided.time == pytest.approx(plain.time + 2e-5) and divided.bound == "division"
        floored = predict(kernel, RATES, divisions=division_cost(5e3, 1e9), issue=issue_floor(1e5, 1e10))
        assert floored.time == pytest.approx(1e-5) and floored.bound == "issue"

    def test_library_calls_take_their_own_time_beside_the_instructions(self):
        floor = issue_floor(4e6, 2e10, calls=1e3, calls_time=1e-4)  # 0.2 ms + 0.1 ms
        assert floor.time == pytest.approx(3e-4)
        assert floor.explain().endswith("+ 1e+03 elementary calls, 0.0001 s at the device's rate")
        with pytest.raises(ValueError, match="elementary calls"):
            issue_floor(1.0, 1e10, calls=-1.0)

    def test_atomics_add_to_the_floor_where_it_decides(self):
        # A locked instruction is a fence: nothing overlaps it, the issue floor's instructions neither.
        kernel = kernel_parameters(FP32)
        both = predict(kernel, RATES, issue=issue_floor(1e5, 1e10), atomics=atomic_cost(5e3, 1e9))  # 10 + 5 us
        assert both.time == pytest.approx(1.5e-5) and both.bound == "issue"
        assert "atomics add 5e-06 s" in both.reason

    @given(st.floats(0, 1e9), st.floats(1e6, 1e12))
    def test_more_instructions_never_speed_a_kernel_up(self, instructions, rate):
        kernel = kernel_parameters(FP32)
        fewer = predict(kernel, RATES, issue=issue_floor(instructions, rate))
        more = predict(kernel, RATES, issue=issue_floor(2 * instructions + 1, rate))
        assert more.time >= fewer.time >= predict(kernel, RATES).time


class TestInCoreFloor:
    """perfcast's addition (docs/models.md §3.5): a scalar kernel's inner loops, their cycles over the cores' clock."""

    def test_floor_by_hand(self):
        floor = incore_floor(6e9, 2, 3e9)  # 6 G cycles on 2 cores at 3 GHz: 1 s
        assert floor.time == pytest.approx(1.0)
        assert floor.explain() == "6e+09 cycles of inner loops / (2 cores x 3 GHz)"
        laid = incore_floor(6e9, 2, 3e9, laid_out=True)  # the work-items' code laid out: the same time, said so
        assert laid.time == floor.time
        assert laid.explain() == "6e+09 cycles of the work-items' code laid out, inner loops included / (2 cores x 3 GHz)"

    def test_bad_figures_are_refused(self):
        for cycles, cores, clock, word in ((-1.0, 2, 3e9, "in-core cycles"), (1.0, 0, 3e9, "cores"),
                                           (1.0, 2, 0.0, "clock")):
            with pytest.raises(ValueError, match=word):
                incore_floor(cycles, cores, clock)

    def test_it_decides_above_the_issue_floor_and_the_atomics_come_after(self):
        kernel = kernel_parameters(FP32)
        plain = predict(kernel, RATES)
        below = predict(kernel, RATES, issue=issue_floor(1e5, 1e10), incore=incore_floor(10.0, 1, 1e9))  # 10 ns
        assert below.time == pytest.approx(1e-5) and below.bound == "issue"
        assert "in-core floor 1e-08 s" in below.explain()
        above = predict(kernel, RATES, issue=issue_floor(1e5, 1e10), incore=incore_floor(4e4, 2, 1e9))  # 20 us
        assert above.time == pytest.approx(2e-5) and above.bound == "in-core"
        assert "above the issue-bound" in above.reason
        assert above.performance == pytest.approx(kernel.w_comp / 2e-5)
        locked = predict(kernel, RATES, incore=incore_floor(4e4, 2, 1e9), atomics=atomic_cost(5e3, 1e9))
        assert locked.time == pytest.approx(2.5e-5) and locked.bound == "in-core"
        assert plain.time < 1e-5

    @given(st.floats(0, 1e12), st.integers(1, 256), st.floats(1e8, 1e10))
    def test_more_cycles_never_speed_a_kernel_up_and_more_cores_never_slow_it(self, cycles, cores, clock):
        kernel = kernel_parameters(FP32)
        fewer = predict(kernel, RATES, incore=incore_floor(cycles, cores, clock))
        more = predict(kernel, RATES, incore=incore_floor(2 * cycles + 1, cores, clock))
        wider = predict(kernel, RATES, incore=incore_floor(cycles, 2 * cores, clock))
        assert more.time >= fewer.time >= wider.time >= predict(kernel, RATES).time


class TestCompiledCore:
    """perfcast's addition (docs/models.md §3.5, C kernels): the whole compiled work-item's cycles, the core's side."""

    def test_by_hand(self):
        kernel = kernel_parameters(FP32)
        memory = kernel.w_traf / RATES.b_mem  # 2400 B at 100 GB/s: 24 ns
        slow = predict(kernel, RATES, compiled=incore_floor(120.0, 2, 1e9, whole=True))  # 120 cycles on 2 cores: 60 ns
        assert slow.time == pytest.approx(60e-9) and slow.bound == "in-core"
        assert "of the work-items' whole compiled code" in slow.explain() and "in place of §3's" in slow.explain()
        # The divisions, the issue floor and the inner loops' floor count the same cycles from the profiled build.
        priced = predict(kernel, RATES, divisions=division_cost(1e3, 1e9), issue=issue_floor(1e5, 1e10),
                         incore=incore_floor(1e6, 1, 1e9), compiled=incore_floor(120.0, 2, 1e9, whole=True))
        assert priced.time == pytest.approx(60e-9)
        assert priced.divisions is None and priced.issue is None and priced.incore is None
        fast = predict(kernel, RATES, compiled=incore_floor(2.0, 2, 1e9, whole=True))  # 1 ns: the memory's side
        assert fast.time == pytest.approx(memory) and fast.bound == "memory"
        far = predict(kernel, RATES, floor=latency_floor({"DRAM": 1e3}, {"DRAM": 1e10}),  # 100 ns of latency
                      compiled=incore_floor(120.0, 2, 1e9, whole=True))
        assert far.time == pytest.approx(1e-7) and far.bound == "latency"
        locked = predict(kernel, RATES, compiled=incore_floor(120.0, 2, 1e9, whole=True), atomics=atomic_cost(5e3, 1e9))
        assert locked.time == pytest.approx(60e-9 + 5e-6)

    @given(st.floats(0, 1e12), st.integers(1, 256), st.floats(1e8, 1e10))
    def test_never_below_the_memory_side_and_more_cycles_never_faster(self, cycles, cores, clock):
        kernel = kernel_parameters(FP32)
        fewer = predict(kernel, RATES, compiled=incore_floor(cycles, cores, clock, whole=True))
        more = predict(kernel, RATES, compiled=incore_floor(2 * cycles + 1, cores, clock, whole=True))
        assert more.time >= fewer.time >= kernel.w_traf / RATES.b_mem * (1 - 1e-12)
        assert fewer.time == pytest.approx(max(kernel.w_traf / RATES.b_mem, cycles / (cores * clock)))


class TestAtomicCost:
    """perfcast's addition (docs/models.md §3.4): atomic read-modify-writes at the device's measured rate, added."""

    def test_cost_by_hand(self):
        cost = atomic_cost(5e6, 2.5e8)  # 5 M atomics at 250 M atomic/s: 20 ms
        assert cost.time == pytest.approx(2e-2)
        assert cost.explain() == "5e+06 atomics / 2.5e+08 atomic/s"


class TestFirstTouchCost:
    """perfcast's addition (docs/models.md §3.7): pages touched first at the device's measured rate, added last."""

    def test_cost_by_hand(self):
        cost = first_touch_cost(3320.0, 8e5)  # kmeans_swap's 13 MiB at 800 k page/s: 4.15 ms
        assert cost.time == pytest.approx(4.15e-3)
        assert cost.explain() == "3.32e+03 first-touched pages / 8e+05 page/s"

    def test_no_page_adds_nothing(self):
        kernel = kernel_parameters(FP32)
        assert predict(kernel, RATES, first_touches=first_touch_cost(0.0, 1e6)).time == predict(kernel, RATES).time


# The operations §3.4 and §3.7 add at a measured rate: the cost's function, predict's argument, their words.
COUNTED_COSTS = [pytest.param(atomic_cost, "atomics", "atomics", "atomic rate", id="atomics"),
                 pytest.param(first_touch_cost, "first_touches", "first-touched pages", "first-touch rate",
                              id="first touches"),
                 pytest.param(barrier_cost, "barriers", "barrier crossings", "barrier crossing rate", id="barriers")]


@pytest.mark.parametrize(("cost", "term", "bound", "words", "earlier", "earlier_cost", "earlier_bound"), [
    (atomic_cost, "atomics", "atomic", ("atomics add 1e-09 s", "atomic cost 1e-09 s"), "divisions", division_cost,
     "division"),
    (first_touch_cost, "first_touches", "first-touch", ("first-touched pages add 1e-09 s", "first-touch cost 1e-09 s"),
     "atomics", atomic_cost, "atomic"),
    # A launch of one work-group at `rate / count` launches a second costs count / rate, as the others do.
    (lambda count, rate: launch_cost(1, rate / count), "launch", "launch",
     ("launch add 1e-09 s", "launch cost 1e-09 s"), "first_touches", first_touch_cost, "first-touch"),
    (barrier_cost, "barriers", "barrier", ("barrier crossings add 1e-09 s", "barrier cost 1e-09 s"), "launch",
     lambda count, rate: launch_cost(1, rate / count), "launch"),
], ids=["atomics after divisions", "first touches after atomics", "a launch after first touches",
        "barrier crossings after a launch"])
def test_a_counted_cost_adds_after_the_one_before_it_and_binds_where_it_is_the_larger_part(
        cost, term, bound, words, earlier, earlier_cost, earlier_bound):
    kernel = kernel_parameters(FP32)
    plain = predict(kernel, RATES)
    small = predict(kernel, RATES, **{term: cost(1.0, 1e9)})  # 1 ns
    assert small.time == pytest.approx(plain.time + 1e-9) and small.bound == plain.bound
    assert words[0] in small.reason and words[1] in small.explain()
    both = predict(kernel, RATES, **{earlier: earlier_cost(1e4, 1e9), term: cost(3e4, 1e9)})
    assert both.time == pytest.approx(plain.time + 1e-5 + 3e-5) and both.bound == bound
    assert f"added to the {earlier_bound}-bound" in both.reason


@pytest.mark.parametrize(("cost", "term", "count_words", "rate_words"), COUNTED_COSTS)
def test_counted_costs_refuse_bad_counts_and_rates(cost, term, count_words, rate_words):
    with pytest.raises(ValueError, match=count_words):
        cost(-1.0, 1e8)
    with pytest.raises(ValueError, match=rate_words):
        cost(1.0, 0.0)


@pytest.mark.parametrize(("cost", "term", "count_words", "rate_words"), COUNTED_COSTS)
@given(count=st.floats(0, 1e9), rate=st.floats(1e3, 1e12))
def test_more_counted_operations_never_speed_a_kernel_up(cost, term, count_words, rate_words, count, rate):
    kernel = kernel_parameters(FP32)
    fewer = predict(kernel, RATES, **{term: cost(count, rate)})
    more = predict(kernel, RATES, **{term: cost(2 * count + 1, rate)})
    assert more.time >= fewer.time >= predict(kernel, RATES).time


class TestBarrierCost:
    """perfcast's addition (docs/models.md §3.9): a CPU runtime's time of each work-item's barrier crossings, added."""

    def test_cost_by_hand(self):
        # Rodinia pathfinder's 39 barriers a work-item over 1,024,000 work-items at 2 x 10^9 crossings/s: 20 ms.
        cost = barrier_cost(39 * 1024000, 2e9)
        assert cost.time == pytest.approx(19.968e-3)
        assert cost.explain() == "3.99e+07 barrier crossings / 2e+09 crossing/s"

    def test_the_values_kept_across_the_barriers_add_at_their_own_rate(self):
        # 10^6 crossings at 10^10/s and 4 x 10^6 more values at 5 x 10^9/s: 0.1 ms + 0.8 ms.
        cost = barrier_cost(1e6, 1e10, 4e6, 5e9)
        assert cost.time == pytest.approx(0.9e-3)
        assert cost.explain() == ("1e+06 barrier crossings / 1e+10 crossing/s + 4e+06 further values kept across them / "
                                  "5e+09 value/s")
        assert barrier_cost(1e6, 1e10, 4e6).time == pytest.approx(1e-4)  # no rate of values: the crossings alone
        with pytest.raises(ValueError, match="values kept across barriers"):
            barrier_cost(1e6, 1e10, -1.0, 5e9)
        with pytest.raises(ValueError, match="rate of values"):
            barrier_cost(1e6, 1e10, 1.0, 0.0)

    def test_the_core_bound_time_keeps_it(self):
        kernel = kernel_parameters(FP32)
        priced = predict(kernel, RATES, barriers=barrier_cost(1e6, 1e9))
        assert core_time(priced) == pytest.approx(core_time(predict(kernel, RATES)) + 1e-3)


class TestLaunchCost:
    """perfcast's addition (docs/models.md §3.8): the runtime's time of a launch and its work-groups, added last."""

    def test_cost_by_hand(self):
        # 1 us a launch, 10 ns a further work-group: 257 groups take 1 us + 256 x 10 ns = 3.56 us.
        cost = launch_cost(257, 1e6, 1e8)
        assert cost.time == pytest.approx(3.56e-6)
        assert cost.explain() == "1 launch / 1e+06 launch/s + 256 more work-groups / 1e+08 group/s"
        assert launch_cost(1, 1e6, 1e8).time == pytest.approx(1e-6)  # one group: the launch alone
        # Groups the runtime chose, or no rate of groups: the launch alone, said so.
        assert launch_cost(None, 1e6, 1e8).time == pytest.approx(1e-6)
        assert "the runtime chose, priced as one" in launch_cost(None, 1e6, 1e8).explain()
        assert launch_cost(300, 1e6).time == pytest.approx(1e-6)
        assert "no rate of them measured" in launch_cost(300, 1e6).explain()

    def test_refuses_what_no_launch_has(self):
        with pytest.raises(ValueError, match="at least one work-group"):
            launch_cost(0, 1e6, 1e8)
        with pytest.raises(ValueError, match="launch rate"):
            launch_cost(4, 0.0, 1e8)
        with pytest.raises(ValueError, match="work-group rate"):
            launch_cost(4, 1e6, -1.0)

    def test_core_time_keeps_the_launch(self):
        # The runtime's time is the cores': with unlimited bandwidth a launch still costs it.
        kernel = kernel_parameters(FP32)
        plain = predict(kernel, RATES)
        big = predict(kernel, RATES, launch=launch_cost(4097, 1e3, 1e6))
        assert big.time == pytest.approx(plain.time + 1e-3 + 4096e-6) and big.bound == "launch"
        assert core_time(big) - core_time(plain) == pytest.approx(1e-3 + 4096e-6)

    @given(groups=st.integers(1, 10**7), launch_rate=st.floats(1e3, 1e9), group_rate=st.floats(1e3, 1e12))
    def test_more_work_groups_never_speed_a_launch_up(self, groups, launch_rate, group_rate):
        kernel = kernel_parameters(FP32)
        fewer = predict(kernel, RATES, launch=launch_cost(groups, launch_rate, group_rate))
        more = predict(kernel, RATES, launch=launch_cost(2 * groups, launch_rate, group_rate))
        assert more.time >= fewer.time > predict(kernel, RATES).time


class TestCpuLdstRate:
    """perfcast's addition (docs/models.md §3.6): a CPU's global accesses at L1 in the kernel's vectors, local apart."""

    def test_by_hand(self):
        # 200 G accesses/s at 16 lanes: a kernel vectorised 8 wide reaches 100 G accesses/s, a scalar one 12.5 G.
        assert cpu_ldst_rate(1e6, 0.0, 8, 16, 200e9, 5e9) == pytest.approx(100e9)
        assert cpu_ldst_rate(1e6, 0.0, 1, 16, 200e9, 5e9) == pytest.approx(12.5e9)
        # Half the accesses local at 5 G/s, half global at 100 G/s: 1e6 / (5e5/1e11 + 5e5/5e9) = 9.52 G/s.
        assert cpu_ldst_rate(1e6, 5e5, 8, 16, 200e9, 5e9) == pytest.approx(1e6 / (5e5 / 1e11 + 5e5 / 5e9))

    def test_limits(self):
        assert cpu_ldst_rate(1e6, 1e6, 16, 16, 200e9, 5e9) == pytest.approx(5e9)  # every access local
        assert cpu_ldst_rate(1e6, 2e6, 16, 16, 200e9, 5e9) == pytest.approx(5e9)  # more local than all: capped
        assert cpu_ldst_rate(1e6, 0.0, 64, 16, 200e9, 5e9) == pytest.approx(200e9)  # no wider than the SIMD unit
        assert cpu_ldst_rate(0.0, 0.0, 4, 16, 200e9, 5e9) == pytest.approx(50e9)  # no accesses: the global rate
        assert cpu_ldst_rate(1e6, 5e5, 4, 16, 200e9, None) == pytest.approx(50e9)  # no local rate: all global

    @given(st.floats(1, 1e9), st.floats(0, 1), st.integers(1, 15))
    def test_wider_vectors_and_fewer_local_accesses_never_slow_the_accesses(self, ldst, local_share, lanes):
        rate = cpu_ldst_rate(ldst, local_share * ldst, lanes, 16, 200e9, 5e9)
        assert cpu_ldst_rate(ldst, local_share * ldst, lanes + 1, 16, 200e9, 5e9) >= rate * (1 - 1e-12)
        assert cpu_ldst_rate(ldst, local_share * ldst / 2, lanes, 16, 200e9, 5e9) >= rate * (1 - 1e-12)
        assert 5e9 * (1 - 1e-12) <= rate <= 200e9 * (1 + 1e-12)

    def test_bad_inputs_are_refused(self):
        with pytest.raises(ValueError, match="lanes"):
            cpu_ldst_rate(1.0, 0.0, 0, 16, 200e9, 5e9)
        with pytest.raises(ValueError, match="local-memory"):
            cpu_ldst_rate(1.0, 0.0, 1, 16, 200e9, 0.0)
        with pytest.raises(ValueError, match="load/store"):
            cpu_ldst_rate(-1.0, 0.0, 1, 16, 200e9, 5e9)


class TestVectorCallCost:
    """§3.6: a vectorised kernel's elementary calls run as vector routines, their instructions shared by the lanes."""

    def test_by_hand_and_limits(self):
        assert vector_call_cost(600.0, 8, 16) == pytest.approx(75.0)
        assert vector_call_cost(600.0, 1, 16) == pytest.approx(600.0)  # scalar: the measured call
        assert vector_call_cost(600.0, 64, 16) == pytest.approx(37.5)  # no wider than the SIMD unit

    @given(st.floats(0, 1e4), st.integers(1, 15))
    def test_wider_vectors_never_cost_more(self, cost, lanes):
        assert vector_call_cost(cost, lanes + 1, 16) <= vector_call_cost(cost, lanes, 16)

    def test_bad_inputs_are_refused(self):
        with pytest.raises(ValueError, match="lanes"):
            vector_call_cost(1.0, 0, 16)
        with pytest.raises(ValueError, match="instructions per call"):
            vector_call_cost(-1.0, 4, 16)


def test_core_time_by_hand_sets_the_memory_part_aside():
    """FP32 on RATES: memory bound at 2400 B / 100 GB/s = 24 ns; its core part is W_comp / T'_op, then the costs."""
    p = predict(kernel_parameters(FP32), RATES)
    assert p.bound == "memory"
    assert core_time(p) == pytest.approx(1400 / p.t_op_adjusted)
    with_costs = predict(kernel_parameters(FP32), RATES, latency_floor({"L2": 10.0}, {"L2": 1e9}),
                         division_cost(5.0, 1e9), atomics=atomic_cost(2.0, 1e9))
    assert core_time(with_costs) == pytest.approx(max(1400 / p.t_op_adjusted, 1e-8) + 5e-9 + 2e-9)


@given(fp=st.floats(1.0, 1e9), traffic=st.floats(0.0, 1e9), bandwidth=st.floats(1e9, 1e13))
def test_core_time_is_never_above_the_prediction_and_equal_where_not_memory_bound(fp, traffic, bandwidth):
    rates = DeviceRates(1e12, 5e11, 4e11, 5e11, 2.5e11, bandwidth)
    p = predict_counts(counts(fp32=fp, ldst=fp / 2, inst_warp=fp / 16 + 1, dram_read=traffic), rates)
    assert core_time(p) <= p.time * (1 + 1e-12)
    if p.bound != "memory":
        assert core_time(p) == pytest.approx(p.time)


def test_a_kernel_without_compute_work_has_no_core_time():
    with pytest.raises(ValueError, match="no compute work"):
        core_time(predict_counts(counts(ldst=10, dram_read=100), RATES))


def test_core_time_leaves_out_the_memory_base_under_an_added_cost():
    """Memory bound, then divisions added: the prediction's bound is 'division', its core time still drops the bytes."""
    p = predict(kernel_parameters(FP32), RATES, divisions=division_cost(5.0, 1e8))
    assert p.bound == "division" and p.o_krn <= p.o_dev
    assert core_time(p) == pytest.approx(1400 / p.t_op_adjusted + 5e-8)
    assert core_time(p) < p.time


def test_a_masked_load_and_store_cost_are_read_from_the_guarded_triad_and_copy():
    from perfcast.models.quantitative import masked_access_floor, masked_move_costs

    # Triad 2L + S = 5 ns an element, copy L + S = 3 ns: a load 2 ns, a store 1 ns; each rebuilds its kernel.
    load, store = masked_move_costs(5e-9, 3e-9)
    assert (load, store) == (pytest.approx(2e-9), pytest.approx(1e-9))
    # A copy no faster than the triad (loads cost nothing) and one at under half of it (stores cost nothing):
    # the costs stay non-negative and the triad's own time is always rebuilt.
    for triad, copy in ((5e-9, 6e-9), (5e-9, 1e-9)):
        load, store = masked_move_costs(triad, copy)
        assert load >= 0 and store >= 0 and 2 * load + store == pytest.approx(triad)
    floor = masked_access_floor(9e6, 1e6, 2e-9, 1e-9)
    assert floor.time == pytest.approx(9e6 * 2e-9 + 1e6 * 1e-9) and "9e+06 loads" in floor.explain()
    with pytest.raises(ValueError):
        masked_move_costs(0.0, 1e-9)
    with pytest.raises(ValueError):
        masked_access_floor(-1.0, 0.0, 1e-9, 1e-9)


def test_the_masked_access_floor_raises_a_time_below_it_and_names_its_bound():
    from perfcast.models.quantitative import DeviceRates, KernelCounts, core_time, kernel_parameters, masked_access_floor, predict

    rates = DeviceRates(t_sp=1e12, t_dp=5e11, t_int=1e12, t_add=1e12, t_ldst=1e12, b_mem=1e11)
    counts = KernelCounts(fma32=1e6, fma64=0.0, ldst=2e6, inst_warp=1e5, fp32=1e6, fp64=0.0, int=1e6,
                          dram_read=1e5, dram_write=1e5)
    kernel = kernel_parameters(counts, rates)
    plain = predict(kernel, rates)
    low = predict(kernel, rates, masked=masked_access_floor(1.0, 1.0, 1e-15, 1e-15))
    assert low.time == plain.time and low.bound == plain.bound  # a floor below the time changes nothing
    high = predict(kernel, rates, masked=masked_access_floor(1e6, 1e6, 1e-9, 2e-9))
    assert high.time == pytest.approx(3e-3) and high.bound == "masked" and "masked-access floor" in high.explain()
    assert core_time(high) == pytest.approx(3e-3)  # a core-bound ceiling keeps it
