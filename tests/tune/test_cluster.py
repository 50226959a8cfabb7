"""Tuning on a local Ray cluster: worker processes, each pretending to be a device, one writer, a killed worker."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from perfcast.errors import BackendUnavailable
from perfcast.tune.cluster import ClusterOptions, DevicePool, MixedPool, ParallelSession, import_ray, start_ray
from perfcast.tune.recorded import read_recorded
from perfcast.tune.replay import replay
from perfcast.tune.space import SearchSpace
from perfcast.tune.store import ResultsStore
from perfcast.tune.strategies import ConfigurationFailed, Session, run_strategy

ray = pytest.importorskip("ray", reason="the ray extra (pip install 'perfcast[ray]'); make test installs it")
DATA = Path(__file__).parents[1] / "data" / "tune"


class PretendDevice:
    """A tunable whose 'device' is a Python function: time = 1 ms / x + 0.1 ms x groups, deterministic."""

    name = "pretend"
    item_parameters = ("x",)
    group_parameters = ("wg",)

    def __init__(self, device: str = "pretend-gpu", die_on: int | None = None, fail_on: int | None = None) -> None:
        self.device_name = device
        self.die_on = die_on
        self.fail_on = fail_on
        self.space = SearchSpace({"x": [1, 2, 4, 8], "wg": [1, 2, 4]}, [])

    def target(self) -> dict[str, int]:
        return {"n": 64}

    def size_for(self, config: Mapping[str, int], groups: int) -> dict[str, int]:
        return {"n": 64}

    def groups_for_target(self, config: Mapping[str, int]) -> int:
        return 1

    def invalid(self, config: Mapping[str, int], size: Mapping[str, int]) -> str | None:
        return None

    def run(self, config: Mapping[str, int], size: Mapping[str, int]) -> float:
        if config["x"] == self.die_on:
            os._exit(3)  # the worker's process is killed mid-measurement
        if config["x"] == self.fail_on:
            raise ConfigurationFailed("runtime", "out of resources")
        time.sleep(0.002)
        return 1e-3 / config["x"] + 1e-4 * config["wg"]

    def throughput(self, size: Mapping[str, int], seconds: float) -> float:
        return size["n"] / seconds

    def check(self, config: Mapping[str, int]) -> str | None:
        return None

    def environment(self) -> dict[str, Any]:
        return {"device": self.device_name, "driver": "1.0", "host": f"node-{os.getpid()}"}


def identical(index: int) -> PretendDevice:
    return PretendDevice()


def mixed(index: int) -> PretendDevice:
    return PretendDevice("pretend-gpu" if index == 0 else "another-gpu")


def first_worker_dies(index: int) -> PretendDevice:
    return PretendDevice(die_on=4 if index == 0 else None)


def failing(index: int) -> PretendDevice:
    return PretendDevice(fail_on=2)


@pytest.fixture(scope="module", autouse=True)
def local_cluster():
    # Workers import this test module's factories by value: they are not on the workers' import path.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    start_ray(ClusterOptions(workers=2))
    yield
    ray.shutdown()


def _session(tmp_path: Path, factory: Any, progress: list[str] | None = None) -> tuple[ParallelSession, ResultsStore]:
    store = ResultsStore(tmp_path / "results.sqlite")
    tunable = PretendDevice()
    run_id, _ = store.open_run(tunable.name, "exhaustive", tunable.environment(), tunable.target(), 3)
    pool = DevicePool(factory, ClusterOptions(workers=2),
                      progress=progress.append if progress is not None else lambda _: None)
    session = ParallelSession(tunable, store, run_id, 3, racing=False, pool=pool)
    return session, store


def _run(session: ParallelSession, strategy: str, **options: Any) -> Any:
    """Return the strategy's result on the session's pool, the pool closed after."""
    try:
        return run_strategy(session, strategy, **options)
    finally:
        assert session.pool is not None
        session.pool.close()


def _rows(store_path: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(store_path)
    # Races store their rounds as measurements of steps 'race:...', beside the configuration's own measurement.
    return db.execute("SELECT config, size FROM measurements WHERE step NOT LIKE 'race:%'").fetchall()


def test_parallel_exhaustive_matches_one_device_and_stores_each_configuration_once(tmp_path):
    session, store = _session(tmp_path, identical)
    result = _run(session, "exhaustive")
    assert result.best == {"x": 8, "wg": 1}  # 1 ms / 8 + 0.1 ms: the smallest time
    rows = _rows(tmp_path / "results.sqlite")
    assert len(rows) == len(set(rows)) == 12 and session.measured == 12
    # Both workers measured: their identities are two processes of one kind of device.
    assert len({identity["pid"] for identity in session.pool.identities}) == 2
    serial_store = ResultsStore(tmp_path / "serial.sqlite")
    run_id, _ = serial_store.open_run("pretend", "exhaustive", {}, {"n": 64}, 3)
    serial = run_strategy(Session(PretendDevice(), serial_store, run_id, 3, racing=False), "exhaustive")
    assert serial.best == result.best


def test_a_killed_worker_has_its_configurations_requeued(tmp_path):
    said: list[str] = []
    session, store = _session(tmp_path, first_worker_dies, said)
    result = _run(session, "exhaustive")
    assert session.pool.lost == 1 and session.pool.requeued >= 1
    assert any("a worker died" in line for line in said)
    rows = _rows(tmp_path / "results.sqlite")
    # x = 4 kills worker 0 only; worker 1 measured everything it was given, the re-queued ones included.
    assert len(rows) == len(set(rows)) == 12
    assert result.best == {"x": 8, "wg": 1}


def test_failures_are_recorded_by_the_driver(tmp_path):
    session, store = _session(tmp_path, failing)
    _run(session, "exhaustive")
    failures = store.failures(session.run_id)
    assert {f["status"] for f in failures} == {"runtime"} and len(failures) == 3  # x = 2 with each wg
    assert len(_rows(tmp_path / "results.sqlite")) == 9


def test_a_resumed_parallel_run_measures_nothing_twice(tmp_path):
    session, store = _session(tmp_path, identical)
    try:
        run_strategy(session, "random", budget=5, seed=1)
        again = ParallelSession(PretendDevice(), store, session.run_id, 3, racing=False, pool=session.pool)
        run_strategy(again, "random", budget=5, seed=1)
    finally:
        session.pool.close()
    assert again.measured == 0 and again.reused == 5


def test_a_mixed_pool_is_refused_naming_the_odd_device():
    with pytest.raises(MixedPool, match=r"worker 1 .*another device than worker 0 .*'another-gpu' \(vs 'pretend-gpu'\)"):
        DevicePool(mixed, ClusterOptions(workers=2))


def test_the_driver_must_have_the_pool_s_device_too():
    with pytest.raises(MixedPool, match=r"worker 0 .*the driver's \(which runs the races\)"):
        DevicePool(identical, ClusterOptions(workers=2), driver=PretendDevice("another-gpu"))


def test_more_workers_than_the_cluster_can_place_are_refused_at_once():
    from perfcast.errors import ToolError

    with pytest.raises(ToolError, match="needs 3 CPU"):
        DevicePool(identical, ClusterOptions(workers=3))


def test_a_configuration_that_kills_its_workers_is_a_stored_failure(tmp_path, monkeypatch):
    import perfcast.tune.cluster as cluster

    monkeypatch.setattr(cluster, "DEATHS_PER_CONFIGURATION", 1)  # two workers only: one death decides here
    session, store = _session(tmp_path, first_worker_dies)
    _run(session, "exhaustive")
    failures = store.failures(session.run_id)
    assert len(failures) == 1 and failures[0]["status"] == "runtime" and "process died" in failures[0]["message"]
    assert len(_rows(tmp_path / "results.sqlite")) == 11


def test_replay_in_parallel_gives_the_same_result():
    recorded = read_recorded(DATA / "convolution-a100-subset.json")
    serial = replay(recorded, ["hierarchical", "random"], 3, budget=20)
    parallel = replay(recorded, ["hierarchical", "random"], 3, budget=20, cluster=ClusterOptions(workers=2))
    assert parallel == serial


def test_without_ray_the_extra_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(BackendUnavailable, match=r"perfcast\[ray\]"):
        import_ray()


def test_cli_without_ray_names_the_extra(tmp_path):
    # In a process of its own, where `import ray` fails as it does where the extra is not installed.
    import subprocess

    script = ("import sys; sys.modules['ray'] = None\n"
              "from perfcast.cli import main; sys.argv = ['perfcast'] + sys.argv[1:]; main()")
    result = subprocess.run([sys.executable, "-c", script, "tune", "replay", str(DATA / "convolution-a100-subset.json"),
                             "-s", "random", "--seeds", "2", "--workers", "2"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2 and "perfcast[ray]" in result.stderr


def test_a_cluster_that_does_not_answer_is_said_in_time():
    import subprocess

    script = ("import perfcast.tune.cluster as c; c.CONNECT_DEADLINE_S = 3\n"
              "try:\n    c.start_ray(c.ClusterOptions(2, '127.0.0.1:9'))\n"
              "except c.ToolError as e:\n    print(e)")
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "did not answer within 3 s" in result.stdout and "auth token" in result.stdout
    assert time.perf_counter() - started < 60


def test_tune_kernel_on_two_pocl_workers(tmp_path):
    pytest.importorskip("pyopencl")
    from typer.testing import CliRunner

    from perfcast.bench.backends import BackendUnavailable as NoDevice
    from perfcast.bench.opencl import OpenClBackend
    from perfcast.cli import app

    try:
        OpenClBackend.open(None, 1)
    except NoDevice:
        pytest.skip("no OpenCL device")
    spec = Path(__file__).parents[2] / "examples" / "tune-scale" / "scale.yaml"
    store = tmp_path / "r.sqlite"
    result = CliRunner().invoke(app, ["tune", "kernel", str(spec), "-s", "random", "--budget", "6", "-r", "2",
                                      "--workers", "2", "--store", str(store), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    rows = _rows(store)
    assert summary["evaluations"] == 6 and len(set(rows)) == len(rows) == 6
