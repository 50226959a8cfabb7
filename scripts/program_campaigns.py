"""Run `perfcast campaign run -- CMD` on every program of a list and write one summary table.

    python scripts/program_campaigns.py PROGRAMS.json --device-profile DEVICE.yaml --out docs/validation/programs/xeon
        [--only NAME ...] [--overhead N]

PROGRAMS.json is what scripts/third_party_programs.py writes: per program its suite, name, commit, cwd, the
command to time and two smaller commands to profile. Each program's archive and report go to OUT/NAME/; the
summary (per program: kernels found, launches timed, MAPE per model, the worst kernels) to OUT/summary.md and
OUT/summary.json. With --overhead N each timed command also runs N times with and N times without the launch
log, alternated, and the summary gives the ratio of the medians. A program whose campaign fails is listed with
the reason; the others go on.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from perfcast.campaign.archive import Archive
from perfcast.campaign.launch_log import build_launch_logger, launch_environment
from perfcast.campaign.profile_size import profile_outgrows
from perfcast.campaign.projection import ArchiveRun
from perfcast.campaign.report import score_archive
from perfcast.devices.cache_view import cache_hierarchy

MODELS = ("roofline", "quantitative")


def _overhead(entry: dict[str, Any], runs: int) -> dict[str, float]:
    """Return the program's median wall time (s) without and with the launch log, alternated, and the ratio."""
    logger = build_launch_logger()
    plain: list[float] = []
    logged: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        for run in range(runs):
            prefix = Path(folder) / f"run{run}" / "launches"
            prefix.parent.mkdir()
            for side in ((0, 1) if run % 2 == 0 else (1, 0)):
                env = launch_environment(prefix, logger) if side else None
                started = time.perf_counter()
                subprocess.run(entry["command"], cwd=entry["cwd"], env=env, check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
                (logged if side else plain).append(time.perf_counter() - started)
    a, b = statistics.median(plain), statistics.median(logged)
    return {"without_s": a, "with_s": b, "overhead": b / a - 1}


def _campaign(entry: dict[str, Any], device: Path, out: Path) -> dict[str, Any]:
    """Run one program's campaign and report; return its summary row."""
    folder = out / entry["name"]
    folder.mkdir(parents=True, exist_ok=True)
    archive = folder / f"{entry['name']}.zip"
    command = [sys.executable, "-m", "perfcast", "campaign", "run", "-o", str(archive.resolve()), "--fresh",
               "--device-profile", str(device.resolve())]
    for profile in entry.get("profile_commands", []):
        command += ["--profile-cmd", shlex.join(profile)]
    for kernel, exponent in entry.get("scaling", {}).items():
        command += ["--scaling", f"{kernel}={exponent}"]
    command += ["--", *entry["command"]]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=entry["cwd"], capture_output=True, text=True)
    row: dict[str, Any] = {"suite": entry["suite"], "name": entry["name"], "command": shlex.join(entry["command"]),
                           "campaign_s": time.perf_counter() - started}
    if done.returncode != 0:
        row["failed"] = (done.stderr or done.stdout).strip()[-1200:]
        (folder / "failure.txt").write_text(shlex.join(command) + "\n\n" + done.stdout + done.stderr)
        return row
    report = subprocess.run([sys.executable, "-m", "perfcast", "campaign", "report", str(archive), "-o",
                             str(folder)], capture_output=True, text=True)
    if report.returncode != 0:
        row["failed"] = f"report: {report.stderr.strip()[-600:]}"
        return row
    return _scored(row, archive)


