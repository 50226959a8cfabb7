"""Recorded tuning spaces: KernelTuner caches and T4 results read, written back, and replayed."""

import gzip
import json
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.cli import app
from perfcast.tune.recorded import RecordedSpaceError, read_recorded, to_kerneltuner, to_t4
from perfcast.tune.replay import RecordedTunable, ReplaySession, default_levels, replay

DATA = Path(__file__).parents[1] / "data" / "tune"
CACHE = DATA / "convolution-a100-subset.json"
T4 = DATA / "convolution-a100-subset_T4.json"
OPTIMUM = {"block_size_x": 32, "block_size_y": 4, "tile_size_x": 1, "tile_size_y": 3, "read_only": 1,
           "use_padding": 0, "use_shmem": 1, "use_cmem": 1, "filter_height": 15, "filter_width": 15}
runner = CliRunner()


@pytest.mark.parametrize("path", [CACHE, T4])
def test_both_formats_read_the_same_space(path):
    space = read_recorded(path)
    assert len(space.records) == 146
    assert sorted(r.status for r in space.records if r.status != "ok") == ["compile", "runtime"]
    best = space.optimum()
    assert best.config == OPTIMUM
    assert best.time == pytest.approx(0.5536000076681376e-3)  # ms in the files, s here
    assert len(best.times) == 5 and statistics.median(best.times) == pytest.approx(best.time, rel=0.02)


def test_a_kerneltuner_1_5_cache_reads_its_failures_and_its_objective_list():
    space = read_recorded(DATA / "kerneltuner-1.5-h200-subset.json")
    assert space.device == "NVIDIA H200" and space.objective == "time"
    assert [r.status for r in space.records] == ["ok"] * 4 + ["runtime", "compile"]
    assert all(r.time and r.time < 1e-2 for r in space.valid())


def test_a_problem_size_kerneltuner_wrote_as_callable_is_unknown_not_an_error(tmp_path):
    data = json.loads((DATA / "kerneltuner-1.5-h200-subset.json").read_text())
    (tmp_path / "c.json").write_text(json.dumps({**data, "problem_size": "callable"}))
    assert read_recorded(tmp_path / "c.json").problem_size == ()


def test_a_cache_of_several_objectives_is_refused(tmp_path):
    data = json.loads((DATA / "kerneltuner-1.5-h200-subset.json").read_text())
    (tmp_path / "two.json").write_text(json.dumps({**data, "objective": ["time", "energy"]}))
    with pytest.raises(RecordedSpaceError, match="2 objectives"):
        read_recorded(tmp_path / "two.json")


def test_kerneltuner_cache_details():
    space = read_recorded(CACHE)
    assert space.device == "NVIDIA A100-PCIE-40GB" and space.kernel == "convolution_kernel"
    assert space.problem_size == (4096, 4096)
    assert space.parameters["block_size_y"] == (1, 2, 4, 8, 16)
    assert "GFLOP/s" in space.optimum().metrics
    assert space.record({**OPTIMUM, "block_size_x": 80}) is None  # absent: the constraints excluded it


@pytest.mark.parametrize("convert", [to_kerneltuner, to_t4])
def test_written_files_read_back_equal(tmp_path, convert):
    space = read_recorded(CACHE)
    path = tmp_path / "out.json.gz"
    with gzip.open(path, "wt") as handle:
        json.dump(convert(space), handle)
    again = read_recorded(path)
    assert [(r.config, r.status) for r in again.records] == [(r.config, r.status) for r in space.records]
    for a, b in zip(again.records, space.records):
        assert (a.time is None) == (b.time is None) and (a.time is None or a.time == pytest.approx(b.time))
        assert a.times == pytest.approx(b.times)


def test_the_tuner_that_chose_the_configurations_survives_a_kerneltuner_cache(tmp_path):
    space = read_recorded(CACHE)
    assert space.tuner == ""  # KernelTuner's own caches do not say
    space.tuner = "perfcast hierarchical (KernelTuner 1.5.0 timing each configuration)"
    path = tmp_path / "out.json"
    path.write_text(json.dumps(to_kerneltuner(space)))
    assert read_recorded(path).tuner == space.tuner


def test_an_open_kerneltuner_cache_is_read(tmp_path):
    """KernelTuner leaves its cache unterminated while it tunes."""
    text = CACHE.read_text()
    path = tmp_path / "open.json"
    path.write_text(text.rstrip().removesuffix("}}") + ",")
    assert len(read_recorded(path).records) == 146


