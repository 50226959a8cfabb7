"""`perfcast campaign report`: every model scored on each campaign archive, as Markdown with a chart."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfcast.bench.suite import profile_warnings
from perfcast.campaign.archive import Archive
from perfcast.campaign.program import program_label
from perfcast.campaign.program_species import KernelSpecies, parse_program_species
from perfcast.campaign.projection import ArchiveProjection, ArchiveRun, project_archive
from perfcast.campaign.score import (
    MODELS,
    NARROW,
    KernelScore,
    ModelSummary,
    Prediction,
    campaign_launched,
    counts_fills,
    footprint_profile,
    hull_miss,
    score_kernel,
    score_profiled,
    summarise,
)
from perfcast.devices.schema import Device
from perfcast.errors import InputError
from perfcast.kernels.campaign import kernel_named
from perfcast.output_files import reproduce_block, write_text_atomic
from perfcast.units import Dimension, format_duration, format_quantity

__all__ = ["CampaignScores", "projection_summary", "score_archive", "scores_record", "species_names", "write_report"]


@dataclass(frozen=True)
class CampaignScores:
    """One archive scored: its device, the kernels' scores, each model's summary, kernels not scored."""

    archive: Archive
    device: Device
    scores: list[KernelScore]
    summaries: dict[str, ModelSummary]
    not_scored: dict[str, str]


def scores_record(result: CampaignScores) -> dict[str, Any]:
    """Return one archive's scores as JSON types: the device, each model's summary, each kernel's predictions (s)."""
    def prediction(p: Prediction) -> dict[str, Any]:
        return {"kind": p.kind, "time_s": p.time, "lower_s": p.lower, "upper_s": p.upper, "ape": p.ape,
                "contained": p.contained, "efficiency": p.efficiency, "violation": p.violation, "bound": p.bound or None,
                "terms": list(p.terms) if any(p.terms) else None, "detail": p.detail}

    return {"archive": str(result.archive.path), "device": result.device.name,
            "device_name": result.device.full_name,
            "summaries": {model: {"n": s.n, "mape": s.mape, "median_ape": s.median_ape,
                                  "worst": None if s.worst is None else {"kernel": s.worst[0], "ape": s.worst[1]},
                                  "contained": None if s.contained is None else list(s.contained),
                                  "violations": list(s.violations), "left_out": dict(s.left_out),
                                  "median_width": s.median_width, "narrow_contained": s.narrow_contained}
                          for model, s in result.summaries.items()},
            "kernels": [{"kernel": k.kernel, "measured_s": k.measured, "spread": k.spread,
                         "predictions": {model: prediction(p) for model, p in k.predictions.items()},
                         "left_out": dict(k.left_out)} for k in result.scores],
            "not_scored": dict(result.not_scored)}


def species_names(archive: Archive) -> set[str]:
    """Return what a program's `--species` may name in `archive`: its kernels and its groups (kernel[NDRange])."""
    kernels = archive.manifest["kernels"]
    return {record.get("kernel", name) for name, record in kernels.items()} | set(kernels)


