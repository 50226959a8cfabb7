"""A space timed live as the strategy asks: the same search as a replay, a time limit, failures, the cache."""

import itertools
import json
import math
from pathlib import Path

import pytest

from perfcast.errors import InputError, ToolError
from perfcast.tune.live_space import candidate_space, tune_live
from perfcast.tune.recorded import Record, read_recorded, to_kerneltuner
from perfcast.tune.replay import levels, replay_run

FIXTURE = Path(__file__).parents[1] / "data" / "tune" / "convolution-a100-subset.json"


def candidates_of(recorded):
    """Return the recorded space's configurations as an untimed candidate space, and a lookup that times them."""
    names = list(recorded.parameters)
    space = candidate_space(recorded.kernel, recorded.device, recorded.problem_size, recorded.parameters,
                            [recorded.key(r.config) for r in recorded.records])
    timed: list[dict] = []

    def measure(config):
        timed.append(dict(config))
        record = recorded.record(config)
        assert record is not None, f"{config} is not a candidate"
        assert list(config) == names
        return record

    return space, measure, timed


def test_a_live_run_searches_exactly_as_the_replay_of_the_same_times(tmp_path):
    recorded = read_recorded(FIXTURE)
    space, measure, timed = candidates_of(recorded)
    result = tune_live(space, measure, "hierarchical")
    _, ratio, evaluations = replay_run("hierarchical", 0, recorded, *levels(recorded), None)
    assert result.evaluations == evaluations == len(timed) == len({json.dumps(c) for c in timed})
    assert result.best is not None and recorded.optimum().time / result.best.time == pytest.approx(ratio)
    assert result.chosen == recorded.optimum().config and not result.stopped
    assert result.space_size == len(recorded.records)
    # What was timed is a space of its own, in the order it was timed, and survives KernelTuner's format.
    cache = tmp_path / "cache.json"
    cache.write_text(json.dumps(to_kerneltuner(result.measured)))
    back = read_recorded(cache)
    assert [r.config for r in back.records] == timed
    assert back.optimum().time == pytest.approx(recorded.optimum().time)


def test_the_time_limit_stops_the_timing_and_keeps_what_was_timed():
    recorded = read_recorded(FIXTURE)
    space, measure, timed = candidates_of(recorded)
    ticks = itertools.count()  # every reading of the clock is one second later
    saved: list[Record] = []
    result = tune_live(space, measure, "hierarchical", seconds=12, on_record=saved.append,
                       clock=lambda: float(next(ticks)))
    assert result.stopped
    # The clock is read once at the start and once before each timing: 12 s leave room for about 11 timings.
    assert 5 <= len(timed) <= 12 and result.evaluations == len(timed) == len(saved)
    assert result.best == min(saved, key=lambda r: r.time)
    assert len(result.trace) == len(timed)


def test_failures_cost_an_evaluation_and_are_kept_with_their_status():
    recorded = read_recorded(FIXTURE)
    space, lookup, _ = candidates_of(recorded)
    fastest = recorded.optimum().config

    def measure(config):
        if config == fastest:
            return Record(config, "compile", None)
        return lookup(config)

    result = tune_live(space, measure, "hierarchical")
    statuses = {r.status for r in result.measured.records}
    assert "compile" in statuses
    assert result.best is not None and result.best.config != fastest
    assert result.chosen != fastest


def test_a_measurement_with_an_unknown_status_is_refused_even_after_good_ones():
    recorded = read_recorded(FIXTURE)
    space, lookup, timed = candidates_of(recorded)

    def measure(config):
        return lookup(config) if len(timed) < 5 else Record(config, "lost", None)

    with pytest.raises(ToolError, match="status 'lost'"):
        tune_live(space, measure, "hierarchical")


def test_what_measure_returns_is_kept_under_the_configuration_asked_for():
    recorded = read_recorded(FIXTURE)
    space, lookup, timed = candidates_of(recorded)
    first = recorded.records[0].config

    def measure(config):
        found = lookup(config)
        if len(timed) % 3 == 0:  # a correct run without a usable time is a failed one
            return Record(dict(first), "ok", 0.0 if len(timed) % 2 else math.nan)
        return Record(dict(first), found.status, found.time, found.times)  # the wrong configuration written

    result = tune_live(space, measure, "hierarchical")
    keys = [recorded.key(r.config) for r in result.measured.records]
    assert len(keys) == len(set(keys)) == result.evaluations
    assert all(r.status == "runtime" and r.time is None for r in result.measured.records[2::3])
    assert result.best is not None and result.best.time > 0


def test_candidate_space_refuses_what_cannot_be_a_space():
    with pytest.raises(InputError, match="no valid configuration"):
        candidate_space("k", "d", (1,), {"a": (1, 2)}, [])
    with pytest.raises(InputError, match="2 values for 1 parameters"):
        candidate_space("k", "d", (1,), {"a": (1, 2)}, [(1, 2)])
    with pytest.raises(InputError, match="unknown strategy"):
        tune_live(candidate_space("k", "d", (1,), {"a": (1, 2)}, [(1,)]), lambda c: Record(c, "ok", 1.0), "annealing")
    with pytest.raises(InputError, match="time limit must be positive"):
        tune_live(candidate_space("k", "d", (1,), {"a": (1, 2)}, [(1,)]), lambda c: Record(c, "ok", 1.0), seconds=0)
