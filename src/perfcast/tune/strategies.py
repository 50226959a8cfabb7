"""Search strategies behind one interface: exhaustive, random, and the hierarchical method of spec §5.2.

A strategy asks an evaluator for measurements. The live one, a Session, repeats each run, keeps mean and
standard deviation, stores it at once and answers from the store when a run is resumed, so a configuration
is never measured twice. A configuration that fails to build, to run, or gives a wrong result is a result
too: stored with its status, skipped on resume, never the end of the run. The replay evaluator
(`perfcast.tune.replay`) answers from a recorded space instead.

The hierarchical method (`hierarchical`): step 1 tunes the work-item's parameters on one work-group, each
swept with the others fixed (the smallest value within 97 % of the best kept), step 2 the work-group's, step
3 the NDRange, step 4 reviews each parameter's neighbouring values at the target size. Steps 1 and 2 form a
descent over the levels: the work-item is tuned again at the work-group step 2 found, then the work-group
for it, until a pass changes nothing. The descent runs from the smallest work-group, from one in the middle
of the range and from the largest, because the work-item that is best depends on the group it is measured in
(shared memory, which pays in a large group and not in a small one, is the common case); the descent whose
result is faster at the target size goes on to step 3, and step 4 reviews its result and every other descent's
result near it, keeping the best. Each start descends twice: once with step 1's sweeps in the order the space
lists its parameters (each keeping its choice for the next), once with order-free moves (every work-item
parameter swept from the same point, the best single move taken, until none gains 3 %), whose result that
order cannot change. The partial models of spec §5.3 spare measurements where their premise holds
(`_sweep_values`).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import random as _random
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from perfcast.errors import ToolError
from perfcast.tune.racing import RaceResult, Ratio, race
from perfcast.tune.space import Config, SearchSpace
from perfcast.tune.store import Measurement, ResultsStore

__all__ = [
    "STRATEGIES", "ConfigurationFailed", "Evaluator", "Session", "Tunable", "TuningFailed", "TuningResult", "exhaustive",
    "failure_of",
    "hierarchical", "random_search", "run_strategy",
]

KEEP_WITHIN = 0.97  # step 1 keeps the smallest value within 97 % of the best (local memory is scarce)
GROUP_KEEP_WITHIN = 1.0  # step 2 keeps the best, or a smaller value that cannot be told from it (ties only)


class ConfigurationFailed(Exception):
    """A configuration that cannot give a result: status compile, runtime, wrong or timeout, and why."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


class TuningFailed(ToolError):
    """A strategy that found no configuration able to run the problem it tunes for."""


def timed_samples(tunable: Tunable, config: Mapping[str, int], size: Mapping[str, int], repetitions: int,
                  checked: set[str]) -> list[float]:
    """Return `repetitions` run times (s) of `config` at `size` after a warm-up, checking it first if not in `checked`.

    Raises ConfigurationFailed('wrong') for a wrong result, and whatever the tunable's build or run raises.
    """
    key = str(sorted(config.items()))
    if key not in checked:
        wrong = tunable.check(config)
        if wrong:
            raise ConfigurationFailed("wrong", f"computes a wrong result: {wrong}")
        checked.add(key)
    tunable.run(config, size)  # warm-up, discarded
    return [tunable.run(config, size) for _ in range(repetitions)]


def failure_of(error: Exception) -> ConfigurationFailed:
    """Return `error`, raised by a tunable's build or run, as a failure with its status."""
    if isinstance(error, ConfigurationFailed):
        return error
    text = f"{type(error).__name__}: {error}"
    # pyopencl names the failing call: a build that fails is a compile failure, anything else a runtime one.
    build = "clBuildProgram" in text or "BUILD_PROGRAM_FAILURE" in text or "build" in type(error).__name__.lower()
    return ConfigurationFailed("compile" if build else "runtime", text)


class Tunable(Protocol):
    """What the tuner needs of a kernel (see perfcast.tune.opencl_kernel for an OpenCL one).

    The hierarchy (spec §5.2): `item_parameters` shape one work-item's work (step 1), `group_parameters` the
    work-group (step 2), the number of work-groups the NDRange (step 3, through `size_for`). Problem sizes
    are not parameters: `target()` names them.
    """

    name: str
    space: SearchSpace

    @property
    def item_parameters(self) -> Sequence[str]:
        """Return the parameters of one work-item's work (step 1), tuned in this order."""
        ...

    @property
    def group_parameters(self) -> Sequence[str]:
        """Return the parameters of the work-group (step 2), e.g. work-items per work-group."""
        ...

    def target(self) -> dict[str, int]:
        """Return the problem size the tuning is for."""
        ...

    def size_for(self, config: Mapping[str, int], groups: int) -> dict[str, int]:
        """Return the problem size where every work-item does its configured work, with `groups` work-groups."""
        ...

    def groups_for_target(self, config: Mapping[str, int]) -> int:
        """Return the number of work-groups that makes `config` run the target problem."""
        ...

    def invalid(self, config: Mapping[str, int], size: Mapping[str, int]) -> str | None:
        """Return why `config` cannot run at `size`, or None."""
        ...

    def run(self, config: Mapping[str, int], size: Mapping[str, int]) -> float:
        """Run once and return the kernel time in s."""
        ...

    def throughput(self, size: Mapping[str, int], seconds: float) -> float:
        """Return the performance metric (higher is better) of a run of `size` taking `seconds`."""
        ...

    def check(self, config: Mapping[str, int]) -> str | None:
        """Return why `config` computes a wrong result, or None."""
        ...

    def environment(self) -> dict[str, Any]:
        """Return what the measurements were taken with (device, driver, compiler, host)."""
        ...