def score_archive(archive: Archive | ArchiveRun, species: Mapping[str, KernelSpecies] | None = None,
                  strict: bool = True) -> CampaignScores:
    """Return every model's scores on the kernels of one campaign archive (read, or already parsed).

    `species` (kernel name -> species) names program kernels' species beside (and over) those the archive
    recorded with `campaign run --species`; the boat hull is scored on those kernels. `strict`: a name that is
    neither a kernel nor a group of this program is an error (else ignored: a report of several programs
    checks the names against them all).
    """
    run = archive if isinstance(archive, ArchiveRun) else ArchiveRun.of(archive)
    archive, device, profiles = run.archive, run.device, run.profiles
    program = archive.manifest.get("kind") == "program"
    if species and not program:
        raise InputError(f"{archive.path}: --species names a program's kernels; the suite's kernels have their own")
    # A species names a kernel (every NDRange it ran at) or one group of it (`kernel[global/local]`, as the
    # report lists it): a group's own species wins over its kernel's; the command line's over the archive's.
    kernels = species_names(archive)
    given = dict(species or {})
    unknown = sorted(set(given) - kernels)
    if unknown and strict:
        raise InputError(f"{archive.path}: --species names {', '.join(unknown)}, not a kernel of the program nor one "
                         f"of its groups (they are: {', '.join(sorted(kernels))})")
    recorded = {k: v for k, v in (archive.manifest.get("species") or {}).items() if k not in given}
    declared = {**parse_program_species(recorded, f"{archive.path}: the species recorded by campaign run"),
                **{k: v for k, v in given.items() if k in kernels}}
    scores, not_scored = [], {}
    for name in sorted(set(declared) - kernels):
        not_scored[name] = "a species was given for it (campaign run --species), but the program never launched it"
    for name, record in archive.manifest["kernels"].items():
        if "skipped" in record:
            not_scored[name] = record["skipped"]
            continue
        if record.get("check"):
            not_scored[name] = f"wrong result: {record['check']}"
            continue
        if "median_s" not in record and archive.manifest.get("kind") != "program":
            not_scored[name] = "not timed (the run stopped before it)"
            continue
        profile = None
        if profiles is not None and any(k.name == name for k in profiles.kernels):
            profile = profiles.kernel(name)
        if program:
            scores.append(score_profiled(name, record, device, profile,
                                         declared.get(name) or declared.get(record.get("kernel", name)),
                                         archive.manifest.get("vectorisation"), archive.manifest.get("incore")))
        else:
            scores.append(score_kernel(kernel_named(name), record, device, profile,
                                       archive.manifest.get("vectorisation"), archive.manifest.get("incore"),
                                       campaign_launched(archive.manifest)))
    summaries = {model: summarise(scores, model) for model in MODELS}
    return CampaignScores(archive, device, scores, summaries, not_scored)


def _time(seconds: float | None) -> str:
    return "—" if seconds is None or not math.isfinite(seconds) else format_duration(seconds, digits=3)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _section(result: CampaignScores, run: ArchiveRun, chart: str) -> list[str]:
    """Return the Markdown of one archive's results."""
    m = result.archive.manifest
    env = m.get("environment") or {}
    profiling = m.get("profiling") or {}
    program = m.get("kind") == "program"
    timed = m.get("timed_run") or {}
    how = (f"- program: `{program_label(m)}`; {timed.get('timed', '?')} launches timed"
           f"{' (interrupted)' if timed.get('interrupted') else ''} in {len(m['kernels'])} groups of one kernel and "
           f"NDRange, each group's median over its launches, spread = σ/t"
           + (f"; {timed['processes']} processes" if timed.get("processes", 1) > 1 else "")
           + (f"; {timed['unfinished']} launches never completed" if timed.get("unfinished") else "")
           + (f"; {timed['untimed']} launches untimed" if timed.get("untimed") else "")) if program else \
        f"- kernels timed {m['repetitions']} times after a checked launch and a warm-up; median, spread = σ/t"
    lines = [
        f"## {result.device.full_name} ({'program' if program else m['backend']}{', quick' if m['quick'] else ''})",
        "",
        f"- archive: `{result.archive.path.name}`, made {m['created']} by perfcast {m['perfcast']}",
        f"- device: {env.get('device', '?')}; platform: {env.get('platform', '?')}; host: {m['host']['platform']}",
        f"- device profile: `{result.device.name}` ({result.device.provenance.describe()})"
        + (f"; each figure the best of {m['device_runs']} runs, the first before the kernels were timed, the others "
           "after (`device-run-N.yaml` in the archive)" if m.get("device_runs", 1) > 1 else ""),
        *([f"- environment: {' '.join(f'{k}={v}' for k, v in m['variables'].items())}"] if m.get("variables") else []),
        how,
        f"- profiles: {profiling.get('tool') or 'none'}" + (f" ({profiling['note']})" if profiling.get("note") else ""),
        *[f"- the bench warned: {warning}" for warning in profile_warnings(result.device)],
        "",
        "| model | n | MAPE | median APE | worst kernel | in range / violations |",
        "|---|---|---|---|---|---|",
    ]
    for model, summary in result.summaries.items():
        worst = f"{summary.worst[0]} ({summary.worst[1]:.0%})" if summary.worst else "—"
        violations = summary.violations
        extra = (f"{summary.contained[0]} of {summary.contained[1]} in range (median width "
                 f"{summary.median_width:.3g}x; {summary.narrow_contained} in a range at most {NARROW:g}x wide)"
                 if summary.contained and summary.median_width is not None
                 else f"{len(violations)} violation(s)" + (f": {', '.join(violations)}" if violations else ""))
        if model != "roofline" and not summary.contained:
            extra = "—"
        lines.append(f"| {model} | {summary.n} | {_pct(summary.mape)} | {_pct(summary.median_ape)} | {worst} | "
                     f"{extra} |")
    lines += ["", "(The roofline is a lower bound on time: its APE says how far below the measurement it lies; a "
              "violation is a measured time below the bound by more than the spread.)", "",
              f"![predicted against measured]({chart})", "",
              *(["A program's kernel is listed once per NDRange it ran at (×N: its launches there, measured = their "
                 "median).", ""] if program else []),
              "| kernel | measured | spread | roofline bound | eff. | boat hull range | in | quantitative | APE |",
              "|---|---|---|---|---|---|---|---|---|"]
    for s in result.scores:
        r, h, q = (s.predictions.get(model) for model in MODELS)
        launches = m["kernels"].get(s.kernel, {}).get("launches") if program else None
        label = f"{s.kernel} (×{launches})" if launches and launches > 1 else s.kernel
        lines.append(
            f"| {label} | {_time(s.measured)} | {s.spread:.1%} | {_time(r.time) if r else '—'} | "
            f"{f'{r.efficiency:.2f}' if r and r.efficiency is not None else '—'} | "
            f"{f'{_time(h.lower)} – {_time(h.upper)}' if h else '—'} | {('yes' if h.contained else '**no**') if h else '—'} | "
            f"{_time(q.time) if q else '—'} | {_pct(q.ape) if q else '—'} |")
    lines.append("")
    lines += _bytes_section(result, run)
    left = [(s.kernel, model, why) for s in result.scores for model, why in s.left_out.items()]
    if left or result.not_scored:
        lines += ["Left out, with the reason:", ""]
        lines += [f"- {kernel}, {model}: {why}" for kernel, model, why in left]
        lines += [f"- {kernel}, every model: {why}" for kernel, why in result.not_scored.items()]
        lines.append("")
    misses = [(s.kernel, why) for s in result.scores if (why := hull_miss(s)) is not None]
    if misses:
        lines += ["Boat hull ranges missed, and the figure behind each (what the quantitative model prices that the "
                  "hull's figures do not, or the figure the kernel beat):", ""]
        lines += [f"- {kernel}: {why}" for kernel, why in misses]
        lines.append("")
    lines += ["Why each prediction is what it is:", ""]
    for s in result.scores:
        for model, p in s.predictions.items():
            lines.append(f"- {s.kernel}, {model}: {p.detail}")
    lines.append("")
    return lines


