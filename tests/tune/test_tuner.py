"""The tuner on a synthetic kernel with a known landscape: strategies, constraints, the store and resuming."""

import json
from dataclasses import dataclass, field

import pytest

from perfcast.tune.space import SearchSpace
from perfcast.tune.store import ResultsStore
from perfcast.tune.strategies import STRATEGIES, Session, exhaustive, hierarchical, random_search, run_strategy

TARGET = 4096


@dataclass
class SyntheticKernel:
    """A deterministic stand-in for a kernel: time = work / speed(config); speed peaks at a known point."""

    name: str = "synthetic"
    item_parameters: tuple = ("block", "unroll")
    group_parameter: str = "group"
    calls: list = field(default_factory=list)
    fail_after: int | None = None
    broken_unroll: int | None = None  # this unroll fails to build
    wrong_block: int | None = None  # this block computes a wrong result

    @property
    def group_parameters(self):
        return (self.group_parameter,)

    def __post_init__(self):
        self.space = SearchSpace(
            {"block": (1, 2, 4, 8, 16), "unroll": (1, 2, 4, 8), "group": (1, 2, 4, 8, 16)},
            [lambda c: "block x group > 64" if c["block"] * c["group"] > 64 else None],
        )

    def target(self):
        return {"n": TARGET}

    def size_for(self, config, groups):
        return {"n": config["block"] * config["group"] * groups}

    def groups_for_target(self, config):
        per = config["block"] * config["group"]
        return TARGET // per if TARGET % per == 0 else 0

    def invalid(self, config, size):
        return None if size["n"] <= TARGET else "too big"

    def speed(self, config):
        # best at block 8 (within 3 % at 4), unroll 4, group 8; saturates at 2 groups of the device
        b, u, g = config["block"], config["unroll"], config["group"]
        return min(b, 4) * (1 + 0.01 * (b >= 8)) * (u if u <= 4 else 3) * min(g, 8)

    def run(self, config, size):
        self.calls.append((json.dumps(config, sort_keys=True), size["n"]))
        if self.fail_after is not None and len(self.calls) > self.fail_after:
            raise KeyboardInterrupt
        if config["unroll"] == self.broken_unroll:
            raise RuntimeError("clBuildProgram failed: BUILD_PROGRAM_FAILURE")
        groups = size["n"] / (config["block"] * config["group"])
        return size["n"] / self.speed(config) / min(groups, 2) * 1e-6

    def throughput(self, size, seconds):
        return size["n"] / seconds

    def check(self, config):
        return "off by 1e-2" if config["block"] == self.wrong_block else None

    def environment(self):
        return {"device": "synthetic"}


def session(kernel, store, strategy="hierarchical", repetitions=2, racing=False):
    run_id, resumed = store.open_run(kernel.name, strategy, kernel.environment(), kernel.target(), repetitions)
    return Session(kernel, store, run_id, repetitions, racing=racing), resumed


def test_space_and_constraints():
    kernel = SyntheticKernel()
    assert kernel.space.invalid({"block": 16, "unroll": 1, "group": 8}) == "block x group > 64"
    assert kernel.space.invalid({"block": 1, "unroll": 1}) == "missing parameter 'group'"
    assert kernel.space.invalid({"block": 3, "unroll": 1, "group": 1}) == "block = 3 is not one of its values [1, 2, 4, 8, 16]"
    assert kernel.space.size() == 5 * 4 * 5 - 3 * 4  # (8,16), (16,8), (16,16) are out, for each of 4 unrolls
    assert all(c["block"] * c["group"] <= 64 for c in kernel.space)
    with pytest.raises(ValueError, match="no values"):
        SearchSpace({"a": ()})


def test_exhaustive_finds_the_optimum(tmp_path):
    kernel = SyntheticKernel()
    store = ResultsStore(tmp_path / "r.sqlite")
    s, _ = session(kernel, store, "exhaustive")
    result = exhaustive(s)
    assert result.best["unroll"] == 4 and result.best["group"] == 8
    assert result.evaluations == kernel.space.size()


