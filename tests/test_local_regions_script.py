"""scripts/local_regions.py: the programs' local accesses per barrier region, and the probe, run for real."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "scripts" / "local_regions.py"
LAUNCHES = ROOT / "docs" / "validation" / "programs" / "zen3-avx2-launches"


def test_oclgrind_counts_give_each_kernel_s_accesses_and_barriers_per_work_item(load_script):
    script = load_script("local_regions")
    lud = script.local_kernels(LAUNCHES / "lud" / "lud.zip")
    # lud_diagonal's first launch, by hand from its raw counts: 16 work-items (16 ret), 4200 local loads and 1616
    # local stores, 496 barrier calls
    assert lud["lud_diagonal"][0] == pytest.approx(((4200 + 1616) / 16, 496 / 16))
    accesses, barriers = lud["lud_perimeter"][0]
    assert barriers == 2 and accesses / (barriers + 1) > 100  # its loops run inside one region
    nw = script.local_kernels(LAUNCHES / "nw" / "nw.zip")
    accesses, barriers = nw["nw_kernel1"][0]
    assert accesses / (barriers + 1) < 4  # a few accesses between two barriers


def test_report_rows_give_predicted_over_measured(load_script):
    ratios = load_script("local_regions").report_ratios(LAUNCHES / "hotspot" / "report.md")
    # hotspot (x1000): 6.2 ms measured, 3.6 ms predicted (report.md's table)
    assert ratios["hotspot"] == [pytest.approx(3.6 / 6.2)]


def test_probe_runs_on_pocl(opencl_device):
    done = subprocess.run([sys.executable, str(SCRIPT), "probe", "--rounds", "1"], capture_output=True, text=True,
                          timeout=300)
    if "no PoCL platform" in done.stderr:
        pytest.skip("the OpenCL device is not PoCL's")
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| chained") or line.startswith("| indep")]
    assert len(rows) == 12 and all("ms" in row for row in rows)
    # The crossings: one and eight values live, at 1, 64 and 256 barriers, a cost for each count past the first.
    crossings = [line.split("|")[1:-1] for line in done.stdout.splitlines() if line.startswith(("| 1 |", "| 8 |"))]
    assert [(live.strip(), count.strip()) for live, count, *_ in crossings] == [
        (live, count) for live in ("1", "8") for count in ("1", "64", "256")]
    assert [cells[-1].strip() == "—" for cells in crossings] == [True, False, False] * 2
