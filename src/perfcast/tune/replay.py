"""Strategies replayed on a recorded tuning space: no hardware, the recorded times answer every evaluation.

A `RecordedTunable` presents a recorded space (a KernelTuner cache, a T4 file) as a Tunable: its parameters are
split into the hierarchy's levels (work-item, work-group; `default_levels` guesses from the names, and the user
can say), every configuration runs at the recorded problem size, and a configuration absent from the record is
one the space's constraints excluded. A `ReplaySession` evaluates from the record: each distinct configuration
asked for costs one evaluation, a failed one too (status compile/runtime/wrong, as it cost the tuner who
recorded it), and the best time found so far is traced after each evaluation. `replay` runs each strategy over
seeds and reports, per strategy, how many evaluations it needed to reach 90, 97 and 99 % of the space's optimum.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from perfcast.errors import InputError
from perfcast.tune.recorded import Record, RecordedSpace, Value
from perfcast.tune.space import SearchSpace
from perfcast.tune.store import Measurement
from perfcast.tune.strategies import STRATEGIES, run_strategy

if TYPE_CHECKING:
    from perfcast.tune.cluster import ClusterOptions

__all__ = ["FRACTIONS", "RecordedTunable", "ReplaySession", "StrategyReplay", "default_levels", "levels", "replay",
           "replay_run"]

FRACTIONS = (0.90, 0.97, 0.99)  # fractions of the optimum's performance the report counts evaluations to
# Parameter names that shape the work-group in the tuners people use (KernelTuner's block_size_*, OpenCL's
# local sizes); everything else is taken as the work-item's.
_GROUP_NAME = re.compile(r"^(block_size_[xyz]|wg_?size(_[xyz])?|work_?group_?size(_[xyz])?|local_size(_[xyz])?|"
                         r"threads_per_block|wgsize|block_dim_[xyz])$", re.IGNORECASE)


def default_levels(space: RecordedSpace) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return (work-item, work-group) parameters by name: block sizes and local sizes shape the work-group."""
    group = tuple(name for name in space.parameters if _GROUP_NAME.match(name))
    item = tuple(name for name in space.parameters if name not in group)
    return item, group


