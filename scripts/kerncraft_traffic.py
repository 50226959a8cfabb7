"""Cross-check perfcast's simulated memory traffic against kerncraft (RRZE-HPC).

perfcast side: trace the campaign kernels triad and stencil7 under Oclgrind and simulate their whole
launch through a one-core L1/L2/L3 hierarchy with pycachesim. kerncraft side: the same loops written as
kerncraft C kernels on a machine file with the same hierarchy, run through ECMData with the
layer-condition (LC) and cache-simulation (SIM) predictors. Prints bytes per inner iteration per
level interface and the ratio perfcast / kerncraft.

Run with perfcast's venv; kerncraft lives in its own venv:
    python3 -m venv /tmp/kc && /tmp/kc/bin/pip install kerncraft
    .venv/bin/python scripts/kerncraft_traffic.py [--kerncraft /tmp/kc/bin/kerncraft]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from perfcast.models.caches import CacheHierarchy, CacheLevel
from perfcast.profiles.capture import TrafficRequest, capture

LINE = 64
TRIAD_N = 1048576
STENCIL_N = 64
# kerncraft predicts steady state (the loop run again and again, caches warm); at the sizes above every
# array fits in L3, so it is also run at sizes whose data exceed L3 to get its streaming (cold) figures.
TRIAD_BIG = 8388608
STENCIL_BIG = 256

# (size B, ways) per level; 64 B lines, write-back, write-allocate, one core.
LEVELS = (("L1", 49152, 12), ("L2", 2097152, 16), ("L3", 33554432, 16))

TRIAD_C = """float a[N], b[N], c[N];
float s;

for(int i=0; i<N; ++i)
    a[i] = b[i] + s * c[i];
"""

# Interior points only: suite.cl copies the boundary, which a kerncraft loop nest cannot express.
STENCIL_C = """float out[N][N][N];
float in[N][N][N];
float c0, c1;

for(int z=1; z<N-1; ++z)
    for(int y=1; y<N-1; ++y)
        for(int x=1; x<N-1; ++x)
            out[z][y][x] = c0 * in[z][y][x] + c1 * (in[z][y][x-1] + in[z][y][x+1]
                         + in[z][y-1][x] + in[z][y+1][x] + in[z-1][y][x] + in[z+1][y][x]);
"""


def _cache_block(name: str, size: int, ways: int, last: bool) -> str:
    sets = size // (LINE * ways)
    nxt = {"L1": "L2", "L2": "L3"}.get(name)
    links = "" if last else f", load_from: {nxt}, store_to: {nxt}"
    bw = {"L1": "[architecture code analyzer, [2D, 3D]]", "L2": "[64 B/cy, half-duplex]", "L3": "[32 B/cy, half-duplex]"}[name]
    return (
        f"- level: {name}\n"
        f"  cache per group: {{sets: {sets}, ways: {ways}, cl_size: {LINE}, replacement_policy: LRU, "
        f"write_allocate: true, write_back: true{links}}}\n"
        f"  size per group: {size / 1024:.2f} kB\n"
        f"  groups: 1\n  cores per group: 1\n  threads per group: 1\n"
        f"  upstream throughput: {bw}\n  transfers overlap: false\n"
    )


def machine_yaml() -> str:
    """Return a one-core kerncraft machine description; only its memory hierarchy matters for ECMData."""
    head = """kerncraft version: 0.8.18
model name: perfcast cpu1 (one core, L1 48 KiB / L2 2 MiB / L3 32 MiB)
model type: x86 one core
clock: 2.4 GHz
sockets: 1
cores per socket: 1
threads per core: 1
NUMA domains per socket: 1
cores per NUMA domain: 1
transparent hugepage: always
in-core model: !!omap
  - OSACA: SKX
isa: x86
FLOPs per cycle:
  SP: {total: 64, FMA: 64, ADD: 32, MUL: 32}
  DP: {total: 32, FMA: 32, ADD: 16, MUL: 16}
compiler: !!omap
- gcc: -O3 -march=native
overlapping model:
  ports:
    OSACA: ['0', 0DV, '1', '2', '3', '4', '5', '6', '7']
  performance counter metric: T_OL
non-overlapping model:
  ports:
    OSACA: [2D, 3D]
  performance counter metric: T_nOL
cacheline size: 64 B
memory hierarchy:
"""
    body = "".join(_cache_block(n, s, w, i == len(LEVELS) - 1) for i, (n, s, w) in enumerate(LEVELS))
    tail = """- level: MEM
  cores per group: 1
  threads per group: 1
  upstream throughput: [16 B/cy, half-duplex]
  transfers overlap: false
