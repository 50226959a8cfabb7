"""Roofline model: hand-computed values and properties (spec §1)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfcast.models.roofline import (
    Ceiling,
    Roofline,
    analyze_kernel,
    attainable_performance,
    bound_kind,
    ceiling_performance,
    effective_roofs,
    execution_time,
    hierarchical_roofline,
    locality_walls,
    ridge_point,
)

PI = 100e9  # 100 GFLOP/s
BETA = 25e9  # 25 GB/s -> ridge at 4 op/B

positive = st.floats(min_value=1e-3, max_value=1e15, allow_nan=False, allow_infinity=False)
intensity = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


class TestHandComputed:
    def test_ridge_point(self):
        assert ridge_point(PI, BETA) == pytest.approx(4.0)

    @pytest.mark.parametrize(
        ("i", "expected"),
        [(0.0, 0.0), (1.0, 25e9), (2.0, 50e9), (4.0, 100e9), (8.0, 100e9), (math.inf, 100e9)],
    )
    def test_attainable(self, i, expected):
        assert attainable_performance(i, PI, BETA) == pytest.approx(expected)

    def test_vectorised(self):
        result = attainable_performance(np.array([0.5, 4.0, 16.0]), PI, BETA)
        np.testing.assert_allclose(result, [12.5e9, 100e9, 100e9])

    def test_bound_at_ridge_is_memory(self):
        assert bound_kind(4.0, PI, BETA) == "memory"
        assert bound_kind(4.0001, PI, BETA) == "compute"
        assert list(bound_kind([1.0, 10.0], PI, BETA)) == ["memory", "compute"]

    def test_time_view(self):
        # W = 1 GFLOP, Q = 1 GB: compute 10 ms, memory 40 ms.
        assert execution_time(1e9, 1e9, PI, BETA) == pytest.approx(0.04)
        assert execution_time(1e9, 1e7, PI, BETA) == pytest.approx(0.01)

    def test_ceilings(self):
        roof = Roofline(PI, BETA, (Ceiling("no FMA", 50e9), Ceiling("no SIMD", 12.5e9)), (Ceiling("1 thread", 10e9),))
        assert ceiling_performance(roof, 8.0) == pytest.approx(100e9)
        assert ceiling_performance(roof, 8.0, ["no FMA"]) == pytest.approx(50e9)
        assert ceiling_performance(roof, 8.0, ["no FMA", "no SIMD"]) == pytest.approx(12.5e9)
        assert ceiling_performance(roof, 1.0, ["1 thread"]) == pytest.approx(10e9)
        assert effective_roofs(roof, ["no SIMD", "1 thread"]) == (12.5e9, 10e9)
        with pytest.raises(ValueError, match="no prefetch"):
            ceiling_performance(roof, 1.0, ["no prefetch"])

    def test_analyze_kernel(self):
        roof = Roofline(PI, BETA, (Ceiling("no FMA", 50e9),))
        result = analyze_kernel(roof, 1e9, 1e8)  # I = 10 op/B
        assert result.intensity == pytest.approx(10.0)
        assert result.attainable == pytest.approx(100e9)
        assert result.bound == "compute"
        assert result.time == pytest.approx(0.01)
        lacking = analyze_kernel(roof, 1e9, 1e8, ["no FMA"])
        assert lacking.attainable == pytest.approx(50e9)
        assert lacking.ridge == pytest.approx(2.0)
        assert lacking.time == pytest.approx(0.02)

    def test_zero_traffic_is_compute_bound_not_nan(self):
        result = analyze_kernel(Roofline(PI, BETA), 1e9, 0.0)
        assert result.intensity == math.inf
        assert result.attainable == pytest.approx(PI)
        assert result.bound == "compute"
        assert result.time == pytest.approx(0.01)

    def test_zero_work_is_pure_transfer(self):
        result = analyze_kernel(Roofline(PI, BETA), 0.0, 25e9)
        assert result.attainable == 0.0
        assert result.bound == "memory"
        assert result.time == pytest.approx(1.0)

    def test_locality_walls(self):
        walls = locality_walls(1e9, 1e9, capacity=1e9, conflict=2e9)
        assert [w.name for w in walls] == ["compulsory", "+capacity", "+conflict"]
        assert [w.intensity for w in walls] == pytest.approx([1.0, 0.5, 0.25])
        assert len(locality_walls(1e9, 1e9)) == 1

    def test_hierarchical_dram_binds(self):
        result = hierarchical_roofline(
            1e9, {"L1": 1e10, "L2": 4e9, "DRAM": 1e9}, PI, {"L1": 1e12, "L2": 2e11, "DRAM": 2.5e10}
        )
        assert result.intensities == pytest.approx({"L1": 0.1, "L2": 0.25, "DRAM": 1.0})
        assert result.level_bounds == pytest.approx({"L1": 1e11, "L2": 5e10, "DRAM": 2.5e10})
        assert result.attainable == pytest.approx(2.5e10)
        assert result.binding == "DRAM"
        assert result.time == pytest.approx(0.04)

    def test_hierarchical_l2_binds(self):
        result = hierarchical_roofline(1e9, {"L2": 1e10, "DRAM": 1e9}, PI, {"L2": 2e11, "DRAM": 2.5e10})
        assert result.binding == "L2"
        assert result.attainable == pytest.approx(2e10)
        assert result.time == pytest.approx(0.05)

    def test_hierarchical_compute_binds_and_zero_level_never_binds(self):
        result = hierarchical_roofline(1e12, {"L2": 0.0, "DRAM": 1e9}, PI, {"L2": 2e11, "DRAM": 2.5e10})
        assert result.binding == "compute"
        assert result.intensities["L2"] == math.inf
        assert result.attainable == pytest.approx(PI)

    def test_hierarchical_vectorised(self):
        result = hierarchical_roofline(
            np.array([1e9, 1e12]), {"DRAM": np.array([1e9, 1e9])}, PI, {"DRAM": 2.5e10}
        )
        assert list(result.binding) == ["DRAM", "compute"]
        np.testing.assert_allclose(result.attainable, [2.5e10, 1e11])


class TestErrors:
    @pytest.mark.parametrize("bad", [-1.0, math.nan])
    def test_bad_intensity(self, bad):
        with pytest.raises(ValueError, match="intensity"):
            attainable_performance(bad, PI, BETA)

    @pytest.mark.parametrize("peak", [0.0, -1.0, math.inf, math.nan])
    def test_bad_peak(self, peak):
        with pytest.raises(ValueError, match="peak"):
            attainable_performance(1.0, peak, BETA)

    def test_empty_kernel(self):
        with pytest.raises(ValueError, match="zero work"):
            analyze_kernel(Roofline(PI, BETA), 0.0, 0.0)

    def test_ceiling_above_roof(self):
        with pytest.raises(ValueError, match="above the roof"):
            Roofline(PI, BETA, (Ceiling("turbo", 2 * PI),))

    def test_duplicate_ceiling_names_across_kinds(self):
        with pytest.raises(ValueError, match="unique"):
            Roofline(PI, BETA, (Ceiling("one", 1e9),), (Ceiling("one", 1e9),))

    def test_hierarchical_missing_bandwidth(self):
        with pytest.raises(ValueError, match="L3"):
            hierarchical_roofline(1e9, {"L3": 1e9}, PI, {"DRAM": BETA})

    def test_locality_wall_needs_traffic(self):
        with pytest.raises(ValueError):
            locality_walls(1e9, 0.0)


class TestProperties:
    @given(i=intensity, pi=positive, beta=positive)
    def test_below_both_roofs(self, i, pi, beta):
        p = attainable_performance(i, pi, beta)
        assert p <= pi * (1 + 1e-12)
        assert p <= beta * i * (1 + 1e-12)
        assert p == pytest.approx(min(pi, beta * i))

    @given(a=intensity, b=intensity, pi=positive, beta=positive)
    def test_monotone_in_intensity(self, a, b, pi, beta):
        lo, hi = sorted((a, b))
        assert attainable_performance(lo, pi, beta) <= attainable_performance(hi, pi, beta)

    @given(i=intensity, pi=positive, beta=positive, factor=st.floats(1, 1e3))
    def test_monotone_in_machine(self, i, pi, beta, factor):
        assert attainable_performance(i, pi * factor, beta) >= attainable_performance(i, pi, beta)
        assert attainable_performance(i, pi, beta * factor) >= attainable_performance(i, pi, beta)

    @given(pi=positive, beta=positive)
    def test_limits(self, pi, beta):
        ridge = ridge_point(pi, beta)
        assert attainable_performance(ridge * 1e-6, pi, beta) == pytest.approx(beta * ridge * 1e-6)
        assert attainable_performance(ridge * 1e6, pi, beta) == pytest.approx(pi)
        assert attainable_performance(ridge, pi, beta) == pytest.approx(pi)

    @given(w=positive, q=positive, pi=positive, beta=positive)
    def test_time_and_performance_agree(self, w, q, pi, beta):
        result = analyze_kernel(Roofline(pi, beta), w, q)
        assert result.time * result.attainable == pytest.approx(w, rel=1e-9)
        assert result.time == pytest.approx(execution_time(w, q, pi, beta))

    @given(w=positive, q=positive, k=st.floats(1e-3, 1e3))
    def test_scaling_the_problem_scales_time_only(self, w, q, k):
        a = analyze_kernel(Roofline(PI, BETA), w, q)
        b = analyze_kernel(Roofline(PI, BETA), w * k, q * k)
        assert b.intensity == pytest.approx(a.intensity)
        assert b.attainable == pytest.approx(a.attainable)
        assert b.time == pytest.approx(a.time * k)

    @given(w=positive, q1=positive, q2=positive, q3=positive)
    def test_hierarchical_is_the_lowest_roof(self, w, q1, q2, q3):
        bandwidths = {"L1": 1e12, "L2": 2e11, "DRAM": 2.5e10}
        result = hierarchical_roofline(w, {"L1": q1, "L2": q2, "DRAM": q3}, PI, bandwidths)
        assert result.attainable <= PI * (1 + 1e-12)
        for bound in result.level_bounds.values():
            assert result.attainable <= bound * (1 + 1e-12)
        winner = PI if result.binding == "compute" else result.level_bounds[result.binding]
        assert result.attainable == pytest.approx(winner)

    @given(w=positive, q=positive)
    def test_hierarchical_with_dram_only_matches_flat_roofline(self, w, q):
        flat = analyze_kernel(Roofline(PI, BETA), w, q)
        tiered = hierarchical_roofline(w, {"DRAM": q}, PI, {"DRAM": BETA})
        assert tiered.attainable == pytest.approx(flat.attainable)
        assert tiered.time == pytest.approx(flat.time)
        assert (tiered.binding == "DRAM") == (flat.bound == "memory")

    @given(w=positive, c=positive, extra=positive)
    def test_walls_move_left(self, w, c, extra):
        walls = locality_walls(w, c, capacity=extra, conflict=extra)
        values = [wall.intensity for wall in walls]
        assert values == sorted(values, reverse=True)