@pytest.mark.parametrize(("content", "message"), [
    ("not json", "not JSON"),
    ("[]", "not a JSON object"),
    ('{"hello": 1}', "neither KernelTuner"),
    ('{"cache": {}, "tune_params": {}}', "needs tune_params_keys"),
    ('{"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {"1": {"a": 1, "time": "Exploded"}}}',
     "has time 'Exploded'"),
    ('{"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {"1": {"time": 1.0}}}', "lacks a"),
    ('{"tune_params_keys": ["a", "b"], "tune_params": {"a": [1]}, "cache": {}}', "tune_params lacks"),
    ('{"results": []}', "no results"),
    ('{"results": [{"configuration": {"a": 1}, "invalidity": "cosmic rays"}]}', "invalidity 'cosmic rays'"),
    ('{"results": [{"configuration": {"a": 1}, "invalidity": "correct"}]}', "correct but has no time"),
])
def test_malformed_files_say_what_is_wrong(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(RecordedSpaceError, match=message):
        read_recorded(path)
    with pytest.raises(RecordedSpaceError, match="cannot read"):
        read_recorded(tmp_path / "missing.json")


def test_the_levels_guessed_from_the_names():
    item, group = default_levels(read_recorded(CACHE))
    assert group == ("block_size_x", "block_size_y")
    assert "tile_size_x" in item and "block_size_x" not in item


def test_replay_counts_each_configuration_once_failures_included():
    space = read_recorded(CACHE)
    item, group = default_levels(space)
    session = ReplaySession(RecordedTunable(space, item, group))
    failed = next(r for r in space.records if r.status == "compile")
    assert session.evaluate("s", failed.config, {}) is None and session.evaluations == 1
    assert session.evaluate("s", failed.config, {}) is None and session.evaluations == 1  # asked again: free
    best = session.evaluate("s", OPTIMUM, {})
    assert best.mean == space.optimum().time and session.evaluations == 2
    assert session.evaluate("s", {**OPTIMUM, "block_size_x": 80}, {}) is None and session.evaluations == 2
    assert session.trace == [float("inf"), best.mean]


def test_replay_of_every_strategy():
    space = read_recorded(CACHE)
    results = {r.strategy: r for r in replay(space, ["exhaustive", "random", "hierarchical"], seeds=4)}
    exhaustive = results["exhaustive"]
    assert exhaustive.chosen == [1.0] * 4 and exhaustive.evaluations == [146] * 4
    assert all(n is not None for n in exhaustive.to_reach[0.99])
    random = results["random"]
    assert random.chosen == [1.0] * 4  # with the whole space as budget it finds the optimum
    assert len(set(random.to_reach[0.97])) > 1  # different seeds, different paths
    hierarchical = results["hierarchical"]
    assert max(hierarchical.evaluations) < 146
    for counts in hierarchical.to_reach.values():  # a count is where the trace first reached it
        for n in counts:
            assert n is None or n <= hierarchical.evaluations[0]
    with pytest.raises(ValueError, match="unknown strategy"):
        replay(space, ["psychic"], seeds=1)
    with pytest.raises(ValueError, match="not parameters of the space"):
        replay(space, ["hierarchical"], seeds=1, group=["warp_size"])


def test_replay_and_convert_commands(tmp_path):
    result = runner.invoke(app, ["tune", "replay", str(T4), "--seeds", "3", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {s["strategy"] for s in data["strategies"]} == {"hierarchical", "hierarchical-measured", "exhaustive", "random"}
    assert data["levels"]["group"] == ["block_size_x", "block_size_y"] and data["failed"] == 2
    table = runner.invoke(app, ["tune", "replay", str(CACHE), "-s", "random", "--seeds", "2"])
    assert table.exit_code == 0 and "evaluations to reach" in table.output
    out = tmp_path / "cache.json"
    converted = runner.invoke(app, ["tune", "convert", str(T4), str(out), "--to", "kerneltuner"])
    assert converted.exit_code == 0, converted.output
    assert len(json.loads(out.read_text())["cache"]) == 146
    bad = runner.invoke(app, ["tune", "replay", str(CACHE), "--group", "nope"])
    assert bad.exit_code == 2 and "not parameters of the space" in bad.output
    wrong_format = runner.invoke(app, ["tune", "convert", str(T4), str(out), "--to", "csv"])
    assert wrong_format.exit_code == 2 and "one of kerneltuner, t4" in wrong_format.output