def _scored(row: dict[str, Any], archive: Path) -> dict[str, Any]:
    """Return the summary row with the archive's scores: groups, launches, MAPE per model, worst kernels."""
    read = Archive.read(archive)
    run = ArchiveRun.of(read)
    scores = score_archive(run)
    timed = read.manifest.get("timed_run") or {}
    row.update(kernels=len({r["kernel"] for r in read.manifest["kernels"].values()}),
               groups=len(read.manifest["kernels"]), launches=timed.get("timed"),
               profiling_note=(read.manifest.get("profiling") or {}).get("note"))
    for model in MODELS:
        summary = scores.summaries[model]
        row[model] = {"n": summary.n, "mape": summary.mape, "median": summary.median_ape,
                      "worst": summary.worst, "violations": list(summary.violations)}
    predicted = sorted(((s.predictions["quantitative"].ape, s.kernel, s.predictions["quantitative"].detail,
                         s.measured, s.predictions["quantitative"].time) for s in scores.scores
                        if "quantitative" in s.predictions), reverse=True)
    row["worst_quantitative"] = [{"kernel": k, "ape": a, "measured_s": m, "predicted_s": t, "why": d}
                                 for a, k, d, m, t in predicted[:3]]
    row["ratios"] = [t / m for _, _, _, m, t in predicted]
    # The groups whose smaller profiled problem fit in a cache the timed one outgrows (campaign/profile_size.py),
    # with their quantitative APEs.
    try:
        levels = cache_hierarchy(scores.device).levels
    except ValueError:
        levels = ()
    outgrown = {k.name for k in (run.profiles.kernels if run.profiles is not None and levels else ())
                if profile_outgrows(k.metrics, levels) is not None}
    quantitative = [s for s in scores.scores if "quantitative" in s.predictions]
    row["outgrown"] = {s.kernel: s.predictions["quantitative"].ape for s in quantitative if s.kernel in outgrown}
    row["groups_scored"] = [s.kernel for s in quantitative]
    row["apes"] = [s.predictions["quantitative"].ape for s in quantitative]
    return row


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _failure(text: str) -> str:
    """Return a failed campaign's reason in one table cell: a refused scaling's kernel and numbers, else the error."""
    flat = " ".join(text.split())
    if "do not scale as declared" in flat:
        return "refused: " + flat.split("to the timed size:", 1)[-1].strip()[:300]
    return "failed: " + flat[-300:]


