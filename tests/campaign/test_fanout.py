"""The suite's campaign on two Ray workers: one archive per worker, tagged with the fan-out, merged by the report."""

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.campaign.archive import Archive
from perfcast.cli import app

pytest.importorskip("ray", reason="the ray extra (pip install 'perfcast[ray]'); make test installs it")
DEVICE_PROFILE = Path(__file__).parents[2] / "docs" / "validation" / "bench-opencl-pocl-profile.yaml"


def _have_pocl() -> bool:
    try:
        from perfcast.bench.opencl import list_devices

        return bool(list_devices())
    except Exception:  # noqa: BLE001 - no pyopencl, no platform: the test is skipped
        return False


@pytest.mark.skipif(not _have_pocl() or shutil.which("oclgrind") is None, reason="needs PoCL and Oclgrind")
def test_two_workers_write_two_archives_and_one_report(tmp_path):
    import ray

    runner = CliRunner()
    try:
        result = runner.invoke(app, ["campaign", "run", "--backend", "opencl", "--quick", "-k", "triad",
                                     "--device-profile", str(DEVICE_PROFILE), "--device-runs", "1",
                                     "--workers", "2", "-o", str(tmp_path / "c.zip")])
    finally:
        ray.shutdown()
    assert result.exit_code == 0, result.output
    archives = sorted(tmp_path.glob("c-*.zip"))
    assert [a.name.split("-")[1] for a in archives] == ["1", "2"]
    fanouts = [Archive.read(a).manifest["fanout"] for a in archives]
    assert fanouts[0]["id"] == fanouts[1]["id"] and [f["worker"] for f in fanouts] == [1, 2]
    assert all(Archive.read(a).manifest["kernels"]["triad"]["median_s"] > 0 for a in archives)
    report = runner.invoke(app, ["campaign", "report", str(archives[0]), "-o", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    text = (tmp_path / "report" / "report.md").read_text()
    assert f"Fan-out run {fanouts[0]['id']}" in text and "worker(s) 2 missing" in text


def test_a_program_is_not_fanned_out(tmp_path):
    result = CliRunner().invoke(app, ["campaign", "run", "-o", str(tmp_path / "p.zip"), "--workers", "2", "--",
                                      "true"])
    assert result.exit_code == 2 and "a program runs on one" in result.output