benchmarks:
  kernels: {}
  measurements: {}
"""
    return head + body + tail


def perfcast_side(work: Path) -> dict[str, dict[str, Any]]:
    """Trace and simulate both kernels with perfcast; bytes per work-item per level interface."""
    hierarchy = CacheHierarchy(
        "cpu1", tuple(CacheLevel(n, s, LINE, w, 1) for n, s, w in LEVELS), lanes=16, interleave_warps=False, local_in_cache=True
    )
    spec = f"triad={TRIAD_N}@full,stencil7={STENCIL_N}@full"
    profile = capture(
        "oclgrind",
        [sys.executable, "-m", "perfcast.campaign.oclgrind_driver", "1", spec],
        work / "p.yaml",
        traffic=TrafficRequest(hierarchy),
    ).profile
    points = {"triad": TRIAD_N, "stencil7": STENCIL_N**3}  # one work-item per point
    out = {}
    for k in profile.kernels:
        m, n = k.metrics, points[k.name]
        out[k.name] = {
            "L1-L2": m["l2_bytes"] / n,
            "L2-L3": m["l3_bytes"] / n,
            "L3-MEM": m["dram_bytes"] / n,
            "(WA)": m["dram_write_allocate_bytes"] / n,
            "_interior": tuple(m[f] / (STENCIL_N - 2) ** 3 for f in ("l2_bytes", "l3_bytes", "dram_bytes")),
        }
    return out


def kerncraft_side(exe: str, work: Path, kernel: str, source: str, n: int, predictor: str) -> dict[str, float]:
    """Run kerncraft ECMData on one kernel; bytes per iteration per level interface."""
    (work / f"{kernel}.c").write_text(source)
    js = work / f"{kernel}.{predictor}.json"
    subprocess.run(
        [
            exe,
            "-p",
            "ECMData",
            "-m",
            str(work / "machine.yml"),
            str(work / f"{kernel}.c"),
            "-D",
            "N",
            str(n),
            "--cache-predictor",
            predictor,
            "--json",
            str(js),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    res = next(iter(json.loads(js.read_text()).values()))
    ipc = float(res["iterations per cacheline"])
    # misses[i] / evicts[i]: cache lines loaded into / written back out of level i, per `ipc` iterations
    return {
        iface: (float(res["misses"][i]) + float(res["evicts"][i])) * LINE / ipc
        for i, iface in enumerate(("L1-L2", "L2-L3", "L3-MEM"))
    }


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "n/a (0)"


def main() -> None:
    """Print the comparison table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kerncraft", default="/tmp/kc/bin/kerncraft", help="kerncraft executable")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kc-traffic-") as tmp:
        work = Path(tmp)
        (work / "machine.yml").write_text(machine_yaml())
        pc = perfcast_side(work)
        sizes = {"triad": (TRIAD_C, TRIAD_N, TRIAD_BIG), "stencil7": (STENCIL_C, STENCIL_N, STENCIL_BIG)}
        kc = {
            (k, p, big): kerncraft_side(args.kerncraft, work, k, src, nbig if big else n, p)
            for k, (src, n, nbig) in sizes.items()
            for p in ("LC", "SIM")
            for big in (False, True)
        }
    print(f"kerncraft sizes: triad N={TRIAD_N} (big {TRIAD_BIG}), stencil7 N={STENCIL_N} (big {STENCIL_BIG})")
    print(
        "| kernel | interface | perfcast B/it | kerncraft LC | kerncraft SIM | perfcast/LC | perfcast/SIM "
        "| LC big | SIM big | perfcast/LC big |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k in sizes:
        for iface in ("L1-L2", "L2-L3", "L3-MEM"):
            p = pc[k][iface]
            lc, sim, lcb, simb = (kc[(k, q, big)][iface] for big in (False, True) for q in ("LC", "SIM"))
            print(
                f"| {k} | {iface} | {p:.2f} | {lc:.2f} | {sim:.2f} | {_ratio(p, lc)} | {_ratio(p, sim)} "
                f"| {lcb:.2f} | {simb:.2f} | {_ratio(p, lcb)} |"
            )
    for k in pc:
        print(f"{k}: perfcast write-allocate reads are {pc[k]['(WA)']:.2f} B/it of its L3-MEM bytes")
    print(
        "stencil7: perfcast per interior point (62^3) L1-L2 / L2-L3 / L3-MEM: "
        + " / ".join(f"{v:.2f}" for v in pc["stencil7"]["_interior"])
    )


if __name__ == "__main__":
    main()