def levels(space: RecordedSpace, item: Sequence[str] | None = None, group: Sequence[str] | None = None
           ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return the (work-item, work-group) parameters: the ones given, else those guessed from the names.

    Given only the work-group, the work-item is every other parameter the names would put there.
    """
    guessed_item, guessed_group = default_levels(space)
    chosen_group = tuple(group) if group else guessed_group
    return (tuple(item) if item else tuple(p for p in guessed_item if p not in chosen_group)), chosen_group


@dataclass
class RecordedTunable:
    """A recorded space as the tuner's Tunable: recorded times, at the recorded problem size."""

    recorded: RecordedSpace
    item_parameters: tuple[str, ...]
    group_parameters: tuple[str, ...]
    name: str = ""

    def __post_init__(self) -> None:
        named = set(self.item_parameters) | set(self.group_parameters)
        unknown = named - set(self.recorded.parameters)
        if unknown:
            raise InputError(f"{sorted(unknown)}: not parameters of the space (it has "
                             f"{', '.join(self.recorded.parameters)})")
        both = set(self.item_parameters) & set(self.group_parameters)
        if both:
            raise InputError(f"{sorted(both)}: a parameter belongs to one level only")
        if not self.group_parameters:
            raise InputError("the hierarchy needs at least one work-group parameter (--group)")
        # Parameters the user put on no level keep the first value a record holds.
        self.name = self.name or self.recorded.kernel
        # A value no record holds is one the space's constraints rule out everywhere (KernelTuner lists the
        # values it was given, constraints or not): it is not a value of the space, and a start or a middle
        # placed by it would stand for no configuration.
        held = {name: {record.config[name] for record in self.recorded.records} for name in self.recorded.parameters}
        values = {name: tuple(v for v in listed if v in held[name]) or listed
                  for name, listed in self.recorded.parameters.items()}
        self.space = SearchSpace(values, [self._recorded])  # type: ignore[arg-type]

    def _recorded(self, config: Mapping[str, Any]) -> str | None:
        return None if self.recorded.record(dict(config)) else "not in the recorded space (excluded by its constraints)"

    def target(self) -> dict[str, int]:
        """Return the recorded problem size."""
        return {f"n{i}": int(n) for i, n in enumerate(self.recorded.problem_size)} or {"n": 1}

    def size_for(self, config: Mapping[str, int], groups: int) -> dict[str, int]:
        """Return the recorded problem size: a record has no other."""
        return self.target()

    def groups_for_target(self, config: Mapping[str, int]) -> int:
        """Return 1: the record holds the whole problem only."""
        return 1

    def invalid(self, config: Mapping[str, int], size: Mapping[str, int]) -> str | None:
        """Return None: the space's constraints already ruled out what is absent."""
        return None

    def run(self, config: Mapping[str, int], size: Mapping[str, int]) -> float:
        """Return the recorded time (s); replay evaluates through ReplaySession, which does not call this."""
        record = self.recorded.record(dict(config))
        if record is None or record.time is None:
            raise InputError(f"{dict(config)} has no recorded time")
        return record.time

    def throughput(self, size: Mapping[str, int], seconds: float) -> float:
        """Return runs per second (higher is better)."""
        return 1 / seconds

    def check(self, config: Mapping[str, int]) -> str | None:
        """Return None: a recorded wrong result is a failure record."""
        return None

    def environment(self) -> dict[str, Any]:
        """Return where the space was measured."""
        return {"device": self.recorded.device, "origin": self.recorded.origin}


@dataclass
class ReplaySession:
    """Evaluations answered from the record: each distinct configuration costs one, failed ones included."""

    tunable: RecordedTunable
    seen: dict[tuple[Value, ...], Measurement | None] = field(default_factory=dict)
    trace: list[float] = field(default_factory=list)  # best time (s) after each evaluation, inf before any

    def evaluate(self, step: str, config: Mapping[str, int], size: Mapping[str, int]) -> Measurement | None:
        """Return the recorded measurement of `config` (None if it failed or is not in the space)."""
        recorded = self.tunable.recorded
        record = recorded.record(dict(config))
        if record is None:
            return None
        key = recorded.key(dict(config))
        if key in self.seen:
            return repeated(self.seen[key], step)
        return answered(self.seen, self.trace, key, step, config, size, record)

    def evaluate_many(self, step: str, requests: Sequence[tuple[Mapping[str, int], Mapping[str, int]]]
                      ) -> list[Measurement | None]:
        """Return the measurements of several configurations, in their order."""
        return [self.evaluate(step, config, size) for config, size in requests]

    @property
    def evaluations(self) -> int:
        """Return the distinct configurations evaluated, failures included."""
        return len(self.seen)


def repeated(found: Measurement | None, step: str) -> Measurement | None:
    """Return an earlier answer for a configuration asked for again (None where it failed), under `step`."""
    return None if found is None else Measurement(step, found.config, found.size, found.mean, found.std,
                                                  found.samples, found.metric)


def answered(seen: dict[tuple[Value, ...], Measurement | None], trace: list[float], key: tuple[Value, ...], step: str,
             config: Mapping[str, int], size: Mapping[str, int], record: Record) -> Measurement | None:
    """Return `record` as the evaluation of `config` (s; None where it failed), noted in `seen` and the best-time `trace`."""
    best = trace[-1] if trace else math.inf
    if record.status != "ok" or record.time is None:
        seen[key] = None
        trace.append(best)
        return None
    samples = record.times or (record.time,)
    std = statistics.stdev(samples) if len(samples) > 1 else 0.0
    measurement = Measurement(step, dict(config), dict(size), record.time, std, samples, 1 / record.time)
    seen[key] = measurement
    trace.append(min(best, record.time))
    return measurement


@dataclass(frozen=True)
class StrategyReplay:
    """One strategy over seeds: evaluations to reach each fraction (None where a run never did), and results."""

    strategy: str
    seeds: int
    to_reach: dict[float, list[int | None]]  # fraction -> per seed
    chosen: list[float]  # per seed: optimum time / time of the configuration the strategy returned
    evaluations: list[int]  # per seed: evaluations the strategy made in all

    def summary(self, fraction: float) -> tuple[float | None, int, int | None, int | None]:
        """Return (median evaluations over the seeds that reached it, how many reached, min, max)."""
        reached = [n for n in self.to_reach[fraction] if n is not None]
        if not reached:
            return None, 0, None, None
        return statistics.median(reached), len(reached), min(reached), max(reached)


def replay_run(strategy: str, seed: int, recorded: RecordedSpace, item: Sequence[str], group: Sequence[str],
               budget: int | None) -> tuple[list[int | None], float, int]:
    """Return one replay run: evaluations to reach each fraction (None: never), optimum / chosen time, evaluations."""
    optimum = recorded.optimum().time
    assert optimum is not None
    session = ReplaySession(RecordedTunable(recorded, tuple(item), tuple(group)))
    result = run_strategy(session, strategy, budget or len(recorded.records), seed)
    to_reach = [next((i + 1 for i, best in enumerate(session.trace) if optimum / best >= fraction), None)
                for fraction in FRACTIONS]
    return to_reach, optimum / result.measurement.mean, session.evaluations


def replay(recorded: RecordedSpace, strategies: Sequence[str], seeds: int, item: Sequence[str] | None = None,
           group: Sequence[str] | None = None, budget: int | None = None,
           cluster: ClusterOptions | None = None) -> list[StrategyReplay]:
    """Replay each strategy `seeds` times on the recorded space; `budget` caps random search (default: all).

    With `cluster` (several workers, or a Ray cluster), the (strategy, seed) runs are spread over Ray tasks;
    every run is deterministic in its seed, so the result is the same as run one after the other.
    """
    if seeds < 1:
        raise InputError("--seeds must be at least 1")
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise InputError(f"unknown strategy {unknown[0]!r}; choose from {', '.join(STRATEGIES)}")
    item, group = levels(recorded, item, group)
    RecordedTunable(recorded, item, group)  # bad levels and a space without a correct run are refused here,
    recorded.optimum()  # before any run is sent anywhere
    jobs = [(strategy, seed) for strategy in strategies for seed in range(seeds)]
    if cluster is not None and cluster.parallel:
        from perfcast.tune.cluster import parallel_map

        runs = parallel_map(replay_run, jobs, cluster,
                            {"recorded": recorded, "item": item, "group": group, "budget": budget})
    else:
        runs = [replay_run(strategy, seed, recorded, item, group, budget) for strategy, seed in jobs]
    results = []
    for strategy in strategies:
        mine = [run for (name, _), run in zip(jobs, runs) if name == strategy]
        to_reach = {fraction: [run[0][i] for run in mine] for i, fraction in enumerate(FRACTIONS)}
        results.append(StrategyReplay(strategy, seeds, to_reach, [run[1] for run in mine], [run[2] for run in mine]))
    return results
