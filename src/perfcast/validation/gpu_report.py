"""The GPU corpus report: markdown with its tables, the machine-readable JSON beside it, and its charts."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.devices.schema import Device
from perfcast.output_files import json_finite
from perfcast.tune.replay import StrategyReplay
from perfcast.validation.corpus import Corpus
from perfcast.validation.gpu_scores import IMPLAUSIBLE, METHODS, CorpusScores, PairScore

__all__ = ["GOALS", "PENALTY_BANDS", "corpus_json", "corpus_markdown", "format_percent", "penalty_groups", "summary",
           "write_charts"]

GOALS = {"hull_contained": 0.80, "hull_width": 3.0, "projection_best_mape": 0.15}
JSON_FORMAT = "perfcast-gpu-corpus-scores"
JSON_VERSION = 1


def _mean(values: Sequence[float]) -> float:
    """Return the mean of the finite values (NaN when none)."""
    finite = [v for v in values if math.isfinite(v)]
    return statistics.fmean(finite) if finite else math.nan


def _median(values: Sequence[float]) -> float:
    """Return the median of the finite values (NaN when none)."""
    finite = [v for v in values if math.isfinite(v)]
    return statistics.median(finite) if finite else math.nan


def format_percent(value: float) -> str:
    """Return a fraction as a percentage with one decimal, '—' for NaN (no pair, no run)."""
    return "—" if not math.isfinite(value) else f"{100 * value:.1f} %"


def _time(seconds: float) -> str:
    """Return seconds in ms or µs."""
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.3g} µs"


def _groups(pairs: Sequence[PairScore]) -> dict[str, list[PairScore]]:
    """Return the pairs in the report's groups: all, same vendor, cross vendor."""
    return {"all pairs": list(pairs), "same vendor": [p for p in pairs if p.same_vendor],
            "cross vendor": [p for p in pairs if not p.same_vendor],
            "every level known": [p for p in pairs if not p.left_out]}


# Bands of the source penalty (the target's best configuration on the source over the source's optimum).
PENALTY_BANDS = ((1.0, 1.5), (1.5, 3.0), (3.0, math.inf))


def _penalty_band(low: float, high: float) -> str:
    """Return a band of source penalties in words (ASCII: the JSON's keys too)."""
    return f"{low:g}-{high:g}x" if math.isfinite(high) else f"above {low:g}x"


def penalty_groups(pairs: Sequence[PairScore]) -> dict[str, list[PairScore]]:
    """Return the pairs by how slowly the target's best configuration runs on the source (`PENALTY_BANDS`).

    The target's best is plausible on the source, so a penalty is at least 1; a pair with no configuration measured
    on both has NaN and is in no band.
    """
    return {_penalty_band(low, high): [p for p in pairs if low <= p.source_penalty < high]
            for low, high in PENALTY_BANDS}


def _middle(lower: float, upper: float) -> tuple[float, str]:
    """Return a range's middle (s) and which one (spec §6: geometric for ranges wider than 2x, else arithmetic)."""
    if upper > 2 * lower:
        return math.sqrt(lower * upper), "geometric"
    return (lower + upper) / 2, "arithmetic"


def _middle_ape(lower: float, upper: float, measured: float) -> float:
    """Return the APE of a range's middle against the measured time."""
    return abs(_middle(lower, upper)[0] - measured) / measured


