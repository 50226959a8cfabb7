"""`perfcast tune kernel SPEC`: a tuning space written as a file, its expressions kept to arithmetic, tuned for real."""

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.cli import app
from perfcast.tune.kernel_spec import Expression, KernelSpecError, host_arrays, load_kernel_spec

EXAMPLE = Path(__file__).parents[2] / "examples" / "tune-scale"


def _spec(tmp_path: Path, edit=lambda text: text) -> Path:
    shutil.copy(EXAMPLE / "scale.cl", tmp_path / "scale.cl")
    path = tmp_path / "scale.yaml"
    path.write_text(edit((EXAMPLE / "scale.yaml").read_text()))
    return path


def test_the_example_reads_and_its_arrays_follow_the_problem_size(tmp_path):
    spec, source = load_kernel_spec(_spec(tmp_path))
    assert spec.kernel == "scale" and "ITEMS" in source
    x, y, a = host_arrays(spec, {"n": 8})
    assert x.tolist() == list(range(8)) and y.dtype.name == "float32" and float(a) == 2.0
    with pytest.raises(KernelSpecError, match="more than the 64 GiB"):
        host_arrays(spec, {"n": 1 << 40})


@pytest.mark.parametrize("text", ["__import__('os').system('true')", "n.__class__", "open('x')", "[n]", "'n'",
                                  "lambda: 1", "n if n else 1"])
def test_expressions_are_arithmetic_only(text):
    with pytest.raises(KernelSpecError, match="only arithmetic|not an expression"):
        Expression(text, {"min": min}, "spec")


def test_expressions_evaluate_and_huge_powers_are_refused():
    assert Expression("n // items * 2 + min(wg, 4)", {"min": min}, "e").value({"n": 64, "items": 4, "wg": 8}) == 36
    assert Expression("items * wg <= 64 and items > 0", {}, "e").value({"items": 4, "wg": 8}) is True
    with pytest.raises(KernelSpecError, match="exponent above 64"):
        Expression("2 ** 100000", {}, "e").value({})
    with pytest.raises(KernelSpecError, match="by zero"):
        Expression("n // 0", {}, "e").value({"n": 1})


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace('global: "n // items"', 'global: "n // itemz"'), "names itemz"),
    (lambda t: t.replace("level: work-group", "level: work-item"), "one parameter must be the work-group's size"),
    (lambda t: t.replace("output: 1,", "output: 7,"), "the kernel has 3 arguments"),
    (lambda t: t.replace("version: 1", "version: 2"), "version 2; this perfcast reads version 1"),
    (lambda t: t.replace("size: n ", "size: m "), "size 'm' is not one of the problem's sizes"),
    (lambda t: t.replace("source: scale.cl", "source: missing.cl"), "missing.cl: cannot read"),
    (lambda t: t.replace('"items * wg <= 2048"', '"items * wg <= os.sep"'), "only arithmetic"),
    (lambda t: t + "colour: blue\n", "colour"),
])
def test_a_spec_with_a_mistake_is_refused_before_any_device_work(tmp_path, edit, message):
    with pytest.raises(KernelSpecError, match=message):
        load_kernel_spec(_spec(tmp_path, edit))


def _opencl():
    cl = pytest.importorskip("pyopencl")
    try:
        cl.get_platforms()
    except cl.Error:
        pytest.skip("no OpenCL platform")


def test_a_spec_tunes_from_the_command_line_and_resumes_from_its_store(tmp_path):
    _opencl()
    spec = _spec(tmp_path, lambda t: t.replace("n: 1048576", "n: 65536").replace("[1, 2, 4, 8, 16]", "[1, 4]")
                 .replace("[1, 8, 32, 64, 128]", "[8, 32]"))
    store = tmp_path / "r.sqlite"
    args = ["tune", "kernel", str(spec), "--strategy", "exhaustive", "-r", "2", "--store", str(store), "--json"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    done = json.loads(first.stdout)
    assert done["space_size"] == 4 and done["best"]["wg"] in (8, 32) and done["work_per_s"] > 0
    again = json.loads(CliRunner().invoke(app, args).stdout)  # the store answers: nothing measured twice
    assert again["best"] == done["best"]


def test_a_wrong_reference_fails_every_configuration_and_says_so(tmp_path):
    _opencl()
    spec = _spec(tmp_path, lambda t: t.replace("n: 1048576", "n: 65536").replace('"2 * arg0 + 1"', '"2 * arg0 + 2"'))
    result = CliRunner().invoke(app, ["tune", "kernel", str(spec), "-s", "random", "--budget", "3", "-r", "1",
                                      "--store", str(tmp_path / "r.sqlite")])
    assert result.exit_code == 2 and "no configuration could run" in result.output
