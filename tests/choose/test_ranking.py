"""Ranking devices: hand-computed costs, energies, tiers and Pareto fronts, and the properties they must keep."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfcast.choose.ranking import (
    SECONDS_PER_YEAR,
    Band,
    Estimate,
    PriceQuote,
    kendall_tau,
    pareto_front,
    rank,
    run_cost,
    time_tiers,
)

BAND = Band("quantitative", "gpu", 0.5, 2.0, 10, 0.8, 0.3, "test")
RENT = PriceQuote("rental", 3.6, "test", "2026-01-01")


def estimate(name, time, band=BAND, tdp=None, price=None):
    return Estimate(name, "gpu", "v", "quantitative", time, band, tdp=tdp, price=price)


def test_rental_cost_is_time_times_hourly_price():
    assert run_cost(10.0, RENT, 1.0) == pytest.approx(10.0 * 3.6 / 3600)  # $0.01 for 10 s at $3.60/h


def test_purchase_cost_spreads_the_price_over_the_lifetime():
    price = PriceQuote("list", 10_000, "test", "2024-01-01")
    assert run_cost(3600.0, price, 4 * SECONDS_PER_YEAR) == pytest.approx(10_000 / (4 * 365.25 * 24))


def test_energy_is_time_times_tdp_and_costs_follow_the_price():
    ranked = rank([estimate("a", 2.0, tdp=300.0, price=RENT), estimate("b", 1.0, tdp=700.0)])
    by_name = {r.estimate.device: r for r in ranked}
    assert by_name["a"].energy == 600.0 and by_name["b"].energy == 700.0
    assert by_name["a"].cost == pytest.approx(2.0 * 3.6 / 3600) and by_name["b"].cost is None


def test_order_by_time_cost_and_energy():
    fast_hot = estimate("fast", 1.0, tdp=1000.0, price=PriceQuote("rental", 10.0, "t", "2026-01-01"))
    slow_cool = estimate("slow", 3.0, tdp=100.0, price=PriceQuote("rental", 1.0, "t", "2026-01-01"))
    unpriced = estimate("unpriced", 0.5)
    assert [r.estimate.device for r in rank([slow_cool, fast_hot, unpriced])] == ["unpriced", "fast", "slow"]
    by_cost = rank([slow_cool, fast_hot, unpriced], order="cost")
    assert [r.estimate.device for r in by_cost] == ["slow", "fast", "unpriced"]  # 3 s x $1/h < 1 s x $10/h
    assert by_cost[-1].notes == ("no price",)
    by_energy = rank([slow_cool, fast_hot, unpriced], order="energy")
    assert [r.estimate.device for r in by_energy] == ["slow", "fast", "unpriced"]  # 300 J < 1000 J
    assert by_energy[-1].notes == ("no TDP",)


def test_overlapping_intervals_are_not_told_apart():
    # [0.5, 2] for t = 1 and [1.5, 6] for t = 3 overlap; [5, 20] for t = 10 overlaps only the second.
    ranked = rank([estimate("a", 1.0), estimate("b", 3.0), estimate("c", 10.0)])
    overlaps = {r.estimate.device: set(r.overlaps) for r in ranked}
    assert overlaps == {"a": {"b"}, "b": {"a", "c"}, "c": {"b"}}
    assert [r.tier for r in ranked] == [1, 1, 2]  # c overlaps b, but not a, the leader of tier 1


def test_a_device_without_band_has_no_tier_and_says_why():
    ranked = rank([estimate("a", 1.0), estimate("b", 2.0, band=None)])
    b = next(r for r in ranked if r.estimate.device == "b")
    assert b.tier is None and b.overlaps == () and "no validated band" in b.notes[0]


def test_a_measurement_is_its_own_zero_width_interval():
    measured = Estimate("src", "gpu", "v", "projection", 1.0, None, is_measurement=True)
    assert measured.interval == (1.0, 1.0)
    ranked = rank([measured, estimate("b", 1.5)])  # b: [0.75, 3] contains 1.0
    assert all(r.tier == 1 for r in ranked) and not any(r.notes for r in ranked)


def test_unbounded_band_overlaps_everything_slower():
    wide = Band("projection", "across vendors", 0.5, math.inf, 5, 0.8, 1.5, "t")
    ranked = rank([estimate("a", 1.0, band=wide), estimate("b", 1000.0)])
    assert ranked[0].overlaps == ("b",)


def test_pareto_front_by_hand():
    points = [(1.0, 10.0), (2.0, 5.0), (3.0, 6.0), (0.5, None), (2.0, 5.0)]
    # (3, 6) is beaten by (2, 5) in both; (2, 5) twice: neither strictly better, both stay; no cost: never.
    assert pareto_front(points) == [True, True, False, False, True]


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="not a positive number"):
        estimate("a", 0.0)
    with pytest.raises(ValueError, match="not a positive number"):
        estimate("a", math.nan)
    with pytest.raises(ValueError, match="given twice"):
        rank([estimate("a", 1.0), estimate("a", 2.0)])
    with pytest.raises(ValueError, match="lifetime"):
        rank([estimate("a", 1.0)], lifetime_years=0)
    with pytest.raises(ValueError, match="positive interval"):
        Band("m", "s", 2.0, 1.0, 3, 0.8, 0.1, "t")


def test_kendall_tau_limits():
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [40, 30, 20, 10]) == pytest.approx(-1.0)
    assert math.isnan(kendall_tau([1.0], [2.0]))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.floats(1e-6, 1e3), min_size=1, max_size=12))
def test_properties_of_any_ranking(times):
    estimates = [estimate(f"d{i}", t, tdp=100.0, price=RENT) for i, t in enumerate(times)]
    ranked = rank(estimates)
    assert [r.rank for r in ranked] == list(range(1, len(times) + 1))
    assert [r.estimate.time for r in ranked] == sorted(times)
    # Rental cost is proportional to time, so the only front is the fastest (and its ties).
    assert all(r.pareto == (r.estimate.time == min(times)) for r in ranked)
    tiers = time_tiers(estimates)
    fastest = min(range(len(times)), key=lambda i: times[i])
    assert tiers[fastest] == 1
    ordered = sorted(range(len(times)), key=lambda i: times[i])
    assert [tiers[i] for i in ordered] == sorted(tiers[i] for i in ordered)  # tiers never go back as time grows
    for r in ranked:  # overlap is symmetric
        for other in r.overlaps:
            assert r.estimate.device in next(x for x in ranked if x.estimate.device == other).overlaps
