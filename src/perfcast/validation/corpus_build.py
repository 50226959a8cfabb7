"""Building the GPU corpus from the FAIR Benchmark Hub for Auto-Tuning, so that anyone can rebuild it.

`HUB_KERNELS` says which KernelTuner caches of the hub (AutoTuningAssociation/benchmark_hub, MIT licence,
DOI 10.5281/zenodo.15364124) make each corpus kernel, which catalog device each cache is, and the kernel's
source and problem size. `build_corpus` reads them from a checkout of the hub and writes the compressed CSVs
and the manifest (`corpus.py` says the format). Only what the scores need is kept: parameters, the median of
the runs and their spread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from perfcast.errors import NotFound
from perfcast.output_files import write_text_atomic
from perfcast.safe_yaml import load_yaml_file
from perfcast.tune.recorded import read_recorded
from perfcast.validation.corpus import CORPUS_FORMAT, CORPUS_VERSION, CorpusError, build_kernel, write_kernel_csv

__all__ = ["HUB", "HUB_KERNELS", "HubKernel", "build_corpus"]

HUB = {
    "name": "FAIR Benchmark Hub for Auto-Tuning",
    "url": "https://github.com/AutoTuningAssociation/benchmark_hub",
    "licence": "MIT (Copyright (c) 2025 AutoTuningAssociation)",
    "doi": "10.5281/zenodo.15364124",
    "authors": "F.-J. Willemsen, R. V. van Nieuwpoort, B. van Werkhoven",
}
_OLD = "currently_unused/cachefiles/KernelTuner data"
_GEFORCE = {"rtx-2080-ti": "RTX_2080_Ti", "rtx-3060-laptop": "RTX_3060_laptop", "rtx-3090": "RTX_3090",
            "titan-rtx": "RTX_Titan"}
_PRO = {"a100-pcie-40gb": "A100", "rtx-a4000": "A4000", "rtx-a6000": "A6000", "mi250x-gcd": "MI250X",
        "w6600": "W6600", "w7800": "W7800"}


@dataclass(frozen=True)
class HubKernel:
    """One corpus kernel: its title, source file, problem size, and the hub cache of every GPU."""

    title: str
    source: str
    problem: dict[str, Any]
    caches: dict[str, str]
    notes: tuple[str, ...] = ()
    work_group: tuple[str, ...] = ("block_size_x", "block_size_y")  # the parameters that shape a work-group


HUB_KERNELS: dict[str, HubKernel] = {
    "convolution-milo": HubKernel(
        "2D convolution, 15x15 filter, 4096x4096 image (fp32), the HIP-portable version",
        "kernels/convolution_milo.cu (HIP: kernels/convolution_milo.cu.hip)",
        {"size": [4096, 4096], "filter": [15, 15], "element_bytes": 4},
        {device: f"cachefiles/convolution_milo/{file}.json.gz" for device, file in _PRO.items()},
        ("use_shmem changes the measured times (median 1.7x between the two values on the A100, 20x on the "
         "MI250X) although the kernel source committed beside the caches never reads it: the code that ran "
         "differs from the committed one.",)),
    "convolution": HubKernel(
        "2D convolution, 15x15 filter, 4096x4096 image (fp32), the earlier CUDA version",
        "currently_unused/kernels/convolution.cu",
        {"size": [4096, 4096], "filter": [15, 15], "element_bytes": 4},
        {device: f"{_OLD}/convolution/{file}.json.gz" for device, file in _GEFORCE.items()}),
    "dedispersion-milo": HubKernel(
        "Radio-astronomy dedispersion: 2048 DMs x 25000 samples x 1536 channels (uint8 in, fp32 out)",
        "kernels/dedisp_milo/dedispersion.cu",
        {"samples": 25000, "dms": 2048, "channels": 1536, "max_shift": 650},
        {device: f"cachefiles/dedispersion_milo/{file}.json.gz" for device, file in _PRO.items()}),
    "gemm": HubKernel(
        "CLBlast's Xgemm, C = alpha A B + beta C, M = N = K = 4096 (fp32)",
        "currently_unused/kernels/gemm/ (common.opencl, xgemm_part1-3.opencl)",
        {"m": 4096, "n": 4096, "k": 4096, "element_bytes": 4},
        {device: f"{_OLD}/gemm/{file}.json.gz" for device, file in _GEFORCE.items()},
        ("The RTX 3060 laptop's space holds 10000 of the 17956 configurations the other three GPUs hold.",),
        ("MDIMC", "NDIMC")),
    "pnpoly": HubKernel(
        "Point-in-polygon (crossing number): 20 000 000 points against a 600-vertex polygon",
        "currently_unused/kernels/pnpoly.cu",
        {"points": 20_000_000, "vertices": 600},
        {device: f"{_OLD}/pnpoly/{file}.json.gz" for device, file in _GEFORCE.items()}, (), ("block_size_x",)),
}


def build_corpus(hub: Path, out: Path, commit: str, kernels: list[str] | None = None,
                 extra: Mapping[str, Mapping[str, Path]] | None = None) -> dict[str, int]:
    """Write the corpus from a checkout of the hub at `commit` into `out`; return the rows of each kernel.

    `extra` adds columns measured elsewhere (kernel -> catalog device -> KernelTuner cache), such as a lent
    GPU's run of the hub's kernel (scripts/hub-tune.py): the manifest names each as not the hub's, with how
    much of the space it covers.
    """
    chosen = kernels or list(HUB_KERNELS)
    unknown = [k for k in [*chosen, *(extra or {})] if k not in HUB_KERNELS]
    if unknown:
        raise NotFound(f"no corpus kernel {', '.join(unknown)} (known: {', '.join(HUB_KERNELS)})")
    outside = [k for k in extra or {} if k not in chosen]
    if outside:
        raise CorpusError(f"extra caches for {', '.join(outside)}, which this build leaves out")
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"format": CORPUS_FORMAT, "version": CORPUS_VERSION,
                                "repository": {**HUB, "commit": commit}, "kernels": {}}
    if kernels and (out / "corpus.yaml").is_file():
        # Rebuilding some kernels keeps the others the manifest lists (their files are left as they are).
        earlier = load_yaml_file(out / "corpus.yaml")
        if isinstance(earlier, dict) and isinstance(earlier.get("kernels"), dict):
            manifest["kernels"] = {k: v for k, v in earlier["kernels"].items() if k not in chosen}
    rows = {}
    for name in chosen:
        spec = HUB_KERNELS[name]
        paths = {device: hub / cache for device, cache in spec.caches.items()}
        added = dict((extra or {}).get(name, {}))
        twice = sorted(set(added) & set(paths))
        if twice:
            raise CorpusError(f"{name}: the hub already has a cache for {', '.join(twice)}")
        paths.update(added)
        missing = [str(p) for p in paths.values() if not p.is_file()]
        if missing:
            raise NotFound(f"{name}: missing cache(s) in the hub checkout: {', '.join(missing)} (a shallow snapshot "
                           "may lack the largest files; fetch them with git lfs or from the DOI's archive)")
        parameters, configs, per_device = build_kernel(paths)
        rows[name] = write_kernel_csv(out / f"{name}.csv.gz", parameters, configs, per_device)
        sources: dict[str, dict[str, str]] = {
            device: {"path": cache, "recorded_name": read_recorded(paths[device]).device}
            for device, cache in spec.caches.items()}
        notes = list(spec.notes)
        for device, path in added.items():
            space = read_recorded(path)
            timed = sum(1 for key, row in per_device[device].items() if row[0] == "ok")
            sources[device] = {"path": path.as_posix(), "recorded_name": space.device,
                               "measured_by": "not the hub's: a KernelTuner cache given to the build (--cache)"
                               + (f", written by {space.tuner}" if space.tuner else "")}
            notes.append(f"{device}: not the hub's measurement ({path.as_posix()}, recorded on {space.device}); "
                         f"{len(per_device[device])} of the {len(configs)} configurations tried, {timed} timed. "
                         "Its best time is the best of those, an upper bound on the space's optimum.")
        manifest["kernels"][name] = {"title": spec.title, "source": spec.source, "problem": spec.problem,
                                     "work_group": list(spec.work_group), "sources": sources,
                                     "notes": notes}
    # The hub's order, whichever kernels this build rewrote, so that a partial rebuild leaves a small diff.
    order = {name: index for index, name in enumerate(HUB_KERNELS)}
    manifest["kernels"] = dict(sorted(manifest["kernels"].items(), key=lambda item: order.get(item[0], len(order))))
    write_text_atomic(out / "corpus.yaml", "# The GPU corpus: see perfcast.validation.corpus for the format.\n"
                      + yaml.safe_dump(manifest, sort_keys=False, width=110, allow_unicode=True))
    return rows
