"""Is the tuner trustworthy on this machine? Independent runs, their choices re-measured together.

An exhaustive run finds the candidates for the best configuration (its best few by mean). Then `runs`
independent runs of a strategy — each with a new store and a new kernel object, so nothing measured by one
serves another — choose their configurations, each with its evaluations and wall time. Finally every
configuration chosen and every candidate are re-measured together, round-robin, for a fixed number of
rounds; the best of them by the median over the rounds is the best known, and each run scores the paired
ratio of its choice to it. Decisions inside the noise show up as fractions below 1. In each round every
configuration runs `launches` times back to back and counts by its median launch, so that one launch that
the machine disturbed does not decide a round: the validation must be steadier than what it judges.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfcast.errors import InputError
from perfcast.tune.racing import race
from perfcast.tune.store import ResultsStore
from perfcast.tune.strategies import Session, Tunable, run_strategy

__all__ = ["OtherChoice", "RunOutcome", "TuningValidation", "read_other_choices", "validate_tuning"]

CANDIDATES = 5  # the exhaustive run's best configurations re-measured beside the runs' choices


@dataclass(frozen=True)
class RunOutcome:
    """One independent run: its choice, its evaluations and wall time, and the choice's re-measured fraction."""

    config: dict[str, int]
    evaluations: int
    wall_s: float
    fraction: float  # performance of the choice / the best known, paired over the final rounds
    interval: tuple[float, float]


@dataclass(frozen=True)
class OtherChoice:
    """A configuration another tuner chose (KernelTuner, ...), to be re-measured beside perfcast's runs."""

    label: str  # e.g. 'KernelTuner genetic_algorithm'
    config: dict[str, int]
    evaluations: int
    wall_s: float


@dataclass(frozen=True)
class TuningValidation:
    """The runs, the best known configuration, and every re-measured configuration's median and spread."""

    strategy: str
    runs: list[RunOutcome]
    others: list[tuple[str, RunOutcome]]  # (label, outcome) of the other tuners' choices
    best_known: dict[str, int]
    exhaustive_evaluations: int
    exhaustive_wall_s: float
    remeasured: list[tuple[dict[str, int], float, float]]  # config, median metric, round spread
    rounds: int
    environment: dict[str, Any]
    launches: int  # launches per configuration and round (the round counts their median)

    def fractions(self) -> list[float]:
        """Return each run's fraction of the best known."""
        return [r.fraction for r in self.runs]


def _key(config: Mapping[str, int]) -> str:
    return json.dumps(dict(config), sort_keys=True)


def validate_tuning(make_tunable: Callable[[], Tunable], folder: Path, *, runs: int = 7,
                    strategy: str = "hierarchical", repetitions: int = 10, rounds: int = 15, launches: int = 3,
                    budget: int | None = None, others: Sequence[OtherChoice] = (),
                    progress: Callable[[str], None] = lambda _: None) -> TuningValidation:
    """Run the validation of the module docstring; stores go into `folder` (one per run, and the exhaustive one).

    `others`: configurations other tuners chose on the same machine; they are re-measured in the same rounds.
    """
    if runs < 1 or rounds < 2 or launches < 1:
        raise ValueError("the validation needs at least 1 run, 2 rounds and 1 launch per round")
    folder.mkdir(parents=True, exist_ok=True)
    tunable = make_tunable()
    store = ResultsStore(folder / "exhaustive.sqlite")
    started = time.perf_counter()
    try:
        run_id, _ = store.open_run(tunable.name, "exhaustive", tunable.environment(), tunable.target(), repetitions)
        progress("exhaustive search")
        exhaustive = run_strategy(Session(tunable, store, run_id, repetitions, progress=progress, racing=False),
                                  "exhaustive")
        target = exhaustive.measurement.size
        at_target = [m for m in store.measurements(run_id) if m.size == target]
    finally:
        store.close()
    exhaustive_wall = time.perf_counter() - started
    candidates = sorted(at_target, key=lambda m: -m.metric)[:CANDIDATES]
    outcomes: list[tuple[dict[str, int], int, float]] = []
    for index in range(runs):
        progress(f"{strategy} run {index + 1} of {runs}")
        fresh = make_tunable()
        run_store = ResultsStore(folder / f"run-{index + 1}.sqlite")
        started = time.perf_counter()
        try:
            rid, _ = run_store.open_run(fresh.name, strategy, fresh.environment(), fresh.target(), repetitions)
            result = run_strategy(Session(fresh, run_store, rid, repetitions, progress=progress), strategy, budget)
        finally:
            run_store.close()
        outcomes.append((dict(result.best), result.evaluations, time.perf_counter() - started))
    configs: dict[str, dict[str, int]] = {}
    for other in others:
        reason = tunable.space.invalid(other.config)
        if reason:
            raise ValueError(f"{other.label} chose {other.config}, not in this space: {reason}")
    for config in [*(o[0] for o in outcomes), *(o.config for o in others), *(dict(m.config) for m in candidates)]:
        configs.setdefault(_key(config), config)
    listed = list(configs.values())
    sizes = [tunable.size_for(c, tunable.groups_for_target(c)) for c in listed]
    progress(f"re-measuring {len(listed)} configurations round-robin, {rounds} rounds of {launches} launches")
    for config, size in zip(listed, sizes):
        tunable.run(config, size)  # warm-up

    def per_work(i: int) -> float:
        seconds = statistics.median(tunable.run(listed[i], sizes[i]) for _ in range(launches))
        return 1 / tunable.throughput(sizes[i], seconds)

    final = race(per_work, len(listed), min_rounds=rounds, max_rounds=rounds)
    medians = [1 / statistics.median(samples) for samples in final.samples]
    remeasured = [(listed[i], medians[i], final.spread(i)) for i in range(len(listed))]
    by_key = {_key(c): i for i, c in enumerate(listed)}
    def outcome(config: dict[str, int], evaluations: int, wall: float) -> RunOutcome:
        ratio = final.ratios[by_key[_key(config)]]
        return RunOutcome(config, evaluations, wall, ratio.estimate, (ratio.low, ratio.high))

    run_outcomes = [outcome(*o) for o in outcomes]
    other_outcomes = [(o.label, outcome(o.config, o.evaluations, o.wall_s)) for o in others]
    return TuningValidation(strategy, run_outcomes, other_outcomes, listed[final.leader], exhaustive.evaluations,
                            exhaustive_wall, remeasured, rounds, dict(tunable.environment()), launches)


def read_other_choices(path: Path) -> list[OtherChoice]:
    """Return the choices in a JSON file of other tuners' runs ({"choices": [{label, config, evaluations, wall_s}]})."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [OtherChoice(str(c["label"]), {k: int(v) for k, v in c["config"].items()}, int(c["evaluations"]),
                            float(c["wall_s"])) for c in data["choices"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise InputError(f"{path}: not a file of other tuners' choices ({error})") from None
