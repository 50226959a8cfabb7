"""Measure an OpenCL CPU device's first-touch rate (docs/models.md §3.7) and write it as a device-profile figure.

    python scripts/first_touch_figure.py OUT.yaml [--device SELECTOR] [--rounds N] [--peer]

The figure `perfcast bench` (opencl backend) measures since 2026-11-27, alone: rounds of a fresh 64 MiB buffer,
`touch_pages` launched on it three times (one store a 4 KiB page; the first launch waits for the pages to be
mapped), page/s = the first launch's page faults / (first - the faster of the other two). OUT.yaml holds
`first_touches` as a device profile writes it, for profiles measured before the bench had the step
(`scripts/program_incore.py --figures OUT.yaml`, `scripts/rescore_quantitative_variants.py touches=OUT.yaml`).
`--peer`: alternate each round with `scripts/first_touch.c` (one thread, a fresh mapping written one store a
line) and print both.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

import yaml

from perfcast.bench.opencl import OpenClBackend
from perfcast.devices.schema import COUNTED_RATES, Figure
from perfcast.errors import BackendUnavailable

PEER_SOURCE = Path(__file__).with_name("first_touch.c")


def _peer_rates(mib: int) -> list[float]:
    """Return first_touch.c's pages per second (first pass less the second), one thread, one run."""
    with tempfile.TemporaryDirectory() as folder:
        binary = Path(folder) / "first_touch"
        subprocess.run(["gcc", "-O2", str(PEER_SOURCE), "-o", str(binary)], check=True)
        out = subprocess.run([str(binary), str(mib), "1"], check=True, capture_output=True, text=True).stdout
    rates = []
    # "64.0 MiB: first touch 80.12 ms (1.22 us a page), pages mapped 9.87 ms" -> pages / (first - mapped)
    for found in re.finditer(r"first touch ([\d.]+) ms .*pages mapped ([\d.]+) ms", out):
        first, again = float(found[1]) * 1e-3, float(found[2]) * 1e-3
        if first > again:
            rates.append(mib * 256 / (first - again))
    return rates


def main() -> None:
    """Measure and write the figure; with --peer, print the peer's figure beside it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--device", default=None, help="opencl: PLATFORM:DEVICE index or a name part")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--peer", action="store_true")
    args = parser.parse_args()
    try:
        backend = OpenClBackend.open(args.device, args.rounds)
    except BackendUnavailable as error:
        raise SystemExit(str(error)) from None
    if not backend.is_cpu:
        raise SystemExit("the first-touch rate is a CPU device's: this OpenCL device is not a CPU")
    probe = backend.probe()
    samples, peers = [], []
    for _ in range(3 if args.peer else 1):
        sample = probe.first_touches()
        if sample is None:
            raise SystemExit("a fresh buffer's pages cost nothing measurable on this device: no figure")
        samples.append(sample)
        if args.peer:
            peers += _peer_rates(64)
    best = max(samples, key=lambda s: s.value)
    rate = next(r for r in COUNTED_RATES if r.name == "first_touches")
    platform = backend.device.platform
    tool = f"perfcast bench (opencl backend, {platform.name.strip()} {platform.version.strip()}), {rate.method}"
    figure = Figure.measured(best.value, tool, repetitions=best.repetitions, spread=best.spread).fields()
    args.out.write_text(yaml.safe_dump({"first_touches": figure}, sort_keys=False))
    print("perfcast (every core): " + ", ".join(f"{s.value:.4g} page/s ({1e6 / s.value:.3g} µs a page, spread "
                                                f"{s.spread:.0%})" for s in samples))
    if peers:
        print(f"first_touch.c (one thread): median {statistics.median(peers):.4g} page/s "
              f"({1e6 / statistics.median(peers):.3g} µs a page) over {len(peers)} runs")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