def _bytes_section(result: CampaignScores, run: ArchiveRun) -> list[str]:
    """Return the Markdown table of each kernel's bytes: the footprint beside the simulation, and what each gives."""
    kernels = result.archive.manifest["kernels"]
    simulated = {name: r for name, r in kernels.items() if r.get("simulated_bytes") and r.get("footprint_bytes")}
    if not simulated:
        return []
    traffic = (result.archive.manifest.get("profiling") or {}).get("traffic") or {}
    levels = ", ".join(f"{level['name']} {format_quantity(level['size'], Dimension.BYTES)} x {level['instances']}"
                       for level in traffic.get("levels", []))
    lines = ["Bytes per kernel: the compulsory footprint against the simulation of the device's caches "
             f"({levels}; *traced*: the work-groups traced at the run's size, of the launch's; "
             "docs/traffic.md). DRAM counts the write-allocate reads where the device's figures do "
             "(`counts: moved`); *fills* is that share. *Quantitative APE*: with the footprint's DRAM bytes, and "
             "with the simulated ones (the table above).", "",
             "| kernel | traced | footprint DRAM | simulated DRAM | fills | L1 | L2 | L3 | quantitative APE, "
             "footprint | simulated |", "|---|---|---|---|---|---|---|---|---|---|"]
    scored = {s.kernel: s for s in result.scores}
    mapes: list[tuple[float, float]] = []
    for name, record in simulated.items():
        b = record["simulated_bytes"]
        read, written = record["footprint_bytes"]["read"], record["footprint_bytes"]["written"]
        fills = written if counts_fills(result.device) else 0.0
        before = after = None
        if name in scored and run.profiles is not None and "quantitative" in scored[name].predictions:
            profile = footprint_profile(run.profiles.kernel(name), read, written, result.device)
            alternative = score_kernel(kernel_named(name), record, result.device, profile,
                                       run.archive.manifest.get("vectorisation"), run.archive.manifest.get("incore"),
                                       campaign_launched(run.archive.manifest))
            before = alternative.predictions.get("quantitative")
            after = scored[name].predictions["quantitative"]
            if before is not None and before.ape is not None and after.ape is not None:
                mapes.append((before.ape, after.ape))

        def size(value: float | None) -> str:
            return "—" if value is None else format_quantity(value, Dimension.BYTES)

        groups = traffic.get("groups")
        traced = (f"{groups[name]} of {record['traced_of']}" if isinstance(groups, dict) and name in groups
                  and record.get("traced_of") else "—")
        lines.append(f"| {name} | {traced} | {size(read + fills + written)} | {size(b.get('dram_bytes'))} | "
                     f"{size(b.get('dram_write_allocate_bytes'))} | {size(b.get('l1_bytes'))} | "
                     f"{size(b.get('l2_bytes'))} | {size(b.get('l3_bytes'))} | "
                     f"{_pct(before.ape if before else None)} | {_pct(after.ape if after else None)} |")
    if mapes:
        lines += ["", f"Quantitative MAPE over these {len(mapes)} kernels: {_pct(statistics.fmean(a for a, _ in mapes))} "
                  f"with the footprint, {_pct(statistics.fmean(b for _, b in mapes))} with the simulated traffic."]
    return [*lines, ""]


