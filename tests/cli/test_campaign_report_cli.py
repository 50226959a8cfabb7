"""`perfcast campaign report --json` on a committed archive: the report's scores, as JSON a script can read."""

import json
import statistics
from pathlib import Path

from typer.testing import CliRunner

from perfcast.cli import app

ARCHIVE = Path(__file__).parents[2] / "docs" / "validation" / "projection-pocl" / "zen3-avx2" / "pocl-2core-zen3.zip"


def test_the_json_holds_each_kernels_predictions_and_each_models_summary(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["campaign", "report", str(ARCHIVE), "-o", str(tmp_path / "r"), "--json"])
    assert result.exit_code == 0, result.output
    assert "NaN" not in result.stdout and "Infinity" not in result.stdout  # JSON has neither
    data = json.loads(result.stdout)  # nothing but the JSON on stdout
    assert Path(data["report"]) == tmp_path / "r" / "report.md" and Path(data["report"]).exists()
    [archive] = data["archives"]
    assert archive["archive"] == str(ARCHIVE) and archive["device"]
    kernels = {k["kernel"]: k for k in archive["kernels"]}
    assert len(kernels) == 12 and all(k["measured_s"] > 0 for k in kernels.values())
    for model, summary in archive["summaries"].items():
        apes = [k["predictions"][model]["ape"] for k in kernels.values() if model in k["predictions"]]
        assert summary["n"] == len(apes)
        assert summary["mape"] == statistics.fmean(apes)  # the summary is the kernels' mean, as the report says
    hull = archive["summaries"]["boat hull"]
    assert hull["contained"][1] == 12 and hull["contained"][0] == sum(
        k["predictions"]["boat hull"]["contained"] for k in kernels.values())
    triad = kernels["triad"]["predictions"]
    assert triad["roofline"]["kind"] == "bound" and triad["roofline"]["efficiency"] <= 1.0
    assert triad["boat hull"]["lower_s"] <= triad["boat hull"]["upper_s"] and len(triad["boat hull"]["terms"]) == 2
    assert triad["quantitative"]["kind"] == "point" and triad["quantitative"]["bound"]
