#!/usr/bin/env python3
"""Tune a benchmark-hub kernel on this machine's GPU with KernelTuner, for the GPU corpus (issue 25).

    python3 scripts/hub-tune.py HUB_KERNELS_DIR KERNEL SECONDS CACHE.json [--strategy S] [--simulate CACHE]

KERNEL is convolution-milo or dedispersion-milo. The hub's own tuning script (AutoTuningAssociation/
benchmark_hub, MIT) is loaded and run as it is, with four changes made around it, not in it:
- KernelTuner's CuPy backend instead of PyCUDA (the GPU machines have CuPy, not PyCUDA); the kernel source,
  space, restrictions, problem size and 32 iterations per configuration stay the hub's;
- a time limit (SECONDS) on a search strategy. S is one of KernelTuner's (default genetic_algorithm: the
  corpus scores each GPU's best configuration, and a 10-minute device call cannot brute-force thousands of
  configurations) or one of perfcast's (`hierarchical`, `random`): then KernelTuner lists the valid
  configurations under the hub's restrictions and times each one perfcast's strategy asks for, one at a time
  (`perfcast.tune.live_space`), and perfcast writes the cache, after every configuration;
- the cache goes to CACHE.json; the hub's results and metadata files are not written;
- dedispersion's output check is dropped: its reference is a CPU run of 78 G operations, too long for the
  call. The corpus scores times, not outputs; the note says so.

`--simulate CACHE` answers every timing from a brute-forced cache of the hub (KernelTuner's simulation mode),
so that the whole path runs without a GPU: the check before a device call (with one of KernelTuner's strategies
nothing is written then: the simulated cache is the record). `--seed` is perfcast's random search's seed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

SCRIPTS = {"convolution-milo": "convolution_milo.py", "dedispersion-milo": "dedisp_milo/dedispersion_milo.py"}


def load(path: Path) -> ModuleType:
    """Return the hub's tuning script loaded as a module (its __main__ block does not run)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PERFCAST_STRATEGIES = ("hierarchical", "random")


def _plain_copy(source: Path, target: Path) -> Path:
    """Return `target`, a plain (not gzip) copy of the cache `source`: KernelTuner opens its cache to append."""
    import gzip

    data = gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes()
    target.write_bytes(data)
    return target


def _tune_with_perfcast(tune_kernel: Any, positional: tuple[Any, ...], options: dict[str, Any], strategy: str,
                        seconds: float, seed: int, cache: Path, device: str) -> Any:
    """Run perfcast's `strategy` on the hub kernel, KernelTuner timing one configuration at a time.

    Returns what KernelTuner's tune_kernel would (results as dicts with the time in ms, an environment), and
    writes `cache` (KernelTuner's format) after every configuration, so a run stopped early keeps them.
    """
    from kernel_tuner.searchspace import Searchspace

    from perfcast.tune.live_space import candidate_space, tune_live
    from perfcast.tune.recorded import Record, RecordedSpace, to_kerneltuner

    kernel_name, _source, problem_size, _arguments, tune_params = positional[:5]
    names = list(tune_params)
    restrictions = options.get("restrictions")
    listed = Searchspace(dict(tune_params), restrictions, 1024)  # 1024: CUDA's threads per block, any GPU here
    space = candidate_space(kernel_name, device, list(problem_size) if not callable(problem_size) else [],
                            {name: list(tune_params[name]) for name in names}, listed.list)
    failures = {"CompilationFailedConfig": "compile", "RuntimeFailedConfig": "runtime", "InvalidConfig": "wrong",
                "ErrorConfig": "runtime"}
    one = {**options, "strategy": "brute_force"}
    one.pop("strategy_options", None)

    recorded_on = [device]  # replaced by the name KernelTuner reads from the GPU, once it has run

    def measure(config: dict[str, Any]) -> Record:
        try:
            results, env = tune_kernel(*positional[:4], {name: [config[name]] for name in names}, **one)
        except Exception as error:  # KernelTuner re-raises a runtime error it cannot skip: one configuration failed
            print(f"{config}: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
            return Record(config, "runtime", None)
        recorded_on[0] = str((env or {}).get("device_name") or recorded_on[0])
        if not results:
            return Record(config, "wrong", None)
        result = results[0]
        raw = result.get("__error__", result.get("time"))
        if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw) and raw > 0:
            times = tuple(float(t) * 1e-3 for t in result.get("times") or ())
            metrics = {k: float(v) for k, v in result.items() if k not in names and k not in ("time", "times")
                       and isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)}
            return Record(config, "ok", float(raw) * 1e-3, times, metrics)
        return Record(config, failures.get(str(raw), "runtime"), None)

    timed: list[Record] = []

    def save(record: Record) -> None:
        timed.append(record)
        measured = RecordedSpace(space.kernel, recorded_on[0], space.problem_size, dict(space.parameters),
                                 list(timed), "time", f"perfcast {strategy}, live",
                                 f"perfcast {strategy} (KernelTuner {_version()} timing each configuration); "
                                 f"{len(timed)} of {len(space.records)} valid configurations tried, "
                                 f"{sum(r.status == 'ok' for r in timed)} timed")
        partial = cache.with_name(cache.name + ".part")  # replaced whole: a run stopped mid-write keeps the last
        partial.write_text(json.dumps(to_kerneltuner(measured)))
        partial.replace(cache)

    result = tune_live(space, measure, strategy, seconds, seed, on_record=save)
    print(f"perfcast {strategy}: {result.evaluations} of {result.space_size} configurations timed in "
          f"{result.seconds:.0f} s{' (time limit reached)' if result.stopped else ''}; chosen {result.chosen}",
          flush=True)
    results = [{**r.config, "time": r.time * 1e3 if r.time is not None else str(r.status),
                "times": [t * 1e3 for t in r.times]} for r in result.measured.records]
    return results, {"device_name": recorded_on[0], "strategy": f"perfcast {strategy}"}