def summary(scores: CorpusScores) -> dict[str, Any]:
    """Return the headline figures of every model (fractions, not percentages)."""
    hull = scores.hull
    contained = [h for h in hull if h.contained]
    narrow_and_in = [h for h in hull if h.contained and h.width <= GOALS["hull_width"]]
    projection: dict[str, Any] = {}
    for group, pairs in _groups(scores.pairs).items():
        projection[group] = {
            "pairs": len(pairs),
            "configurations": sum(p.n for p in pairs),
            "best_mape": {m: _mean([p.best_ape[m] for p in pairs]) for m in METHODS},
            "best_median_ape": {m: _median([p.best_ape[m] for p in pairs]) for m in METHODS},
            "tuned_mape": {m: _mean([p.tuned_ape[m] for p in pairs]) for m in METHODS},
            "tuned_median_ape": {m: _median([p.tuned_ape[m] for p in pairs]) for m in METHODS},
            "all_mape": {m: _mean([p.mape[m] for p in pairs]) for m in METHODS},
            "median_rank_correlation": _median([p.rank_correlation for p in pairs]),
            "best_in_interval": sum(p.best_contained for p in pairs),
            "in_interval": _mean([p.contained for p in pairs]),
        }
    by_penalty = {band: {"pairs": len(pairs), "same_vendor": sum(p.same_vendor for p in pairs),
                         "best_mape": {m: _mean([p.best_ape[m] for p in pairs]) for m in METHODS},
                         "best_median_ape": {m: _median([p.best_ape[m] for p in pairs]) for m in METHODS}}
                  for band, pairs in penalty_groups(scores.pairs).items()}
    return {
        "roofline": {"configurations": sum(r.n - len(r.implausible) for r in scores.roofline),
                     "naive_violations": sum(r.naive_violations for r in scores.roofline),
                     "hierarchical_violations": sum(r.hierarchical_violations for r in scores.roofline),
                     "implausible": sum(len(r.implausible) for r in scores.roofline)},
        "hull": {"pairs": len(hull), "contained": len(contained), "contained_within_width": len(narrow_and_in),
                 "fraction_contained_within_width": len(narrow_and_in) / len(hull) if hull else math.nan},
        "projection": projection,
        "projection_by_source_penalty": by_penalty,
        "tuning_replay": {r.strategy: {"spaces": sum(1 for s in scores.replays for x in s.replays
                                                     if x.strategy == r.strategy),
                                       "final_median": _median([statistics.median(x.chosen) for s in scores.replays
                                                                for x in s.replays if x.strategy == r.strategy]),
                                       "final_lowest": min(statistics.median(x.chosen) for s in scores.replays
                                                           for x in s.replays if x.strategy == r.strategy)}
                          for r in (scores.replays[0].replays if scores.replays else [])},
        "portability": {"best_carried_median": _median([p.best_carried for p in scores.portability]),
                        "projected_top_median": {str(k): _median([p.projected_top[k] for p in scores.portability])
                                                 for k in (1, 3, 5)}},
    }


