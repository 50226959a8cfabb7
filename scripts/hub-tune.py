#!/usr/bin/env python3
"""Tune a benchmark-hub kernel on this machine's GPU with KernelTuner, for the GPU corpus (issue 25).

    python3 scripts/hub-tune.py HUB_KERNELS_DIR KERNEL SECONDS CACHE.json [--strategy S]

KERNEL is convolution-milo or dedispersion-milo. The hub's own tuning script (AutoTuningAssociation/
benchmark_hub, MIT) is loaded and run as it is, with four changes made around it, not in it:
- KernelTuner's CuPy backend instead of PyCUDA (the GPU machines have CuPy, not PyCUDA); the kernel source,
  space, restrictions, problem size and 32 iterations per configuration stay the hub's;
- a time limit (SECONDS) on a search strategy (default genetic_algorithm: the corpus scores each GPU's best
  configuration, and a 10-minute device call cannot brute-force thousands of configurations);
- the cache goes to CACHE.json; the hub's results and metadata files are not written;
- dedispersion's output check is dropped: its reference is a CPU run of 78 G operations, too long for the
  call. The corpus scores times, not outputs; the note says so.
"""

from __future__ import annotations

import argparse
import importlib.util
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


def main() -> int:
    """Run the hub's tune() under the changes above; print the configurations timed and the best (ms)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernels", type=Path)
    parser.add_argument("kernel", choices=sorted(SCRIPTS))
    parser.add_argument("seconds", type=float)
    parser.add_argument("cache", type=Path)
    parser.add_argument("--strategy", default="genetic_algorithm")
    args = parser.parse_args()

    import kernel_tuner
    import numpy as np

    script = args.kernels / SCRIPTS[args.kernel]
    module = load(script)
    original = kernel_tuner.tune_kernel
    cache = args.cache.resolve()

    def tune_kernel(*positional: Any, **options: Any) -> Any:
        options.update(lang="cupy", cache=str(cache), strategy=args.strategy, verbose=False, quiet=True,
                       strategy_options={"time_limit": args.seconds})
        options.pop("answer", None)
        return original(*positional, **options)

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
    results, _env = module.tune(device_name="H200", lang="CUDA", verbose=False, quiet=True)
    valid = [r for r in results if isinstance(r.get("time"), float)]
    best = min(valid, key=lambda r: r["time"]) if valid else None
    print(f"{args.kernel}: {len(results)} configurations timed in {time.time() - start:.0f} s, {len(valid)} valid;"
          f" best {best['time'] if best else 'none'} ms: {best}", flush=True)
    return 0 if valid else 1


if __name__ == "__main__":
    sys.exit(main())
