"""The command line, driven through typer's runner."""

import json

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
    data = json.loads(run("devices", "show", "v100", "--json").stdout)
    assert data["peak"]["fp32"]["fma"]["value"] == 15.67e12
    assert data["peak"]["fp32"]["add_mul"]["provenance"]["source"] == "estimated"
    assert yaml.safe_load(run("devices", "show", "v100", "--yaml").stdout)["name"] == "v100"


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
        (["-o", "chart.bmp"], "use .png, .svg or .pdf"),
    ],
)
def test_roofline_bad_input(args, message):
    result = run("roofline", "-d", "gts250", *args)
    assert result.exit_code == 2
    assert message in result.stderr