class Evaluator(Protocol):
    """What a strategy asks measurements of: the live Session, or a replay of recorded ones."""

    @property
    def tunable(self) -> Tunable:
        """Return the kernel being tuned."""
        ...

    def evaluate(self, step: str, config: Mapping[str, int], size: Mapping[str, int]) -> Measurement | None:
        """Return the measurement of `config` at `size`, or None where it cannot run or failed."""
        ...

    def evaluate_many(self, step: str, requests: Sequence[tuple[Config, Mapping[str, int]]]
                      ) -> list[Measurement | None]:
        """Return the measurements of several (configuration, size) pairs, in their order.

        A session with several workers measures the batch in parallel.
        """
        ...

    @property
    def evaluations(self) -> int:
        """Return how many (configuration, size) pairs were evaluated, failures included."""
        ...


@dataclass
class Session:
    """Measurements for one tuning run: repeated, stored at once, re-used when resumed."""

    tunable: Tunable
    store: ResultsStore
    run_id: int
    repetitions: int = 10
    progress: Callable[[str], None] = lambda _: None
    measured: int = 0  # new measurements taken in this process
    reused: int = 0  # requests answered from the store (earlier step, or a resumed run)
    failed: int = 0  # configurations that failed in this process (stored with their status)
    races: int = 0  # races run in this process
    racing: bool = True  # decide by round-robin races (off: by the means of `repetitions` runs, as before)
    race_rounds: int = 25  # the most rounds a race runs before calling the undecided a tie
    resolution: float = 0.02  # a ratio known to within this is decided
    checked: set[str] = field(default_factory=set)

    def evaluate(self, step: str, config: Mapping[str, int], size: Mapping[str, int]) -> Measurement | None:
        """Return the measurement of `config` at `size` (None if it cannot run there, or failed: stored)."""
        if self.tunable.space.invalid(config) or self.tunable.invalid(config, size):
            return None
        found = self.store.find(self.run_id, config, size)
        if found is not None:
            self.reused += 1
            if found.step != step:  # filed under this step too, so that each step's sweep is complete
                self.store.file_under(self.run_id, found, step)
                found = Measurement(step, found.config, found.size, found.mean, found.std, found.samples, found.metric)
            return found
        if self.known_failure(config, size):
            self.reused += 1
            return None
        try:
            return self._measure(step, config, size)
        except (KeyboardInterrupt, SystemExit, MemoryError):
            raise
        except Exception as error:  # noqa: BLE001 - a failing configuration is a result, not the end of the run
            failure = failure_of(error)
            self.store.record_failure(self.run_id, config, size, failure.status, str(failure))
            self.failed += 1
            self.progress(f"{step}: {dict(config)} failed ({failure.status})")
            return None

    def evaluate_many(self, step: str, requests: Sequence[tuple[Config, Mapping[str, int]]]
                      ) -> list[Measurement | None]:
        """Return the measurements of several (configuration, size) pairs, one after the other (one device)."""
        return [self.evaluate(step, config, size) for config, size in requests]

    def known_failure(self, config: Mapping[str, int], size: Mapping[str, int]) -> bool:
        """Return True where the store holds a failure of `config` that holds at `size`.

        A configuration that built wrong or gave a wrong answer does so at every size; a runtime failure is
        tied to its size.
        """
        if self.store.find_failure(self.run_id, config, size) is not None:
            return True
        anywhere = self.store.find_failure(self.run_id, config)
        return anywhere is not None and anywhere[0] in ("compile", "wrong")

    def _measure(self, step: str, config: Mapping[str, int], size: Mapping[str, int]) -> Measurement:
        """Check `config` once, then time it: a warm-up and the repetitions; store the measurement."""
        self.progress(f"{step}: {dict(config)} {dict(size)}")
        samples = timed_samples(self.tunable, config, size, self.repetitions, self.checked)
        return self.store_samples(step, config, size, samples)

    def store_samples(self, step: str, config: Mapping[str, int], size: Mapping[str, int],
                      samples: Sequence[float]) -> Measurement:
        """Return the measurement of timed `samples` (s), stored at once."""
        mean, std = statistics.fmean(samples), statistics.stdev(samples) if len(samples) > 1 else 0.0
        measurement = Measurement(step, dict(config), dict(size), mean, std, tuple(samples),
                                  self.tunable.throughput(size, mean))
        self.store.record(self.run_id, measurement)
        self.measured += 1
        return measurement

    @property
    def evaluations(self) -> int:
        """Return how many (configuration, problem size) pairs this run has measured, resumed parts included."""
        return self.store.distinct_measurements(self.run_id)

    def race(self, step: str, contenders: Sequence[Measurement]) -> tuple[RaceResult, list[Measurement]]:
        """Race measured contenders round-robin (spec-free: the noise guard of every decision); store the rounds.

        Contenders may run different problem sizes (step 1 gives each work-item its own work): they are
        compared per unit of work, 1 / throughput. The rounds are stored, and returned, as measurements of
        step 'race:STEP', one per contender in their order.
        """
        configs, sizes = [dict(m.config) for m in contenders], [dict(m.size) for m in contenders]
        for config, size in zip(configs, sizes):
            self.tunable.run(config, size)  # warm-up: the build is cached, the caches are warm
        self.progress(f"race of {len(configs)} at {step}")

        def per_work(index: int) -> float:
            return 1 / self.tunable.throughput(sizes[index], self.tunable.run(configs[index], sizes[index]))

        result = race(per_work, len(configs), max_rounds=self.race_rounds, resolution=self.resolution)
        raced = []
        for config, size, normalised in zip(configs, sizes, result.samples):
            # Stored as times again: throughput is work / seconds, so the work is the throughput of one second.
            work = self.tunable.throughput(size, 1.0)
            seconds = [n * work for n in normalised]
            mean = statistics.fmean(seconds)
            raced.append(Measurement(f"race:{step}", config, size, mean,
                                     statistics.stdev(seconds) if len(seconds) > 1 else 0.0, tuple(seconds),
                                     self.tunable.throughput(size, mean)))
            self.store.record(self.run_id, raced[-1])
        self.races += 1
        return result, raced


