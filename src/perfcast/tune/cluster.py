"""Tuning on several devices or nodes, on Ray: one worker (a Ray actor) per device, one writer (the driver).

Each worker builds the tunable on its own device from a picklable factory and times the configurations the
driver sends it; the driver keeps the results store and records each result as it arrives, so nothing
measured is lost when the driver is interrupted (a resumed run takes it from the store). A worker that dies
(its process killed, its node lost) has its configuration given to another worker; a pool left without
workers stops the run with an error. Devices of one pool must be identical (name, driver, clock): a mixed
pool is refused, naming the odd device, because one run's measurements must be comparable.

Ray is an optional dependency (`pip install 'perfcast[ray]'`); without it every other command works and
these say which extra to install. Replays of recorded spaces spread their (strategy, seed) runs over Ray
tasks the same way.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perfcast.errors import BackendUnavailable, InputError, ToolError
from perfcast.tune.store import Measurement
from perfcast.tune.strategies import Config, Session, Tunable, failure_of, timed_samples

__all__ = ["ClusterOptions", "DevicePool", "MixedPool", "ParallelSession", "RAY_EXTRA", "import_ray",
           "parallel_map", "require_resources", "start_ray"]

RAY_EXTRA = "pip install 'perfcast[ray]'"
CONNECT_DEADLINE_S = 60.0  # a local start takes 2-4 s on a 2-core VM; joining a cluster, less
START_DEADLINE_S = 600.0  # for every worker to build the kernel on its device (a first OpenCL build can be slow)
DEATHS_PER_CONFIGURATION = 2  # workers a configuration may kill before it counts as failing
# Keys of a tunable's environment that may differ between identical devices: where each worker runs.
PER_WORKER = {"host"}


def import_ray() -> Any:
    """Return the ray module, or raise BackendUnavailable naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise BackendUnavailable(f"--workers and --ray need Ray, which is not installed: {RAY_EXTRA}") from None
    return ray


@dataclass(frozen=True)
class ClusterOptions:
    """Where to run: `workers` workers, on a local Ray instance (address None) or a running cluster ('auto', host:port)."""

    workers: int = 1
    address: str | None = None

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise InputError(f"--workers {self.workers}: at least 1")

    @property
    def parallel(self) -> bool:
        """Return True where the work goes to Ray workers (several of them, or a cluster named)."""
        return self.workers > 1 or self.address is not None


def start_ray(options: ClusterOptions) -> Any:
    """Return ray, started on this machine with `workers` CPUs, or joined to the cluster at `address`."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    quiet = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    where = f"the Ray cluster at {options.address}" if options.address else "a local Ray instance"
    arguments = {"num_cpus": options.workers} if options.address is None else {"address": options.address}
    failure: list[BaseException] = []

    def connect() -> None:
        try:
            ray.init(**arguments, **quiet)
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread below
            failure.append(error)

    if options.address is None:  # a local start fails fast, and Ray wants its signal handlers in the main thread
        connect()
        if failure:
            raise ToolError(f"cannot start {where}: {failure[0]}") from None
        return ray
    # Ray retries a cluster it cannot join (a wrong port, a missing auth token) for minutes, without a word:
    # past the deadline the command says what to check instead. The thread is a daemon, so it ends with us.
    attempt = threading.Thread(target=connect, daemon=True)
    attempt.start()
    attempt.join(CONNECT_DEADLINE_S)
    if attempt.is_alive():
        raise ToolError(f"{where} did not answer within {CONNECT_DEADLINE_S:g} s: check the address, that this "
                        "machine reaches its port, and Ray's auth token (~/.ray/auth_token or RAY_AUTH_TOKEN, as "
                        "on the cluster's nodes)")
    if failure:
        raise ToolError(f"cannot start {where}: {failure[0]}") from None
    return ray


def require_resources(ray: Any, workers: int, gpu: bool) -> None:
    """Raise ToolError where the cluster lacks a CPU (and a GPU) per worker: Ray would wait for them forever."""
    needs = {"CPU": workers, **({"GPU": workers} if gpu else {})}
    have = ray.cluster_resources()
    short = [f"{need:g} {kind} (the cluster has {have.get(kind, 0):g})" for kind, need in needs.items()
             if have.get(kind, 0) < need]
    if short:
        raise ToolError(f"--workers {workers} needs {' and '.join(short)}: fewer workers, or more nodes in the "
                        "cluster")


class MixedPool(InputError):
    """Workers on devices that differ: one run's measurements would not be comparable."""


def _identity(tunable: Tunable) -> dict[str, Any]:
    """Return what makes a worker's device this device: the tunable's environment and the device's clock."""
    identity = {key: value for key, value in tunable.environment().items() if key not in PER_WORKER}
    device = getattr(tunable, "device", None)
    clock = getattr(device, "max_clock_frequency", None)
    if clock is not None:
        identity["clock_mhz"] = clock
    return identity


