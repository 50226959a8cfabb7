"""Did `choose` rank devices in the measured order? Checked where several devices measured the same workload.

On the GPU corpus, each kernel's space tuned on one GPU (the source) is ranked over every other corpus GPU
that measured it, and the predicted order of their best times is compared with the measured one: Kendall's
tau-b, whether the measured fastest GPU is the predicted first (top-1) or among the predicted first two
(top-2), and, over every pair of GPUs whose validated intervals do not overlap (the pairs `choose` calls
told apart), how often the faster predicted one was the faster measured one. A GPU whose column sampled
less than half of a space (a short search, as the H200's) has no tuned optimum and takes no part. Two naive rankings, by the
ratio of DRAM bandwidths and by the ratio of fp32 peaks, are scored beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfcast.choose.choice import choose
from perfcast.choose.ranking import Ranked, kendall_tau
from perfcast.choose.workload import ProfileWorkload, TunedSpaceWorkload, WorkloadError, tuned_optima
from perfcast.devices.schema import Device
from perfcast.errors import InputError
from perfcast.validation.gpu_scores import REPLAY_COVERAGE

__all__ = ["CORPUS_ABOUT", "CORPUS_FOOTNOTE", "CheckSection", "RankingCase", "RankingSummary", "SUITE_ABOUT",
           "SUITE_FOOTNOTE", "check_archives", "check_corpus", "check_markdown", "summarise_cases"]

BASELINES = ("bandwidth ratio", "FLOP ratio")


@dataclass(frozen=True)
class RankingCase:
    """One workload ranked over the devices that measured it: predicted and measured times (s) per device."""

    workload: str
    source: str
    devices: tuple[str, ...]
    predicted: tuple[float, ...]  # s, perfcast's ranking model
    measured: tuple[float, ...]  # s
    told_apart: tuple[tuple[int, int, bool], ...]  # (i, j, measured in the predicted order) for non-overlapping pairs
    baselines: Mapping[str, tuple[float, ...]]  # method -> predicted times (s)
    signature: tuple[str, str] | None = None  # a suite case: (kernel, its profile's metrics), to take each once

    @property
    def tau(self) -> float:
        """Return Kendall's tau-b between predicted and measured times."""
        return kendall_tau(self.predicted, self.measured)

    def top(self, k: int, times: Sequence[float] | None = None) -> bool:
        """Return True where the measured fastest device is among the first `k` of a predicted order.

        Devices predicted at the same time share a place: the measured fastest counts as among the first `k`
        when its predicted time is no later than the k-th smallest.
        """
        predicted = np.asarray(times if times is not None else self.predicted)
        kth = np.sort(predicted)[min(k, len(predicted)) - 1]
        return bool(predicted[int(np.argmin(self.measured))] <= kth)


@dataclass(frozen=True)
class RankingSummary:
    """The check over all cases: median tau, top-1 and top-2 rates, and the told-apart pairs' accuracy."""

    cases: int
    devices_per_case: float  # median
    tau_median: float
    top1: float
    top2: float
    told_apart_pairs: int
    told_apart_correct: float
    baselines: Mapping[str, dict[str, float]]  # method -> {tau_median, top1, top2}


def check_corpus(devices: Mapping[str, Device], kernels: Sequence[str] | None = None) -> list[RankingCase]:
    """Return one ranking case per corpus kernel and source GPU, over the catalog GPUs that measured the kernel."""
    from perfcast.validation.corpus import read_corpus

    corpus = read_corpus(kernels=kernels)
    cases = []
    for kernel in corpus.kernels.values():
        present = [d for d in kernel.devices if d in devices and kernel.measured(d).any()]
        # A column that sampled less than half of the space (a short search) has no tuned optimum to rank by.
        full = [d for d in present if kernel.measured(d).mean() >= REPLAY_COVERAGE]
        optima = tuned_optima(kernel)  # shared by every source of the kernel
        for source in full:
            try:
                workload = TunedSpaceWorkload(kernel, source, optima)
            except WorkloadError:  # no plausible configuration there: the corpus report lists it as skipped
                continue
            targets = [devices[d] for d in full if d != source and d in workload.measured]
            if len(targets) < 2:
                continue
            choice = choose(workload, targets)
            ranked = {r.estimate.device: r for r in choice.ranked}
            cases.append(_case(kernel.name, devices[source], [d for d in targets if d.name in ranked], ranked,
                               workload.measured, workload.measured[source]))
    return cases