def projection_summary(result: ArchiveProjection) -> ModelSummary:
    """Return the §6 summary of one archive projected onto another (n, MAPE, containment, worst kernel)."""
    scores = []
    for p in result.projections:
        prediction = p.scored()
        if prediction is not None and p.measured is not None:
            scores.append(KernelScore(p.kernel, p.measured, p.spread, {"projection": prediction}))
    scores += [KernelScore(name, math.nan, 0.0, left_out={"projection": why}) for name, why in result.left_out.items()]
    return summarise(scores, "projection")


def _projection_section(result: ArchiveProjection, chart: str) -> list[str]:
    """Return the Markdown of one archive projected onto another, scored against the other's measurements."""
    summary = projection_summary(result)
    s_name, t_name = result.source.device.full_name, result.target_device.full_name
    worst = f"{summary.worst[0]} ({summary.worst[1]:.0%})" if summary.worst else "—"
    inside = f"{summary.contained[0]} of {summary.contained[1]}" if summary.contained else "—"
    capped = sum(p.projection.source.perf_core is not None for p in result.projections)
    lines = [
        f"## Projection (§4): {s_name} → {t_name}", "",
        f"Every kernel profiled in `{result.source.archive.path.name}` and timed there, projected onto the device "
        f"of `{result.target.archive.path.name}` and compared with its time measured there. Interval: the per-level "
        "projections' extremes (over the FP issue shares the kernel may have, where its share is unknown between "
        "GPUs of different shares); time: FLOP (an integer kernel's: its integer operations) over the middle "
        "performance of the levels."
        + (f" Each level is capped by the kernel's core-bound ceiling on each device where it has one ({capped} of "
           f"{len(result.projections)} kernels: docs/models.md, §4, a core-bound ceiling between two CPUs)."
           if capped else ""), "",
        "| n | MAPE | median APE | worst kernel | intervals containing the measurement |", "|---|---|---|---|---|",
        f"| {summary.n} | {_pct(summary.mape)} | {_pct(summary.median_ape)} | {worst} | {inside} |", "",
        f"![projected intervals against measured times]({chart})", "",
        "| kernel | prec. | measured on source | projected interval | projected | measured on target | spread | APE | in |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in result.projections:
        scored = p.scored()
        fast, slow = p.projection.time_range
        lines.append(f"| {p.kernel} | {p.precision} | {_time(p.projection.source_time)} | {_time(fast)} – "
                     f"{_time(slow)} | {_time(p.projection.time)} | {_time(p.measured)} | {p.spread:.1%} | "
                     f"{_pct(scored.ape if scored else None)} | "
                     f"{('yes' if scored.contained else '**no**') if scored else '—'} |")
    lines.append("")
    figures = {(c.precision.value, c.device.name): c for p in result.projections for c in (p.source, p.target)}
    if figures:
        lines += ["Device figures read, in each precision a kernel was projected in (how each was obtained in "
                  "brackets):", ""]
        lines += [f"- `{name}` ({precision}): {c.summary()}" for (precision, name), c in sorted(figures.items())]
        lines.append("")
    if result.left_out:
        lines += ["Left out, with the reason:", ""]
        lines += [f"- {kernel}: {why}" for kernel, why in result.left_out.items()]
        lines.append("")
    return lines


def _fanout_lines(archives: list[Archive]) -> list[str]:
    """Return the report's lines on fan-out runs: which archives came from one `campaign run --workers`, and gaps."""
    groups: dict[str, list[tuple[int, int, str]]] = {}
    for archive in archives:
        fanout = archive.manifest.get("fanout") or {}
        if "id" in fanout:
            groups.setdefault(str(fanout["id"]), []).append(
                (int(fanout.get("worker", 0)), int(fanout.get("workers", 0)), archive.path.name))
    lines = []
    for run_id, members in sorted(groups.items()):
        members.sort()
        workers = max(m[1] for m in members)
        missing = sorted(set(range(1, workers + 1)) - {m[0] for m in members})
        gap = f"; worker(s) {', '.join(map(str, missing))} missing (failed, or not given here)" if missing else ""
        lines.append(f"Fan-out run {run_id} (`campaign run --workers {workers}`): "
                     + ", ".join(f"worker {w}: {name}" for w, _, name in members) + gap + ".")
    return [*lines, ""] if lines else []


def write_report(paths: list[Path], output: Path, command: str, species: Mapping[str, KernelSpecies] | None = None
                 ) -> tuple[Path, list[CampaignScores]]:
    """Score each archive, write DIR/report.md and one chart per archive; return its path and the scores.

    `species`: program kernels' species (`--species`), for every program archive among `paths`.
    """
    from perfcast.plots.campaign import PredictedPoint, predicted_vs_measured_figure
    from perfcast.plots.files import save_figure
    from perfcast.plots.projection import projection_intervals_figure

    archives = [Archive.read(path) for path in paths]  # every input read before anything is written
    programs = [a for a in archives if a.manifest.get("kind") == "program"]
    if species and not programs:
        raise InputError("--species names a program's kernels; none of these archives is a program's")
    named = set().union(*(species_names(a) for a in programs)) if programs else set()
    unknown = sorted(set(species or {}) - named)
    if unknown:
        raise InputError(f"--species names {', '.join(unknown)}, a kernel or group of none of the programs (they "
                         f"have: {', '.join(sorted(named))})")
    if output.exists() and not output.is_dir():
        raise InputError(f"{output}: is a file; -o names the folder the report goes to")
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"{output}: cannot make the report's folder ({error.strerror or error})") from None
    runs = [a.manifest.get("command") or f"# {a.path.name}: made by an unrecorded command" for a in archives]
    lines = ["# Campaign report: every model against measured kernel times", "",
             *reproduce_block("\n".join([*runs, command])),
             "Scoring as perfcast's formula reference states it (docs/models.md, §6): "
             "APE = |t_pred − t_meas| / t_meas for points and range "
             "middles, a range contains t_meas when lower·(1 − s) ≤ t_meas ≤ upper·(1 + s), a bound is violated "
             "when t_bound / t_meas > 1 + s. Given archives of two or more devices, each is projected onto every other "
             "(§4) and scored the way a range is.", ""]
    lines += _fanout_lines(archives)
    measured_runs = [ArchiveRun.of(archive) for archive in archives]
    results = []
    for index, run in enumerate(measured_runs):
        result = score_archive(run, species if run.archive.manifest.get("kind") == "program" else None, strict=False)
        results.append(result)
        chart = f"predicted-vs-measured-{index + 1}.png" if len(archives) > 1 else "predicted-vs-measured.png"
        points = [PredictedPoint(s.kernel, model, s.measured, p.time, p.lower, p.upper)
                  for s in result.scores for model, p in s.predictions.items()]
        if points:
            save_figure(predicted_vs_measured_figure(points, result.device.full_name), output / chart)
        lines += _section(result, run, chart)
    pairs = [(i, j) for i in range(len(measured_runs)) for j in range(len(measured_runs)) if i != j]
    for i, j in pairs:
        projected = project_archive(measured_runs[i], measured_runs[j])
        chart = f"projection-{i + 1}-to-{j + 1}.png"
        rows = [p.interval_row() for p in projected.projections]
        if rows:
            save_figure(projection_intervals_figure(
                rows, f"{projected.source.device.full_name} -> {projected.target_device.full_name}"), output / chart)
        lines += _projection_section(projected, chart)
    return write_text_atomic(output / "report.md", "\n".join(lines)), results
