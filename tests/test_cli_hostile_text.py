"""User text never becomes rich markup, an emoji or a terminal control sequence, in any command's output."""

import shutil

import pytest
import yaml
from typer.testing import CliRunner

from perfcast.cli import app
from perfcast.devices.catalog import catalog

runner = CliRunner()
EVIL = "Evil [/] [bold]GPU[/bold] :-1: \x1b[31mred\x1b[0m\x07"


def run(*args: str):
    return runner.invoke(app, list(args))


def clean(result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    for text in (result.stdout, result.stderr):
        assert "\x1b[31m" not in text and "\x07" not in text
        assert "👎" not in text


@pytest.fixture
def evil_device(tmp_path):
    data = catalog()["v100"].model_dump(mode="json", exclude_none=True)
    data.update(name="evil", full_name=EVIL, notes=EVIL)
    path = tmp_path / "evil.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("args", [
    ["roofline", "-d", "v100", "-k", "[/]x:1e9:1e9"],
    ["roofline", "-d", "v100", "-k", "a:-1:1e9"],
    ["roofline", "-d", "[/]"],
    ["devices", "show", "[bold]x[/bold]"],
    ["hull", "1024|element -> 1024|element", "-d", "[/]"],
    ["hull", "[/]", "-d", "v100"],
    ["tune", "report", "[/]"],
])
def test_hostile_arguments(args):
    result = run(*args)
    clean(result)
    assert result.exit_code in (0, 2)


@pytest.mark.parametrize("command", [
    ["devices", "show"],
    ["roofline", "-k", "[b]k[/b]:1e9:1e9", "-d"],
    ["hull", "1024|element -> 1024|element", "-d"],
])
def test_hostile_device_file(evil_device, command):
    result = run(*command, str(evil_device))
    clean(result)
    assert result.exit_code == 0, result.output
    assert "Evil [/] [bold]GPU[/bold] :-1:" in result.stdout


def test_hostile_application(tmp_path):
    path = tmp_path / "app.yaml"
    path.write_text(yaml.safe_dump({
        "name": EVIL, "description": EVIL,
        "primitives": [{"name": "[/]step", "species": "1024|element -> 1024|element", "f": 1}],
        "transfers": [{"name": "[red]copy", "elements": 10}],
    }), encoding="utf-8")
    result = run("app", str(path), "-d", "gtx470")
    clean(result)
    assert result.exit_code == 0, result.output
    assert "[/]step" in result.stdout and "[red]copy" in result.stdout


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc preprocesses C")
def test_hostile_c_names(tmp_path):
    path = tmp_path / "k.c"
    path.write_text("void f(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = x[i]; }\n"
                    "/* \x1b[31m */\n")
    result = run("classify", str(path), "-F", "[/]")
    clean(result)
    assert result.exit_code == 2 and "'[/]'" in result.stderr
