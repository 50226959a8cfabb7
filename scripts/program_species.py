#!/usr/bin/env python3
"""The boat hull on third-party programs: the committed Rodinia and SHOC archives scored with species we name.

Each declaration below says which species a kernel is and why (read from the kernel's source in the checkouts
`scripts/third_party_programs.py` builds from). `perfcast campaign report --species` scores each archive again
(nothing is rerun: the archives hold the times, profiles and device), and this script writes one table of the
hull's ranges: in or out, how wide, where the measurement lies in it.

    python scripts/program_species.py [--programs docs/validation/programs/xeon-avx512] \
        [--out docs/validation/programs/xeon-avx512/with-species]
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from perfcast.campaign.archive import Archive  # noqa: E402
from perfcast.campaign.program_species import parse_program_species  # noqa: E402
from perfcast.campaign.report import score_archive, write_report  # noqa: E402
from perfcast.output_files import write_text_atomic  # noqa: E402
from perfcast.units import format_duration  # noqa: E402

# program -> [(KERNEL or group=SPECIES, why)]
DECLARED: dict[str, list[tuple[str, str]]] = {
    "hotspot": [("hotspot=512x512|neighb(3x3) ^ 512x512|element -> 512x512|element",
                 "Rodinia hotspot: each cell's new temperature from its 4 neighbours (a 3x3 window) and its power; "
                 "the 688x688 NDRange covers the 512x512 grid with the pyramid's halo")],
    "hotspot3D": [("hotspotOpt1=256x256x8|neighb(3x3x3) ^ 256x256x8|element -> 256x256x8|element",
                   "Rodinia hotspot3D: a 7-point stencil on the 256x256x8 grid (inside a 3x3x3 window) and the "
                   "power term; one work-item per (x, y) column, looping over z")],
    "nn": [("NearestNeighbor=N|element -> N|element",
            "Rodinia nn: each record's distance to the query point, one work-item per record")],
    "backprop": [("bpnn_adjust_weights_ocl=XxY|element ^ XxY|element -> XxY|element",
                  "Rodinia backprop: each weight updated from its delta and its previous change, one work-item per "
                  "weight (the layer-forward kernel reduces in local memory and is left without a species)")],
    "gemm": [(f"sgemm{order}[{g}x{g}/16x4]={n}x{n}|chunk(1x{n}) ^ {n}x{n}|chunk({b}) -> {n}x{n}|element",
              f"SHOC GEMM ({'A times B' if order == 'NN' else 'A times B transposed'}, "
              f"{'fp32' if n == 256 else 'fp64: SHOC names its double-precision kernels sgemm too'}): one n x n "
              f"product, n = {n} as the profile's {n}^3 FMAs show (16 outputs per work-item: a {g}x{g} NDRange)")
             for order in ("NN", "NT") for g, n in ((64, 256), (32, 128))
             for b in ([f"{n}x1"] if order == "NN" else [f"1x{n}"])],
}


def _median(values: list[float]) -> float:
    """Return the median of positive numbers (the geometric mean of the middle two for an even count)."""
    values = sorted(values)
    if not values:
        return math.nan  # no hull scored: the summary says nan rather than stop the script
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else math.sqrt(values[middle - 1] * values[middle])


def _range(hull: Any) -> str:
    """Return a range's ends and width, e.g. '614 µs – 19.6 ms (32.0x)'."""
    return (f"{format_duration(hull.lower, digits=3)} – {format_duration(hull.upper, digits=3)} "
            f"({hull.upper / hull.lower:.1f}x)")


