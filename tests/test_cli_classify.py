"""`perfcast classify`, `perfcast app` with C sources, and `perfcast validate classify`, through typer's runner."""

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.cli import app

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc preprocesses the C files")

runner = CliRunner()
CORPUS = Path(__file__).parent / "data" / "classify"
FAST_FOCUS = Path(__file__).parent.parent / "examples" / "fast-focus.c"


def run(*args: str):
    return runner.invoke(app, list(args))


def said(text: str) -> str:
    """Return terminal text with rich's line wrapping undone."""
    return " ".join(text.split())


def test_classify_prints_species_f_and_reasons():
    result = run("classify", str(FAST_FOCUS), "--function", "erode")
    assert result.exit_code == 0, result.output
    assert "1024x1024|neighb(7x7) -> 1024x1024|element" in result.stdout
    assert "exact" in result.stdout and "because" in result.stdout
    explained = run("classify", str(FAST_FOCUS), "--function", "erode", "--explain")
    assert explained.stdout == result.stdout
    brief = run("classify", str(FAST_FOCUS), "--function", "erode", "--brief")
    assert "neighb(7x7)" in brief.stdout and "because" not in brief.stdout


def test_classify_json_lists_every_nest():
    result = run("classify", str(FAST_FOCUS), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [n["function"] for n in data["nests"]] == [
        "histogram", "maximum", "threshold", "erode", "x_projection", "y_projection"]
    assert {n["status"] for n in data["nests"]} == {"exact"}
    assert data["nests"][0]["species"] == "1024x1024|element -> 256|shared"


def test_classify_predict_on_a_catalog_gpu():
    result = run("classify", str(FAST_FOCUS), "-F", "threshold", "--predict", "-d", "gtx470", "--json")
    assert result.exit_code == 0, result.output
    (nest,) = json.loads(result.stdout)["nests"]
    (row,) = nest["predictions"]
    assert row["device"] == "gtx470" and row["class"] == "binarization"
    # 2 x 2^20 elements of 4 B over 133.92 GB/s (the same as perfcast hull)
    assert row["lower"] == pytest.approx(4 * 2 * 2**20 / 133.92e9)


def test_classify_predict_needs_bound_symbols():
    listing = CORPUS / "listing.c"
    result = run("classify", str(listing), "-F", "accumulate", "--predict", "-d", "gtx470")
    assert result.exit_code == 2
    assert "--define K=" in said(result.stderr)
    bound = run("classify", str(listing), "-F", "accumulate", "--predict", "-d", "gtx470", "-D", "K=1048576")
    assert bound.exit_code == 0, bound.output
    assert "sum (ref.)" in bound.stdout


@pytest.mark.parametrize("args, message", [
    (["--define", "N"], "expected NAME=NON_NEGATIVE_INTEGER"),
    (["--define", "N=1,N=2"], "given twice"),
    (["--call-cost", "expf=fast"], "expected NAME=NON_NEGATIVE_INTEGER"),
    (["--predict"], "--predict needs at least one --device"),
    (["-d", "gtx470"], "--device is used with --predict"),
    (["--function", "nothere"], "no function named 'nothere'"),
])
def test_classify_bad_options_are_errors(args, message):
    result = run("classify", str(FAST_FOCUS), *args)
    assert result.exit_code == 2
    assert message in said(result.stderr)


def test_classify_broken_file_is_a_compiler_style_error(tmp_path):
    path = tmp_path / "bad.c"
    path.write_text("void f( {\n")
    result = run("classify", str(path))
    assert result.exit_code == 2
    assert "bad.c:1:" in result.stderr and "error" in result.stderr


def test_app_takes_a_c_loop_nest_in_place_of_a_species(tmp_path):
    path = tmp_path / "app.yaml"
    path.write_text(
        "name: from-c\nprimitives:\n"
        f"  - name: erode\n    source: {FAST_FOCUS}\n    function: erode\n"
        f"  - name: threshold\n    species: '1024x1024|element -> 1024x1024|element'\n    f: 1\n"
    )
    result = run("app", str(path), "-d", "gtx470", "--json")
    assert result.exit_code == 0, result.output
    steps = json.loads(result.stdout)["devices"]["gtx470"]["primitives"]
    assert steps[0]["species"] == "1024x1024|neighb(7x7) -> 1024x1024|element"
    assert steps[0]["class"] == "2D convolution" and steps[0]["f"] == 1


def test_app_source_relative_to_the_file_and_errors(tmp_path):
    (tmp_path / "k.c").write_text(FAST_FOCUS.read_text())
    several = tmp_path / "several.yaml"
    several.write_text("name: x\nprimitives:\n  - name: all\n    source: k.c\n")
    result = run("app", str(several), "-d", "gtx470")
    assert result.exit_code == 2 and "several loop nests" in said(result.stderr)
    both = tmp_path / "both.yaml"
    both.write_text("name: x\nprimitives:\n  - name: a\n    source: k.c\n"
                    "    species: '4|element -> 4|element'\n    f: 1\n")
    result = run("app", str(both), "-d", "gtx470")
    assert result.exit_code == 2 and "exactly one of 'species' or 'source'" in said(result.stderr)
    chosen = tmp_path / "chosen.yaml"
    chosen.write_text("name: x\nprimitives:\n  - name: max\n    source: k.c\n    function: maximum\n")
    result = run("app", str(chosen), "-d", "gtx470", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["devices"]["gtx470"]["primitives"][0]["class"] == "sum"


def test_validate_classify_quick(tmp_path):
    report = tmp_path / "classify.md"
    result = run("validate", "classify", "--measure", "--quick", "-r", "2", "-d", "core-i7-930", "--json",
                 "--markdown", str(report))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    by_name = {c["primitive"]: c for c in data["classified"]}
    assert set(by_name) == {"elementwise", "reduction", "neighbourhood"}
    for entry in by_name.values():
        assert entry["species"] == entry["hand_written_species"]
        assert all(entry["f_agrees"].values())
    assert {p["primitive"] for p in data["points"]} == set(by_name)
    text = report.read_text()
    assert "Classify -> predict -> measure" in text and "Reproduce with" in text


def test_classify_predict_prices_elementary_calls_at_a_measured_device_s_cost(tmp_path):
    from perfcast.devices.catalog import catalog, save_device
    from perfcast.devices.schema import ComputeFigure, Precision

    source = tmp_path / "map.c"
    source.write_text("#include <math.h>\n#define N 1048576\nvoid map(const float *x, float *y) {\n"
                      "  for (int i = 0; i < N; i++) y[i] = expf(-x[i]) * logf(x[i] + 2.0f);\n}\n")
    rate = ComputeFigure.measured(1e8, "perfcast bench (test), exp/log/sin calls", "2026-11-23")
    cpu = catalog()["core-i7-930"]
    measured = save_device(cpu.model_copy(update={"name": "cpu-with-calls", "elementary": {Precision.FP32: rate}}),
                           tmp_path / "cpu.yaml")
    result = run("classify", str(source), "--predict", "-d", str(measured), "-d", "core-i7-930", "--json")
    assert result.exit_code == 0, result.output
    (nest,) = json.loads(result.stdout)["nests"]
    priced, plain = nest["predictions"]
    ops = cpu.peak_compute("fp32") / 1e8
    assert priced["elementary_calls"] == plain["elementary_calls"] == 2  # expf and logf
    assert priced["priced_f"] == pytest.approx(priced["f"] + 2 * (ops - 8))
    assert "ops per call = P_compute" in priced["elementary_call_cost"]
    assert plain["priced_f"] == plain["f"] and "no measured rate" in plain["elementary_call_cost"]
    assert priced["lower"] > plain["lower"]
    text = run("classify", str(source), "--predict", "-d", str(measured))
    assert text.exit_code == 0 and "2 elementary call(s) at" in text.stdout
    # A cost the user sets is the cost: nothing is repriced.
    given = run("classify", str(source), "--predict", "-d", str(measured), "--call-cost", "expf=20", "--json")
    (row,) = json.loads(given.stdout)["nests"][0]["predictions"]
    assert row["priced_f"] == row["f"] and row["elementary_call_cost"] == "--call-cost expf as given"


def test_classify_predict_prices_integer_elements_converted_to_float_at_the_gpu_s_rate(tmp_path):
    source = tmp_path / "rows.c"
    source.write_text("#define R 4096\n#define C 4096\n"
                      "void rowsum(const unsigned char *in, float *out) {\n"
                      "  for (int i = 0; i < R; i++) {\n    float s = 0.0f;\n"
                      "    for (int j = 0; j < C; j++) s += in[i * C + j];\n    out[i] = s;\n  }\n}\n")
    result = run("classify", str(source), "--predict", "-d", "rtx-3090", "-d", "core-i7-930", "--json")
    assert result.exit_code == 0, result.output
    (nest,) = json.loads(result.stdout)["nests"]
    gpu, cpu = nest["predictions"]
    assert nest["f"] == "1" and gpu["conversions"] == cpu["conversions"] == 1  # one add, one byte converted
    assert gpu["priced_f"] == pytest.approx(1 + 16, rel=1e-3)  # GA102: 16 conversions a clock, 128 FMA lanes
    assert "ops per conversion" in gpu["conversion_cost"]
    assert cpu["priced_f"] == 1 and cpu["conversion_cost"].startswith("unpriced")
    text = run("classify", str(source), "--predict", "-d", "rtx-3090")
    assert text.exit_code == 0 and "1 int-to-float conversion(s) an application" in text.stdout


def test_app_prices_a_c_primitive_s_conversions_where_the_device_has_a_rate(tmp_path):
    (tmp_path / "widen.c").write_text("#define N 1048576\nvoid widen(const unsigned char *x, float *y) {\n"
                                      "  for (int i = 0; i < N; i++) y[i] = x[i] * 0.5f;\n}\n")
    (tmp_path / "app.yaml").write_text("name: w\nprimitives:\n  - {name: widen, source: widen.c}\n")
    result = run("app", str(tmp_path / "app.yaml"), "-d", "rtx-3090", "-d", "core-i7-930", "--json")
    assert result.exit_code == 0, result.output
    devices = json.loads(result.stdout)["devices"]
    gpu, cpu = devices["rtx-3090"], devices["core-i7-930"]
    assert gpu["primitives"][0]["conversions"] == 1 and gpu["primitives"][0]["priced_f"] == pytest.approx(17, rel=1e-3)
    assert "ops per conversion" in gpu["inputs"]["conversion"]
    assert cpu["primitives"][0]["priced_f"] == 1 and cpu["inputs"]["conversion"].startswith("unpriced")
    text = run("app", str(tmp_path / "app.yaml"), "-d", "rtx-3090")
    assert text.exit_code == 0 and "widen: 0 elementary call(s), 1 int-to-float conversion(s)" in text.stdout
