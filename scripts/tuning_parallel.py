"""Benchmark of tuning spread over Ray workers on this machine: replay speed-up, and a live run on PoCL workers.

    .venv/bin/python scripts/tuning_parallel.py --markdown docs/validation/tuning-parallel.md

1. Replay speed per run: one hierarchical and one random run (budget 200) on each of the twelve public spaces
   of the corpus (convolution and dedispersion, six GPUs), median seconds per run.
2. Replay in parallel: the same (strategy, seed) runs, 20 seeds on each space, one after the other and on a
   local Ray instance with 2 workers, alternating, `--repeats` times each; the median times, their ratio,
   and whether both gave the same result; then one space with 100 seeds. Starting Ray is timed apart.
3. A live run: `perfcast tune kernel examples/tune-scale/scale.yaml -s exhaustive` on 1 and on 2 PoCL workers
   (one process each, both on this machine's CPU device), with the store checked for exactly one measurement
   per configuration.
4. A campaign fan-out: a quick campaign of three suite kernels run twice one after the other, and once with
   `campaign run --workers 2` (two archives).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPACES = [(kernel, device) for kernel in ("convolution-milo", "dedispersion-milo")
          for device in ("a100-pcie-40gb", "rtx-a4000", "rtx-a6000", "mi250x-gcd", "w6600", "w7800")]


def machine() -> str:
    """Return this machine in words: CPU model, cores, Python."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    flags = Path("/proc/cpuinfo").read_text()
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
    return f"{model}, {isa}, {os.cpu_count()} cores, Python {platform.python_version()}"


def spaces() -> list:
    """Return the twelve recorded spaces of the corpus."""
    from perfcast.validation.corpus import read_corpus

    corpus = read_corpus(kernels=["convolution-milo", "dedispersion-milo"])
    return [corpus.kernels[k].recorded_space(d) for k, d in SPACES]


def per_run(recorded: list) -> dict[str, float]:
    """Return the median seconds of one replay run per strategy over the spaces."""
    from perfcast.tune.replay import levels, replay_run

    times: dict[str, list[float]] = {"hierarchical": [], "random": []}
    for space in recorded:
        item, group = levels(space)
        for strategy in times:
            started = time.perf_counter()
            replay_run(strategy, 0, space, item, group, 200 if strategy == "random" else None)
            times[strategy].append(time.perf_counter() - started)
    return {strategy: statistics.median(values) for strategy, values in times.items()}


def study(recorded: list, seeds: int, cluster: object | None) -> tuple[float, list]:
    """Return (seconds, results) of replaying both strategies with `seeds` seeds on every space."""
    from perfcast.tune.replay import replay

    started = time.perf_counter()
    results = [replay(space, ["hierarchical", "random"], seeds, budget=200, cluster=cluster) for space in recorded]
    return time.perf_counter() - started, results