def test_hierarchical_reaches_the_optimum_with_fewer_evaluations(tmp_path):
    store = ResultsStore(tmp_path / "r.sqlite")
    best = exhaustive(session(SyntheticKernel(), store, "exhaustive")[0])
    kernel = SyntheticKernel()
    result = hierarchical(session(kernel, store)[0])
    assert result.measurement.metric >= 0.97 * best.measurement.metric
    assert result.evaluations < best.evaluations
    # step 1 keeps the smallest block within 97 % of the best: 4, not 8
    assert result.steps["work-item"]["block"] == 4
    assert result.steps["work-group"]["group"] == 8
    # every configuration was run once for warm-up and `repetitions` times, never measured twice
    assert len(kernel.calls) == 3 * result.evaluations


def test_random_respects_its_budget(tmp_path):
    store = ResultsStore(tmp_path / "r.sqlite")
    result = random_search(session(SyntheticKernel(), store, "random")[0], budget=7, seed=3)
    assert result.evaluations == 7


def test_interrupted_run_resumes_without_measuring_again(tmp_path):
    store = ResultsStore(tmp_path / "r.sqlite")
    first = SyntheticKernel(fail_after=20)
    s, resumed = session(first, store)
    assert not resumed
    with pytest.raises(KeyboardInterrupt):
        hierarchical(s)
    kept = store.distinct_measurements(s.run_id)
    assert kept == 6  # 20 runs = 6 configurations x (1 warm-up + 2 repetitions), the 7th interrupted
    second = SyntheticKernel()
    s2, resumed = session(second, store)
    assert resumed and s2.run_id == s.run_id
    result = hierarchical(s2)
    assert len(second.calls) == 3 * (result.evaluations - kept)  # nothing stored was run again
    store.finish(s2.run_id, {"best": result.best})
    assert session(SyntheticKernel(), store)[1] is False  # a finished run is not resumed


def test_store_records_environment_and_exports(tmp_path):
    store = ResultsStore(tmp_path / "r.sqlite")
    s, _ = session(SyntheticKernel(), store, "random")
    random_search(s, budget=3)
    info = store.run_info(s.run_id)
    assert info["environment"] == {"device": "synthetic"} and info["repetitions"] == 2
    rows = store.export_csv(s.run_id, tmp_path / "r.csv").read_text().splitlines()
    assert rows[0].split(",") == ["step", "block", "group", "unroll", "n", "mean_s", "std_s", "repetitions", "metric"]
    assert len(rows) == 4
    with pytest.raises(LookupError, match="no tuning run 99"):
        store.run_info(99)


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_every_registered_strategy_runs_through_run_strategy(tmp_path, name):
    store = ResultsStore(tmp_path / "r.sqlite")
    kernel = SyntheticKernel()
    result = run_strategy(session(kernel, store, name)[0], name, budget=5, seed=1)
    assert kernel.space.invalid(result.best) is None
    assert result.evaluations >= 1 and result.measurement.metric > 0
    assert STRATEGIES[name][0]  # a description for the CLI help


def test_an_unknown_strategy_names_the_registered_ones(tmp_path):
    store = ResultsStore(tmp_path / "r.sqlite")
    with pytest.raises(ValueError, match="choose one of hierarchical, hierarchical-measured, exhaustive, random"):
        run_strategy(session(SyntheticKernel(), store, "x")[0], "annealing")


