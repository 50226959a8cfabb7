"""Validated error bands: how far measured times fell from each model's predictions in perfcast's own reports.

A band is never chosen by hand. `compute_bands` reads the validation results committed under
docs/validation (the campaign archives of the kernel suite on CPUs, the H200 and the H100, and the GPU corpus
scores) and takes, per model and device class, the 10th and 90th percentiles of measured / predicted time.
The result ships with perfcast as error_bands.json (docs/ is not installed); a test recomputes it from the
committed reports and fails where the two differ, so the shipped bands cannot drift from their evidence.

Per model, what a case is:
- quantitative (§3): one suite kernel of one campaign archive, its point prediction against its median time;
- boat hull (§2): the same kernels (the middle of the predicted range), and on GPUs also the best measured
  configuration of each corpus kernel on each corpus GPU (the report's `boat_hull` rows);
- projection (§4): one corpus kernel tuned on a source GPU and projected onto a target, against the target's
  own tuned time (the report's `tuned_ape`), split into pairs of the same vendor and pairs across vendors.
  The report keeps absolute errors only, so that band is symmetric in error: measured / predicted lies in
  [1 / (1 + a), 1 / (1 - a)] where a is the 80th percentile APE (no upper limit once a reaches 1).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.choose.ranking import Band
from perfcast.errors import InputError, NotFound

__all__ = ["BANDS_FORMAT", "BANDS_VERSION", "CAMPAIGN_SOURCES", "CORPUS_SOURCE", "band_for", "bands_document",
           "compute_bands", "load_bands"]

BANDS_FORMAT = "perfcast-error-bands"
BANDS_VERSION = 1
COVERAGE = 0.8  # the share of validated cases a band holds: from the 10th to the 90th percentile
# The campaigns of the kernel suite whose reports the validation pages show (docs/validation/README.md).
CAMPAIGN_SOURCES = (
    "docs/validation/campaign-cpu/xeon-avx512/campaign-cpu-xeon.zip",
    "docs/validation/campaign-cpu/zen4-avx512/campaign-cpu-zen4.zip",
    "docs/validation/campaign-pocl/xeon-avx512/campaign-pocl-xeon.zip",
    "docs/validation/campaign-pocl/zen4-avx512/campaign-pocl-zen4.zip",
    "docs/validation/gpu-h200/campaign-h200.zip",
    "docs/validation/gpu-h100/campaign-h100.zip",
)
CORPUS_SOURCE = "docs/validation/gpu-corpus.json"
SAME_VENDOR, ACROSS_VENDORS = "same vendor", "across vendors"


def _ratio_band(model: str, scope: str, ratios: Sequence[float], sources: Iterable[str],
                devices: Iterable[str]) -> Band:
    """Return the band of measured / predicted `ratios`: their 10th-90th percentiles, and the MAPE."""
    values = np.asarray(ratios, dtype=float)
    tail = (1 - COVERAGE) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    mape = float(np.mean(np.abs(1 / values - 1)))  # APE = |predicted - measured| / measured = |1/r - 1|
    return Band(model, scope, round(float(low), 4), round(float(high), 4), len(values), COVERAGE, round(mape, 4),
                "; ".join(sorted(set(sources))), tuple(sorted(set(devices))))


def _ape_band(model: str, scope: str, apes: Sequence[float], source: str, devices: Iterable[str]) -> Band:
    """Return the band of absolute percentage errors `apes`: measured / predicted within 1/(1 +- the 80th percentile)."""
    values = np.asarray(apes, dtype=float)
    a = float(np.quantile(values, COVERAGE))
    high = math.inf if a >= 1 else round(1 / (1 - a), 4)
    return Band(model, scope, round(1 / (1 + a), 4), high, len(values), COVERAGE, round(float(values.mean()), 4),
                source, tuple(sorted(set(devices))))


Cases = dict[tuple[str, str], tuple[list[float], list[str], list[str]]]  # (model, scope) -> ratios, sources, devices


def _campaign_cases(root: Path) -> Cases:
    """Return measured / predicted ratios per (model, device kind) over the committed suite campaigns."""
    from perfcast.campaign.archive import Archive
    from perfcast.campaign.report import score_archive

    cases: Cases = {}
    for relative in CAMPAIGN_SOURCES:
        scores = score_archive(Archive.read(root / relative))
        for kernel in scores.scores:
            for model in ("quantitative", "boat hull"):
                prediction = kernel.predictions.get(model)
                if prediction is None or not prediction.time > 0:
                    continue
                ratios, sources, devices = cases.setdefault((model, scores.device.kind), ([], [], []))
                ratios.append(kernel.measured / prediction.time)
                sources.append(relative)
                devices.append(scores.device.name)
    return cases


def compute_bands(root: Path | str) -> list[Band]:
    """Return every band from the validation results committed under `root` (the repository's top folder)."""
    root = Path(root)
    cases = _campaign_cases(root)
    corpus_path = root / CORPUS_SOURCE
    try:
        corpus = json.loads(corpus_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"{corpus_path}: cannot read the GPU corpus scores ({error})") from None
    hull_ratios, hull_sources, hull_devices = cases.setdefault(("boat hull", "gpu"), ([], [], []))
    for row in corpus["boat_hull"]:
        hull_ratios.append(row["measured_s"] / ((row["lower_s"] + row["upper_s"]) / 2))
        hull_sources.append(CORPUS_SOURCE)
        hull_devices.append(row["device"])
    bands = [_ratio_band(model, kind, ratios, sources, devices)
             for (model, kind), (ratios, sources, devices) in sorted(cases.items())]
    for same, scope in ((True, SAME_VENDOR), (False, ACROSS_VENDORS)):
        rows = [row for row in corpus["projection"] if row["same_vendor"] is same]
        if rows:
            bands.append(_ape_band("projection", scope, [row["tuned_ape"]["perfcast"] for row in rows], CORPUS_SOURCE,
                                   [row[end] for row in rows for end in ("source", "target")]))
    return bands


def _digest(path: Path) -> str:
    """Return the SHA-256 of a file, so that the shipped bands name the exact reports they come from."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def bands_document(root: Path | str) -> dict[str, Any]:
    """Return the error_bands.json document of the reports committed under `root`: bands and their sources."""
    root = Path(root)
    bands = compute_bands(root)
    sources = {relative: _digest(root / relative) for relative in (*CAMPAIGN_SOURCES, CORPUS_SOURCE)}
    return {
        "format": BANDS_FORMAT, "version": BANDS_VERSION, "coverage": COVERAGE, "sources": sources,
        "bands": [{"model": b.model, "scope": b.scope, "low": b.low, "high": None if math.isinf(b.high) else b.high,
                   "n": b.n, "mape": b.mape, "source": b.source, "devices": list(b.devices)} for b in bands],
    }


def _read_bands(document: Mapping[str, Any], origin: str) -> dict[tuple[str, str], Band]:
    """Return the bands of an error-bands document, keyed by (model, scope)."""
    if document.get("format") != BANDS_FORMAT or document.get("version") != BANDS_VERSION:
        raise InputError(f"{origin}: not a version-{BANDS_VERSION} {BANDS_FORMAT} file")
    bands = {}
    for row in document["bands"]:
        high = math.inf if row["high"] is None else float(row["high"])
        band = Band(row["model"], row["scope"], float(row["low"]), high, int(row["n"]),
                    float(document["coverage"]), float(row["mape"]), row["source"], tuple(row["devices"]))
        bands[(band.model, band.scope)] = band
    return bands


def load_bands() -> dict[tuple[str, str], Band]:
    """Return the shipped validated bands, keyed by (model, scope)."""
    text = (resources.files("perfcast.choose") / "error_bands.json").read_text(encoding="utf-8")
    return _read_bands(json.loads(text), "perfcast/choose/error_bands.json")


def band_for(bands: Mapping[tuple[str, str], Band], model: str, scope: str) -> Band | None:
    """Return the band of `model` for devices of `scope` (cpu, gpu, same vendor, across vendors), or None."""
    if not any(key[0] == model for key in bands):
        raise NotFound(f"no validated band for the model {model!r} (bands: "
                       f"{', '.join(sorted({k[0] for k in bands}))})")
    return bands.get((model, scope))