def live(workers: int, store: Path) -> tuple[float, dict]:
    """Return (seconds, summary) of an exhaustive tuning of the example kernel on `workers` PoCL workers."""
    command = [str(ROOT / ".venv" / "bin" / "perfcast"), "tune", "kernel", str(ROOT / "examples" / "tune-scale" /
               "scale.yaml"), "-s", "exhaustive", "-r", "5", "--workers", str(workers), "--store", str(store), "--json"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, json.loads(done.stdout)


def campaign(workers: int, folder: Path) -> float:
    """Return the seconds of `workers` quick campaigns of three suite kernels (one fan-out, or one after another)."""
    base = [str(ROOT / ".venv" / "bin" / "perfcast"), "campaign", "run", "--backend", "opencl", "--quick",
            "-k", "triad", "-k", "stencil7", "-k", "sgemm_tiled", "--device-profile",
            str(ROOT / "docs" / "validation" / "bench-opencl-pocl-profile.yaml"), "--device-runs", "1"]
    started = time.perf_counter()
    if workers > 1:
        subprocess.run([*base, "--workers", str(workers), "-o", str(folder / "fan.zip")], capture_output=True,
                       check=True)
    else:
        for index in range(2):
            subprocess.run([*base, "-o", str(folder / f"one-{index}.zip")], capture_output=True, check=True)
    return time.perf_counter() - started


def one_per_configuration(store: Path) -> tuple[int, int]:
    """Return (measurement rows of the tuning steps, distinct configurations among them) in a store."""
    db = sqlite3.connect(store)
    rows = db.execute("SELECT config, size FROM measurements WHERE step NOT LIKE 'race:%'").fetchall()
    return len(rows), len(set(rows))


def main() -> None:
    """Run the three measurements and print (or write) the report."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--markdown", type=Path)
    options = parser.parse_args()
    from perfcast.tune.cluster import ClusterOptions, start_ray

    recorded = spaces()
    speed = per_run(recorded)
    started = time.perf_counter()
    start_ray(ClusterOptions(workers=2))
    ray_start = time.perf_counter() - started
    cluster = ClusterOptions(workers=2)
    study(recorded[:1], 2, cluster)  # the workers import perfcast once, before the timed runs
    serial_times, parallel_times, same = [], [], True
    for _ in range(options.repeats):  # alternating, so that drift of the shared machine hits both alike
        seconds, one = study(recorded, options.seeds, None)
        serial_times.append(seconds)
        seconds, two = study(recorded, options.seeds, cluster)
        parallel_times.append(seconds)
        same = same and one == two
    single_serial, single_parallel = [], []
    for _ in range(options.repeats):  # one space, 100 seeds: what `tune replay CACHE --seeds 100` does
        seconds, one = study(recorded[-1:], 100, None)
        single_serial.append(seconds)
        seconds, two = study(recorded[-1:], 100, cluster)
        single_parallel.append(seconds)
        same = same and one == two
    import ray

    ray.shutdown()
    tmp = Path(tempfile.mkdtemp())
    live_one, summary_one = live(1, tmp / "one.sqlite")
    live_two, summary_two = live(2, tmp / "two.sqlite")
    rows, distinct = one_per_configuration(tmp / "two.sqlite")
    campaign_serial = campaign(1, tmp)
    campaign_fanout = campaign(2, tmp)
    fanned = sorted(p.name for p in tmp.glob("fan-*.zip"))
    serial, parallel = statistics.median(serial_times), statistics.median(parallel_times)
    runs = len(recorded) * 2 * options.seeds
    lines = [
        "# Tuning spread over Ray workers on this machine",
        "",
        f"Command: `.venv/bin/python scripts/tuning_parallel.py --markdown docs/validation/tuning-parallel.md` "
        f"({machine()}; Ray {ray.__version__}, PoCL). Each figure is measured in the run that wrote this page.",
        "",
        "## Results",
        "",
        "| what | result |",
        "|---|---|",
        f"| one replay run on a public space (median over {len(recorded)} spaces) | hierarchical "
        f"{speed['hierarchical'] * 1e3:.0f} ms, random (200 evaluations) {speed['random'] * 1e3:.0f} ms |",
        f"| replay of {runs} runs ({len(recorded)} spaces x 2 strategies x {options.seeds} seeds), one process | "
        f"{serial:.2f} s (median of {options.repeats}: {', '.join(f'{t:.2f}' for t in serial_times)}) |",
        f"| the same on 2 Ray workers (`tune replay --workers 2`) | {parallel:.2f} s "
        f"({', '.join(f'{t:.2f}' for t in parallel_times)}) |",
        f"| speed-up with 2 workers | **{serial / parallel:.2f}x**; the same results: {'yes' if same else 'NO'} |",
        f"| one space ({recorded[-1].kernel} on {recorded[-1].device}), 2 strategies x 100 seeds: one process / "
        f"2 workers | {statistics.median(single_serial):.2f} s / {statistics.median(single_parallel):.2f} s: "
        f"**{statistics.median(single_serial) / statistics.median(single_parallel):.2f}x** |",
        f"| starting the local Ray instance (once per command) | {ray_start:.1f} s |",
        f"| `tune kernel` exhaustive, {summary_one['space_size']} configurations, 1 worker / 2 workers | "
        f"{live_one:.1f} s / {live_two:.1f} s (Ray's start included); best {summary_one['best']} / "
        f"{summary_two['best']} |",
        f"| the 2-worker run's store | {rows} measurements of {distinct} distinct configurations: "
        f"{'exactly one each' if rows == distinct == summary_two['evaluations'] else 'NOT one each'} |",
        f"| a quick campaign of 3 suite kernels, twice: one after the other / `campaign run --workers 2` | "
        f"{campaign_serial:.1f} s / {campaign_fanout:.1f} s ({campaign_serial / campaign_fanout:.2f}x, Ray's "
        f"start included); archives {', '.join(fanned)} |",
        "",
        "The replay runs are deterministic in their seed, so the parallel study must return exactly what the serial "
        "one does; it is checked on every repeat. The live run's two workers share this machine's two cores, so "
        "their measurements compete with each other and with the driver; on a node with one device per worker "
        "they would not. The live speed-up is not the point of that row: the store is (one writer, one result per "
        "configuration). The same holds for the campaign row: its two workers time their kernels at the same time "
        "on the same two cores, so it shows the mechanics (one archive per worker, tagged with the fan-out), and "
        "its timings are not a measurement of either device.",
        "",
    ]
    text = "\n".join(lines)
    if options.markdown:
        options.markdown.write_text(text, encoding="utf-8")
    print(text)
    sys.exit(0 if same and rows == distinct else 1)


if __name__ == "__main__":
    main()
