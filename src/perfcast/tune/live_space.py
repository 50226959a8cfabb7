"""A space whose valid configurations are known beforehand, measured live as a strategy asks for them.

A KernelTuner kernel is such a space: KernelTuner lists its valid configurations under the kernel's
restrictions and times any one of them, and perfcast's strategies choose which to time. `LiveSession` is the
evaluator: it answers the strategy the way `ReplaySession` answers from a record, but through a `measure`
callable that times the configuration there and then (a failure is a `Record` with the failure's status), and
it keeps every record. `tune_live` runs one strategy under a time limit and returns what it measured as a
`RecordedSpace`, so that it can be written as a KernelTuner cache (`to_kerneltuner`) and read back by the
corpus and the replays. Past the time limit nothing more is timed: the strategy's remaining requests fail at
once, it ends, and the best configuration measured is the result.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from perfcast.errors import InputError, ToolError
from perfcast.tune.recorded import STATUSES, Record, RecordedSpace, Value
from perfcast.tune.replay import RecordedTunable, ReplaySession, answered, levels, repeated
from perfcast.tune.store import Measurement
from perfcast.tune.strategies import STRATEGIES, run_strategy

__all__ = ["LiveResult", "LiveSession", "candidate_space", "tune_live"]

Measure = Callable[[dict[str, Value]], Record]


def candidate_space(kernel: str, device: str, problem_size: Sequence[int], parameters: Mapping[str, Sequence[Value]],
                    valid: Iterable[Sequence[Value]]) -> RecordedSpace:
    """Return the space of `valid` configurations (values in `parameters`' order), none of them timed yet.

    Its records stand for the configurations the restrictions allow; they carry no time (status "ok", time
    None) and are replaced by measurements as the session times them.
    """
    names = list(parameters)
    records = []
    for values in valid:
        values = tuple(values)
        if len(values) != len(names):
            raise InputError(f"a valid configuration {values} has {len(values)} values for {len(names)} parameters")
        records.append(Record(dict(zip(names, values, strict=True)), "ok", None))
    if not records:
        raise InputError(f"{kernel}: the restrictions leave no valid configuration")
    return RecordedSpace(kernel, device, tuple(int(n) for n in problem_size),
                         {name: tuple(parameters[name]) for name in names}, records, "time", "live")


@dataclass(kw_only=True)
class LiveSession(ReplaySession):
    """Evaluations timed as asked for: each distinct valid configuration costs one, failed ones included.

    A replay whose answers come from `measure` instead of the record (the record lists the candidates).
    """

    measure: Measure
    deadline: float = math.inf  # clock() reading (s) past which no timing begins
    on_record: Callable[[Record], None] | None = None  # called after each timing (e.g. to save the cache)
    clock: Callable[[], float] = time.monotonic  # s
    records: list[Record] = field(default_factory=list)
    stopped: int = 0  # requests refused because the time limit had passed

    def evaluate(self, step: str, config: Mapping[str, int], size: Mapping[str, int]) -> Measurement | None:
        """Return the measurement of `config`, timing it if it is new (None: failed, not valid, or out of time)."""
        space = self.tunable.recorded
        if space.record(dict(config)) is None:
            return None  # the restrictions exclude it: nothing to time, nothing spent
        key = space.key(dict(config))
        if key in self.seen:
            return repeated(self.seen[key], step)
        if self.clock() >= self.deadline:
            self.stopped += 1
            return None
        asked: dict[str, Value] = {name: config[name] for name in space.parameters}
        measured = self.measure(dict(asked))
        if measured.status not in STATUSES:
            raise ToolError(f"the measurement of {asked} has status {measured.status!r}; expected one of "
                            f"{', '.join(STATUSES)}")
        # The record is kept under the configuration asked for, whatever `measure` wrote in its own; a correct
        # run without a positive, finite time is a failed one.
        record = Record(asked, measured.status, measured.time, measured.times, dict(measured.metrics))
        if record.status == "ok" and not _usable(record.time):
            record = Record(asked, "runtime", None, (), dict(measured.metrics))
        self.records.append(record)
        if self.on_record is not None:
            self.on_record(record)
        return answered(self.seen, self.trace, key, step, config, size, record)

    def measured(self) -> RecordedSpace:
        """Return what was timed as a space (the candidates' parameters, only the timed records)."""
        space = self.tunable.recorded
        return RecordedSpace(space.kernel, space.device, space.problem_size, dict(space.parameters),
                             list(self.records), space.objective, "perfcast live tuning")


def _usable(seconds: float | None) -> bool:
    """Return whether `seconds` can be a run's time: positive and finite."""
    return seconds is not None and math.isfinite(seconds) and seconds > 0


@dataclass(frozen=True)
class LiveResult:
    """One live run: the strategy's choice, the best configuration timed, and what the search cost."""

    strategy: str
    chosen: dict[str, Value] | None  # the strategy's choice (None where it ended without one)
    best: Record | None  # the fastest configuration timed
    measured: RecordedSpace
    evaluations: int
    seconds: float
    space_size: int  # valid configurations
    stopped: bool  # the time limit ended the search
    trace: tuple[float, ...]  # best time (s) after each evaluation


def tune_live(space: RecordedSpace, measure: Measure, strategy: str = "hierarchical", seconds: float = math.inf,
              seed: int = 0, budget: int | None = None, item: Sequence[str] | None = None,
              group: Sequence[str] | None = None, on_record: Callable[[Record], None] | None = None,
              clock: Callable[[], float] = time.monotonic) -> LiveResult:
    """Run `strategy` on `space` (from `candidate_space`), timing through `measure`; no timing begins after `seconds` (s).

    The last timing begun may end past the limit (by one configuration's time).
    """
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    if seconds <= 0:
        raise InputError(f"the time limit must be positive, not {seconds} s")
    item, group = levels(space, item, group)
    start = clock()
    session = LiveSession(tunable=RecordedTunable(space, tuple(item), tuple(group)), measure=measure,
                          deadline=start + seconds, on_record=on_record, clock=clock)
    chosen: dict[str, Value] | None
    try:
        result = run_strategy(session, strategy, budget or len(space.records), seed)
        chosen = dict(result.best)
    except ToolError:
        # Past the time limit every request fails, and a strategy may then find nothing it can run; the
        # configurations it did time are still the result. Any other failure is the caller's to see.
        if not (session.stopped and session.records):
            raise
        chosen = None
    timed = [r for r in session.records if r.status == "ok" and _usable(r.time)]
    best = min(timed, key=lambda r: r.time or math.inf) if timed else None
    return LiveResult(strategy, chosen, best, session.measured(), session.evaluations, clock() - start,
                      len(space.records), session.stopped > 0, tuple(session.trace))