class TunableWorker:
    """One worker: the tunable built on its device, timing what the driver sends (run as a Ray actor)."""

    def __init__(self, factory: Callable[[int], Tunable], index: int) -> None:
        self.index = index
        # Ray shows a worker its GPU through CUDA_VISIBLE_DEVICES (which NVIDIA's OpenCL follows) and, on AMD,
        # HIP_VISIBLE_DEVICES, which AMD's OpenCL does not: ROCR_VISIBLE_DEVICES restricts both.
        hip = os.environ.get("HIP_VISIBLE_DEVICES")
        if hip and "ROCR_VISIBLE_DEVICES" not in os.environ:
            os.environ["ROCR_VISIBLE_DEVICES"] = hip
        self.tunable = factory(index)
        self.checked: set[str] = set()

    def identity(self) -> dict[str, Any]:
        """Return the worker's device identity and where it runs (host, process)."""
        return {"device": _identity(self.tunable), "host": self.tunable.environment().get("host", ""),
                "pid": os.getpid()}

    def measure(self, config: Config, size: Mapping[str, int], repetitions: int) -> dict[str, Any]:
        """Return the samples (s) of `config` at `size` after a check and a warm-up, or its failure."""
        try:
            return {"status": "ok", "samples": timed_samples(self.tunable, config, size, repetitions, self.checked)}
        except Exception as error:  # noqa: BLE001 - a failing configuration is a result, sent back to the driver
            failure = failure_of(error)
            return {"status": failure.status, "message": str(failure)}