def test_failures_are_results_stored_and_skipped_on_resume(tmp_path):
    """A build that fails and a wrong answer are stored with their status; the run goes on, and resumes past them."""
    store = ResultsStore(tmp_path / "r.sqlite")
    kernel = SyntheticKernel(broken_unroll=8, wrong_block=16, fail_after=70)
    s, _ = session(kernel, store, "exhaustive")
    with pytest.raises(KeyboardInterrupt):
        exhaustive(s)
    before = store.failures(s.run_id)
    assert before and {f["status"] for f in before} <= {"compile", "wrong"}
    assert all("BUILD_PROGRAM_FAILURE" in f["message"] for f in before if f["status"] == "compile")
    resumed_kernel = SyntheticKernel(broken_unroll=8, wrong_block=16)
    s2, resumed = session(resumed_kernel, store, "exhaustive")
    assert resumed
    result = exhaustive(s2)
    failures = store.failures(s2.run_id)
    statuses = {f["status"] for f in failures}
    assert statuses == {"compile", "wrong"}
    failed_configs = {json.dumps(f["config"], sort_keys=True) for f in failures}
    # nothing that failed before the interruption was built or run again
    assert not {json.dumps(f["config"], sort_keys=True) for f in before} & {c for c, _ in resumed_kernel.calls}
    assert all(c["unroll"] != 8 and c["block"] != 16 for c in [result.best])
    assert result.evaluations == kernel.space.size()  # every configuration evaluated once: measured or failed
    assert len(failed_configs) == len(failures)
    assert s2.failed == len(failures) - len(before)


def test_failure_statuses():
    from perfcast.tune.strategies import ConfigurationFailed, failure_of

    assert failure_of(RuntimeError("clBuildProgram failed: BUILD_PROGRAM_FAILURE")).status == "compile"
    assert failure_of(ValueError("out of resources")).status == "runtime"
    assert failure_of(ConfigurationFailed("timeout", "ran 60 s")).status == "timeout"
    store_error = pytest.raises(ValueError, match="failure status")
    with store_error:
        ResultsStore.record_failure(None, 1, {}, {}, "exploded", "")  # type: ignore[arg-type]


def test_a_run_exported_for_kerneltuner_reads_back(tmp_path):
    """`tune report --kerneltuner/--t4`: the run's target-size measurements and failures, in both formats."""
    from typer.testing import CliRunner

    from perfcast.cli import app
    from perfcast.tune.recorded import read_recorded

    path = tmp_path / "r.sqlite"
    store = ResultsStore(path)
    s, _ = session(SyntheticKernel(broken_unroll=8), store, "exhaustive")
    result = exhaustive(s)
    store.finish(s.run_id, {"best": result.best, "metric": result.measurement.metric})
    store.close()
    kt, t4 = tmp_path / "run.json", tmp_path / "run_T4.json"
    done = CliRunner().invoke(app, ["tune", "report", str(s.run_id), "--store", str(path), "--kerneltuner", str(kt),
                                    "--t4", str(t4)])
    assert done.exit_code == 0, done.output
    for exported in (kt, t4):
        space = read_recorded(exported)
        assert len(space.records) == SyntheticKernel().space.size()
        assert space.optimum().config == result.best
        assert {r.status for r in space.records} == {"ok", "compile"}
    assert read_recorded(kt).problem_size == (TARGET,)


def test_a_budget_leaves_the_chosen_results_review_whole(tmp_path):
    """A budget spent before step 4 still lets the chosen descent's result be reviewed at the target: the run
    ends where the unbudgeted one does (the budget caps the extras: order-free moves, other descents' reviews)."""
    store = ResultsStore(tmp_path / "r.sqlite")
    free = hierarchical(session(SyntheticKernel(), store)[0])
    reviewed_only = {(str(m.config), str(m.size)) for m in store.measurements(1) if m.step == "4-review"} - {
        (str(m.config), str(m.size)) for m in store.measurements(1) if m.step != "4-review"}
    assert reviewed_only  # the review measures configurations nothing before it did
    assert free.steps["review"] != free.steps["work-group"]  # and moves the chosen descent's result
    before_review = store.distinct_measurements(1) - len(reviewed_only)
    capped_store = ResultsStore(tmp_path / "c.sqlite")
    capped = run_strategy(session(SyntheticKernel(), capped_store)[0], "hierarchical", budget=before_review)
    assert capped.best == free.best
    assert capped.evaluations <= free.evaluations
    assert any(m.step == "4-review" for m in capped_store.measurements(1))
    # Without the review (as a budget used to stop it) the run would have kept the descents' result.
    assert capped.steps["review"] == free.steps["review"]