@dataclass(frozen=True)
class TuningResult:
    """The best configuration at the target size, its measurement, and what the search cost.

    After a live run, `finalists` are the configurations re-measured round-robin at the end, each with its
    performance relative to the winner (estimate, interval), and `interval` the winner's metric interval.
    """

    best: Config
    measurement: Measurement
    evaluations: int
    steps: dict[str, Config]  # the configuration chosen after each step (hierarchical)
    finalists: tuple[tuple[Config, Ratio, float], ...] = ()  # (config, ratio to the winner, round spread)
    interval: tuple[float, float] | None = None  # the winner's metric, 95 % interval over the final rounds
    notes: tuple[str, ...] = ()  # what the strategy decided without measuring, and why


def _best(measured: Sequence[Measurement]) -> Measurement:
    if not measured:
        raise ToolError("no configuration could run: every one failed or was invalid (the failures are in the "
                        "results store, with their status)")
    return max(measured, key=lambda m: m.metric)


def exhaustive(session: Evaluator) -> TuningResult:
    """Return the best of every valid configuration, each measured at the target size."""
    tunable = session.tunable
    requests = [(config, tunable.size_for(config, groups)) for config in tunable.space
                if (groups := tunable.groups_for_target(config)) >= 1]
    results = [m for m in session.evaluate_many("exhaustive", requests) if m is not None]
    best = _best(results)
    return TuningResult(best.config, best, session.evaluations, {"exhaustive": best.config})


def random_search(session: Evaluator, budget: int, seed: int = 0) -> TuningResult:
    """Return the best of `budget` configurations drawn at random from the valid ones, at the target size."""
    tunable = session.tunable
    candidates = [c for c in tunable.space if tunable.groups_for_target(c)]
    _random.Random(seed).shuffle(candidates)
    results: list[Measurement] = []
    # The budget counts what this run asked for: new evaluations, and those a resumed run finds in the store
    # (measured or failed before, in the same seeded order). Each request costs at most one, so batches of
    # what the budget has left stop where one-by-one evaluation would; a session with workers measures each
    # batch in parallel.
    evaluated, reused = session.evaluations, getattr(session, "reused", 0)

    def spent() -> int:
        return session.evaluations - evaluated + getattr(session, "reused", 0) - reused

    start = 0
    while start < len(candidates) and spent() < budget:
        batch = candidates[start:start + budget - spent()]
        start += len(batch)
        requests = [(c, tunable.size_for(c, tunable.groups_for_target(c))) for c in batch]
        results += [m for m in session.evaluate_many("random", requests) if m is not None]
    best = _best(results)
    return TuningResult(best.config, best, session.evaluations, {"random": best.config})


def _sweep(session: Evaluator, step: str, config: Config, name: str, groups: Callable[[Config], int],
           pick_smallest_within: float, notes: list[str] | None = None) -> Config:
    """Return `config` with parameter `name` set to the smallest of its values within the fraction of the best.

    The values are measured by `_sweep_values` (guided where `notes` is given), the choice made by `_decide`.
    """
    measured = _sweep_values(session, step, config, name, groups, notes)
    return _decide(session, step, measured, name, pick_smallest_within) if measured else config


def _sweep_values(session: Evaluator, step: str, config: Config, name: str, groups: Callable[[Config], int],
                  notes: list[str] | None = None) -> list[Measurement]:
    """Return the measurements of `config` with parameter `name` set to each of its values (those measured).

    `notes` (a guided run): the partial models of spec §5.3 guide the sweep, which then runs from the smallest
    value up. A work-group parameter (step 2) follows model (5): each work-item keeps its work, so past n_PE a
    larger group only takes longer in proportion; once the model, fitted to the values measured so far, shows
    the group saturated, a larger value could at best tie, and a tie goes to the smaller value. That premise
    is checked: model (5) guides only where the problem measured grows with the group (one work-group, live);
    a recorded space holds one problem size whatever the group, where a time that rises with the group is the
    landscape's, not a saturation. A work-item parameter (step 1) follows the form models (1)-(3) share per
    unit of work, a + b / x: once it fits and predicts that no larger value can be more than 3 % faster (even
    by the fit's own error), the choice, the smallest value within 97 % of the best, is made. The larger
    values are then not measured (said in `notes`).
    """
    tunable = session.tunable
    measured: list[Measurement] = []
    guide = None
    if notes is not None:
        if name not in tunable.group_parameters:
            guide = _work_item_guide
        elif _work_grows_with(tunable, config, name, groups):
            guide = _work_group_guide
    values = sorted(tunable.space.parameters[name]) if guide else tunable.space.parameters[name]
    if guide is None:  # every value is measured: one batch (in parallel where the session has workers)
        candidates = [c for c in ({**config, name: value} for value in values) if groups(c) >= 1]
        batch = session.evaluate_many(step, [(c, tunable.size_for(c, groups(c))) for c in candidates])
        return [m for m in batch if m is not None]
    for index, value in enumerate(values):
        candidate = {**config, name: value}
        g = groups(candidate)
        if g < 1:
            continue
        m = session.evaluate(step, candidate, tunable.size_for(candidate, g))
        if m is None:
            continue
        measured.append(m)
        reason = guide(measured, name, values[index + 1:]) if index + 1 < len(values) else None
        if reason is not None:
            assert notes is not None
            note = f"{step}: {reason}; not measured"
            if note not in notes:
                notes.append(note)
            break
    return measured


