"""The command line, driven through typer's runner."""

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from perfcast.cli import app
from perfcast.devices.catalog import load_device_file

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.startswith("perfcast ")


def test_devices_list_table_and_json():
    table = run("devices", "list")
    assert table.exit_code == 0
    for name in ("gtx470", "gts250", "core2-q8300", "core-i7-930", "v100", "h200", "r9-nano"):
        assert name in table.stdout
    rows = json.loads(run("devices", "list", "--json").stdout)
    gtx470 = next(row for row in rows if row["name"] == "gtx470")
    assert gtx470["fp32_peak"] == 1088.64e9
    assert gtx470["ridge_fp32"] == pytest.approx(1088.64 / 133.92)


def test_devices_show():
    result = run("devices", "show", "gtx470")
    assert result.exit_code == 0
    assert "1.089 TFLOP/s" in result.stdout and "133.9 GB/s" in result.stdout
    assert "fp32 issue share" in result.stdout  # a plain number, not a quantity
    data = json.loads(run("devices", "show", "v100", "--json").stdout)
    assert data["fp32_issue_share"]["value"] == 0.5
    assert data["peak"]["fp32"]["fma"]["value"] == 15.67e12
    assert data["peak"]["fp32"]["add_mul"]["provenance"]["source"] == "estimated"
    assert yaml.safe_load(run("devices", "show", "v100", "--yaml").stdout)["name"] == "v100"


def test_devices_show_lists_measured_maxima_and_compute_ceilings():
    result = runner.invoke(app, ["devices", "show", "a100-pcie-40gb"], terminal_width=200)
    assert result.exit_code == 0
    assert "measured maximum DRAM" in result.stdout and "1.35 TB/s" in result.stdout
    ceilings = runner.invoke(app, ["devices", "show", "w7800"], terminal_width=200)
    assert "compute (no dual issue)" in ceilings.stdout and "22.6 TFLOP/s" in ceilings.stdout


def test_devices_show_gives_measured_rates_in_their_own_units():
    measured = Path(__file__).parents[1] / "docs" / "validation" / "programs" / "xeon-avx512-latency" / "device.yaml"
    result = runner.invoke(app, ["devices", "show", str(measured)], terminal_width=200)
    assert result.exit_code == 0
    assert "random loads in L3" in result.stdout and "612.1 Mload/s" in result.stdout
    assert "fp32 exp/log/sin calls" in result.stdout and "call/s" in result.stdout
    data = json.loads(run("devices", "show", str(measured), "--json").stdout)
    assert set(data["random_loads"]) == {"L2", "L3", "DRAM"}
    divided = measured.parents[1] / "xeon-avx512-divisions" / "device.yaml"
    result = runner.invoke(app, ["devices", "show", str(divided)], terminal_width=200)
    assert result.exit_code == 0 and "int32 divisions" in result.stdout and "Mdiv/s" in result.stdout
    issue = measured.parents[1] / "xeon-avx512-issue" / "device.yaml"
    result = runner.invoke(app, ["devices", "show", str(issue)], terminal_width=200)
    assert result.exit_code == 0 and "scalar instructions" in result.stdout and "Ginst/s" in result.stdout
    assert "atomic increments" in result.stdout and "Matomic/s" in result.stdout


def test_devices_show_unknown_device():
    result = run("devices", "show", "gtx9000")
    assert result.exit_code == 2
    assert "no device 'gtx9000'" in result.stderr


def test_devices_show_broken_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\n")
    result = run("devices", "show", str(path))
    assert result.exit_code == 2
    assert "broken.yaml" in result.stderr and "kind: required field is missing" in result.stderr


def test_devices_detect_writes_a_loadable_file(tmp_path):
    path = tmp_path / "host.yaml"
    result = run("devices", "detect", "--json", "-o", str(path))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["kind"] == "cpu"
    assert load_device_file(path).name == data["name"]