def check_archives(paths: Sequence[Path | str]) -> list[RankingCase]:
    """Return one ranking case per suite kernel and source profile over the devices of campaign archives.

    Each archive is one device (its measured profile) with the suite timed at the same sizes; each archive's
    profile is a source, and the kernel is ranked over every archive's device that timed it at the source's size.
    Identical profiles (the same tool's counts of the same kernel) are taken once.
    """
    from perfcast.campaign.archive import Archive
    from perfcast.campaign.projection import ArchiveRun

    runs = [ArchiveRun.of(Archive.read(path)) for path in paths]
    names = [run.device.name for run in runs]
    if len(set(names)) != len(names):
        raise InputError(f"two archives of one device ({', '.join(sorted(names))}): one archive per device")
    cases: list[RankingCase] = []
    for source in runs:
        if source.profiles is None:
            continue
        for kernel in source.profiles.kernels:
            size = source.sizes.get(kernel.name)
            timed = [run for run in runs if kernel.name in run.timings and run.sizes.get(kernel.name) == size]
            if len(timed) < 3 or source not in timed:
                continue
            signature = (kernel.name, repr(sorted(kernel.metrics.items())))
            if any(seen == signature for seen in _seen(cases)):
                continue
            workload = ProfileWorkload(kernel.name, str(source.archive.path), source.profiles, (kernel.name,),
                                       {run.device.name: run.timings[kernel.name][0] for run in timed})
            choice = choose(workload, [run.device for run in timed])
            ranked = {r.estimate.device: r for r in choice.ranked}
            devices = tuple(n for n in (run.device.name for run in timed) if n in ranked)
            if len(devices) < 3:
                continue
            cases.append(_case(f"{kernel.name} ({source.profiles.source.tool})", source.device,
                               [run.device for run in timed if run.device.name in ranked], ranked,
                               workload.measured, source.timings[kernel.name][0], signature))
    return cases


def _seen(cases: Sequence[RankingCase]) -> list[tuple[str, str]]:
    """Return the profile signatures the cases were made from."""
    return [case.signature for case in cases if case.signature is not None]


def _case(workload: str, source: Device, targets: Sequence[Device], ranked: Mapping[str, Ranked],
          measured: Mapping[str, float], source_time: float,
          signature: tuple[str, str] | None = None) -> RankingCase:
    """Return one ranking case: predicted and measured times of `targets`, told-apart pairs, the two baselines."""
    names = tuple(d.name for d in targets)
    predicted = tuple(ranked[n].estimate.time for n in names)
    times = tuple(measured[n] for n in names)
    pairs = []
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i < j and b not in ranked[a].overlaps and ranked[a].estimate.interval and ranked[b].estimate.interval:
                pairs.append((i, j, (predicted[i] < predicted[j]) == (times[i] < times[j])))
    baselines = {
        "bandwidth ratio": tuple(source_time * source.dram_bandwidth / d.dram_bandwidth for d in targets),
        "FLOP ratio": tuple(source_time * source.peak_compute("fp32") / d.peak_compute("fp32") for d in targets),
    }
    return RankingCase(workload, source.name, names, predicted, times, tuple(pairs), baselines, signature)


def _rates(cases: Sequence[RankingCase], times: Mapping[int, Sequence[float]] | None = None) -> dict[str, float]:
    """Return the median tau and top-1/top-2 rates of `cases`, under their own or other predicted times."""
    taus, top1, top2 = [], [], []
    for index, case in enumerate(cases):
        predicted = times[index] if times is not None else case.predicted
        taus.append(kendall_tau(predicted, case.measured))
        top1.append(case.top(1, predicted))
        top2.append(case.top(2, predicted))
    finite = [t for t in taus if not math.isnan(t)]
    return {"tau_median": float(np.median(finite)) if finite else math.nan,
            "top1": float(np.mean(top1)), "top2": float(np.mean(top2))}


def summarise_cases(cases: Sequence[RankingCase]) -> RankingSummary:
    """Return the check's summary over `cases` (ValueError without any)."""
    if not cases:
        raise InputError("no ranking case: no workload was measured on two or more of the devices (a corpus kernel "
                         "needs three GPUs with a full column, a suite kernel three archives that timed it)")
    own = _rates(cases)
    pairs = [ok for case in cases for (_, _, ok) in case.told_apart]
    baselines = {method: _rates(cases, {i: c.baselines[method] for i, c in enumerate(cases)}) for method in BASELINES}
    return RankingSummary(len(cases), float(np.median([len(c.devices) for c in cases])), own["tau_median"],
                          own["top1"], own["top2"], len(pairs), float(np.mean(pairs)) if pairs else math.nan,
                          baselines)


