"""KernelTuner's own strategies replayed on a brute-forced cache (its simulation mode), scored as perfcast scores.

Run in a throw-away environment with KernelTuner installed (`pip install kernel_tuner==1.5.0`):

    python kerneltuner_replay.py CACHE.json BUDGET RUNS STRATEGY [STRATEGY ...]

For each strategy, RUNS runs of at most BUDGET evaluations; per run, the evaluations needed to reach 90, 97
and 99 % of the cache's optimum (every distinct configuration evaluated counts, failed ones too), the
fraction of the optimum reached, and its improvements ([evaluations, fraction] each time the best found got
faster: the fraction after any number of evaluations). Prints one JSON object.
"""

import json
import math
import statistics
import sys

import kernel_tuner


def main() -> None:
    cache, budget, runs, strategies = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    with open(cache) as handle:
        data = json.load(handle)
    keys = data["tune_params_keys"]
    times = [e["time"] for e in data["cache"].values() if not isinstance(e["time"], str)]
    optimum = min(times)
    # The space is what the cache holds: a configuration absent from it was excluded by the kernel's own
    # restrictions, which this script does not know; KernelTuner then never proposes it.
    present = {tuple(e[k] for k in keys) for e in data["cache"].values()}

    def recorded(p: dict) -> bool:
        return tuple(p[k] for k in keys) in present

    report = {"cache": cache, "optimum_ms": optimum, "budget": budget, "runs": runs, "strategies": {}}
    for strategy in strategies:
        reached = {f: [] for f in ("90%", "97%", "99%")}
        finals, counts, improvements = [], [], []
        for _ in range(runs):
            results, _env = kernel_tuner.tune_kernel(
                data["kernel_name"], "__global__ void dummy() {}", tuple(data["problem_size"]), [],
                {k: data["tune_params"][k] for k in keys}, restrictions=recorded, cache=cache, simulation_mode=True,
                strategy=strategy, strategy_options={"max_fevals": budget}, verbose=False, quiet=True)
            seen, best, trace = set(), math.inf, []
            for r in results:
                key = tuple(r[k] for k in keys)
                if key in seen:
                    continue
                seen.add(key)
                if not isinstance(r["time"], str) and r["time"] < best:
                    best = r["time"]
                trace.append(best)
            for fraction, name in ((0.90, "90%"), (0.97, "97%"), (0.99, "99%")):
                reached[name].append(next((i + 1 for i, b in enumerate(trace) if optimum / b >= fraction), None))
            finals.append(optimum / best)
            counts.append(len(trace))
            improvements.append([[i + 1, optimum / b] for i, b in enumerate(trace)
                                 if b < math.inf and (i == 0 or b < trace[i - 1])])
        report["strategies"][strategy] = {"evaluations_to_reach": reached, "final_fraction": finals,
                                          "evaluations": counts, "improvements": improvements,
                                          "median_final": statistics.median(finals)}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