def main() -> None:
    """Score each archive with its species, write the reports and the summary table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=Path, default=ROOT / "docs/validation/programs/xeon-avx512")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/validation/programs/xeon-avx512/with-species")
    parser.add_argument("--machine", default="the 2-core Intel Xeon VM, AVX-512, PoCL 3.1",
                        help="the machine the archives were timed on, in words")
    args = parser.parse_args()
    args.programs, args.out = args.programs.resolve(), args.out.resolve()
    rows: list[str] = []
    kept: dict[str, list[Any]] = {"compiler": [], "every": []}  # the hulls, with and without the compiler's report
    dates, evidence = set(), 0
    for program, declarations in DECLARED.items():
        (archive_path,) = sorted((args.programs / program).glob("*.zip"))
        species_args = [part for text, _ in declarations for part in ("--species", text)]
        command = ["perfcast", "campaign", "report", str(archive_path.relative_to(ROOT)), "-o",
                   str((args.out / program).relative_to(ROOT)), *species_args]
        species = parse_program_species([t for t, _ in declarations])
        # What that command does, in this process: the report, and the scores this table is made of.
        _, (result,) = write_report([archive_path], args.out / program, shlex.join(command), species)
        dates.add(result.archive.manifest["created"][:10])
        # The same archive with the compiler's report set aside: every floor of §2.4, as the spec states them.
        bare = Archive.read(archive_path)
        evidence += bare.manifest.get("vectorisation") is not None
        bare.manifest["vectorisation"] = None
        every = {score.kernel: score for score in score_archive(bare, species).scores}
        # A species' own '|' would end a Markdown table's cell: escaped.
        why = {text.partition("=")[0]: f"`{text.partition('=')[2]}`: {reason}".replace("|", "\\|")
               for text, reason in declarations}
        for score in result.scores:
            hull = score.predictions.get("boat hull")
            if hull is None or hull.lower is None or hull.upper is None:
                continue
            spec = every[score.kernel].predictions["boat hull"]
            kept["compiler"].append(hull)
            kept["every"].append(spec)
            kernel = score.kernel if score.kernel in why else score.kernel.partition("[")[0]
            width = hull.upper / hull.lower
            # On a log scale; a range about one point wide has no inside to place the time in.
            position = (f"{math.log(score.measured / hull.lower) / math.log(width):.2f}" if width >= 1.1
                        else f"{score.measured / hull.upper:.2f}x its upper end")
            floors = hull.detail.partition("floors by the compiler")[2].partition(": ")[2] or "no report"
            rows.append(f"| {program} | {score.kernel} | {format_duration(score.measured, digits=3)} | "
                        f"{_range(spec)} | {'yes' if spec.contained else '**no**'} | {_range(hull)} | "
                        f"{'yes' if hull.contained else '**no**'} | {position} | {hull.ape:.0%} | {floors} | "
                        f"{why.get(score.kernel) or why.get(kernel, '')} |")
            print(f"{program:10s} {score.kernel:28s} in={hull.contained} width={width:.1f}x "
                  f"(every floor: in={spec.contained} width={spec.upper / spec.lower:.1f}x)", flush=True)
        print(shlex.join(command))

    def summary(hulls: list[Any]) -> str:
        inside = sum(bool(h.contained) for h in hulls)
        narrow = sum(bool(h.contained) and h.upper <= 3 * h.lower for h in hulls)
        return (f"{inside} of {len(hulls)} inside, median width {_median([h.upper / h.lower for h in hulls]):.1f}x, "
                f"{narrow} inside a range at most 3x wide")

    lines = [
        "# The boat hull on programs we did not write, with the species we named",
        "",
        f"Regenerated by `python scripts/program_species.py --programs {args.programs.relative_to(ROOT)} --out "
        f"{args.out.relative_to(ROOT)}`: the committed Rodinia and SHOC archives of that folder (timed on "
        f"{args.machine}, {', '.join(sorted(dates))}), scored again by `perfcast campaign report --species` with "
        "the species each kernel's source shows (the reasons below). Nothing is run again: each archive holds its "
        "times, profiles and device profile.",
        "",
        f"- **With the compiler's report** (what `campaign report` gives): {summary(kept['compiler'])}.",
        f"- **Every floor of §2.4** (the same archives with their report set aside): {summary(kept['every'])}.",
        "",
        f"{evidence} of {len(DECLARED)} archives hold PoCL's vectoriser report (`campaign run` records it since "
        "2026-11-26: one more run of the first profile command with `POCL_VECTORIZER_REMARKS=1`). Its lanes set "
        "the no-SIMD floor to (L / lanes)·c0, and its threads rule out the single-thread floors where the launch "
        "has a work-group for each thread. The lower end (full SIMD on every core) is the same in both columns. "
        "A wide range contains most times, so containment says little about accuracy: *where* the time lies "
        "(0 = at the lower end, 1 = at the upper, on a log scale, in the compiler's range) and the middle's APE "
        "say more.",
        "",
        "| program | kernel group | measured | every floor | in | the compiler's floors | in | where in the range | "
        "APE of the middle | the compiler's report | species, and why |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Each program's report (with the other models beside): `PROGRAM/report.md` in this folder.",
        "",
    ]
    write_text_atomic(args.out / "README.md", "\n".join(lines))
    print(f"wrote {args.out / 'README.md'}")


if __name__ == "__main__":
    main()