def corpus_json(scores: CorpusScores, corpus: Corpus) -> dict[str, Any]:
    """Return the scores as the JSON written beside the report (per model and device pair)."""
    def clean(value: float) -> float | None:
        return round(value, 6) if math.isfinite(value) else None

    return json_finite({
        "format": JSON_FORMAT, "version": JSON_VERSION, "quick": scores.quick,
        "corpus": {"repository": corpus.manifest.get("repository"), "kernels": list(corpus.kernels)},
        "summary": summary(scores),
        "roofline": [{"kernel": r.kernel, "device": r.device, "n": r.n, "naive_violations": r.naive_violations,
                      "hierarchical_violations": r.hierarchical_violations, "implausible": len(r.implausible),
                      "best_time_s": r.best_time, "naive_fraction": clean(r.naive_fraction),
                      "hierarchical_fraction": clean(r.hierarchical_fraction), "binding": r.binding_level}
                     for r in scores.roofline],
        "boat_hull": [{"kernel": h.kernel, "device": h.device, "lower_s": h.lower, "upper_s": h.upper,
                       "measured_s": h.measured, "contained": h.contained, "width": clean(h.width),
                       "miss": clean(h.miss), "spread": clean(h.spread), "middle": _middle(h.lower, h.upper)[1],
                       "ape_of_middle": clean(_middle_ape(h.lower, h.upper, h.measured))}
                      for h in scores.hull],
        "projection": [{"kernel": p.kernel, "source": p.source, "target": p.target, "same_vendor": p.same_vendor,
                        "n": p.n, "best_ape": {m: clean(v) for m, v in p.best_ape.items()},
                        "tuned_ape": {m: clean(v) for m, v in p.tuned_ape.items()},
                        # projected / measured: which way each miss goes (above 1: predicted too slow)
                        "best_ratio": {m: clean(v) for m, v in p.best_ratio.items()},
                        "tuned_ratio": {m: clean(v) for m, v in p.tuned_ratio.items()},
                        "left_out_levels": list(p.left_out),
                        "mape": {m: clean(v) for m, v in p.mape.items()},
                        "median_ape": {m: clean(v) for m, v in p.median_ape.items()},
                        "rank_correlation": clean(p.rank_correlation), "best_in_interval": p.best_contained,
                        "in_interval": clean(p.contained), "source_penalty": clean(p.source_penalty)}
                       for p in scores.pairs],
        "portability": [{"kernel": p.kernel, "source": p.source, "target": p.target,
                         "best_carried": clean(p.best_carried),
                         "projected_top": {str(k): clean(v) for k, v in p.projected_top.items()}}
                        for p in scores.portability],
        "tuning_replay": [{"kernel": r.kernel, "device": r.device, "configurations": r.configurations,
                           "within": {str(f): n for f, n in r.within.items()},
                           "strategies": {x.strategy: {
                               "seeds": x.seeds, "final_median": clean(statistics.median(x.chosen)),
                               "evaluations_median": statistics.median(x.evaluations),
                               "to_reach_median": {str(f): x.summary(f)[0] for f in (0.90, 0.97, 0.99)},
                               "to_reach_runs": {str(f): x.summary(f)[1] for f in (0.90, 0.97, 0.99)}}
                               for x in r.replays}} for r in scores.replays],
        "skipped": scores.skipped,
    })


def write_charts(scores: CorpusScores, folder: Path) -> dict[str, Path]:
    """Draw the report's charts into `folder`; return name -> path."""
    from perfcast.plots.files import save_figure
    from perfcast.plots.gpu_corpus import hull_ranges_chart, projection_heatmap, roofline_fraction_chart

    folder.mkdir(parents=True, exist_ok=True)
    fractions: dict[str, dict[str, float]] = {}
    for r in scores.roofline:
        if r.n > len(r.implausible):
            fractions.setdefault(r.kernel, {})[r.device] = r.hierarchical_fraction
    devices: list[str] = []
    for p in scores.pairs:
        for d in (p.source, p.target):
            if d not in devices:
                devices.append(d)
    errors: dict[tuple[str, str], list[float]] = {}
    for p in scores.pairs:
        errors.setdefault((p.source, p.target), []).append(p.best_ape["perfcast"])
    paths = {
        "roofline": save_figure(roofline_fraction_chart(
            fractions, "Best configuration against its hierarchical roofline bound"), folder / "roofline.png"),
        "projection": save_figure(projection_heatmap(
            devices, {pair: _mean(v) for pair, v in errors.items()},
            "Cross-GPU projection: error of the target's best configuration"), folder / "projection.png"),
        "hull": save_figure(hull_ranges_chart(
            [(f"{h.kernel} · {h.device}", h.lower, h.upper, h.measured) for h in scores.hull],
            "Boat hull ranges and the best measured time"), folder / "hull.png"),
    }
    return paths


