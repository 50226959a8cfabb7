"""Timing helper and clock probe, run for real."""

import shutil
import time

import pytest

from perfcast.bench.clock_probe import measure_clock
from perfcast.bench.timing import time_call


def test_time_call_discards_warmup_and_takes_the_median():
    calls = []

    def run():
        calls.append(1)
        time.sleep(0.05 if len(calls) == 1 else 0.002)  # the slow first call is the warm-up

    sample = time_call(run, repetitions=5, warmup=1)
    assert len(calls) == 6 and len(sample.samples) == 5
    assert 0.0015 < sample.median < 0.03
    assert sample.spread >= 0


def test_time_call_rejects_no_repetitions():
    with pytest.raises(ValueError):
        time_call(lambda: None, repetitions=0)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="the clock probe needs gcc")
def test_clock_probe_measures_a_plausible_clock():
    sample = measure_clock(threads=1, iterations=2_000_000, repetitions=3)
    assert 0.5e9 < sample.median < 7e9
    assert sample.threads == 1 and sample.repetitions == 3


def test_interleaved_timings_run_round_robin():
    from perfcast.bench.timing import interleaved_timings

    order = []
    rounds = []
    runs = [lambda: order.append("a"), lambda: order.append("b")]
    samples = interleaved_timings(runs, repetitions=3, warmup=1, progress=rounds.append)
    assert order == ["a", "b"] + ["a", "b"] * 3  # warm-ups first, then one of each per round
    assert rounds == [1, 2, 3]
    assert [len(s.samples) for s in samples] == [3, 3]
