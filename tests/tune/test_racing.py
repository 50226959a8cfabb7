"""Races: paired ratios by hand, drift that hits every contender alike, and tuning a noisy kernel."""

import math
import random
import statistics
from dataclasses import dataclass, field

import pytest
from test_tuner import TARGET, SyntheticKernel  # tests/tune is on the path (rootdir import mode)

from perfcast.tune.racing import paired_ratio, race
from perfcast.tune.store import ResultsStore
from perfcast.tune.strategies import Session, run_strategy


def test_paired_ratio_by_hand():
    exact = paired_ratio([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])
    assert (exact.estimate, exact.low, exact.high) == pytest.approx((0.5, 0.5, 0.5))
    assert exact.separated
    # Three rounds: the median ratio, and the extremes (too few rounds for a 95 % order-statistic interval).
    r = paired_ratio([1.1, 0.9, 1.0], [1.0, 1.0, 1.0])
    assert (r.estimate, r.low, r.high) == pytest.approx((1.0, 1 / 1.1, 1 / 0.9))
    assert not r.separated
    # Eleven rounds, one of them disturbed (the contender took 10x): the median and the 2nd/10th ratios.
    contender = [1.0 / (1.01 + 0.01 * i) for i in range(11)]
    contender[5] = 10.0
    r = paired_ratio(contender, [1.0] * 11)
    ordered = sorted([1.01 + 0.01 * i for i in range(11) if i != 5] + [0.1])
    assert (r.estimate, r.low, r.high) == pytest.approx((ordered[5], ordered[1], ordered[9]))
    assert r.separated and r.low > 1  # the one wild round changes nothing
    with pytest.raises(ValueError, match="at least 2 rounds"):
        paired_ratio([1.0], [1.0])


def _drifting(speeds, drift=0.5, noise=0.01, seed=0):
    """Times of contenders of the given speeds on a machine whose speed wanders by +-drift from run to run."""
    rng = random.Random(seed)
    calls = []

    def run(index):
        calls.append(index)
        factor = 1 + drift * math.sin(len(calls) / 20.0)  # slow: a machine drifts over seconds, not runs
        return factor / speeds[index] * math.exp(rng.gauss(0, noise))

    return run, calls


def test_a_race_tells_apart_what_the_drift_hides():
    """5 % apart under a drift of +-50 %: means of back-to-back runs could say anything; paired rounds do not."""
    run, calls = _drifting([1.0, 1.05])
    result = race(run, 2, max_rounds=15)
    assert result.leader == 1 and result.ratios[0].separated and result.ratios[0].high < 1
    assert result.ratios[0].estimate == pytest.approx(1 / 1.05, rel=0.02)
    assert result.spread(0) > 0.05  # the machine moved each contender by more than the two differ
    assert len(calls) == 2 * result.rounds < 2 * 15  # decided before the rounds ran out
    # The same two, timed back to back (all of one, then all of the other), come out in the wrong order.
    run, _ = _drifting([1.0, 1.05])
    block = [statistics.fmean(run(i) for _ in range(result.rounds)) for i in (0, 1)]
    assert block[1] > block[0]  # the faster one looks slower: the machine drifted between the two blocks


def test_equal_contenders_are_a_tie_or_known_to_be_close():
    run, _ = _drifting([1.0, 1.0, 1.0], noise=0.02)
    result = race(run, 3, max_rounds=8, resolution=0.01)
    for i, r in enumerate(result.ratios):
        assert 0.97 < r.estimate < 1.03  # the leader has the lowest median time, not every ratio above it
        if i != result.leader:
            assert not r.separated or abs(math.log(r.estimate)) < 0.03
    with pytest.raises(ValueError, match="min_rounds"):
        race(run, 2, min_rounds=1)


@dataclass
class NoisyKernel(SyntheticKernel):
    """The synthetic kernel on a drifting machine: a slow +-30 % drift, and 5 % noise from run to run."""

    seed: int = 0
    rng: random.Random = field(default=None)

    def __post_init__(self):
        super().__post_init__()
        self.rng = random.Random(self.seed)

    def run(self, config, size):
        clean = super().run(config, size)
        drift = 1 + 0.3 * math.sin(len(self.calls) / 40.0)  # slow: +-30 % over some 250 runs
        return clean * drift * math.exp(self.rng.gauss(0, 0.05))


def _tuned(seed, racing, tmp_path):
    store = ResultsStore(tmp_path / f"r{seed}{racing}.sqlite")
    kernel = NoisyKernel(seed=seed)
    run_id, _ = store.open_run(kernel.name, "hierarchical", kernel.environment(), kernel.target(), 2)
    result = run_strategy(Session(kernel, store, run_id, 2, racing=racing), "hierarchical")
    best = max(SyntheticKernel().speed(c) * min(TARGET / (c["block"] * c["group"]), 2)
               for c in SyntheticKernel().space if TARGET % (c["block"] * c["group"]) == 0)
    chosen = result.best
    return SyntheticKernel().speed(chosen) * min(TARGET / (chosen["block"] * chosen["group"]), 2) / best, result


def test_racing_finds_the_optimum_of_a_noisy_kernel(tmp_path):
    fractions = []
    for seed in range(6):
        fraction, result = _tuned(seed, True, tmp_path)
        fractions.append(fraction)
        assert result.interval is not None and result.interval[0] <= result.measurement.metric <= result.interval[1]
        assert len(result.finalists) >= 2
        assert all(spread > 0 for _, _, spread in result.finalists)  # the noise, recorded
        assert result.steps["final"] == result.best
    assert min(fractions) >= 0.97, fractions


def test_a_failure_during_a_race_does_not_end_the_run(tmp_path):
    """A configuration that ran once may fail later (a lost device, a driver hiccup): the means decide then."""

    class Flaky(NoisyKernel):
        def run(self, config, size):
            if len(self.calls) > 30 and config["unroll"] == 4:
                self.calls.append(("flaky", 0))
                raise RuntimeError("CL_OUT_OF_RESOURCES")
            return super().run(config, size)

    store = ResultsStore(tmp_path / "r.sqlite")
    kernel = Flaky(seed=1)
    run_id, _ = store.open_run(kernel.name, "hierarchical", kernel.environment(), kernel.target(), 2)
    result = run_strategy(Session(kernel, store, run_id, 2), "hierarchical")
    assert result.best and result.evaluations > 0
    assert {f["status"] for f in store.failures(run_id)} <= {"runtime"}