def _version() -> str:
    """Return KernelTuner's version."""
    from importlib.metadata import version

    return version("kernel_tuner")


def _tolerate_device_uuid() -> None:
    """Let KernelTuner 1.5's CuPy backend start where CuPy does not give the GPU's UUID as 16 bytes.

    The backend records `uuid.UUID(bytes=props["uuid"])` in its environment; on an H200 on 2026-11-27
    (CuPy 14.2.0, CUDA runtime 13.2) that raised "bytes is not a 16-char string" before every timing, where
    other H100 and H200 machines gave 16 bytes (likely a UUID with a zero byte, read by CuPy as a C string).
    The UUID only names the GPU in KernelTuner's metadata, so a value of another shape is kept as text.
    """
    import uuid
    from types import SimpleNamespace

    from kernel_tuner.backends import cupy as backend

    def device_uuid(**kwargs: Any) -> Any:
        value = kwargs.get("bytes")
        try:
            return uuid.UUID(bytes=value)
        except (AssertionError, TypeError, ValueError):
            pass
        try:
            raw = value.encode("latin-1") if isinstance(value, str) else bytes(value)
        except (TypeError, ValueError):
            return repr(value)
        return uuid.UUID(bytes=raw[:16]) if len(raw) >= 16 else raw.hex()

    backend.uuid = SimpleNamespace(UUID=device_uuid)  # type: ignore[attr-defined]


def main() -> int:
    """Run the hub's tune() under the changes above; print the configurations timed and the best (ms)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernels", type=Path)
    parser.add_argument("kernel", choices=sorted(SCRIPTS))
    parser.add_argument("seconds", type=float)
    parser.add_argument("cache", type=Path)
    parser.add_argument("--strategy", default="genetic_algorithm")
    parser.add_argument("--simulate", type=Path, help="a brute-forced cache to answer the timings from")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.seconds <= 0:
        parser.error(f"SECONDS must be positive, not {args.seconds}")

    import kernel_tuner
    import numpy as np

    from perfcast.errors import PerfcastError
    from perfcast.tune.recorded import read_recorded

    script = args.kernels / SCRIPTS[args.kernel]
    if not script.is_file():
        parser.error(f"{script}: no such file (KERNELS_DIR is the benchmark hub's kernels/ folder)")
    module = load(script)
    original = kernel_tuner.tune_kernel
    cache = args.cache.resolve()

    simulated = args.simulate.resolve() if args.simulate else None
    # The hub's scripts name their cache paths by it; the cache written holds the GPU's own name. Simulated, the
    # name must be the brute-forced cache's (KernelTuner checks it).
    try:
        device_name = read_recorded(simulated).device if simulated is not None else "GPU"
    except PerfcastError as error:
        parser.error(f"--simulate: {error}")

    def tune_kernel(*positional: Any, **options: Any) -> Any:
        options.pop("answer", None)
        options.pop("cache", None)  # the hub's own cache path: this run writes CACHE.json instead
        options.update(lang="cupy", verbose=False, quiet=True)
        if simulated is not None:
            options.update(simulation_mode=True, cache=str(_plain_copy(simulated, cache.with_suffix(".sim.json"))))
        if args.strategy in PERFCAST_STRATEGIES:
            return _tune_with_perfcast(original, positional, options, args.strategy, args.seconds, args.seed, cache,
                                       device_name)
        if simulated is None:
            options["cache"] = str(cache)
        options.update(strategy=args.strategy, strategy_options={"time_limit": args.seconds})
        return original(*positional, **options)

    if simulated is None:
        _tolerate_device_uuid()
    kernel_tuner.tune_kernel = tune_kernel  # the hub's scripts call it through the module
    if hasattr(module, "kt"):
        module.kt.tune_kernel = tune_kernel
    for name in ("store_output_file", "store_metadata_file"):
        setattr(module, name, lambda *a, **k: None)

    os.chdir(script.parent)  # the hub's scripts read their kernel and inputs from the working folder
    if args.kernel == "dedispersion-milo":
        rng = np.random.default_rng(1)
        inputs = rng.integers(0, 256, module.nr_samples_per_channel * module.nr_channels, dtype=np.uint8)
        np.save("input_ref", inputs, allow_pickle=False)
        np.save("shifts_ref", module.get_shifts(), allow_pickle=False)
        np.save("dedisp_ref", np.zeros(1, dtype=np.float32), allow_pickle=False)

    start = time.time()
    results, _env = module.tune(device_name=device_name, lang="CUDA", verbose=False, quiet=True)
    valid = [r for r in results if isinstance(r.get("time"), float)]
    best = min(valid, key=lambda r: r["time"]) if valid else None
    print(f"{args.kernel}: {len(results)} configurations timed in {time.time() - start:.0f} s, {len(valid)} valid;"
          f" best {best['time'] if best else 'none'} ms: {best}", flush=True)
    return 0 if valid else 1


if __name__ == "__main__":
    sys.exit(main())
