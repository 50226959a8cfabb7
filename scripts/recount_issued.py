"""Give committed campaign archives `inst_alu` (or `barriers`, `barrier_values`), read from their raw Oclgrind output.

`inst_alu` is the instructions a CPU core's pipes issue, `barriers` the work-group barriers every work-item crosses,
`barrier_values` the values live across them over every crossing (from the IR beside the histograms;
docs/metrics.md); an archive profiled before that metric then carries it as a new profile would.

    python scripts/recount_issued.py [--metric inst_alu|barriers|barrier_values] OUT_DIR ARCHIVE.zip ...

Each archive keeps Oclgrind's own output (`raw/**/oclgrind*.txt`, with the kernel's IR beside it). Every launch in
it is read again by perfcast's reader, which now counts the metric beside `inst_warp`; each kernel's share,
METRIC / (inst_warp x 32) over all its profiled launches, is applied to each of the archive profile's groups of
that kernel, the one the manifest's record of the group names, as the scoring reads it (a group's counts are its
launches' counts scaled to the timed size, and the share does not change with the scaling). A kernel built twice
under one name (SHOC's two precisions) takes the share of both builds together: the histograms do not say which
build a launch ran. The archive is written again, unchanged but for `profile.yaml`, as OUT_DIR/PARENT/NAME.zip
(PARENT: the archive's folder), and each kernel's share is printed.
Score them side by side with `scripts/rescore_quantitative_variants.py committed` and `issue-alu` (§3.3's floor
at these instructions), or `no-regions` (§3.9 without its barriers).
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from collections import defaultdict
from pathlib import Path

import yaml

from perfcast.campaign.archive import copy_with
from perfcast.campaign.score import group_kernel
from perfcast.profiles.oclgrind import read_oclgrind_launches

METRICS = ("inst_alu", "barriers", "barrier_values")


def issued_shares(archive: zipfile.ZipFile, metric: str = "inst_alu") -> dict[str, float]:
    """Return `metric` / (inst_warp x 32) per kernel over every launch of the archive's raw Oclgrind output."""
    names = archive.namelist()
    issued: dict[str, float] = defaultdict(float)
    counted: dict[str, float] = defaultdict(float)
    for raw in (n for n in names if re.search(r"(^|/)oclgrind[^/]*\.txt$", n)):
        # The IR Oclgrind dumped for that run: raw/oclgrind-1.oclgrind.ir/ (suite), raw/profile-N/ir/ (programs).
        base = raw.removesuffix(".txt")
        folders = (base + ".ir/", raw.rpartition("/")[0] + "/ir/")
        ir = [archive.read(n).decode("utf-8", "replace") for n in names if n.endswith(".ll") and n.startswith(folders)]
        for launch in read_oclgrind_launches(archive.read(raw).decode("utf-8", "replace"), ir=ir):
            # barrier_values only where the IR gave them, or where there is no barrier: a launch whose kernel's IR
            # is missing says nothing of its values, and a kernel none of whose launches does gets no metric.
            if metric not in launch.metrics and launch.metrics.get("barriers", 0.0) > 0:
                continue
            issued[launch.name] += launch.metrics.get(metric, 0.0)
            counted[launch.name] += 32 * launch.metrics["inst_warp"]
    return {name: issued[name] / counted[name] for name in counted if counted[name] > 0}


def recount(path: Path, out: Path, metric: str = "inst_alu") -> Path:
    """Write `path` again under `out` with `metric` in each group of its profile; return the new archive's path."""
    target = out / path.parent.name / path.name
    if target.resolve() == path.resolve():
        raise OSError(f"{target} is the archive itself: give another OUT_DIR")
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path) as archive:
        shares = issued_shares(archive, metric)
        profile = yaml.safe_load(archive.read("profile.yaml"))
        groups = json.loads(archive.read("manifest.json")).get("kernels", {})
        for kernel in profile.get("kernels", []):
            share = shares.get(group_kernel(kernel["name"], groups.get(kernel["name"], {})))
            metrics = kernel.get("metrics", {})
            if share is not None and "inst_warp" in metrics:
                metrics[metric] = share * 32 * metrics["inst_warp"]
        copy_with(archive, target, {"profile.yaml": yaml.safe_dump(profile, sort_keys=False, allow_unicode=True).encode()})
    print(f"{path}: {metric} " + (", ".join(f"{name} {share:.3g}" for name, share in sorted(shares.items()))
                         or "no Oclgrind histogram in it (written unchanged)"))
    return target


def main() -> None:
    """Recount each archive named."""
    arguments, metric = sys.argv[1:], "inst_alu"
    if arguments[:1] == ["--metric"] and len(arguments) > 1:
        metric, arguments = arguments[1], arguments[2:]
    if metric not in METRICS:
        sys.exit(f"--metric {metric}: not one of {', '.join(METRICS)}")
    if len(arguments) < 2 or any(argument.startswith("-") for argument in arguments):
        sys.exit(__doc__)
    out = Path(arguments[0])
    for name in arguments[1:]:
        try:
            recount(Path(name), out, metric)
        except (OSError, zipfile.BadZipFile, KeyError) as error:  # KeyError: a zip without profile.yaml/manifest
            sys.exit(f"{name}: not a campaign archive perfcast wrote ({error})")


if __name__ == "__main__":
    main()
