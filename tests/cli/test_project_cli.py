"""`perfcast project`: the real A100 capture projected onto catalog GPUs, the SASS scaling, charts and bad input."""

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from perfcast.campaign.projection import dominant_precision, kernel_base_name
from perfcast.cli import app
from perfcast.profiles.profile import KernelProfile

runner = CliRunner()
DATA = Path(__file__).parents[1] / "data"
CAPTURE = DATA / "profiles" / "ncu-details-a100-bert.csv"
SGEMM = "ampere_sgemm_32x32_sliced1x4_tn"


def _project(*arguments: str):
    return runner.invoke(app, ["project", *arguments])


def test_the_a100_capture_projected_onto_itself_and_an_h100():
    result = _project(str(CAPTURE), "--from", "a100-40gb", "--to", "a100-40gb", "--to", "h100-pcie", "-k", SGEMM,
                      "--time", f"{SGEMM}=60us", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    same, h100 = data["kernels"]
    assert (same["target"], h100["target"]) == ("a100-40gb", "h100-pcie")
    # Onto its own device the projection returns the measurement, at every level.
    assert same["time_s"] == pytest.approx(60e-6) and same["time_range_s"] == pytest.approx([60e-6, 60e-6])
    assert h100["time_range_s"][0] <= h100["time_s"] <= h100["time_range_s"][1] < 60e-6
    assert set(h100["per_level_op_s"]) <= {"L1", "L2", "DRAM"}
    assert "full warps assumed" in " ".join(h100["notes"])
    assert data["totals"]["h100-pcie"]["time_s"] == pytest.approx(h100["time_s"])
    figures = data["capabilities"]["h100-pcie/fp32"]
    assert figures["DRAM"]["how"] == "measured" and figures["fma"]["how"] == "scaled"
    # Between GPUs §4 has no core-bound ceiling (docs/models.md, §4): the JSON says so with null.
    assert h100["ceilings"]["source"]["perf_core"] is None and h100["ceilings"]["target"]["perf_core"] is None


def test_table_totals_and_charts(tmp_path):
    chart = tmp_path / "projection.png"
    result = _project(str(CAPTURE), "--from", "a100-40gb", "--to", "h200", "-k", SGEMM, "--time", f"{SGEMM}=0.06ms",
                      "-o", str(chart))
    assert result.exit_code == 0, result.output
    assert "total on h200" in result.output and "a100-40gb (fp32): fma" in result.output
    assert chart.stat().st_size > 10_000
    rooflines = tmp_path / f"projection-{SGEMM}-h200.png"
    assert rooflines.stat().st_size > 20_000


@pytest.mark.parametrize(("arguments", "message"), [
    (["--to", "h100-pcie"], "--from: name the device"),
    (["--from", "a100-40gb", "--to", "h100-pcie", "--time", "sgemm"], "write KERNEL=DURATION"),
    (["--from", "a100-40gb", "--to", "h100-pcie", "--time", f"{SGEMM}=0s"], "duration must be positive"),
    (["--from", "a100-40gb", "--to", "h100-pcie", "-k", SGEMM], "no measured duration"),
    (["--from", "a100-40gb", "--to", "nowhere"], "no device 'nowhere'"),
    (["--from", "a100-40gb", "--to", "h100-pcie", "-o", "chart.txt"], "chart.txt"),
])
def test_bad_input(arguments, message):
    result = _project(str(CAPTURE), *arguments)
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_names_and_precision():
    assert kernel_base_name("_Z5triadPfS_") == "triad"
    assert kernel_base_name("void sgemm<16>(float*, int)") == "sgemm"
    assert kernel_base_name("special") == "special"
    fp64 = KernelProfile("horner", 1, {"fma_fp64": 10.0, "fma_fp32": 1.0, "add_fp32": 5.0})
    assert dominant_precision(fp64).value == "fp64"
    assert dominant_precision(KernelProfile("none", 1, {})).value == "fp32"
    # No FP arithmetic and integer instructions: an integer kernel; a few FLOP among them keep it an FP one.
    assert dominant_precision(KernelProfile("hash", 1, {"int": 64.0, "fma_fp32": 0.0})).value == "int32"
    assert dominant_precision(KernelProfile("mixed", 1, {"int": 64.0, "add_fp32": 1.0})).value == "fp32"
    # FP work that is no FMA/ADD/MUL (a division or compare in Oclgrind's fp32 count, fp16 from Nsight Compute)
    # keeps it an FP kernel; integer instructions split by kind make an integer one.
    assert dominant_precision(KernelProfile("divides", 1, {"int": 64.0, "fp32": 8.0})).value == "fp32"
    assert dominant_precision(KernelProfile("half", 1, {"int": 64.0, "fma_fp16": 8.0})).value == "fp32"
    assert dominant_precision(KernelProfile("kinds", 1, {"add_int32": 64.0, "fma_fp32": 0.0})).value == "int32"


def test_an_integer_kernel_projects_at_the_int32_rates(tmp_path):
    path = tmp_path / "hash.yaml"
    path.write_text(yaml.safe_dump({
        "format": "perfcast-profile", "version": 1, "source": {"tool": "ncu", "device": "NVIDIA A100"},
        "kernels": [{"name": "hash", "launches": 1, "duration_s": 1e-3, "metrics": {
            "int": 4e10, "fma_fp32": 0.0, "add_fp32": 0.0, "mul_fp32": 0.0, "l1_bytes": 8e6, "l2_bytes": 8e6,
            "dram_bytes": 8e6}}]}))
    result = _project(str(path), "--from", "a100-40gb", "--to", "h100-pcie", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (kernel,) = data["kernels"]
    assert kernel["precision"] == "int32"
    source, target = (data["capabilities"][f"{name}/int32"]["add_mul"]["value"] for name in ("a100-40gb", "h100-pcie"))
    # 4e10 integer instructions on 8 MB: bound by the int32 ADD/MUL rate on both GPUs, so the time scales by it.
    assert kernel["time_s"] == pytest.approx(1e-3 * source / target, rel=1e-6)
    assert "int32 ADD/MUL" in " ".join(kernel["notes"])
    forced = _project(str(path), "--from", "a100-40gb", "--to", "h100-pcie", "--precision", "int32", "--json")
    assert forced.exit_code == 0 and json.loads(forced.stdout)["kernels"][0]["time_s"] == kernel["time_s"]
    refused = _project(str(path), "--from", "a100-40gb", "--to", "h100-pcie", "--precision", "int8")
    assert refused.exit_code == 2 and "fp32, fp64 or int32" in " ".join(refused.output.split())


def _special_profile(tmp_path: Path) -> Path:
    path = tmp_path / "special.yaml"
    path.write_text(yaml.safe_dump({
        "format": "perfcast-profile", "version": 1, "source": {"tool": "ncu", "device": "NVIDIA A100"},
        "kernels": [{"name": "special", "launches": 1, "duration_s": 1e-3, "metrics": {
            "fma_fp32": 4e8, "add_fp32": 1e8, "mul_fp32": 1e8, "l1_bytes": 8e8, "l2_bytes": 4e8,
            "dram_bytes": 4e8}}]}))
    return path


@pytest.mark.needs_cuda_tools
def test_sass_scales_the_target_flop(tmp_path):
    from perfcast.profiles.sass import compare_sass

    (expected,) = compare_sass(DATA / "sass" / "special.cu", "sm_80", "sm_90", tmp_path)
    profile = _special_profile(tmp_path)
    result = _project(str(profile), "--from", "a100-40gb", "--to", "h100-pcie", "--sass",
                      str(DATA / "sass" / "special.cu"), "--json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["kernels"]
    assert row["flop_ratio"] == pytest.approx(expected.flop_ratio)
    plain = json.loads(_project(str(profile), "--from", "a100-40gb", "--to", "h100-pcie", "--json").stdout)
    assert plain["kernels"][0]["flop_ratio"] == 1.0
    # The target's FLOP scale, its traffic does not: the time scales at most by the ratio.
    assert row["ceilings"]["target"]["intensities"]["DRAM"] == pytest.approx(
        plain["kernels"][0]["ceilings"]["target"]["intensities"]["DRAM"] * expected.flop_ratio)
    no_arch = _project(str(profile), "--from", "a100-40gb", "--to", "core-i7-930", "--sass",
                       str(DATA / "sass" / "special.cu"))
    assert no_arch.exit_code == 2 and "no compute_capability" in no_arch.output


@pytest.mark.needs_cuda_tools
def test_sass_counts_weigh_the_blocks_by_their_executions(tmp_path):
    """Special blocks never executed: the target's FLOP scale by the other blocks' ratio alone, and it says so."""
    from perfcast.profiles.sass import compare_sass

    (c,) = compare_sass(DATA / "sass" / "special.cu", "sm_80", "sm_90", tmp_path)
    rows = [f'"{0x7f0000000000 + i.address:#x}","{i.text}","{0 if b.special else 1000}"'
            for b in c.source_blocks for i in b.instructions]
    counts = tmp_path / "source.csv"
    counts.write_text('"Kernel Name","special",\n"Address","Source","Thread Instructions Executed"\n'
                      + "\n".join(rows) + "\n")
    profile = _special_profile(tmp_path)
    result = _project(str(profile), "--from", "a100-40gb", "--to", "h100-pcie", "--sass",
                      str(DATA / "sass" / "special.cu"), "--sass-counts", str(counts), "--json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["kernels"]
    assert row["flop_ratio"] == pytest.approx(c.other_target / c.other_source)
    assert "SASS blocks weighed by the threads that executed them (source.csv)" in row["notes"]
    alone = _project(str(profile), "--from", "a100-40gb", "--to", "h100-pcie", "--sass-counts", str(counts))
    assert alone.exit_code == 2 and "give --sass too" in alone.output
    raw = DATA / "profiles" / "ncu-raw-constructed.csv"
    wrong = _project(str(profile), "--from", "a100-40gb", "--to", "h100-pcie", "--sass",
                     str(DATA / "sass" / "special.cu"), "--sass-counts", str(raw))
    assert wrong.exit_code == 2 and "not Nsight Compute's source page" in " ".join(wrong.output.split())
