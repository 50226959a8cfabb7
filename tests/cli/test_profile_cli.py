"""`perfcast profile` and `perfcast predict` through typer's runner."""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.cli import app

DATA = Path(__file__).parent.parent / "data" / "profiles"
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def test_profile_from_a_file_then_predict(tmp_path):
    out = tmp_path / "p.yaml"
    result = run("profile", "--from", DATA / "ncu-raw-constructed.csv", "-o", out)
    assert result.exit_code == 0, result.output
    assert "triad" in result.stdout and "left out launch ID 3" in result.stdout
    result = run("predict", out, "-d", "v100", "-d", "h100-sxm5", "-o", tmp_path / "q.png")
    assert result.exit_code == 0, result.output
    assert "memory bound (O_krn <= O_dev)" in result.stdout
    assert (tmp_path / "q-triad.png").exists() and (tmp_path / "q-dgemm_naive.png").exists()


def test_predict_json_one_kernel():
    result = run("predict", DATA / "nvprof-metrics-constructed.csv", "-d", "v100", "-k", "saxpy", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    p = data["kernels"][0]["predictions"]["v100"]
    assert p["bound"] == "memory"
    assert p["time_s"] == pytest.approx(32 * 2 * (4_194_402 + 2_097_152) / 900e9)
    assert data["devices"]["v100"]["B_mem"].startswith("900 GB/s")


def test_predict_skips_kernels_without_metrics_but_fails_when_asked_for_one():
    result = run("predict", DATA / "nvprof-metrics-constructed.csv", "-d", "v100")
    assert result.exit_code == 0 and "skipped init" in result.output
    result = run("predict", DATA / "nvprof-metrics-constructed.csv", "-d", "v100", "-k", "init")
    assert result.exit_code == 2 and "kernel 'init(float*, int)' lacks the metric(s)" in result.output
    assert "Traceback" not in result.output


def test_predict_errors_are_clear():
    assert "no kernel 'nope'" in run("predict", DATA / "nvprof-metrics-constructed.csv", "-d", "v100", "-k", "nope").output
    result = run("predict", DATA / "ncu-details-a100-bert.csv", "-d", "v100")
    assert result.exit_code == 2 and "no kernel of the profile has the metrics" in result.output
    result = run("predict", DATA / "nvprof-metrics-constructed.csv", "-d", "core-i7-930")
    assert result.exit_code == 2 and "no int32 fma peak" in result.output


def test_profile_needs_a_program_or_a_file(tmp_path):
    result = run("profile", "-o", tmp_path / "p.yaml")
    assert result.exit_code != 0 and "give the program to profile" in result.output
    result = run("profile", "-o", tmp_path / "p.txt", "--from", DATA / "ncu-raw-constructed.csv")
    assert result.exit_code == 2 and ".yaml" in result.output


@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind not installed")
def test_profile_runs_oclgrind(tmp_path):
    out = tmp_path / "ocl.yaml"
    result = run("profile", "--tool", "oclgrind", "-o", out, "--", sys.executable, DATA / "opencl_program.py", "64")
    assert result.exit_code == 0, result.output
    assert "dexp" in result.stdout and (tmp_path / "ocl.oclgrind.txt").exists()
    result = run("predict", out, "-d", "r9-nano", "--json")
    kinds = {k["kernel"]: k["predictions"]["r9-nano"]["k_type"] for k in json.loads(result.stdout)["kernels"]}
    assert kinds == {"saxpy": "fp32", "dexp": "fp64", "hash": "int"}


def test_profile_keeps_the_kernels_asked_for(tmp_path):
    out = tmp_path / "p.yaml"
    result = run("profile", "--from", DATA / "ncu-raw-constructed.csv", "-o", out, "-k", "dgemm_naive")
    assert result.exit_code == 0, result.output
    from perfcast.profiles.profile import load_profile

    assert [k.name for k in load_profile(out).kernels] == ["dgemm_naive(int, const double*, const double*, double*)"]
    result = run("profile", "--from", DATA / "ncu-raw-constructed.csv", "-o", tmp_path / "q.yaml", "-k", "sgemm")
    assert result.exit_code == 2 and "no kernel 'sgemm'" in result.output and "it has: triad" in result.output
    assert not (tmp_path / "q.yaml").exists()


FAKE_NCU = """#!{python}
import shutil, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.1.0")
    sys.exit(0)
log = args[args.index("--log-file") + 1]
page = "--page" in args and args[args.index("--page") + 1] == "source"
shutil.copyfile({source!r} if page else {raw!r}, log)
with open(log + ".args", "w") as handle:
    handle.write("\\n".join(args))
"""


def test_profile_with_sass_counts_runs_ncu_twice(tmp_path, monkeypatch):
    """The metrics run, then the source-page run (SourceCounters, SASS), both around the same program."""
    data = Path(__file__).parent.parent / "data"
    (tmp_path / "bin").mkdir()
    ncu = tmp_path / "bin" / "ncu"
    ncu.write_text(FAKE_NCU.format(python=sys.executable, source=str(data / "ncu" / "source-page-het.csv"),
                                   raw=str(data / "profiles" / "ncu-raw-constructed.csv")))
    ncu.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    result = run("profile", "--tool", "ncu", "--sass-counts", "-o", str(tmp_path / "app.yaml"), "--", "./app", "7")
    assert result.exit_code == 0, result.output
    page = tmp_path / "app.ncu-source.csv"
    args = Path(str(page) + ".args").read_text().splitlines()
    assert args[:6] == ["--section", "SourceCounters", "--csv", "--page", "source", "--print-source"]
    assert args[-2:] == ["./app", "7"]
    assert "--sass-counts" in result.stderr and (tmp_path / "app.yaml").exists()
    assert run("profile", "--tool", "oclgrind", "--sass-counts", "--", "./app").exit_code == 2
    assert run("profile", "--sass-counts", "--from", str(data / "profiles" / "ncu-raw-constructed.csv"),
               "-o", str(tmp_path / "b.yaml")).exit_code == 2


def test_predict_applies_the_floors_where_profile_and_device_give_them(tmp_path):
    """§3.1 and §3.2 in `perfcast predict`: the division cost wherever the device measured divisions, the latency
    floor only on the device whose caches the scattered loads were simulated through."""
    import yaml

    from perfcast.profiles.profile import KernelProfile, ProfileSet, ProfileSource

    measured = Path(__file__).parents[2] / "docs" / "validation" / "programs" / "xeon-avx512-latency" / "device.yaml"
    data = yaml.safe_load(measured.read_text())
    data["int_divisions"] = {"value": 1e8, "source": "measured", "tool": "test", "date": "2026-11-26"}
    own = tmp_path / "own.yaml"
    own.write_text(yaml.safe_dump(data))
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({**data, "name": "another-host"}))
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 1000.0, "inst_warp": 10000 / 32, "fp32": 8000.0,
               "fp64": 0.0, "int": 1e6, "dram_read": 1.0, "dram_write": 1.0, "div_int": 1e6,
               "scattered_l1": 0.0, "scattered_dram": 1e3}
    kernel = KernelProfile("index", 1, metrics, bytes_from=f"simulated for {data['name']}")
    profile = tmp_path / "p.yaml"
    profile.write_text(yaml.safe_dump(ProfileSet(ProfileSource("Oclgrind"), (kernel,)).to_mapping()))
    result = run("predict", profile, "-d", own, "-d", other, "--json")
    assert result.exit_code == 0, result.output
    predictions = json.loads(result.stdout)["kernels"][0]["predictions"]
    mine, theirs = predictions[data["name"]], predictions["another-host"]
    assert mine["bound"] == theirs["bound"] == "division" and mine["time_s"] == pytest.approx(1e-2, rel=0.01)
    assert mine["division_time_s"] == pytest.approx(1e-2)
    rate = data["random_loads"]["DRAM"]["value"]
    assert mine["latency_floor_s"] == pytest.approx(1e3 / rate) and theirs["latency_floor_s"] is None
    assert "no latency floor: the scattered loads were simulated for " in theirs["explanation"]
    text = run("predict", profile, "-d", own)
    assert text.exit_code == 0 and "division bound" in text.stdout and "1e+06 integer divisions" in text.stdout


