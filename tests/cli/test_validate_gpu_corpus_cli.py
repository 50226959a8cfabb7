"""`perfcast validate gpu-corpus`: the reduced corpus scored end to end, report, JSON and charts written."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.cli import app

runner = CliRunner()


def test_the_quick_corpus_writes_the_report_its_json_and_charts(tmp_path: Path) -> None:
    report = tmp_path / "gpu-corpus.md"
    result = runner.invoke(app, ["validate", "gpu-corpus", "--quick", "--kernel", "convolution-milo",
                                 "--kernel", "pnpoly", "--markdown", str(report)])
    assert result.exit_code == 0, result.output
    text = report.read_text()
    for heading in ("## 1. Roofline", "## 2. Boat hull", "## 3. Cross-GPU projection", "## 4. Portability"):
        assert heading in text
    assert "Quick run" in text and "MIT" in text
    data = json.loads(report.with_suffix(".json").read_text())
    assert data["format"] == "perfcast-gpu-corpus-scores" and data["quick"] is True
    assert {r["device"] for r in data["roofline"]} >= {"a100-pcie-40gb", "w7800", "rtx-3090"}
    assert any(p["same_vendor"] is False for p in data["projection"])  # NVIDIA <-> AMD pairs
    for pair in data["projection"]:
        assert set(pair["best_ape"]) == {"perfcast", "§4 as written", "bandwidth ratio", "FLOP ratio", "max ratio"}
        # the signed ratio says which way the unsigned APE goes
        for method, ape in pair["best_ape"].items():
            if ape is not None:
                assert abs(pair["best_ratio"][method] - 1) == pytest.approx(ape, abs=2e-6)
        if pair["tuned_ape"]["perfcast"] is not None:
            assert abs(pair["tuned_ratio"]["perfcast"] - 1) == pytest.approx(pair["tuned_ape"]["perfcast"], abs=2e-6)
    # pnpoly's records on the RTX 2080 Ti beat the compulsory-DRAM time by 10x: broken, listed, kept out
    broken = {r["device"]: r["implausible"] for r in data["roofline"] if r["kernel"] == "pnpoly"}
    assert broken["rtx-2080-ti"] > 1000 and broken["rtx-3090"] == 0
    for chart in ("roofline.png", "projection.png", "hull.png"):
        assert (tmp_path / "gpu-corpus" / chart).stat().st_size > 10_000


def test_json_output_and_an_unknown_kernel() -> None:
    result = runner.invoke(app, ["validate", "gpu-corpus", "--quick", "--kernel", "fft"])
    assert result.exit_code == 2 and "no kernel fft" in result.output