def _summary(rows: list[dict[str, Any]], machine: str, device: Path) -> str:
    """Return the Markdown summary of every program's campaign."""
    lines = ["# Third-party OpenCL programs as campaigns", "", f"Machine: {machine}. Device profile: `{device.name}`.",
             "", "| suite | program | kernels | groups | launches timed | roofline MAPE (violations) | quantitative "
             "MAPE | median APE | worst kernel (quantitative) |", "|---|---|---|---|---|---|---|---|---|"]
    quantitative: list[float] = []
    for row in rows:
        if "failed" in row:
            lines.append(f"| {row['suite']} | {row['name']} | {_failure(row['failed'])} | | | | | | |")
            continue
        r, q = row["roofline"], row["quantitative"]
        worst = f"{q['worst'][0]} ({q['worst'][1]:.0%})" if q["worst"] else "—"
        lines.append(f"| {row['suite']} | {row['name']} | {row['kernels']} | {row['groups']} | {row['launches']} | "
                     f"{_pct(r['mape'])} ({len(r['violations'])}) | {_pct(q['mape'])} | {_pct(q['median'])} | "
                     f"{worst} |")
        if q["mape"] is not None:
            quantitative.append(q["mape"])
    ratios = [r for row in rows for r in row.get("ratios", [])]
    if ratios:
        under = sum(1 for r in ratios if r < 1)
        lines += ["", f"Quantitative predicted / measured over the {len(ratios)} kernel groups: median "
                  f"{statistics.median(ratios):.3g}, {under} below 1 (predicted faster than measured), "
                  f"{len(ratios) - under} above."]
    if quantitative:
        lines += ["", f"Quantitative MAPE over the {len(quantitative)} programs (mean of the per-program MAPEs): "
                  f"{statistics.fmean(quantitative):.1%}; median {statistics.median(quantitative):.1%}."]
    outgrown = [(row["name"], ape) for row in rows for ape in (row.get("outgrown") or {}).values()]
    if any("outgrown" in row for row in rows):
        found = sorted({name for name, _ in outgrown})
        others = [ape for row in rows for kernel, ape in zip(row.get("groups_scored", []), row.get("apes", []))
                  if kernel not in (row.get("outgrown") or {})]
        lines += ["", f"Groups whose smaller profiled problem found hits in caches (one past L1 at least) that the "
                  f"timed one outgrows (those hits may be misses at the timed size; docs/campaign-programs.md, "
                  f"step 5): {len(outgrown)} of "
                  f"{sum(row.get('groups') or 0 for row in rows if 'failed' not in row)}"
                  + (f", in {', '.join(found)}; their quantitative MAPE {statistics.fmean(a for _, a in outgrown):.1%}"
                     if outgrown else "")
                  + (f", the other groups' {statistics.fmean(others):.1%}" if others else "") + "."]
    overheads = [(row["name"], row["overhead"]) for row in rows if "overhead" in row]
    if overheads:
        lines += ["", "Launch-log overhead on the program's wall time (medians, alternated):", ""]
        lines += [f"- {name}: {o['without_s']:.3f} s without, {o['with_s']:.3f} s with: {o['overhead']:+.2%}"
                  for name, o in overheads]
    lines += ["", "Worst kernels of each program (quantitative), with the model's own explanation:", ""]
    for row in rows:
        for worst in row.get("worst_quantitative", [])[:2]:
            if worst["ape"] > 0.5:
                ratio = worst.get("predicted_s", math.nan) / worst["measured_s"]
                lines.append(f"- {row['name']} / {worst['kernel']}: APE {worst['ape']:.0%} (predicted / measured "
                             f"{ratio:.3g}), measured {worst['measured_s'] * 1e6:.3g} µs; {worst['why']}")
    return "\n".join(lines) + "\n"


def main() -> int:
    """Run every listed program's campaign; write OUT/summary.md and OUT/summary.json."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("programs", type=Path)
    parser.add_argument("--device-profile", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--overhead", type=int, default=0)
    parser.add_argument("--machine", default="")
    parser.add_argument("--summary-only", action="store_true", help="rewrite summary.md from OUT/summary.json")
    options = parser.parse_args()
    if options.summary_only:
        rows = json.loads((options.out / "summary.json").read_text())
        rows = [row if "failed" in row else _scored(row, options.out / row["name"] / f"{row['name']}.zip")
                for row in rows]
        if options.overhead:
            entries = {e["name"]: e for e in json.loads(options.programs.read_text())}
            for row in rows:
                if not options.only or row["name"] in options.only:
                    print(f"overhead of the launch log: {row['name']}", flush=True)
                    row["overhead"] = _overhead(entries[row["name"]], options.overhead)
        # The rows were scored again from the archives: both files say the same.
        (options.out / "summary.json").write_text(json.dumps(rows, indent=1, default=str))
        (options.out / "summary.md").write_text(_summary(rows, options.machine, options.device_profile))
        return 0
    entries = json.loads(options.programs.read_text())
    if options.only:
        entries = [e for e in entries if e["name"] in options.only]
    options.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for entry in entries:
        print(f"{entry['suite']}/{entry['name']}: {shlex.join(entry['command'])}", flush=True)
        row = _campaign(entry, options.device_profile, options.out)
        if options.overhead and "failed" not in row:
            row["overhead"] = _overhead(entry, options.overhead)
        print(f"  -> {row.get('failed', '').splitlines()[-1:] or [_pct(row['quantitative']['mape'])]}", flush=True)
        rows.append(row)
        (options.out / "summary.json").write_text(json.dumps(rows, indent=1, default=str))
    (options.out / "summary.md").write_text(_summary(rows, options.machine, options.device_profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