def _work_grows_with(tunable: Tunable, config: Config, name: str, groups: Callable[[Config], int]) -> bool:
    """Return True when the problem a sweep of work-group parameter `name` measures grows with its value."""
    values = sorted(tunable.space.parameters[name])
    low, high = {**config, name: values[0]}, {**config, name: values[-1]}
    return tunable.size_for(low, groups(low)) != tunable.size_for(high, groups(high))


CONTEND = 0.6  # a value whose first measurement is within this of the best races for the step (drift is large)
MAX_CONTENDERS = 5


def _decide(session: Evaluator, step: str, measured: Sequence[Measurement], name: str,
            pick_smallest_within: float) -> Config:
    """Return the configuration a sweep keeps: the smallest value within `pick_smallest_within` of the best.

    Live, the values whose first measurement comes near the best race round-robin and the choice is made on
    their paired ratios: a value counts as within the fraction when its ratio is, or when it cannot be told
    from that after the race (a tie goes to the smaller value, which the method prefers). Replayed, the
    recorded means decide.
    """
    best = _best(measured)
    contenders = sorted((m for m in measured if m.metric >= CONTEND * best.metric), key=lambda m: -m.metric)
    contenders = contenders[:MAX_CONTENDERS]
    raced = _raced(session, step, contenders) if len(contenders) > 1 else None
    if raced is None:  # replayed, not racing, a single contender, or a race that failed: the means decide
        keep = [m for m in measured if m.metric >= pick_smallest_within * best.metric]
        return min(keep, key=lambda m: m.config[name]).config
    result = raced[0]
    keep = [m for m, r, done in zip(contenders, result.ratios, result.decided)
            if r.estimate >= pick_smallest_within or (not done and r.high >= pick_smallest_within)]
    return min(keep, key=lambda m: m.config[name]).config


def _tune_work_item(session: Evaluator, config: Config, max_passes: int, notes: list[str] | None) -> Config:
    """Return `config` with the work-item parameters tuned (step 1): one work-group, each swept; until stable."""
    for _ in range(max_passes):
        before = dict(config)
        for name in session.tunable.item_parameters:
            config = _sweep(session, f"1-item:{name}", config, name, lambda c: 1, KEEP_WITHIN, notes)
        if config == before:
            break
    return config


def _tune_work_item_jointly(session: Evaluator, config: Config, max_passes: int, notes: list[str] | None,
                            max_evaluations: int | None = None) -> Config:
    """Return `config` with the work-item parameters tuned (step 1) without an order: the best single move, repeated.

    Every work-item parameter is swept from the same point (one work-group). Where the fastest configuration of
    the sweeps is more than 1 - KEEP_WITHIN faster than `config`, the parameter whose sweep holds it moves, to
    the value step 1's rule keeps (`_decide`: the smallest within KEEP_WITHIN of the best; live, the close ones
    raced); until no sweep holds such a configuration. Each move makes the configuration faster, so the moves
    end. Unlike `_tune_work_item`, whose sweeps keep each choice for the next parameter, the result does not
    depend on the order the space lists its parameters in (but on exact ties). Each sweep is `_sweep_values`',
    guided by the partial models where `notes` is given, as the ordered sweeps are. `max_passes` is the ordered
    step's, not used. `max_evaluations`: no move is begun whose sweeps could take the run past that many.
    """
    tunable = session.tunable
    for _ in range(MAX_JOINT_MOVES):
        if not _move_affordable(session, max_evaluations):
            return config
        measured = {name: _sweep_values(session, f"1-item:joint:{name}", config, name, lambda c: 1, notes)
                    for name in tunable.item_parameters}
        current = next((m for ms in measured.values() for m in ms if m.config == config), None)
        if current is None:  # every guided sweep stopped short of the point itself: measure it, to compare
            current = session.evaluate("1-item:joint", config, tunable.size_for(config, 1))
        moving = max((name for name in measured if measured[name]), key=lambda n: _best(measured[n]).metric,
                     default=None)
        if moving is None:
            return config
        if current is not None and _best(measured[moving]).metric * KEEP_WITHIN <= current.metric:
            return config
        moved = _decide(session, "1-item:joint", measured[moving], moving, KEEP_WITHIN)
        if moved == config:
            return config
        config = dict(moved)
    return config


def _move_affordable(session: Evaluator, max_evaluations: int | None) -> bool:
    """Return True when one order-free move (a sweep of every work-item value) cannot take the run past the budget."""
    move = sum(len(session.tunable.space.parameters[name]) for name in session.tunable.item_parameters)
    return max_evaluations is None or session.evaluations + move <= max_evaluations


