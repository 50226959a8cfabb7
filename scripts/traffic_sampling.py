"""How far the campaign's sampled traffic lies from a trace of the whole launch, per kernel and level.

python scripts/traffic_sampling.py DEVICE.yaml [KERNEL=N ...]

Each kernel of the suite runs under Oclgrind twice at a small size: its whole launch traced, and the sample the
campaign traces (about TRAFFIC_ACCESSES accesses of work-groups from the middle of the problem, scaled to the
launch). Both are simulated through DEVICE's caches; the table gives the bytes per level and the ratio
sampled / full. Sizes default to each kernel's Oclgrind profile size, reduced where a whole trace would be long.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from perfcast.campaign.run import TRAFFIC_ACCESSES, _traced_groups
from perfcast.devices.cache_view import cache_hierarchy
from perfcast.devices.catalog import load_device_file
from perfcast.kernels.campaign import KERNELS
from perfcast.profiles.capture import TrafficRequest, capture

# Sizes whose whole launch is cheap to trace (a few million accesses at most).
SMALL = {"triad": 1 << 20, "stencil7": 96, "sor_redblack": 1024, "sgemm_naive": 128, "sgemm_tiled": 128,
         "histogram256": 1 << 21, "reduce_sum": 1 << 21, "transcendental": 1 << 19, "nbody": 2048,
         "spmv_csr": 1 << 17, "hash_int": 1 << 18, "horner_fp64": 1 << 19}
METRICS = ("l1_bytes", "l2_bytes", "l3_bytes", "dram_bytes")


def main(argv: list[str]) -> int:
    """Print, per kernel, the bytes per level of the whole launch and of the campaign's sample."""
    device = load_device_file(argv[0])
    hierarchy = cache_hierarchy(device)
    sizes = dict(SMALL)
    for item in argv[1:]:
        name, n = item.split("=")
        sizes[name] = int(n)
    kernels = [k for k in KERNELS if k.name in sizes]
    work = Path(tempfile.mkdtemp(prefix="perfcast-sampling-"))
    totals = {k.name: k.launch(sizes[k.name]).items // k.profile_launch(sizes[k.name], 1).items for k in kernels}
    full_list = ",".join(f"{k.name}={sizes[k.name]}@full" for k in kernels)
    driver = [sys.executable, "-m", "perfcast.campaign.oclgrind_driver", "1"]
    full = capture("oclgrind", [*driver, full_list], work / "full.yaml", traffic=TrafficRequest(hierarchy)).profile
    groups = {}
    for k in kernels:
        per_item = full.kernel(k.name).metrics["ldst"] / k.launch(sizes[k.name]).items
        groups[k.name] = _traced_groups(k, sizes[k.name], per_item, hierarchy.cores)
    sample_list = ",".join(f"{k.name}={sizes[k.name]}@{groups[k.name]}" for k in kernels)
    sampled = capture("oclgrind", [*driver, sample_list], work / "sampled.yaml",
                      traffic=TrafficRequest(hierarchy, total_groups=totals)).profile
    print(f"device: {device.name}; levels: "
          + ", ".join(f"{lv.name} {lv.size} B x {lv.instances}" for lv in hierarchy.levels)
          + f"; sample: about {TRAFFIC_ACCESSES:.0e} accesses of work-groups")
    print("| kernel | n | traced | " + " | ".join(f"{m} full | sampled / full" for m in METRICS) + " |")
    print("|---|---|---|" + "---|---|" * len(METRICS))
    for k in kernels:
        a, b = full.kernel(k.name).metrics, sampled.kernel(k.name).metrics
        cells = []
        for m in METRICS:
            if m not in a:
                cells += ["—", "—"]
                continue
            ratio = b.get(m, 0.0) / a[m] if a[m] else float("nan")
            cells += [f"{a[m]:.4g}", f"{ratio:.3f}"]
        print(f"| {k.name} | {sizes[k.name]} | {groups[k.name]} of {totals[k.name]} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
