"""What the OpenCL launch log costs a program: its wall time with and without the interposer, alternated.

    python scripts/launch_log_overhead.py [--runs 9] [-- PROGRAM ARGS...]

Without a program it builds the tests' multi-kernel program (tests/data/programs/multi_kernel.c) and runs it
with many short launches (the worst case: the log's per-launch cost against launches of microseconds). Each
pair of runs is one without and one with the log, in alternating order; the overhead is the ratio of the
medians, with the spread of each side (docs/campaign-programs.md quotes it).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perfcast.campaign.launch_log import build_launch_logger, launch_environment, read_launch_logs
from perfcast.kernels.native import build_executable

PROGRAM = Path(__file__).parents[1] / "tests" / "data" / "programs" / "multi_kernel.c"


def _wall(command: list[str], env: dict[str, str] | None) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    """Time the program with and without the log, alternated; print medians, spreads and the overhead."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("program", nargs="*")
    options = parser.parse_args()
    if options.program:
        command = options.program
    else:
        path, _, _ = build_executable(PROGRAM, ("-O2", "-Wl,--no-as-needed", "-lOpenCL", "-lpthread"))
        command = [str(path), "16384", "1500", "0"]
    logger = build_launch_logger()
    plain: list[float] = []
    logged: list[float] = []
    launches = 0
    with tempfile.TemporaryDirectory() as folder:
        _wall(command, None)  # PoCL's kernel cache warmed for both sides
        for run in range(options.runs):
            prefix = Path(folder) / f"run{run}" / "launches"
            prefix.parent.mkdir()
            env = launch_environment(prefix, logger)
            for side in ((0, 1) if run % 2 == 0 else (1, 0)):
                if side:
                    logged.append(_wall(command, env))
                else:
                    plain.append(_wall(command, None))
            launches = len(read_launch_logs(prefix).launches)
    a, b = statistics.median(plain), statistics.median(logged)
    print(f"program: {' '.join(command)}; {launches} launches per run; {options.runs} runs each, alternated")
    print(f"without the log: median {a:.3f} s (min {min(plain):.3f}, max {max(plain):.3f})")
    print(f"with the log:    median {b:.3f} s (min {min(logged):.3f}, max {max(logged):.3f})")
    print(f"overhead: {b / a - 1:+.2%} of the wall time; {(b - a) / max(launches, 1) * 1e6:+.2f} µs per launch")


if __name__ == "__main__":
    sys.exit(main())
