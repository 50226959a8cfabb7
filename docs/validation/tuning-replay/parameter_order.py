"""How much the hierarchical method's result depends on the order a cache lists its parameters in.

    python parameter_order.py HUB_CHECKOUT [SHUFFLES]

Each of the benchmark hub's 26 KernelTuner caches (the twelve of `cachefiles/*_milo/` and the fourteen of
`currently_unused/cachefiles/KernelTuner data/`) is replayed as listed and with its parameters shuffled
SHUFFLES times (default 5, seeded): the same space, the same records, only the order the sweeps go in. Prints
the final fraction of the optimum as listed and the lowest and median over the shuffles. Needs perfcast.
"""

import random
import statistics
import sys
from pathlib import Path

from perfcast.tune.recorded import RecordedSpace, read_recorded
from perfcast.tune.replay import levels, replay_run


def main() -> None:
    """Print one Markdown row per cache and how many reach 90 % in every order."""
    hub = Path(sys.argv[1])
    shuffles = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    files = sorted(hub.glob("cachefiles/*_milo/*.json.gz")) + sorted(
        hub.glob("currently_unused/cachefiles/KernelTuner data/*/*.json.gz"))
    files = [f for f in files if "_T4" not in f.name and "original" not in f.name]
    print("| space | as listed | shuffled: lowest | shuffled: median |")
    print("|---|---:|---:|---:|")
    robust = 0
    for path in files:
        space = read_recorded(path)
        group = ["MDIMC", "NDIMC"] if path.parent.name == "gemm" else None
        rng = random.Random(0)
        finals = []
        for trial in range(shuffles + 1):
            names = list(space.parameters)
            if trial:
                rng.shuffle(names)
            ordered = RecordedSpace(space.kernel, space.device, space.problem_size,
                                    {name: space.parameters[name] for name in names}, space.records, space.objective,
                                    space.origin)
            item, groups = levels(ordered, None, group)
            finals.append(replay_run("hierarchical", 0, ordered, item, groups, None)[1])
        robust += min(finals) >= 0.9
        name = f"{path.parent.name}-{path.name.removesuffix('.json.gz')}"
        print(f"| {name} | {finals[0]:.1%} | {min(finals[1:]):.1%} | {statistics.median(finals[1:]):.1%} |")
    print(f"\n{robust} of {len(files)} spaces at 90 % or more in every order tried.")


if __name__ == "__main__":
    main()
