"""`perfcast choose` from the command line: table, JSON, CSV, chart, and clear errors."""

import csv
import io
import json
import re
from pathlib import Path

from typer.testing import CliRunner

from perfcast.cli import app

ROOT = Path(__file__).parents[2]
ARCHIVE = str(ROOT / "docs" / "validation" / "gpu-h200" / "campaign-h200.zip")
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_json_ranks_every_catalog_gpu_with_band_cost_and_energy():
    result = run("choose", ARCHIVE, "-k", "triad", "--all", "--kind", "gpu", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    ranking = data["ranking"]
    assert len(ranking) >= 25 and data["workload"]["model"] == "quantitative"
    times = [row["time_s"] for row in ranking]
    assert times == sorted(times) and [row["rank"] for row in ranking] == list(range(1, len(ranking) + 1))
    h200 = next(row for row in ranking if row["device"] == "h200")
    low, high = h200["interval_s"]
    assert low <= h200["measured_s"] <= high  # the measured triad on the H200 lies in its validated interval
    assert h200["energy_j"] == h200["time_s"] * 700 and h200["cost_usd"] == h200["time_s"] * 6.35 / 3600
    assert h200["band_source"] == ("docs/validation/gpu-h100/campaign-h100.zip; "
                                   "docs/validation/gpu-h200/campaign-h200.zip")
    assert any(row["pareto"] for row in ranking)


def test_table_csv_and_chart(tmp_path):
    chart, table = tmp_path / "choice.png", tmp_path / "choice.csv"
    result = run("choose", "corpus:convolution-milo", "--source", "rtx-a4000", "-d", "rtx-a4000", "-d", "h200",
                 "-d", "l4", "-d", "mi300x", "-d", "epyc-9654", "--csv", str(table), "-o", str(chart))
    assert result.exit_code == 0, result.output
    assert "measured" in result.output and "tier" in result.output
    assert "left out epyc-9654: the cross-GPU projection predicts GPUs only" in result.output
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    assert [r["device"] for r in rows][0] in {"mi300x", "h200"} and len(rows) == 4
    assert chart.stat().st_size > 10_000


def test_order_by_cost_uses_the_prices_file(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("version: 1\nprices:\n  h100-sxm5: {kind: rental, usd: 0.01, reference: a gift, date: 2026-11-01}\n")
    result = run("choose", ARCHIVE, "-k", "triad", "-d", "h200", "-d", "h100-sxm5", "--by", "cost",
                 "--prices", str(prices), "--json")
    ranking = json.loads(result.stdout)["ranking"]
    assert [row["device"] for row in ranking] == ["h100-sxm5", "h200"]
    assert ranking[0]["price"]["reference"] == "a gift"


def test_errors_are_clear():
    assert "with --device (repeatable), or rank the whole catalog with --all" in run("choose", ARCHIVE).output
    assert "--by 'speed'" in run("choose", ARCHIVE, "--all", "--by", "speed").output
    result = run("choose", "no-such-file.yaml", "--all")
    assert result.exit_code == 2 and "not a species" in result.output
    result = run("choose", "corpus:gemm", "--all")
    assert result.exit_code == 2 and "--source" in result.output


def test_validate_choose_reports_the_ranking_check(tmp_path):
    report = tmp_path / "choose.md"
    archives = [str(ROOT / "docs" / "validation" / "campaign-cpu" / f"{m}-avx512" / f"campaign-cpu-{m}.zip")
                for m in ("xeon", "zen4")] + [ARCHIVE]
    result = run("validate", "choose", "-k", "convolution", "--markdown", str(report),
                 *[a for path in archives for a in ("--archive", path)])
    assert result.exit_code == 0, result.output
    text = report.read_text()
    assert "Kendall tau" in text and "| convolution | rtx-3090 |" in text
    assert "| triad (Nsight Compute) | h200-cuda | 3 |" in text


def test_a_prices_file_with_an_unknown_device_is_refused(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("version: 1\nprices:\n  h100-sxm: {kind: rental, usd: 2, reference: typo, date: 2026-11-01}\n")
    result = run("choose", ARCHIVE, "-k", "triad", "-d", "h200", "--prices", str(prices))
    assert result.exit_code == 2 and "does not know: h100-sxm" in result.output


def test_ranking_by_a_figure_no_device_has_is_refused_and_a_partial_one_is_said():
    result = run("choose", ARCHIVE, "-k", "triad", "-d", "gh200", "-d", "max-1550", "--by", "cost")
    assert result.exit_code == 2 and "no device ranked here has a price" in result.output
    result = run("choose", ARCHIVE, "-k", "triad", "-d", "gh200", "-d", "h200", "--by", "cost")
    assert result.exit_code == 0 and "without a price, ranked last by time: gh200" in result.output
    assert "no price" in result.output  # the row's own note


def test_two_different_devices_of_one_name_are_refused(tmp_path):
    mine = tmp_path / "mine.yaml"
    text = (ROOT / "src" / "perfcast" / "devices" / "catalog" / "h200.yaml").read_text()
    text = re.sub(r"\nmaxima:.*?\nhost_link:", "\nhost_link:", text, flags=re.S)  # a lent H200's, above 57.44
    mine.write_text(text.replace("boost: 1980 MHz", "boost: 1700 MHz").replace("66.91 TFLOP/s      #", "57.44 TFLOP/s  #"))
    result = run("choose", ARCHIVE, "-k", "triad", "-d", "h200", "-d", str(mine))
    assert result.exit_code == 2 and "both named 'h200'" in result.output


def test_a_short_search_as_source_is_said():
    data = json.loads(run("choose", "corpus:dedispersion-milo", "--source", "h200", "-d", "h200", "-d", "rtx-a6000",
                          "--json").stdout)
    assert any("not a tuned optimum" in note for note in data["notes"])


def test_a_bad_species_says_why_without_library_boilerplate():
    result = run("choose", "N|element -> ", "--all")
    assert result.exit_code == 2 and "neither a file nor a species" in result.output
    assert "pydantic" not in result.output