def test_predict_floors_a_kernel_named_scalar_and_says_so_for_the_others(tmp_path):
    """§3.3 in `perfcast predict`: --scalar KERNEL floors it at the device's scalar instructions; an unknown name fails."""
    import yaml

    from perfcast.profiles.profile import KernelProfile, ProfileSet, ProfileSource

    measured = Path(__file__).parents[2] / "docs" / "validation" / "programs" / "xeon-avx512-latency" / "device.yaml"
    data = yaml.safe_load(measured.read_text())
    data["scalar_instructions"] = {"value": 1e9, "source": "measured", "tool": "test", "date": "2026-11-26"}
    device = tmp_path / "own.yaml"
    device.write_text(yaml.safe_dump(data))
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 1000.0, "inst_warp": 1e6 / 32, "fp32": 8000.0,
               "fp64": 0.0, "int": 9e5, "dram_read": 1.0, "dram_write": 1.0, "elementary_fp32": 0.0,
               "elementary_fp64": 0.0}
    kernels = (KernelProfile("chain", 1, metrics), KernelProfile("wide", 1, metrics))
    profile = tmp_path / "p.yaml"
    profile.write_text(yaml.safe_dump(ProfileSet(ProfileSource("Oclgrind"), kernels).to_mapping()))
    result = run("predict", profile, "-d", device, "--scalar", "chain", "--json")
    assert result.exit_code == 0, result.output
    chain, wide = (k["predictions"][data["name"]] for k in json.loads(result.stdout)["kernels"])
    assert chain["bound"] == "issue" and chain["issue_floor_s"] == pytest.approx(1e-3)
    assert chain["time_s"] == pytest.approx(1e-3)
    assert wide["issue_floor_s"] is None and "no compiler's report says whether" in wide["explanation"]
    assert run("predict", profile, "-d", device, "--scalar", "nope").exit_code != 0
    # A unique part of a name names the kernel, as for --kernel; the floor then applies to it.
    partial = json.loads(run("predict", profile, "-d", device, "--scalar", "cha", "--json").stdout)
    assert partial["kernels"][0]["predictions"][data["name"]]["bound"] == "issue"


def test_predict_lists_a_device_s_launch_figures_as_unused(tmp_path):
    from perfcast.devices.catalog import catalog, save_device
    from perfcast.devices.schema import ComputeFigure

    figure = ComputeFigure.measured(8.8e5, "perfcast bench (test), empty launches", "2026-11-29")
    groups = ComputeFigure.measured(1.2e8, "perfcast bench (test), empty work-groups", "2026-11-29")
    device = save_device(catalog()["v100"].model_copy(update={"name": "v100-launches", "launches": figure,
                                                              "work_groups": groups}), tmp_path / "d.yaml")
    result = run("predict", DATA / "nvprof-metrics-constructed.csv", "-d", device, "-k", "saxpy", "--json")
    assert result.exit_code == 0, result.output
    sources = json.loads(result.stdout)["devices"]["v100-launches"]
    assert sources["launches"].endswith("not used here (§3.8 prices a campaign's timed launches)")
    assert sources["work-groups"].endswith("not used here (§3.8 prices a campaign's timed launches)")
    assert "not used here" not in sources["B_mem"]