def _tune_work_group(session: Evaluator, config: Config, max_passes: int, notes: list[str] | None) -> Config:
    """Return `config` with the work-group parameters tuned (step 2): one work-group; until stable.

    Each parameter is swept with the others fixed; values a race cannot tell from the best go to the smaller
    group: at the target problem every doubling of the group halves the work-groups left to fill the device
    with (on a 2-core CPU, `wgsize` 64 could leave one core busy), while on one work-group a larger group gains
    only by spreading the launch.
    """
    groups = tuple(session.tunable.group_parameters)
    for _ in range(max_passes):
        before = dict(config)
        for group in groups:
            config = _sweep(session, "2-group" if len(groups) == 1 else f"2-group:{group}", config, group,
                            lambda c: 1, GROUP_KEEP_WITHIN, notes)
        if config == before:
            break
    return config


MAX_JOINT_MOVES = 50  # a bound on a live run's order-free step 1 (each move a sweep of every work-item parameter)
MAX_GROUPS = 100_000  # combinations (of work-group, or of work-item values) looked through for a start that runs


def _starts(tunable: Tunable, defaults: Config) -> list[tuple[str, Config]]:
    """Return the work-groups the descents start from: the smallest (the spec's), the middle, the largest.

    One work-group size is not representative of the others: the smallest (half a warp on a GPU, where a
    kernel that shares data in the group loads the most halo per output) favours work-items that share
    nothing; a group in the middle of the range favours those that share; the largest those that share most
    (a matrix product's tiles staged in local memory, loaded by all the group's threads). The middle is, per
    work-group parameter, the value nearest the geometric mean of its smallest and largest (ties to the
    smaller; by position for values of 0 or below). Each start is a valid configuration: `defaults` for the
    work-item, or where that cannot run the group, the work-item nearest the defaults that can (`_item_repairs`:
    a tile that must be a multiple of the group's shape grows with it); where none can, the valid group nearest
    (summed distance on the log scale) with the defaults, fewest work-items first. A start equal to an earlier
    one is dropped.
    """
    space = tunable.space
    groups = tuple(tunable.group_parameters)
    ordered = {name: sorted(space.parameters[name]) for name in groups}
    positive = all(values[0] > 0 for values in ordered.values())

    def position(name: str, value: int) -> float:
        return math.log(value) if positive else ordered[name].index(value) / len(ordered[name])

    def middle(name: str) -> int:
        values = ordered[name]
        if not positive:
            return values[(len(values) - 1) // 2]
        centre = (math.log(values[0]) + math.log(values[-1])) / 2
        return min(values, key=lambda v: (round(abs(math.log(v) - centre), 9), v))

    def runs(candidate: Config) -> bool:
        return not (space.invalid(candidate) or tunable.invalid(candidate, tunable.size_for(candidate, 1)))

    combinations = list(itertools.islice(itertools.product(*(space.parameters[name] for name in groups)), MAX_GROUPS))
    smallest = {name: values[0] for name, values in ordered.items()}
    largest = {name: values[-1] for name, values in ordered.items()}
    starts: list[tuple[str, Config]] = []
    for label, wanted in (("smallest", smallest), ("middle", {name: middle(name) for name in groups}),
                          ("largest", largest)):
        at = {name: position(name, wanted[name]) for name in groups}

        def distance(values: tuple[int, ...], at: dict[str, float] = at) -> tuple[float, float]:
            far = sum(abs(position(n, v) - at[n]) for n, v in zip(groups, values))
            return round(far, 9), math.prod(values) if positive else 0

        found = next((c for c in _item_repairs(tunable, {**defaults, **wanted}) if runs(c)), None)
        if found is None:  # no work-item runs this group: the valid group nearest it, with the defaults
            found = next((c for c in ({**defaults, **dict(zip(groups, values))}
                                      for values in sorted(combinations, key=distance)) if runs(c)), None)
        if found is not None and all(found != start for _, start in starts):
            starts.append((label, found))
    return starts or [("smallest", {**defaults, **smallest})]  # nothing runs with the defaults: as the spec began


def _item_repairs(tunable: Tunable, config: Config) -> Iterator[Config]:
    """Yield `config` with its work-item parameters moved as little as possible (summed positions), nearest first.

    A start stands for its work-group size: where the default work-item cannot run in that group (a tile that
    must be a multiple of the group's shape), the work-item nearest the defaults that can is taken instead of
    another group. Only the tunable's work-item parameters move (not those on no level, nor the NDRange's).
    The walk goes outward one position at a time, so the nearest are seen first whatever the parameters' count;
    it stops after MAX_GROUPS configurations.
    """
    space = tunable.space
    items = [name for name in tunable.item_parameters if len(space.parameters[name]) > 1]
    start = tuple(space.parameters[name].index(config[name]) for name in items)
    seen, frontier = {start}, [start]
    while frontier and len(seen) <= MAX_GROUPS:
        following = []
        for positions in frontier:
            yield {**config, **{n: space.parameters[n][i] for n, i in zip(items, positions)}}
            for k, name in enumerate(items):
                for step in (-1, 1):
                    moved = positions[k] + step
                    if 0 <= moved < len(space.parameters[name]):
                        neighbour = (*positions[:k], moved, *positions[k + 1:])
                        if neighbour not in seen:
                            seen.add(neighbour)
                            following.append(neighbour)
        frontier = following


def hierarchical(
    session: Evaluator, max_passes: int = 3, max_evaluations: int | None = None, guided: bool = True
) -> TuningResult:
    """Return the configuration found by spec §5.2: one work-item, then one work-group, then the NDRange, then review.

    Steps 1 and 2 run as a descent over the levels from each of three work-groups (`_starts`: the smallest, the
    middle of the range, the largest): the work-item tuned at the start's group, the work-group tuned for that
    work-item, then the work-item again at the group found and so on, until a pass changes nothing (at most
    `max_passes`). The three starts descend with step 1's ordered sweeps (`_tune_work_item`), then the three
    with its order-free moves (`_tune_work_item_jointly`). The descent whose result is fastest at the target size goes
    on to step 3 (`_replaces`: a tie goes to the smaller group); step 4 reviews its result, then each other
    descent's result within CONTEND of it, and keeps the best reviewed.

    `max_evaluations` caps the extras: no order-free move is begun that could take the run past that many, and
    past it no other descent's result is reviewed. The ordered descents, step 3 and the review of the chosen
    descent's result always run: the review is the only step that moves the work-item at the target size, and
    a budget spent before it (on a GPU, where one work-group measures the launch's latency and so favours the
    most work per work-item, which at the target leaves the device half empty: the VaR kernel chose 50.7 % of
    the best known on an H100 and an H200 with a budget of 50) would keep the descents' misjudgement.
    `guided`: steps 1, 2 and 3 stop measuring larger values once the partial models of §5.3 predict them no
    better (see `_sweep_values` and `_saturated`; else they measure all).
    """
    tunable = session.tunable
    space = tunable.space
    defaults: Config = {name: values[0] for name, values in space.parameters.items()}
    steps: dict[str, Config] = {}
    notes: list[str] = []
    model_notes = notes if guided else None

    def at_target(c: Config) -> Measurement | None:
        g = tunable.groups_for_target(c)
        return session.evaluate("4-review", c, tunable.size_for(c, g)) if g >= 1 else None

    # Steps 1 and 2, from each start: each level re-tuned given the other until neither changes.
    chosen: tuple[Config, Config, Measurement] | None = None
    descents: list[Measurement] = []
    # Each start descends twice: with step 1's ordered sweeps, then with its order-free moves, whose result the
    # order the space lists its parameters in cannot change (a space of many coupled work-item parameters, as a
    # GEMM's, can lead the ordered sweeps away from the optimum in the order listed and not in another).
    starts = _starts(tunable, defaults)
    plans = [(label, start, _tune_work_item) for label, start in starts]
    order_free = functools.partial(_tune_work_item_jointly, max_evaluations=max_evaluations)
    plans += [(f"{label}, order-free", start, order_free) for label, start in starts]
    for label, start, tune_item in plans:
        if tune_item is order_free and not _move_affordable(session, max_evaluations):
            break  # the budget is spent: the order-free descents are an extra, the ordered ones the method
        steps[f"start:{label}"] = dict(start)
        config = dict(start)
        item = config
        for _ in range(max_passes):
            before = dict(config)
            config = item = tune_item(session, config, max_passes, model_notes)
            config = _tune_work_group(session, config, max_passes, model_notes)
            if config == before:
                break
        steps[f"descent:{label}"] = dict(config)
        found = at_target(config)
        if found is not None and all(found.config != d.config for d in descents):
            descents.append(found)
        # Two descents (an ordered and an order-free one from the same start, often) may end alike: a result is
        # not raced against itself.
        if found is not None and (chosen is None or (found.config != chosen[2].config
                                                     and _replaces(session, found, chosen[2]))):
            chosen = (dict(item), dict(config), found)
    if chosen is None:
        found_by = ", ".join(str(c) for k, c in steps.items() if k.startswith("descent:"))
        raise TuningFailed(f"no configuration found by steps 1-2 ({found_by}) can run the target problem")
    steps["work-item"], steps["work-group"] = chosen[0], chosen[1]
    config = dict(chosen[1])
    # Step 3: work-groups over the device, up to the target problem. Model-guided: once model (6) of spec §5.3
    # fitted to the points so far shows the device saturated, the larger NDRanges are predicted, not measured.
    target_groups = tunable.groups_for_target(config)
    counts = [g for g in (2**i for i in range(32)) if g <= target_groups]
    by_groups: dict[int, Measurement] = {}
    for index, g in enumerate(counts):
        m = session.evaluate("3-ndrange", config, tunable.size_for(config, g))
        if m is None:
            continue
        by_groups[g] = m
        saturation = _saturated(by_groups, "(6) NDRange", "ngroup", "n_CU") if guided else None
        if saturation is not None and index + 1 < len(counts):
            limit, rms = saturation
            notes.append(f"step 3: model (6) fitted to {len(by_groups)} NDRanges ({', '.join(map(str, by_groups))} "
                         f"work-groups) gives n_CU = {limit} (rms error {rms:.1%}); the {len(counts) - index - 1} "
                         "larger NDRanges are predicted saturated, not measured")
            break
    if by_groups:
        steps["ndrange"] = {**config, "groups": max(by_groups, key=lambda g: by_groups[g].metric)}
    # Step 4: review at the target size from the chosen descent's result, then from each other descent's result
    # near it (within CONTEND): a descent a little slower may lie one move from a better configuration than the
    # chosen one; the best reviewed result is kept (ties to the one reviewed first, the chosen descent's).
    current = _review(session, chosen[2], at_target, None)
    for other in sorted(descents, key=lambda m: -m.metric):
        if other.config == chosen[2].config or other.metric < CONTEND * chosen[2].metric:
            continue
        if max_evaluations is not None and session.evaluations >= max_evaluations:
            break
        reviewed = _review(session, other, at_target, max_evaluations)
        # Unmoved, the other descent's result was already weighed against the chosen one (`_replaces`).
        if reviewed.config not in (current.config, other.config) and _worth_a_race(session, reviewed, current) \
                and _confirmed(session, reviewed, current):
            current = reviewed
    steps["review"] = dict(current.config)
    return TuningResult(current.config, current, session.evaluations, steps, notes=tuple(notes))


def _review(session: Evaluator, start: Measurement, at_target: Callable[[Config], Measurement | None],
            max_evaluations: int | None) -> Measurement:
    """Return step 4 from `start`: each parameter's neighbouring values tried at the target size, until none is better."""
    space = session.tunable.space
    current = start
    improved = True
    while improved:
        improved = False
        for name, values in space.parameters.items():
            index = values.index(current.config[name])
            for neighbour in (index - 1, index + 1):
                if max_evaluations is not None and session.evaluations >= max_evaluations:
                    break
                if 0 <= neighbour < len(values):
                    m = at_target({**current.config, name: values[neighbour]})
                    if m is not None and _worth_a_race(session, m, current) and _confirmed(session, m, current):
                        current, improved = m, True
    return current


SATURATION_FIT = 0.10  # models (5) and (6) guide steps 2 and 3 only when they fit the points within this
PER_WORK_FIT = 0.05  # the per-work form of models (1)-(3) guides step 1 only when it fits within this


def _work_group_guide(measured: Sequence[Measurement], name: str, rest: Sequence[int]) -> str | None:
    """Return why the larger work-groups need no measuring (model (5) saturated), or None."""
    saturation = _saturated({m.config[name]: m for m in measured}, "(5) work-group", name, "n_PE")
    if saturation is None:
        return None
    limit, rms = saturation
    return (f"model (5) fitted to {name} {', '.join(str(m.config[name]) for m in measured)} gives n_PE = {limit} "
            f"(rms error {rms:.1%}): {name} {', '.join(map(str, rest))} predicted no faster per work-item")


def _work_item_guide(measured: Sequence[Measurement], name: str, rest: Sequence[int]) -> str | None:
    """Return why the larger values of a work-item parameter need no measuring (a + b / x flat enough), or None.

    Per unit of work (1 / throughput), models (1)-(3) are a + b / x: the gain left beyond the values measured
    is bounded. The larger values are spared when even the fit's optimistic side (its rms error taken twice)
    puts every one of them within 3 % of the best measured.
    """
    if len(measured) < 3:
        return None
    from perfcast.tune.partial_models import fit_per_work  # scipy: loaded when a guided run sweeps

    x = [m.config[name] for m in measured]
    if min(x) <= 0 or min(rest) <= 0:  # a + b / x describes sizes and counts, not flags or offsets
        return None
    per_work = [1 / m.metric for m in measured]
    fit = fit_per_work("(1)-(3) per work", name, x, per_work)
    if fit.rms_relative_error > PER_WORK_FIT:
        return None
    a, b = fit.constants["a"], fit.constants["b"]
    optimistic = min(a + b / v for v in rest) * (1 - 2 * fit.rms_relative_error)
    if optimistic < KEEP_WITHIN * min(per_work):
        return None
    return (f"a + b / {name} fitted to {name} {', '.join(map(str, x))} (rms error {fit.rms_relative_error:.1%}) "
            f"puts {name} {', '.join(map(str, rest))} at most {min(per_work) / optimistic - 1:.1%} faster than the "
            "best measured")


def _saturated(points: Mapping[int, Measurement], model: str, count_name: str,
               limit_name: str) -> tuple[int, float] | None:
    """Return (limit, rms error) when model (5) or (6) fitted to 3+ points saturates below the largest, else None.

    `points`: measurements by work-group size (model 5, limit n_PE) or work-group count (model 6, n_CU).
    """
    if len(points) < 3:
        return None
    from perfcast.tune.partial_models import fit_saturation  # scipy: loaded when a run reaches steps 2-3

    counts = sorted(points)
    fit = fit_saturation(model, count_name, limit_name, counts, [points[g].mean for g in counts])
    limit = int(fit.constants[limit_name])
    # Saturated: the fitted limit is below the largest count measured, so two points at least lie on the flat
    # part, and the model describes the points well.
    if limit < counts[-1] and fit.rms_relative_error <= SATURATION_FIT:
        return limit, fit.rms_relative_error
    return None


def _worth_a_race(session: Evaluator, challenger: Measurement, incumbent: Measurement) -> bool:
    """Return True when a review move is worth deciding: a better mean replayed; live, a mean near enough.

    Live, one mean of back-to-back runs can hide a better neighbour by more than the two differ, so every
    neighbour within CONTEND of the incumbent races it (a race at the target size costs no evaluation).
    """
    if isinstance(session, Session) and session.racing:
        return challenger.metric >= CONTEND * incumbent.metric
    return challenger.metric > incumbent.metric


def _replaces(session: Evaluator, challenger: Measurement, incumbent: Measurement) -> bool:
    """Return True when a later descent's result (`challenger`, at the target size) should replace the one kept.

    Faster (by the means replayed, told apart in a race live), or not told apart and with fewer work-items per
    group: the tie goes to the smaller group, as in step 2.
    """
    groups = tuple(session.tunable.group_parameters)

    def items(config: Mapping[str, int]) -> tuple[int, ...]:
        values = tuple(config[name] for name in groups)
        return (math.prod(values),) if all(v > 0 for v in values) else values

    fewer = items(challenger.config) < items(incumbent.config)
    if not _worth_a_race(session, challenger, incumbent):
        return challenger.metric == incumbent.metric and fewer
    raced = _raced(session, "4-review", [incumbent, challenger])
    if raced is None:
        return challenger.metric > incumbent.metric or (challenger.metric == incumbent.metric and fewer)
    result = raced[0]
    return result.leader == 1 if result.ratios[1 - result.leader].separated else fewer


def _confirmed(session: Evaluator, challenger: Measurement, incumbent: Measurement) -> bool:
    """Return True when `challenger` beats `incumbent`: by its mean replayed, told apart in a race live."""
    raced = _raced(session, "4-review", [incumbent, challenger])
    return raced is None or (raced[0].leader == 1 and raced[0].ratios[0].separated)


def _raced(session: Evaluator, step: str, contenders: Sequence[Measurement]
           ) -> tuple[RaceResult, list[Measurement]] | None:
    """Return the race of `contenders` and its measurements, or None where the means decide instead.

    None when not racing (a replay, racing off) or when a contender fails in the race.
    """
    if not (isinstance(session, Session) and session.racing):
        return None
    try:
        return session.race(step, contenders)
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except Exception as error:  # noqa: BLE001 - configurations that ran once may still fail: never end the run
        session.progress(f"race at {step} abandoned: {failure_of(error)}")
        return None


# The registry: name -> (what it does, how to run it with a budget and a seed). The CLI's --strategy choices
# and the tests' parametrisation come from it.
RANDOM_BUDGET = 20  # configurations random search measures when no budget is given

STRATEGIES: dict[str, tuple[str, Callable[[Evaluator, int | None, int], TuningResult]]] = {
    "hierarchical": ("work-item, then work-group, then NDRange parameters (spec §5.2), the first two re-tuned in turn "
                     "until stable, from the smallest, a middle and the largest work-group, each with step 1's ordered sweeps "
                     "and with its order-free moves; larger values spared where the partial models predict them no "
                     "better; --budget caps its order-free moves and the other descents' reviews",
                     lambda session, budget, seed: hierarchical(session, max_evaluations=budget)),
    "hierarchical-measured": ("the same with every value of steps 1-2 and every NDRange of step 3 measured, no "
                              "model guidance: the baseline that the guided method's savings are counted against",
                              lambda session, budget, seed: hierarchical(session, max_evaluations=budget, guided=False)),
    "exhaustive": ("every configuration of the space", lambda session, budget, seed: exhaustive(session)),
    "random": (f"--budget configurations (default {RANDOM_BUDGET}) drawn with --seed",
               lambda session, budget, seed: random_search(session, budget or RANDOM_BUDGET, seed)),
}


FINALISTS = 3  # the best configurations at the target size re-measured together at the end, beside the chosen one


def run_strategy(session: Evaluator, strategy: str, budget: int | None = None, seed: int = 0) -> TuningResult:
    """Return the result of the strategy called `strategy` (a key of STRATEGIES).

    `budget`: random search's number of configurations (default RANDOM_BUDGET), the hierarchical method's cap
    on its extras (order-free moves, other descents' reviews; default none); `seed`: random search's.

    A live run ends with a race of its finalists at the target size — the strategy's choice and the best
    measured there — and returns the winner with its interval, the others' ratios and every round spread.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    result = STRATEGIES[strategy][1](session, budget, seed)
    if not (isinstance(session, Session) and session.racing):
        return result
    return _final_race(session, result)


def _final_race(session: Session, result: TuningResult) -> TuningResult:
    """Return `result` decided by a round-robin race of its choice and the best measurements at its size."""
    target = result.measurement.size
    at_target = {json.dumps(m.config, sort_keys=True): m for m in session.store.measurements(session.run_id)
                 if m.size == target and not m.step.startswith("race:")}
    chosen = json.dumps(result.best, sort_keys=True)
    others = sorted((m for k, m in at_target.items() if k != chosen), key=lambda m: -m.metric)[:FINALISTS]
    finalists = [result.measurement, *others]
    if len(finalists) == 1:
        return result
    from scipy import stats  # loaded when a live run ends, not when the CLI lists the strategies

    raced = _raced(session, "final", finalists)
    if raced is None:
        return result
    race_result, measurements = raced
    winner = finalists[race_result.leader]
    measurement = measurements[race_result.leader]
    rounds = len(measurement.samples)
    half = stats.t.ppf(0.975, rounds - 1) * measurement.std / math.sqrt(rounds)
    interval = (session.tunable.throughput(target, measurement.mean + half),
                session.tunable.throughput(target, max(measurement.mean - half, 1e-30)))
    finals = tuple((dict(m.config), r, race_result.spread(i)) for i, (m, r) in enumerate(zip(finalists, race_result.ratios)))
    steps = {**result.steps, "final": dict(winner.config)}
    return TuningResult(dict(winner.config), measurement, session.evaluations, steps, finals, interval, result.notes)
