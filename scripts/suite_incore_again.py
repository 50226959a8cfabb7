"""Read a PoCL suite campaign's code again for the in-core floor (docs/models.md §3.5), and score both readings.

    python scripts/suite_incore_again.py ARCHIVE.zip OUT.zip

The archive's kernels are compiled again by this machine's PoCL CPU device at the archive's sizes and read as
`perfcast campaign run` reads them now (`perfcast.campaign.incore_evidence.run_pocl_incore`: llvm-mca on the core
`modelled_core` picks). OUT.zip is the archive with that `incore` record in place of its own; nothing is timed
again, so run it on the machine and PoCL that made the archive. Prints the CPU each reading modelled, and each
kernel's in-core cycles a work-item and quantitative APE under both, with the MAPE.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path


def quantitative(path: Path) -> dict[str, float]:
    """Return each kernel's quantitative APE in the archive at `path`."""
    from perfcast.campaign.archive import Archive
    from perfcast.campaign.report import score_archive

    scores = score_archive(Archive.read(path))
    return {s.kernel: s.predictions["quantitative"].ape for s in scores.scores if "quantitative" in s.predictions}


def main() -> None:
    """Write OUT.zip with the code read again and print both readings side by side."""
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    from perfcast.campaign.archive import Archive
    from perfcast.campaign.incore_evidence import pocl_cpu_device, run_pocl_incore
    from perfcast.errors import PerfcastError

    device = pocl_cpu_device()
    if device is None:
        sys.exit("no PoCL CPU device here")
    try:
        manifest = Archive.read(source).manifest  # a clear error for a file that is not a campaign archive
        with zipfile.ZipFile(source) as archive:
            members = {name: archive.read(name) for name in archive.namelist()}
        sizes = {name: record["n"] for name, record in manifest["kernels"].items() if "median_s" in record}
        before = manifest.get("incore") or {}
        after = run_pocl_incore(sizes, *device)
    except PerfcastError as error:
        sys.exit(f"error: {error}")
    manifest["incore"] = after
    members["manifest.json"] = json.dumps(manifest, indent=1).encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as written:
        for name, data in members.items():
            written.writestr(name, data)
    old, new = quantitative(source), quantitative(out)
    print(f"in-core reading: {before.get('cpu')} (archive) -> {after['cpu']} (code built for {after.get('target')})")
    print(f"{'kernel':16s} {'cycles/item before':>20s} {'after':>14s} {'APE before':>11s} {'after':>8s}")
    for name in sizes:
        cycles = [(reading.get("kernels") or {}).get(name, {}).get("cycles_per_item") for reading in (before, after)]
        shown = [f"{c:.4g}" if c is not None else "-" for c in cycles]
        print(f"{name:16s} {shown[0]:>20s} {shown[1]:>14s} {old.get(name, float('nan')):>11.1%} "
              f"{new.get(name, float('nan')):>8.1%}")
    print(f"quantitative MAPE {sum(old.values()) / len(old):.1%} -> {sum(new.values()) / len(new):.1%}")


if __name__ == "__main__":
    main()