def test_model_6_spares_the_saturated_ndranges(tmp_path):
    """The synthetic device saturates at 2 work-groups: after 1, 2 and 4 the larger NDRanges are predicted."""
    store = ResultsStore(tmp_path / "r.sqlite")
    s, _ = session(SyntheticKernel(), store)
    result = hierarchical(s)
    step3 = [m for m in store.measurements(s.run_id) if m.step == "3-ndrange"]
    groups = sorted(m.size["n"] // (m.config["block"] * m.config["group"]) for m in step3)
    assert groups == [1, 2, 4]
    (note,) = result.notes
    assert "n_CU = 2" in note and "larger NDRanges are predicted saturated" in note
    target_groups = SyntheticKernel().groups_for_target(result.steps["work-group"])
    assert f"the {target_groups.bit_length() - 3} larger" in note
    assert result.steps["ndrange"]["groups"] in (2, 4)


def test_the_unguided_baseline_measures_every_ndrange(tmp_path):
    """hierarchical-measured: the same steps, every NDRange of step 3 measured, the same choice on this device."""
    guided_store, measured_store = ResultsStore(tmp_path / "g.sqlite"), ResultsStore(tmp_path / "m.sqlite")
    sg, _ = session(SyntheticKernel(), guided_store)
    sm, _ = session(SyntheticKernel(), measured_store)
    guided, measured = hierarchical(sg), STRATEGIES["hierarchical-measured"][1](sm, None, 0)
    step3 = [m for m in measured_store.measurements(sm.run_id) if m.step == "3-ndrange"]
    target_groups = SyntheticKernel().groups_for_target(measured.steps["work-group"])
    assert len(step3) == target_groups.bit_length() and not measured.notes  # 1, 2, 4, ... up to the target
    # The model spared bit_length - 3 NDRanges; the guided run's review then measures the largest (the target)
    # itself, so one evaluation of them comes back.
    assert measured.evaluations - guided.evaluations == target_groups.bit_length() - 4
    assert measured.best == guided.best


@dataclass
class GroupAmortisingKernel(SyntheticKernel):
    """A larger work-group gains 0.4 % per doubling (the launch spread over more work); `noise` jitters each run."""

    noise: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        import random

        self.random = random.Random(7)

    def speed(self, config):
        b, u, g = config["block"], config["unroll"], config["group"]
        return min(b, 4) * (u if u <= 4 else 3) * (1 + 0.004 * g.bit_length())

    def run(self, config, size):
        return super().run(config, size) * (1 + self.noise * self.random.random())


def test_step_2_gives_a_tie_to_the_smaller_work_group(tmp_path):
    """Races that cannot tell the groups apart keep the smallest; told apart (no noise), the best measured."""
    noisy = hierarchical(session(GroupAmortisingKernel(noise=0.3), ResultsStore(tmp_path / "n.sqlite"),
                                 repetitions=3, racing=True)[0], guided=False)
    assert noisy.steps["work-group"]["group"] == 1
    steady = hierarchical(session(GroupAmortisingKernel(), ResultsStore(tmp_path / "s.sqlite"), racing=True)[0],
                          guided=False)
    assert steady.steps["work-group"]["group"] == 16
    replayed = hierarchical(session(GroupAmortisingKernel(), ResultsStore(tmp_path / "r.sqlite"))[0], guided=False)
    assert replayed.steps["work-group"]["group"] == 16  # the means decide: no tie without a race


def test_model_5_spares_the_larger_work_groups(tmp_path):
    """One work-group whose time grows with its items (n_PE = 1): after 1, 2 and 4 items, 8 and 16 are predicted.

    They were 0.4 % faster per doubling here: the quality the guidance gives up in step 2, for two evaluations
    (the review at the target size may win it back, at evaluations of its own).
    """
    store = ResultsStore(tmp_path / "g.sqlite")
    s, _ = session(GroupAmortisingKernel(), store)
    guided = hierarchical(s)
    step2 = sorted({m.config["group"] for m in store.measurements(s.run_id) if m.step == "2-group"})
    assert step2 == [1, 2, 4] and guided.steps["work-group"]["group"] == 4
    assert any("model (5)" in note and "n_PE = 1" in note and "group 8, 16 predicted no faster" in note for note in guided.notes)
    unguided = ResultsStore(tmp_path / "m.sqlite")
    s, _ = session(GroupAmortisingKernel(), unguided)
    measured = hierarchical(s, guided=False)
    assert not any("model (5)" in note for note in measured.notes)
    assert sorted({m.config["group"] for m in unguided.measurements(s.run_id) if m.step == "2-group"}) == [1, 2, 4, 8, 16]


@dataclass
class DiminishingKernel(SyntheticKernel):
    """Per unit of work a block costs 1 + 0.02 / block: models (1)-(3)'s form, nearly flat from block 4 on."""

    def speed(self, config):
        b, u, g = config["block"], config["unroll"], config["group"]
        return (u if u <= 4 else 3) * min(g, 8) / (1 + 0.02 / b)


def test_step_1_spares_values_its_model_puts_within_3_percent(tmp_path):
    store = ResultsStore(tmp_path / "g.sqlite")
    s, _ = session(DiminishingKernel(), store)
    guided = hierarchical(s)
    blocks = sorted({m.config["block"] for m in store.measurements(s.run_id) if m.step == "1-item:block"})
    assert blocks == [1, 2, 4]
    (note,) = [n for n in guided.notes if n.startswith("1-item:block")]
    assert "a + b / block fitted to block 1, 2, 4" in note and "puts block 8, 16 at most" in note
    # unroll's time per unit of work halves with each doubling up to 4: a + b / unroll does not predict
    # 8 to be within 3 %, so it is measured (and is slower).
    unrolls = sorted({m.config["unroll"] for m in store.measurements(s.run_id) if m.step == "1-item:unroll"})
    assert unrolls == [1, 2, 4, 8] and guided.steps["work-item"]["unroll"] == 4
    measured = hierarchical(session(DiminishingKernel(), ResultsStore(tmp_path / "m.sqlite"))[0], guided=False)
    assert not any(n.startswith("1-item") for n in measured.notes)
    assert measured.steps["work-item"]["block"] == guided.steps["work-item"]["block"]


def test_step_1_guidance_leaves_values_of_zero_alone(tmp_path):
    """A flag or an offset (0, 1, 2, ...) is not a size: a + b / x cannot describe it, so nothing is spared."""
    from perfcast.tune.store import Measurement
    from perfcast.tune.strategies import _work_item_guide

    measured = [Measurement("1-item:pad", {"pad": v}, {"n": 1}, 1.0, 0.0, (1.0,), m) for v, m in ((0, 1.0), (1, 1.0), (2, 1.0))]
    assert _work_item_guide(measured, "pad", [3, 4]) is None
    flat = [Measurement("1-item:b", {"b": v}, {"n": 1}, 1.0, 0.0, (1.0,), 1.0) for v in (1, 2, 4)]
    assert "puts b 8 at most 0.0% faster" in _work_item_guide(flat, "b", [8])


def test_an_interrupted_random_run_resumes_to_its_budget(tmp_path):
    """The budget counts what the run asked for, the answers found in the store included: a resumed run ends
    where an uninterrupted one would, with the same configurations."""
    from perfcast.tune.strategies import random_search

    store = ResultsStore(tmp_path / "r.sqlite")
    s, _ = session(SyntheticKernel(fail_after=10), store, "random")
    with pytest.raises(KeyboardInterrupt):
        random_search(s, 8, seed=3)
    kept = store.distinct_measurements(s.run_id)
    assert 0 < kept < 8
    s2, resumed = session(SyntheticKernel(), store, "random")
    result = random_search(s2, 8, seed=3)
    assert resumed and result.evaluations == 8 and s2.measured == 8 - kept and s2.reused == kept
    fresh, _ = session(SyntheticKernel(), ResultsStore(tmp_path / "fresh.sqlite"), "random")
    assert random_search(fresh, 8, seed=3).best == result.best
