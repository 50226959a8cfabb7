"""KernelTuner's strategies tuning perfcast's VaR kernel live, on the same OpenCL device and space.

Run in a throw-away environment with KernelTuner and pyopencl (`pip install kernel_tuner==1.5.0 pyopencl`):

    python kerneltuner_varmc.py ARRAYS.npz varmc.cl BUDGET RUNS OUT.json STRATEGY [STRATEGY ...]

ARRAYS.npz holds the portfolio and market (written by `perfcast validate tuning --export-arrays`). For each
strategy, RUNS runs of at most BUDGET evaluations; each run's choice (its fastest configuration), the
distinct configurations it evaluated and its wall time go to OUT.json, for `perfcast validate tuning --also
OUT.json` to re-measure beside perfcast's own runs, round-robin, in one report.
"""

import json
import sys
import time

import kernel_tuner
import numpy as np

SPACE = {"POSBS": [32, 128, 512, 2048], "SIMBS": [1, 2, 4, 8], "VWIDTH": [1, 2, 4, 8, 16], "WGSIZE": [1, 4, 16, 64]}


def main() -> None:
    arrays, source, budget, runs, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    strategies = sys.argv[6:]
    data = np.load(arrays)
    nsim, npos = int(data["nsim"]), int(data["npos"])
    arguments = [data["types"].astype(np.int32), data["amounts"].astype(np.float32),
                 data["maturities"].astype(np.float32), np.int32(npos), data["packed"].astype(np.float32),
                 np.uint64(1), np.zeros(nsim, np.float32)]
    with open(source) as handle:
        kernel = handle.read()

    def fits(p: dict) -> bool:
        return nsim % (p["SIMBS"] * p["VWIDTH"] * p["WGSIZE"]) == 0

    choices = []
    for strategy in strategies:
        for run in range(runs):
            started = time.perf_counter()
            # A work-item computes SIMBS x VWIDTH simulations and a work-group WGSIZE items: the number of
            # work-groups is nsim / (SIMBS VWIDTH WGSIZE), the global size nsim / (SIMBS VWIDTH).
            results, _env = kernel_tuner.tune_kernel(
                "varmc", kernel, nsim, arguments, SPACE, lang="OpenCL", block_size_names=["WGSIZE"],
                grid_div_x=["SIMBS", "VWIDTH", "WGSIZE"], restrictions=fits, compiler_options=["-cl-mad-enable"],
                strategy=strategy, strategy_options={"max_fevals": budget}, iterations=10, verbose=False,
                quiet=True)
            wall = time.perf_counter() - started
            valid = [r for r in results if not isinstance(r["time"], str)]
            best = min(valid, key=lambda r: r["time"])
            evaluated = {tuple(r[k] for k in SPACE) for r in results}
            choices.append({"label": f"KernelTuner {strategy}", "run": run + 1,
                            "config": {k.lower(): int(best[k]) for k in SPACE}, "evaluations": len(evaluated),
                            "wall_s": wall, "time_ms": best["time"]})
            print(f"{strategy} run {run + 1}: {choices[-1]['config']} {len(evaluated)} evaluations {wall:.1f} s",
                  file=sys.stderr)
    with open(out, "w") as handle:
        json.dump({"tool": f"KernelTuner {kernel_tuner.__version__ if hasattr(kernel_tuner, '__version__') else ''}",
                   "nsim": nsim, "npos": npos, "budget": budget, "choices": choices}, handle, indent=1)


if __name__ == "__main__":
    main()