def corpus_markdown(scores: CorpusScores, corpus: Corpus, devices: Mapping[str, Device], command: str,
                    charts: Mapping[str, str], elapsed: float, machine: str) -> str:
    """Return the report: corpus, devices, the four scores with their tables, what was left out and why."""
    head = summary(scores)
    repo = corpus.manifest.get("repository") or {}
    lines = [
        "# perfcast on real GPUs: every model scored on published measurements",
        "",
        f"Regenerated by `{command}` ({elapsed:.0f} s on {machine}). "
        + ("**Quick run: a reduced sample of configurations.** " if scores.quick else "")
        + "The measurements are not ours: they are the brute-forced KernelTuner caches of the "
        f"{repo.get('name', 'hub')} ({repo.get('url', '')}, {repo.get('licence', '')}, DOI {repo.get('doi', '')}, "
        f"commit {str(repo.get('commit', ''))[:8]}; authors {repo.get('authors', '')}), kept in "
        "`src/perfcast/validation/corpus/` as compressed CSVs of each configuration's median time and spread "
        "(`perfcast validate gpu-corpus-build` rebuilds them from a checkout of the hub). Every GPU's figures come "
        "from perfcast's device catalog (`perfcast devices show NAME` lists each figure's source).",
        "",
        "## Corpus",
        "",
        "| kernel | configurations | GPUs | source |",
        "|---|---|---|---|",
    ]
    for kernel in corpus.kernels.values():
        lines.append(f"| {kernel.name}: {kernel.title} | {len(kernel.configs)} | {', '.join(kernel.devices)} | "
                     f"`{kernel.source}` |")
    lines += ["", "| GPU | catalog name | vendor | fp32 FMA peak | DRAM bandwidth |", "|---|---|---|---|---|"]
    for name, device in devices.items():
        lines.append(f"| {device.full_name} | `{name}` | {device.vendor} | {device.peak_compute('fp32') / 1e12:.2f} "
                     f"TFLOP/s | {device.dram_bandwidth / 1e9:.0f} GB/s |")
    roof = head["roofline"]
    lines += [
        "", "## Headline", "",
        "| model | what is scored | result | goal |", "|---|---|---|---|",
        f"| roofline (naive: fp32 FMA peak, DRAM) | plausible configurations faster than the bound | "
        f"{roof['naive_violations']} of {roof['configurations']} | 0 |",
        f"| roofline (hierarchical: kernel's compute ceiling, L1/shared, L2, DRAM) | plausible configurations faster "
        f"than the bound | {roof['hierarchical_violations']} of {roof['configurations']} | 0 |",
        f"| roofline | broken records (faster than the compulsory DRAM traffic allows by more than {IMPLAUSIBLE:g}x) "
        f"| {roof['implausible']} | — |",
        f"| boat hull | best time of each (kernel, GPU) inside a range at most {GOALS['hull_width']:g}x wide | "
        f"{head['hull']['contained_within_width']} of {head['hull']['pairs']} "
        f"({format_percent(head['hull']['fraction_contained_within_width'])}) | ≥ {GOALS['hull_contained']:.0%} |",
    ]
    for group, figures in head["projection"].items():
        best = figures["best_mape"]
        lines.append(f"| projection, {group} ({figures['pairs']} ordered pairs) | MAPE of the target's best "
                     f"configuration: perfcast / §4 as written / bandwidth ratio / FLOP ratio / max ratio | "
                     + " / ".join(format_percent(best[m]) for m in METHODS) + f" | ≤ {GOALS['projection_best_mape']:.0%}, "
                     "below every baseline |")
    figures = head["projection_by_source_penalty"][_penalty_band(*PENALTY_BANDS[0])]
    lines.append(f"| projection, the target's best within {PENALTY_BANDS[0][1]:g}x of the source's optimum on the source "
                 f"({figures['pairs']} ordered pairs, {figures['same_vendor']} same vendor; §3 says why) | the same "
                 "MAPE | " + " / ".join(format_percent(figures["best_mape"][m]) for m in METHODS) + " | — |")
    port = head["portability"]
    lines.append(f"| portability | median fraction of the target's optimum: source's best carried over / best of "
                 f"top-1, 3, 5 projected | {format_percent(port['best_carried_median'])} / "
                 + " / ".join(format_percent(port["projected_top_median"][k]) for k in ("1", "3", "5")) + " | — |")
    lines += ["", f"![roofline fractions]({charts['roofline']})", ""]
    lines += _roofline_section(scores)
    lines += _hull_section(scores, charts)
    lines += _projection_section(scores, charts, head["projection"], head["projection_by_source_penalty"])
    lines += _portability_section(scores)
    if scores.replays:
        lines += _replay_section(scores)
    lines += ["", "## Not scored here", "",
              "- **The quantitative roofline (method 3)** reads a kernel's profiler metrics (its instruction mix, "
              "DRAM transactions); the corpus holds times only, so it cannot be scored on it without inventing "
              "those metrics. It is scored on the campaign suite (`perfcast campaign`, docs/validation/campaign-*), "
              "and on a GPU when one is lent (docs/gpu.md).",
              "- **Live tuning on a GPU** (a GPU of our own added to the corpus): see docs/gpu.md.", ""]
    lines += ["## How each kernel's work is counted, and what is uncertain", ""]
    for name, caveats in scores.caveats.items():
        lines.append(f"- **{name}**")
        lines += [f"  - {c}" for c in caveats]
        lines += [f"  - {n}" for n in corpus.kernels[name].notes]
    if scores.skipped:
        lines += ["", "## Left out", ""] + [f"- {s}" for s in scores.skipped]
    return "\n".join(lines) + "\n"