@dataclass
class DevicePool:
    """Ray actors, one per device, all of one kind of device; results come back as they finish."""

    factory: Callable[[int], Tunable]
    options: ClusterOptions
    progress: Callable[[str], None] = lambda _: None
    gpu: bool = False  # each worker takes a GPU of its node (Ray shows it only that one)
    driver: Tunable | None = None  # the driver's own tunable: its device runs the races, so it must match too
    actors: list[Any] = field(default_factory=list)
    lost: int = 0  # workers that died during the run
    requeued: int = 0  # configurations given to another worker after theirs died

    def __post_init__(self) -> None:
        self.ray = start_ray(self.options)
        require_resources(self.ray, self.options.workers, self.gpu)
        # Spread over the nodes, so that workers share a node only when the nodes run out.
        worker = self.ray.remote(num_cpus=1, num_gpus=1 if self.gpu else 0, max_restarts=0,
                                 scheduling_strategy="SPREAD")(TunableWorker)
        self.actors = [worker.remote(self.factory, index) for index in range(self.options.workers)]
        try:
            identities = self.ray.get([actor.identity.remote() for actor in self.actors], timeout=START_DEADLINE_S)
        except self.ray.exceptions.GetTimeoutError:
            self.close()
            raise ToolError(f"the workers did not start within {START_DEADLINE_S:g} s (building the kernel on each "
                            "device included)") from None
        except self.ray.exceptions.RayError as error:
            self.close()
            raise ToolError(f"a worker could not build the kernel on its device: {error}") from None
        self.identities = identities
        self._refuse_mixed(identities)

    def _refuse_mixed(self, identities: Sequence[Mapping[str, Any]]) -> None:
        """Raise MixedPool where a worker's device differs from the driver's (or the first worker's), naming how."""
        reference, name = identities[0]["device"], "worker 0"
        if self.driver is not None:
            reference, name = _identity(self.driver), "the driver's (which runs the races)"
        for index, identity in enumerate(identities):
            if identity["device"] != reference:
                differs = sorted(k for k in set(reference) | set(identity["device"])
                                 if reference.get(k) != identity["device"].get(k))
                detail = "; ".join(f"{k}: {identity['device'].get(k)!r} (vs {reference.get(k)!r})" for k in differs)
                self.close()
                raise MixedPool(f"worker {index} on {identity['host']} has another device than {name} ({detail}): "
                                "the devices of one run must be identical; run one pool per kind of device, with "
                                "the driver on a node of that kind")

    def measure_all(self, requests: Sequence[tuple[Config, Mapping[str, int]]], repetitions: int
                    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """Yield (index of the request, outcome) as each finishes; a dead worker's request goes to another."""
        queue = deque(range(len(requests)))
        idle = list(self.actors)
        running: dict[Any, tuple[Any, int]] = {}
        deaths: dict[int, int] = {}  # request -> workers that died measuring it
        while queue or running:
            while queue and idle:
                actor, index = idle.pop(), queue.popleft()
                config, size = requests[index]
                running[actor.measure.remote(dict(config), dict(size), repetitions)] = (actor, index)
            done, _ = self.ray.wait(list(running), num_returns=1)
            for ref in done:
                actor, index = running.pop(ref)
                try:
                    outcome = self.ray.get(ref)
                except self.ray.exceptions.RayActorError:
                    self.actors.remove(actor)
                    self.lost += 1
                    deaths[index] = deaths.get(index, 0) + 1
                    if deaths[index] >= DEATHS_PER_CONFIGURATION:
                        # The configuration kills the process that runs it: a result (stored as a failure, so
                        # that a resumed run does not run it again), not a worker's bad luck.
                        self.progress(f"{dict(requests[index][0])} killed {deaths[index]} workers: a runtime failure")
                        yield index, {"status": "runtime", "message": f"the worker's process died measuring it, "
                                      f"{deaths[index]} times (on {deaths[index]} workers)"}
                    else:
                        self.requeued += 1
                        queue.appendleft(index)
                        self.progress(f"a worker died measuring {dict(requests[index][0])}; given to another "
                                      f"({len(self.actors)} left)")
                    if not self.actors and (queue or running):
                        raise ToolError("every worker died: the measurements taken so far are in the results "
                                        "store (resume the run)") from None
                    continue
                idle.append(actor)
                yield index, outcome

    def close(self) -> None:
        """Stop the workers (the Ray instance stays for the process; ray.shutdown() ends it)."""
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception:  # noqa: BLE001, S110 - an actor already gone needs no stopping
                pass
        self.actors = []


@dataclass
class ParallelSession(Session):
    """A tuning session whose measurements run on a pool of identical devices; the driver alone writes the store.

    The driver's own tunable (built on its device) reads the space, the sizes and the throughput and runs the
    races that decide between close configurations; the workers time every configuration.
    """

    pool: DevicePool | None = None

    def evaluate(self, step: str, config: Mapping[str, int], size: Mapping[str, int]) -> Measurement | None:
        """Return the measurement of one configuration, taken on a worker."""
        return self.evaluate_many(step, [(dict(config), size)])[0]

    def evaluate_many(self, step: str, requests: Sequence[tuple[Config, Mapping[str, int]]]
                      ) -> list[Measurement | None]:
        """Return the measurements of a batch, timed on the workers in parallel and recorded as each arrives."""
        assert self.pool is not None
        results: list[Measurement | None] = [None] * len(requests)
        pending: list[int] = []
        first: dict[str, int] = {}
        aliases: dict[int, int] = {}
        for index, (config, size) in enumerate(requests):
            key = str((sorted(config.items()), sorted(size.items())))
            if key in first:  # asked twice in one batch: measured once
                aliases[index] = first[key]
                continue
            first[key] = index
            if self.tunable.space.invalid(config) or self.tunable.invalid(config, size):
                continue
            if self.store.find(self.run_id, config, size) is not None or self.known_failure(config, size):
                results[index] = Session.evaluate(self, step, config, size)  # reused from the store
                continue
            pending.append(index)
        batch = [requests[i] for i in pending]
        for position, outcome in self.pool.measure_all(batch, self.repetitions):
            index = pending[position]
            results[index] = self._record(step, *requests[index], outcome)
        for index, original in aliases.items():
            results[index] = results[original]
        return results

    def _record(self, step: str, config: Config, size: Mapping[str, int], outcome: Mapping[str, Any]
                ) -> Measurement | None:
        """Store one worker's outcome (once: a result that is already stored is not stored again)."""
        stored = self.store.find(self.run_id, config, size)
        if stored is not None:
            return stored
        if outcome["status"] != "ok":
            self.store.record_failure(self.run_id, config, size, outcome["status"], outcome["message"])
            self.failed += 1
            self.progress(f"{step}: {dict(config)} failed ({outcome['status']})")
            return None
        self.progress(f"{step}: {dict(config)} {dict(size)}")
        return self.store_samples(step, config, size, [float(s) for s in outcome["samples"]])


def _run_chunk(function: Callable[..., Any], chunk: Sequence[tuple[Any, ...]], **shared: Any) -> list[Any]:
    """Return function(*args, **shared) for each argument tuple of a chunk (one Ray task)."""
    return [function(*args, **shared) for args in chunk]


@functools.cache
def _remote_chunk() -> Any:
    """Return _run_chunk as a Ray remote function, made once: each new one is shipped to every worker again."""
    return import_ray().remote(num_cpus=1)(_run_chunk)


def parallel_map(function: Callable[..., Any], arguments: Sequence[tuple[Any, ...]], options: ClusterOptions,
                 shared: Mapping[str, Any] | None = None) -> list[Any]:
    """Return [function(*args, **shared) for args in arguments], computed in Ray tasks, in order.

    `shared` values (a recorded space) are put in Ray's object store once and handed to every task. The
    calls go out in one chunk per worker: each task pays for unpacking the shared values (40 ms for an
    11 130-configuration space), which more, smaller chunks would pay again (8 chunks on 2 workers: 1.6x
    faster than one process; 2 chunks: 2.0x). Dealt round-robin, long and short calls mix in every chunk.
    """
    ray = start_ray(options)
    workers = max(1, int(ray.cluster_resources().get("CPU", options.workers)))
    count = min(len(arguments), workers)
    chunks = [arguments[start::count] for start in range(count)]
    refs = {key: ray.put(value) for key, value in (shared or {}).items()}
    done = ray.get([_remote_chunk().remote(function, chunk, **refs) for chunk in chunks])
    results: list[Any] = [None] * len(arguments)
    for start, chunk in enumerate(done):
        results[start::count] = chunk
    return results