def test_roofline_json_hand_computed():
    # GTX 470 fp32: π = 1088.64 GFLOP/s, β = 133.92 GB/s.
    result = run("roofline", "--device", "gtx470", "-k", "mem:1e9:1e9", "-k", "cpu:1e12:1e9", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["ridge"] == pytest.approx(1088.64 / 133.92)
    mem, compute = data["kernels"]
    assert mem["attainable"] == pytest.approx(133.92e9)
    assert mem["bound"] == "memory" and mem["binding"] == "DRAM"
    assert mem["time"] == pytest.approx(1e9 / 133.92e9)
    assert compute["bound"] == "compute"
    assert compute["time"] == pytest.approx(1e12 / 1088.64e9)


def test_roofline_lacking_a_ceiling():
    data = json.loads(run("roofline", "-d", "gtx470", "-k", "k:1e12:1e9", "--lacking", "no FMA", "--json").stdout)
    assert data["kernels"][0]["attainable"] == pytest.approx(544.32e9)


def test_roofline_hierarchical_binding_level():
    data = json.loads(
        run("roofline", "-d", "v100", "-k", "s:1e9:shared=1e12,DRAM=1e8", "--json").stdout
    )
    kernel = data["kernels"][0]
    assert kernel["binding"] == "shared"
    assert kernel["intensity"] == {"shared": pytest.approx(1e-3), "DRAM": pytest.approx(10.0)}
    assert kernel["attainable"] == pytest.approx(15.67e12 * 1e-3)


def test_roofline_table_and_chart(tmp_path):
    path = tmp_path / "chart.png"
    result = run("roofline", "-d", "core-i7-930", "-p", "fp64", "-k", "triad:2e8:2.4e9", "--wall", "w:0.05",
                 "--hierarchical", "-o", str(path))
    assert result.exit_code == 0, result.stderr
    assert "triad" in result.stdout and "DRAM" in result.stdout and "ridge point 1.75 op/B" in result.stdout
    assert path.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-k", "broken"], "expected NAME:WORK:BYTES"),
        (["-k", "a:1:1 TB/s"], "not a bytes unit"),
        (["-k", "a:0:0"], "zero work and zero bytes"),
        (["-k", "a:1e9:L9=1e9"], "no bandwidth for memory level"),
        (["--lacking", "no prefetch"], "unknown ceiling"),
        (["--wall", "w:-1"], "positive intensity"),
        (["-p", "fp64"], "no fp64 peak"),
        (["-o", "chart.bmp"], "use one of .png, .svg, .pdf"),
    ],
)
def test_roofline_bad_input(args, message):
    result = run("roofline", "-d", "gts250", *args)
    assert result.exit_code == 2
    assert message in result.stderr


# ---------------------------------------------------------------- boat hull

ERODE = "1024x1024|neighb(7x7) -> 1024x1024|element"


def test_hull_table_on_two_gpus_and_a_cpu():
    result = run("hull", ERODE, "-d", "gtx470", "-d", "gts250", "-d", "core-i7-930", "--f", "1,10")
    assert result.exit_code == 0, result.stderr
    assert "2D convolution (reference)" in result.stdout
    for name in ("GeForce GTX 470", "GeForce GTS 250", "Core i7-930", "P_uncoalesced", "N_threads"):
        assert name in result.stdout


def test_hull_json_hand_computed():
    data = json.loads(run("hull", "AxB|element -> AxB|element", "--bind", "A=1024,B=1024", "-d", "gtx470",
                          "--f", "1", "--assume", "fma", "--json").stdout)
    assert data["bound_species"] == "1024x1024|element -> 1024x1024|element"
    assert data["class"]["name"] == "binarization" and data["class"]["origin"] == "reference"
    device = data["devices"][0]
    row = device["rows"][0]
    assert device["ruled_out"] == ["c1"]
    assert row["lower"] == row["upper"] == pytest.approx(4 * 2 * 2**20 / 133.92e9)
    assert row["lower_term"] == "m0"


def test_hull_vector_lanes_set_a_cpus_no_simd_floors():
    """core-i7-930: SSE, 4 fp32 lanes; 2 of them used: c1 = 2 c0; a GPU beside it takes none."""
    plain = json.loads(run("hull", ERODE, "-d", "core-i7-930", "--f", "4", "--json").stdout)["devices"][0]
    data = json.loads(run("hull", ERODE, "-d", "core-i7-930", "-d", "gtx470", "--f", "4", "--vector-lanes", "2",
                          "--json").stdout)
    cpu, gpu = data["devices"]
    c0 = cpu["rows"][0]["terms"]["c0"]
    assert cpu["vector_lanes"] == 2 and gpu["vector_lanes"] is None
    assert "--vector-lanes" in cpu["inputs"]["vector lanes"] and "vector lanes" not in gpu["inputs"]
    assert cpu["rows"][0]["terms"]["c1"] == pytest.approx(2 * c0)
    assert plain["rows"][0]["terms"]["c1"] == pytest.approx(4 * c0)
    refused = run("hull", ERODE, "-d", "gtx470", "--vector-lanes", "2")
    assert refused.exit_code == 2 and "no device here is a CPU" in refused.stderr