def _percent(value: float) -> str:
    """Return a fraction as a percentage ('—' for NaN)."""
    return "—" if math.isnan(value) else f"{value:.0%}"


@dataclass(frozen=True)
class CheckSection:
    """One data set of the check: its title, what a case is, its cases and their summary."""

    title: str
    about: str
    model: str
    source_column: str
    cases: Sequence[RankingCase]
    summary: RankingSummary
    footnote: str = ""


CORPUS_ABOUT = (
    "Each case is one kernel tuned on one GPU (the source): `choose` projects the source's best configuration "
    "onto every other GPU that measured the kernel (§4), and the predicted order of their tuned times is "
    "compared with the measured order. Data: the GPU corpus perfcast ships (KernelTuner spaces of the FAIR "
    "Benchmark Hub for Auto-Tuning, plus the H200 column this project measured; [gpu-corpus.md](gpu-corpus.md)).")
CORPUS_FOOTNOTE = (
    "GPUs whose column covers less than half of a space (the H200's 120-second searches) have no tuned optimum "
    "and take no part; spaces with no plausible configuration on a GPU (pnpoly on two Turing cards, see the "
    "corpus report) neither.")
SUITE_ABOUT = (
    "Each case is one kernel of perfcast's suite with the profile one campaign archive holds (Oclgrind counts on "
    "a CPU, Nsight Compute metrics on the H200): `choose` predicts it by the quantitative roofline on the "
    "device of every archive that timed the kernel at the same size, and the predicted order is compared with "
    "the archives' measured medians. The devices are the measured profiles in the archives: two 2-core VMs "
    "(Xeon, Zen 4), each with the suite in C and on PoCL, and an H200.")
SUITE_FOOTNOTE = (
    "The H200 is the fastest device of every case and is predicted so, which makes 'ranked first' easy here; "
    "the Kendall tau, which also orders the four CPU devices, is the harder score.")


def check_markdown(sections: Sequence[CheckSection], command: str, machine: str) -> str:
    """Return the ranking check as a Markdown page: each data set's summary, then its every case."""
    lines = [
        "# Does `perfcast choose` rank devices in the measured order?",
        "",
        f"Command: `{command}` ({machine}).",
        "",
        "Two naive rankings are scored beside perfcast's: the source's measured time scaled by the ratio of DRAM "
        "bandwidths, and by the ratio of fp32 peaks. A pair `choose` calls told apart is one whose validated "
        "intervals do not overlap; `choose` reports every other pair as not told apart and does not claim to order "
        "it. The told-apart scores are in-sample: the bands were computed from these campaigns and this corpus.",
        "",
    ]
    for section in sections:
        summary = section.summary
        lines += [
            f"## {section.title}",
            "",
            section.about,
            "",
            f"{summary.cases} cases, {summary.devices_per_case:g} devices each (median).",
            "",
            "| ranking | Kendall tau (median) | measured fastest ranked first | measured fastest in the top 2 |",
            "|---|---|---|---|",
            f"| perfcast choose ({section.model}) | {summary.tau_median:.2f} | {_percent(summary.top1)} | "
            f"{_percent(summary.top2)} |",
        ]
        for method, rates in summary.baselines.items():
            lines.append(f"| {method} | {rates['tau_median']:.2f} | {_percent(rates['top1'])} | "
                         f"{_percent(rates['top2'])} |")
        lines += [
            "",
            f"Pairs told apart: {summary.told_apart_pairs}; measured in the predicted order: "
            f"{_percent(summary.told_apart_correct)}.",
            "",
            f"| kernel | {section.source_column} | devices | tau | top-1 | top-2 | predicted order (fastest first) "
            "| measured order |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for case in section.cases:
            predicted = [case.devices[i] for i in np.argsort(case.predicted)]
            measured = [case.devices[i] for i in np.argsort(case.measured)]
            lines.append(f"| {case.workload} | {case.source} | {len(case.devices)} | {case.tau:.2f} | "
                         f"{'yes' if case.top(1) else 'no'} | {'yes' if case.top(2) else 'no'} | "
                         f"{', '.join(predicted)} | {', '.join(measured)} |")
        lines += ["", section.footnote, ""] if section.footnote else [""]
    return "\n".join(lines)
