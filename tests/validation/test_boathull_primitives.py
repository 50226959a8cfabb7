"""The boat hull validation runs end to end on small primitives and writes a report."""

import shutil

import pytest

from perfcast.devices.catalog import catalog
from perfcast.devices.hull_view import hull_inputs
from perfcast.kernels.primitives import elementwise, load_primitives, reduction
from perfcast.validation.boathull_primitives import summary, validate_boathull, validation_markdown

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="the native kernels need gcc")


def test_small_validation_run_and_report():
    library = load_primitives()
    inputs = hull_inputs(catalog()["core-i7-930"])
    primitives = [elementwise(library, 1 << 16), reduction(library, 1 << 16)]
    run = validate_boathull(inputs, primitives, repetitions=2, complexities=lambda p: p.complexities[:2])
    assert [(p.primitive, p.f) for p in run.points] == [
        ("elementwise", 1), ("elementwise", 2), ("reduction", 1), ("reduction", 3),
    ]
    for point in run.points:
        assert point.measured > 0 and point.predicted > 0
        assert point.range_lower <= point.predicted <= point.range_upper
        assert point.error == pytest.approx(abs(point.predicted - point.measured) / point.measured * 100)
    assert run.points[0].class_name == "binarization (reference)"
    assert run.points[2].class_name == "sum (reference)"
    rows = summary(run.points)
    assert set(rows) == {"elementwise", "reduction"}
    text = validation_markdown(run, inputs, "perfcast validate boathull --quick", "chart.png")
    assert "perfcast validate boathull --quick" in text
    assert text.count("| elementwise |") == 3  # two points and the summary row
    assert "![measured against predicted](chart.png)" in text


def test_gpu_device_is_refused():
    with pytest.raises(ValueError, match="is a gpu"):
        validate_boathull(hull_inputs(catalog()["gtx470"]), [], repetitions=1)