def test_hull_transfers_and_chart(tmp_path):
    path = tmp_path / "hull.png"
    data = json.loads(run("hull", ERODE, "-d", "gtx470", "-d", "core-i7-930", "--transfers", "--json",
                          "-o", str(path)).stdout)
    gpu, cpu = data["devices"]
    assert gpu["transfer"] == pytest.approx(4 * 2 * 2**20 / 8e9)
    assert cpu["transfer"] == 0
    assert path.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["1024x1024|elem -> 1|shared", "-d", "gtx470"], "expected an access pattern"),
        (["AxB|element -> AxB|element", "-d", "gtx470"], "unbound size symbol"),
        ([ERODE, "-d", "gtx470", "--assume", "magic"], "unknown assumption"),
        ([ERODE, "-d", "gtx470", "--bind", "A=x"], "SYMBOL=POSITIVE_INTEGER"),
        ([ERODE, "-d", "gtx470", "--f", "-3"], "f must be"),
        ([ERODE, "-d", "gtx470", "--tile", "sixteen"], "expected TXxTY"),
        ([ERODE, "-d", "nope"], "no device 'nope'"),
    ],
)
def test_hull_bad_input(args, message):
    result = run("hull", *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_app_side_by_side(tmp_path):
    path = tmp_path / "report.png"
    result = run("app", "examples/fast-focus.yaml", "-d", "gtx470", "-d", "gts250", "-o", str(path))
    assert result.exit_code == 0, result.stderr
    for name in ("histogram", "maximum", "threshold", "erode", "x-projection", "y-projection", "total",
                 "image to device", "gtx470", "gts250"):
        assert name in result.stdout
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_app_json_totals_are_sums():
    data = json.loads(run("app", "examples/fast-focus.yaml", "-d", "gtx470", "--json").stdout)
    device = data["devices"]["gtx470"]
    lower = sum(p["lower"] for p in device["primitives"]) + sum(t["time"] for t in device["transfers"])
    assert device["total"]["lower"] == pytest.approx(lower)
    assert [p["class"] for p in device["primitives"]] == [
        "histogram", "sum", "binarization", "2D convolution", "x-projection", "scale down",
    ]


def _cpu_with_call_rate(folder, calls_per_second: float):
    """The catalog's core-i7-930 with a measured rate of fp32 elementary calls, and the device file written."""
    from perfcast.devices.catalog import catalog, save_device
    from perfcast.devices.schema import ComputeFigure, Precision

    rate = ComputeFigure.measured(calls_per_second, "perfcast bench (test), exp/log/sin calls", "2026-11-23")
    measured = catalog()["core-i7-930"].model_copy(update={"name": "cpu-with-calls", "elementary": {Precision.FP32: rate}})
    return measured, save_device(measured, folder / "cpu.yaml")


@pytest.fixture
def cpu_with_calls(tmp_path):
    """The core-i7-930 with 1e8 elementary calls per second measured."""
    return _cpu_with_call_rate(tmp_path, 1e8)


def test_hull_prices_elementary_calls_on_a_measured_device(cpu_with_calls):
    measured, device = cpu_with_calls
    result = run("hull", "1048576|element -> 1048576|element", "-d", str(device), "-d", "core-i7-930",
                 "--f", "35,100", "--elementary-calls", "3", "--json")
    assert result.exit_code == 0, result.stderr
    priced, plain = json.loads(result.stdout)["devices"]
    extra = 3 * (measured.peak_compute("fp32") / 1e8 - 8)
    assert [row["f"] for row in priced["rows"]] == pytest.approx([35 + extra, 100 + extra])
    assert priced["f_given"] == [35, 100] and "3 per f, " in priced["inputs"]["elementary call"]
    assert [row["f"] for row in plain["rows"]] == [35, 100]  # no measured rate: f as given
    assert run("hull", "1048576|element -> 1048576|element", "-d", "gtx470", "--elementary-calls", "-1").exit_code == 2


def test_hull_prices_conversions_at_the_catalog_s_rate():
    result = run("hull", "1536x25650|tile(1536x1) -> 25650|element", "-d", "rtx-3090", "-d", "mi250x-gcd",
                 "--f", "2", "--element-size", "1", "--conversions", "1", "--json")
    assert result.exit_code == 0, result.stderr
    nvidia, amd = json.loads(result.stdout)["devices"]
    # GA102: 16 conversions a clock per SM against 128 FMA lanes (16 ops); CDNA 2: a full-rate instruction (2 ops)
    assert nvidia["rows"][0]["f"] == pytest.approx(2 + 16, rel=1e-3)
    assert amd["rows"][0]["f"] == pytest.approx(2 + 2, rel=1e-3)
    assert "1 per application" in nvidia["inputs"]["conversion"]
    assert nvidia["conversions_per_application"] == 1 and nvidia["ops_per_conversion"] == pytest.approx(16, rel=1e-3)
    refused = run("hull", "1048576|element -> 1048576|element", "-d", "core-i7-930", "--conversions", "1")
    assert refused.exit_code == 2 and "no int/fp32 conversion rate" in refused.stderr
    fp64 = run("hull", "1048576|element -> 1048576|element", "-d", "rtx-3090", "-p", "fp64", "--conversions", "1")
    assert fp64.exit_code == 2 and "priced at fp32 only" in fp64.stderr
    plain = json.loads(run("hull", "1048576|element -> 1048576|element", "-d", "rtx-3090", "--f", "2", "--json").stdout)
    assert plain["devices"][0]["ops_per_conversion"] is None and plain["devices"][0]["rows"][0]["f"] == 2
    shown = run("devices", "show", "rtx-3090")
    assert shown.exit_code == 0 and "int/fp32 conversions" in shown.stdout and "Tconv/s" in shown.stdout


def test_hull_refuses_an_f_that_holds_fewer_ops_than_its_calls(tmp_path):
    from perfcast.devices.catalog import catalog

    _, device = _cpu_with_call_rate(tmp_path, catalog()["core-i7-930"].peak_compute("fp32") / 2)  # 2 ops a call
    result = run("hull", "1048576|element -> 1048576|element", "-d", str(device), "--f", "10",
                 "--elementary-calls", "3")
    assert result.exit_code == 2 and "counts fewer ops than its 3 elementary calls" in result.stderr


def test_app_prices_elementary_calls_at_a_device_s_measured_rate(tmp_path, cpu_with_calls):
    measured, device = cpu_with_calls
    (tmp_path / "app.yaml").write_text(
        'name: m\nprimitives:\n  - {name: map, species: "1048576|element -> 1048576|element", f: 35, elementary_calls: 3}\n'
        '  - {name: copy, species: "1048576|element -> 1048576|element", f: 1}\n')
    result = run("app", str(tmp_path / "app.yaml"), "-d", str(device), "-d", "core-i7-930", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)["devices"]
    ops = measured.peak_compute("fp32") / 1e8  # P_compute / calls per second
    priced, plain = data["cpu-with-calls"], data["core-i7-930"]
    assert priced["primitives"][0]["priced_f"] == pytest.approx(35 + 3 * (ops - 8))
    assert plain["primitives"][0]["priced_f"] == 35 and plain["primitives"][0]["elementary_calls"] == 3
    assert priced["primitives"][1]["priced_f"] == 1  # no calls: f as written
    assert "ops per call = P_compute" in priced["inputs"]["elementary call"]
    assert "no measured rate" in plain["inputs"]["elementary call"]


def test_app_missing_file():
    result = run("app", "no-such.yaml", "-d", "gtx470")
    assert result.exit_code == 2 and "cannot read" in result.stderr


@pytest.mark.skipif(__import__("shutil").which("gcc") is None, reason="the native kernels need gcc")
def test_validate_boathull_quick(tmp_path):
    chart, report = tmp_path / "val.png", tmp_path / "val.md"
    result = run("validate", "boathull", "--quick", "-r", "2", "-d", "core-i7-930", "--json",
                 "-o", str(chart), "--markdown", str(report))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert {p["primitive"] for p in data["points"]} == {"elementwise", "reduction", "neighbourhood"}
    assert all(p["measured"] > 0 and p["error_percent"] >= 0 for p in data["points"])
    assert chart.read_bytes()[:4] == b"\x89PNG"
    assert "| neighbourhood |" in report.read_text() and "val.png" in report.read_text()


def test_validate_boathull_refuses_a_gpu():
    result = run("validate", "boathull", "--quick", "-d", "gtx470")
    assert result.exit_code == 2 and "is a gpu" in result.stderr


@pytest.mark.skipif(__import__("shutil").which("gcc") is None, reason="the native benchmarks need gcc")
def _measured_once(monkeypatch, suite):
    """Make `perfcast bench` open its backend for real and answer with `suite`, measured once per session."""
    import copy

    import perfcast.bench.backends as backends_module

    opened = backends_module.open_backend

    def open_backend(*args, **kwargs):
        backend, base = opened(*args, **kwargs)
        backend.run = lambda quick, progress: copy.deepcopy(suite)
        return backend, base

    monkeypatch.setattr(backends_module, "open_backend", open_backend)


def test_bench_quick_writes_profile_csv_and_chart(tmp_path, monkeypatch, cpu_quick_suite):
    monkeypatch.chdir(tmp_path)
    _measured_once(monkeypatch, cpu_quick_suite)  # the CPU suite measured for real (tests/conftest.py)
    result = run("bench", "--quick", "-r", "2", "--json", "-o", "me.yaml", "--csv", "raw.csv", "--plot", "roof.png")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    name = data["profile"]["name"]
    assert name.endswith("-cpu")
    assert (tmp_path / ".perfcast" / "profiles" / f"{name}.yaml").is_file()
    assert load_device_file(tmp_path / "me.yaml").peak["fp32"]["fma"].provenance.source == "measured"
    assert "intensity sweep" in (tmp_path / "raw.csv").read_text()
    assert (tmp_path / "roof.png").read_bytes()[:4] == b"\x89PNG"
    listed = json.loads(run("devices", "list", "--json").stdout)
    assert any(row["name"] == name and row["origin"] == "measured" for row in listed)
    assert run("roofline", "-d", name, "-k", "k:1e9:1e9").exit_code == 0


def test_bench_strict_turns_self_check_warnings_into_an_error(tmp_path, monkeypatch):
    import perfcast.bench.suite as suite_module
    from perfcast.bench.suite import SuiteResult

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(suite_module, "self_checks", lambda suite, before=None: ["L1 bandwidth is below L2's"])
    # What --strict does with a warning is under test, not the measuring (the bench runs for real in
    # test_bench_quick_writes_profile_csv_and_chart and tests/bench): the backend opens as it would, and its
    # suite answers at once.
    _measured_once(monkeypatch, SuiteResult(backend="cpu", tool="stand-in", repetitions=2))
    result = run("bench", "--quick", "-r", "2", "--strict", "-o", "me.yaml")
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "warning: L1 bandwidth is below L2's" in said and "--strict" in said
    assert not (tmp_path / "me.yaml").exists() and not (tmp_path / ".perfcast").exists()


def test_bench_unknown_backend():
    result = run("bench", "--backend", "fpga")
    assert result.exit_code == 2 and "unknown backend" in result.stderr


@pytest.mark.skipif(__import__("shutil").which("gcc") is None, reason="the native benchmarks need gcc")
def test_validate_bench_quick(tmp_path):
    report = tmp_path / "bench.md"
    result = run("validate", "bench", "--quick", "--json", "--markdown", str(report))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [c["figure"] for c in data["comparisons"]] == ["DRAM triad bandwidth", "fp32 FMA peak"]
    assert all(c["ratio"] > 0 for c in data["comparisons"])
    assert "| fp32 FMA peak |" in report.read_text()


def test_bench_opencl_quick(tmp_path, monkeypatch, opencl_quick_suite):
    monkeypatch.chdir(tmp_path)
    _measured_once(monkeypatch, opencl_quick_suite)  # the OpenCL suite measured for real (tests/conftest.py)
    result = run("bench", "--backend", "opencl", "--quick", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["profile"]["name"].endswith("-opencl")
    assert any(row["figure"] == "peak fp32 fma" for row in data["compared"])
    # exp, log and sin calls per second: hundreds of FMAs' time each on PoCL, fewer calls than FMAs anywhere
    calls = data["profile"]["elementary"]["fp32"]["value"]
    assert 0 < calls < data["profile"]["peak"]["fp32"]["fma"]["value"] / 2
    assert any(row["figure"] == "fp32 exp/log/sin calls" for row in data["compared"])


def test_tune_varmc_quick_and_report(tmp_path, opencl_device):
    store = tmp_path / "results.sqlite"
    result = run("tune", "varmc", "--quick", "--nsim", "1024", "--npos", "1024", "-r", "2", "--store", str(store),
                 "--compare-exhaustive", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data["best"]) == {"posbs", "simbs", "vwidth", "wgsize"}
    assert data["mpps"] > 0 and data["fraction_of_optimum"] > 0  # noise may put it a little above 1
    assert data["exhaustive_evaluations"] == data["space_size"]
    chart, table = tmp_path / "models.png", tmp_path / "m.csv"
    report = run("tune", "report", str(data["run"]), "--store", str(store), "-o", str(chart), "--csv", str(table),
                 "--json")
    assert report.exit_code == 0, report.stderr
    models = json.loads(report.stdout)["models"]
    assert {"(1) buffer size", "(5) work-group", "(6) NDRange"} <= {m["name"] for m in models}
    assert chart.read_bytes()[:4] == b"\x89PNG"
    assert table.read_text().startswith("step,")
    again = json.loads(run("tune", "varmc", "--quick", "--nsim", "1024", "--npos", "1024", "-r", "2", "--store",
                           str(store), "--json").stdout)
    assert again["run"] != data["run"] and not again["resumed"]  # the first run finished: a new one starts


def test_tune_varmc_reports_the_final_race(tmp_path, opencl_device):
    result = run("tune", "varmc", "--quick", "--nsim", "1024", "--npos", "1024", "-r", "2", "--store",
                 str(tmp_path / "r.sqlite"), "--json")
    data = json.loads(result.stdout)
    low, high = data["interval_mpps"]
    assert low <= data["mpps"] <= high
    assert len(data["finalists"]) >= 2 and data["failures"] == []
    assert all(f["round_spread"] >= 0 and f["ratio"][1] <= f["ratio"][0] <= f["ratio"][2] for f in data["finalists"])


def test_validate_tuning_quick(tmp_path, opencl_device):
    """Two independent runs, their choices and the exhaustive run's best re-measured together."""
    report = tmp_path / "tuning.md"
    result = run("validate", "tuning", "--quick", "--runs", "2", "--nsim", "1024", "--npos", "1024", "--rounds", "3",
                 "--stores", str(tmp_path / "stores"), "--markdown", str(report), "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["runs"] == 2 and data["exhaustive_evaluations"] == 24
    # Relative to the best re-measured (the lowest median time): a median of per-round ratios may pass 1, and
    # with 3 rounds of sub-millisecond launches on a shared machine it passed 1.1 once in about ten runs.
    assert all(0 < r["fraction"] < 1.5 for r in data["per_run"])
    assert data["min_fraction"] <= data["median_fraction"]
    assert {json.dumps(r["config"], sort_keys=True) for r in data["per_run"]} <= {
        json.dumps(m["config"], sort_keys=True) for m in data["remeasured"]}
    text = report.read_text()
    assert "Reproduce with" in text and "| run | chosen configuration |" in text
    # Called from Python, the report cannot know the command line: it says the plain command, not pytest's.
    assert "perfcast validate tuning --runs 2" in text and "pytest" not in text


def test_validate_tuning_re_measures_other_tuners_choices(tmp_path, opencl_device):
    """A KernelTuner run's choice (written by docs/validation/tuning-live/kerneltuner_varmc.py) joins the rounds."""
    arrays = tmp_path / "arrays.npz"
    exported = run("validate", "tuning", "--nsim", "1024", "--npos", "1024", "--export-arrays", str(arrays))
    assert exported.exit_code == 0, exported.stderr
    import numpy as np

    data = np.load(arrays)
    assert int(data["nsim"]) == 1024 and data["types"].shape == (1024,) and data["packed"].shape == (13,)
    choices = tmp_path / "kt.json"
    choices.write_text(json.dumps({"choices": [
        {"label": "KernelTuner random_sample", "config": {"posbs": 64, "simbs": 4, "vwidth": 4, "wgsize": 8},
         "evaluations": 5, "wall_s": 3.0}]}))
    result = run("validate", "tuning", "--quick", "--runs", "1", "--nsim", "1024", "--npos", "1024", "--rounds", "3",
                 "--stores", str(tmp_path / "stores"), "--also", str(choices), "--json")
    assert result.exit_code == 0, result.stderr
    (other,) = json.loads(result.stdout)["others"]
    assert other["label"] == "KernelTuner random_sample" and 0 < other["fraction"] < 1.1
    choices.write_text(json.dumps({"choices": [{"label": "x", "config": {"posbs": 3, "simbs": 1, "vwidth": 1,
                                                                           "wgsize": 1}, "evaluations": 1, "wall_s": 1}]}))
    outside = run("validate", "tuning", "--quick", "--runs", "1", "--nsim", "1024", "--npos", "1024",
                  "--stores", str(tmp_path / "stores"), "--also", str(choices))
    assert outside.exit_code == 2 and "not in this space" in " ".join(outside.stderr.split())
    choices.write_text("{}")
    broken = run("validate", "tuning", "--quick", "--also", str(choices))
    assert broken.exit_code == 2 and "not a file of other tuners' choices" in " ".join(broken.stderr.split())


def test_tune_bad_input(tmp_path):
    assert "unknown strategy" in run("tune", "varmc", "--strategy", "annealing").stderr
    assert "no results database" in run("tune", "report", "1", "--store", str(tmp_path / "none.sqlite")).stderr


def test_tune_interrupted_says_how_to_resume(tmp_path, monkeypatch, opencl_device):
    import perfcast.cli.tune as tune_cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tune_cli, "_tune_once", interrupted)
    store = tmp_path / "results.sqlite"
    result = run("tune", "varmc", "--quick", "--nsim", "1024", "--npos", "1024", "--store", str(store))
    assert result.exit_code == 130
    said = " ".join(result.stderr.split())
    assert "interrupted" in said and "run the same command again to resume" in said


def test_tune_refuses_a_store_in_use_and_a_foreign_one(tmp_path):
    import sqlite3

    from perfcast.tune.store import ResultsStore

    foreign = tmp_path / "app.sqlite"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE users (name TEXT)")
    for args in (["tune", "report", "1", "--store", str(foreign)], ["tune", "varmc", "--store", str(foreign)]):
        result = run(*args)
        assert result.exit_code == 2 and "not a perfcast results store" in " ".join(result.stderr.split())
    busy = ResultsStore(tmp_path / "busy.sqlite")
    busy.lock()
    try:
        result = run("tune", "varmc", "--quick", "--store", str(tmp_path / "busy.sqlite"))
        assert result.exit_code == 2 and "another perfcast process" in " ".join(result.stderr.split())
    finally:
        busy.close()


def test_roofline_places_the_kernels_of_a_profile(tmp_path):
    from perfcast.profiles.profile import KernelProfile, ProfileSet, ProfileSource

    profile = ProfileSet(ProfileSource("oclgrind"), (
        KernelProfile("stream", 1, {"fp32": 1e6, "fma_fp32": 1e6, "l1_bytes": 8e6, "l2_bytes": 8e6, "l3_bytes": 8e6,
                                    "dram_bytes": 8e6}, bytes_from="simulated for host"),
        KernelProfile("footprint", 1, {"fp32": 4e6, "dram_read": 1e5, "dram_write": 0.0}),
    ))
    path = profile.save(tmp_path / "p.yaml")
    result = runner.invoke(app, ["roofline", "--device", "a100-pcie-40gb", "--profile", str(path), "--json"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "stream: L3 bytes left out" in said
    data = json.loads(result.stdout[result.stdout.index("{"):])
    rows = {row["name"]: row for row in data["kernels"]}
    assert rows["stream"]["work"] == 2e6  # an FMA is two operations
    assert rows["footprint"]["work"] == 4e6
    missing = runner.invoke(app, ["roofline", "--device", "a100-pcie-40gb", "--profile", str(path), "-p", "fp64"])
    assert missing.exit_code != 0 and "no fp64 instruction count" in missing.output