def _roofline_section(scores: CorpusScores) -> list[str]:
    """Return the roofline section: per (kernel, GPU) violations, broken records and fractions of the bound."""
    lines = ["## 1. Roofline: no configuration may beat its bound", "",
             "A bound is violated when a configuration's median time is below it by more than the runs' spread "
             f"(σ/median). A time below the compulsory-DRAM time by more than {IMPLAUSIBLE:g}x cannot be the "
             "kernel the corpus describes: such records are counted as *broken* and kept out of every other score.",
             "", "| kernel | GPU | configurations | naive violations | hierarchical violations | broken records | "
             "best time | naive bound / best | hierarchical bound / best | binding |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in scores.roofline:
        lines.append(f"| {r.kernel} | {r.device} | {r.n} | {r.naive_violations} | {r.hierarchical_violations} | "
                     f"{len(r.implausible)} | {_time(r.best_time)} | {r.naive_fraction:.2f} | "
                     f"{r.hierarchical_fraction:.2f} | {r.binding_level} |")
    worst = [(r, row) for r in scores.roofline for row in r.worst_violations]
    if worst:
        lines += ["", "Largest hierarchical violations (bound / measured time, and the level that binds):", ""]
        for r, (row, ratio, level) in sorted(worst, key=lambda item: -item[1][1])[:10]:
            lines.append(f"- {r.kernel} on {r.device}, row {row}: {ratio:.2f}x ({level})")
    return lines + [""]


def _hull_section(scores: CorpusScores, charts: Mapping[str, str]) -> list[str]:
    """Return the boat hull section: range, measured best, containment and how far each miss lies."""
    lines = ["## 2. Boat hull: the best time inside the predicted range", "",
             "Spread: the best configuration's σ/median; the range is widened by it (spec §6). Middle: geometric "
             "for ranges wider than 2x, else arithmetic.", "",
             "*i1*: perfcast's issue floor (docs/models.md §2): a neighbourhood's loads from its staged tile take "
             "instruction issues on GPUs whose fp32 peak needs every issue (`fp32_issue_share` 1). It was added "
             "after these convolution times showed the share-1 GPUs 1.08-1.52x above the spec's range and the "
             "share-0.5 GPUs inside it, so the convolution rows do not validate it.", "",
             "*Conversions* (docs/models.md §2): a class that sums integer elements in fp32 converts each one, at "
             "the GPU's conversion rate (the catalog's `conversions`: 16 a clock per SM on NVIDIA, a quarter to an "
             "eighth of the FP32 lanes; full rate on AMD), priced in f. With that and a sheared column's index maths "
             "per application (o = 4m) the dedispersion rows are priced; before them they lay 3.7-10x above ranges of "
             "FLOP alone. Both rules were set with these times in view, so those rows do not validate them "
             "either; the Hoppers' best times come from partial searches (upper bounds on their optima), so a "
             "fuller search may fall below their lower ends.", "",
             "| kernel | GPU | species | range | best measured (spread) | width | in range | miss | APE of the "
             "middle |", "|---|---|---|---|---|---|---|---|---|"]
    for h in scores.hull:
        miss = "—" if h.contained else (f"{h.miss:.2f}x above" if h.measured > h.upper else f"{h.miss:.2f}x below")
        species = h.species.replace("|", "\\|")  # a bare | would end the table's cell, code span or not
        lines.append(f"| {h.kernel} | {h.device} | `{species}` | {_time(h.lower)} – {_time(h.upper)} "
                     f"({h.lower_term}/{h.upper_term}) | {_time(h.measured)} ({format_percent(h.spread)}) | {h.width:.2f}x | "
                     f"{'yes' if h.contained else 'no'} | {miss} | "
                     f"{format_percent(_middle_ape(h.lower, h.upper, h.measured))} ({_middle(h.lower, h.upper)[1]}) |")
    return lines + ["", f"![boat hull ranges]({charts['hull']})", ""]


def _projection_section(scores: CorpusScores, charts: Mapping[str, str], head: Mapping[str, Any],
                        by_penalty: Mapping[str, Any]) -> list[str]:
    """Return the projection section: groups and penalty bands (the summary's), baselines, per-pair table, heatmap."""
    lines = ["## 3. Cross-GPU projection (method 4) against the naive baselines", "",
             "Every configuration measured on both GPUs is projected from its source time; the baselines scale the "
             "source time by the ratio of DRAM bandwidths, of fp32 peaks, or by the larger of the two. *Best*: the "
             "target's fastest configuration, projected from its time on the source. Rank correlation: Spearman, "
             "projected against measured target times over the configurations.", "",
             "*Tuned*: the source's optimum projected onto the target, against the target's optimum (each GPU "
             "tuned on its own: how fast will my tuned kernel run there?).", "",
             "*§4 as written*: perfcast's projection without the GPUs' fp32 issue shares (the catalog's "
             "`fp32_issue_share`: 1 where the fp32 peak needs every instruction issue, 0.5 where half are spare; "
             "docs/models.md, §4). The kernels were not profiled, so their FP share of issued instructions is not "
             "known: between GPUs of different shares the projection takes the middle of its possible range and "
             "its interval spans the range.", "",
             "*MAPE all*: each pair's MAPE over its configurations, averaged over the pairs. *Every level known*: "
             "the pairs whose two GPUs both give a bandwidth for L1, L2 and shared memory; elsewhere a level without "
             "one is charged to L1 (or left out with L1), as the per-pair table says.", "",
             "| group | pairs | configurations | method | MAPE best | median APE best | MAPE tuned | median APE tuned "
             "| MAPE all (mean over pairs) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for group, figures in head.items():
        for method in METHODS:
            cells = (figures[key][method] for key in ("best_mape", "best_median_ape", "tuned_mape",
                                                      "tuned_median_ape", "all_mape"))
            lines.append(f"| {group} | {figures['pairs']} | {figures['configurations']} | {method} | "
                         + " | ".join(format_percent(value) for value in cells) + " |")
    lines += ["", "Median rank correlation of the configurations: "
              + ", ".join(f"{g} {f['median_rank_correlation']:.2f}" for g, f in head.items()) + ".", "",
              "The projection also gives an interval, [min_l, max_l] over the levels (spec §4; the point above is "
              "its middle), widened over the FP issue shares the kernel may have between GPUs of different issue "
              "shares. The target's best time lies inside it for "
              + ", ".join(f"{f['best_in_interval']} of {f['pairs']} pairs ({g})" for g, f in head.items())
              + "; over every configuration, the mean fraction inside is "
              + ", ".join(f"{format_percent(f['in_interval'])} ({g})" for g, f in head.items()) + ".", "",
              *_penalty_table(by_penalty, scores.pairs),
              *_issue_table(scores.pairs),
              f"![projection heatmap]({charts['projection']})", "", "<details><summary>Every ordered pair</summary>",
              "", "| kernel | source → target | n | APE best: perfcast / §4 / bw / FLOP / max | MAPE all: perfcast / "
              "§4 / bw / FLOP / max | rank corr. | levels without a bandwidth |", "|---|---|---|---|---|---|---|"]
    for p in scores.pairs:
        lines.append(f"| {p.kernel} | {p.source} → {p.target} | {p.n} | "
                     + " / ".join(format_percent(p.best_ape[m]) for m in METHODS) + " | "
                     + " / ".join(format_percent(p.mape[m]) for m in METHODS) + f" | {p.rank_correlation:.2f} | "
                     + (", ".join(p.left_out) or "—") + " |")
    return lines + ["", "</details>", ""]


def _penalty_table(by_penalty: Mapping[str, Any], pairs: Sequence[PairScore]) -> list[str]:
    """Return the best configuration's errors by its source penalty (the summary's bands), and the worst pairs."""
    lines = ["**Where the best configuration's misses come from.** Every method here starts from the time the "
             "target's best configuration took on the source. Where that configuration runs far slower on the source "
             "than the source's own optimum (its *source penalty*), the source time holds an inefficiency of the "
             "source alone (a configuration one GPU's compiler or wavefront width serves badly), and a projection that "
             "keeps each configuration's efficiency carries it to the target. No figure of either GPU names it; only "
             "a model of why that configuration is slow there could. The errors by source penalty (pairs without a "
             "configuration measured on both are in no band):", "",
             "| source penalty | pairs (same vendor) | MAPE best: " + " / ".join(METHODS) + " | median APE best: "
             "perfcast |", "|---|---|---|---|"]
    for band, figures in by_penalty.items():
        lines.append(f"| {band} | {figures['pairs']} ({figures['same_vendor']}) | "
                     + " / ".join(format_percent(figures["best_mape"][m]) for m in METHODS)
                     + f" | {format_percent(figures['best_median_ape']['perfcast'])} |")
    worst = sorted((p for p in pairs if math.isfinite(p.best_ape["perfcast"])),
                   key=lambda p: p.best_ape["perfcast"], reverse=True)[:8]
    lines += ["", "The pairs that miss most (APE of the best configuration, perfcast), with their source penalty: "
              + "; ".join(f"{p.kernel} {p.source} → {p.target} {format_percent(p.best_ape['perfcast'])} "
                          f"({p.source_penalty:.1f}x)" for p in worst) + ".", ""]
    return lines


def _issue_table(pairs: Sequence[PairScore]) -> list[str]:
    """Return projected / measured times by the two GPUs' fp32 issue shares: the best and the tuned configuration."""
    kinds: dict[str, list[PairScore]] = {}
    for p in pairs:
        source, target = p.issue_shares
        if source is None or target is None:
            kind = "a share unknown"
        elif source == target:
            kind = f"same share ({source:g})"
        else:
            kind = f"share {source:g} → {target:g}"
        kinds.setdefault(kind, []).append(p)

    def cell(values: list[float]) -> str:
        values = [v for v in values if math.isfinite(v)]
        if not values:
            return "—"
        low, middle, high = np.percentile(values, [25, 50, 75])
        return f"{middle:.2f} ({low:.2f}–{high:.2f})"

    lines = ["Projected over measured time by the fp32 issue shares of the source and the target (median, and the "
             "middle half of the pairs in brackets), without the shares (§4 as written) and with them (perfcast). "
             "*Best*: the target's best configuration, which is chosen on the target, so its time on the source is "
             "not the source's best and every group leans above 1. *Tuned*: the source's optimum against the "
             "target's, without that lean. Pairs of GPUs that differ in their share should look like pairs that "
             "do not.", "",
             "| GPUs | pairs | best: §4 as written | best: perfcast | tuned: §4 as written | tuned: perfcast |",
             "|---|---|---|---|---|---|"]
    for kind in sorted(kinds):
        group = kinds[kind]
        lines.append(f"| {kind} | {len(group)} | "
                     + " | ".join(cell([getattr(p, ratio).get(method, math.nan) for p in group])
                                  for ratio in ("best_ratio", "tuned_ratio")
                                  for method in ("§4 as written", "perfcast")) + " |")
    return lines + [""]


def _evaluations(replay: StrategyReplay, fraction: float) -> str:
    """Return the median evaluations to reach `fraction` of the optimum, with how many runs did, or 'never'."""
    median, reached, _, _ = replay.summary(fraction)
    if median is None:
        return "never"
    return f"{median:g}" + ("" if reached == replay.seeds else f" ({reached}/{replay.seeds})")


def _replay_section(scores: CorpusScores) -> list[str]:
    """Return the tuning replay section: evaluations to 90/97/99 % of each space's optimum, per strategy."""
    seeds = max((r.seeds for score in scores.replays for r in score.replays), default=0)
    lines = ["## 5. Tuning replayed on every space", "",
             "perfcast's strategies run on each recorded space: every configuration a strategy asks for is answered "
             "from the record and costs one evaluation (a failed one too). The hierarchical method is deterministic "
             f"(one run); random search is replayed with {seeds} seeds. Evaluations: median over the runs that "
             "reached the fraction (how many did, where not all). *Final*: optimum / the time of the configuration "
             "the strategy returned (median over runs). *Within*: configurations of the space within 90 / 97 / "
             "99 % of its optimum (how easy the space is). KernelTuner's strategies on the same spaces: "
             "[tuning-replay/README.md](tuning-replay/README.md).", "",
             "| kernel | GPU | configurations | within 90/97/99 % | strategy | to 90 % | to 97 % | to 99 % | final | "
             "evaluations |", "|---|---|---|---|---|---|---|---|---|---|"]
    finals: dict[str, list[float]] = {}
    for score in scores.replays:
        within = " / ".join(str(score.within[f]) for f in (0.90, 0.97, 0.99))
        for replay in score.replays:
            final = statistics.median(replay.chosen)
            finals.setdefault(replay.strategy, []).append(final)
            lines.append(f"| {score.kernel} | {score.device} | {score.configurations} | {within} | {replay.strategy} | "
                         + " | ".join(_evaluations(replay, f) for f in (0.90, 0.97, 0.99))
                         + f" | {format_percent(final)} | {statistics.median(replay.evaluations):g} |")
    lines += ["", "Final fraction of the optimum over the spaces: "
              + "; ".join(f"{name} median {format_percent(statistics.median(v))}, lowest {format_percent(min(v))}, "
                          f"{sum(f >= 0.9 for f in v)} of {len(v)} spaces at 90 % or more" for name, v in finals.items()),
              ""]
    return lines


def _portability_section(scores: CorpusScores) -> list[str]:
    """Return the portability section: the source's tuning carried to the target, and the projection's top k."""
    lines = ["## 4. Portability of tuned configurations", "",
             "The fraction of the target's optimum reached by the source's best configuration, and by the best of "
             "the k configurations the projection ranks fastest on the target (each measured there).", "",
             "| kernel | source → target | source's best | top-1 projected | top-3 | top-5 |", "|---|---|---|---|---|---|"]
    by_kernel: dict[str, list[float]] = {}
    for p in scores.portability:
        by_kernel.setdefault(p.kernel, []).append(p.best_carried)
        lines.append(f"| {p.kernel} | {p.source} → {p.target} | {format_percent(p.best_carried)} | "
                     + " | ".join(format_percent(p.projected_top[k]) for k in (1, 3, 5)) + " |")
    lines += ["", "Median of the source's best carried over, per kernel: "
              + ", ".join(f"{k} {format_percent(_median(v))}" for k, v in by_kernel.items()), "",
              "(— where the target did not measure the source's best: a GPU that measured part of the space.)", ""]
    return lines
