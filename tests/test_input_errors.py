"""Every bad input of issue 'no traceback for any input' is an error that names the option, file or field."""

import math

import pytest
from typer.testing import CliRunner

from perfcast.cli import app
from perfcast.devices.catalog import catalog, get_device
from perfcast.devices.hull_view import hull_inputs
from perfcast.devices.roofline_view import device_roofline
from perfcast.errors import NotFound, PerfcastError
from perfcast.models.boathull import transfer_time
from perfcast.models.roofline import analyze_kernel, hierarchical_roofline
from perfcast.species.application import predict_primitive

runner = CliRunner()


def said(result) -> str:
    return " ".join(result.stderr.split())


@pytest.mark.parametrize("args, message", [
    (["hull", "9223372036854775808|element -> 9223372036854775808|element", "-d", "v100", "--f", "1e308"],
     "overflows"),
    (["hull", "A|element -> A|element", "--bind", "A=1,A=4096", "-d", "v100"], "A is bound twice"),
    (["hull", "1024|element -> 1024|element", "--bind", "A=5", "-d", "v100"], "not a symbol of"),
    (["hull", "1024|element -> 1024|element", "-d", "v100", "--f", "1,,2"], "an empty item between commas"),
    (["hull", "1024|element -> 1024|element", "-d", "v100", "--element-size", "-4"], "--element-size -4"),
    (["hull", "1024|element -> 1024|element", "-d", "v100", "--assume", "vectorised"], "no device given is a CPU"),
    (["hull", "1024|element -> 1024|element", "-d", "v100", "--f", "1e308"], "overflows at f = 1e+308"),
    (["roofline", "-d", "gtx470", "--tensor", "-k", "a:1e9:1e9"], "has no tensor peak"),
    (["roofline", "-d", "v100", "-k", "a:1e9:1e9", "-o", "/proc/x.png"], "--output /proc/x.png: cannot write"),
    (["devices", "detect", "-o", "/proc/x.yaml"], "--output /proc/x.yaml: cannot write"),
    (["devices", "show", "nothere"], "no device 'nothere'"),
])
def test_cli_errors_name_what_is_wrong(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in said(result)
    assert "Traceback" not in result.output


def test_application_file_errors_name_the_field(tmp_path):
    path = tmp_path / "app.yaml"
    path.write_text("name: x\nprimitives:\n  - {name: a, species: '4|element -> 4|element', f: 1}\n"
                    "transfers:\n  - {name: t, bytes: -5 MB}\n")
    result = runner.invoke(app, ["app", str(path), "-d", "v100"])
    assert result.exit_code == 2 and "transfers.0: bytes must be a finite, non-negative size" in said(result)
    path.write_text("name: x\nprimitives:\n  - {name: a, species: '4|element -> 4|element', f: 1e308}\n")
    result = runner.invoke(app, ["app", str(path), "-d", "v100"])
    assert result.exit_code == 2 and "overflows" in said(result)


def test_python_api_errors():
    roof = device_roofline(catalog()["v100"])
    for bad in (None, "1e9", True):
        with pytest.raises(ValueError, match="must be a number"):
            analyze_kernel(roof, bad, 1e9)
    with pytest.raises(TypeError, match="a device is named by a string"):
        get_device(42)
    with pytest.raises(NotFound) as lookup:
        get_device("gtx9000")
    assert isinstance(lookup.value, LookupError) and isinstance(lookup.value, PerfcastError)
    assert not str(lookup.value).startswith("'")  # no KeyError quotes
    with pytest.raises(ValueError, match="no bandwidth for memory level"):
        hierarchical_roofline(1e9, {"L9": 1e9}, roof.peak, {"DRAM": 1e12})
    with pytest.raises(ValueError, match="finite"):
        transfer_time(math.nan, 4, 1e9)
    with pytest.raises(ValueError, match="overflows"):
        predict_primitive("4|element -> 4|element", hull_inputs(catalog()["v100"]).figures, [1e308])


def test_an_ascii_terminal_gets_no_traceback():
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run([sys.executable, "-c", "from perfcast.cli import main; main()", "hull",
                           "4|element -> 4|element", "-d", "v100"], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
