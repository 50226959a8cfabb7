"""Boat hull and application charts are real images with the expected lines."""

import numpy as np
from PIL import Image

from perfcast.devices.catalog import catalog
from perfcast.devices.hull_view import hull_inputs
from perfcast.plots.boathull import (
    HullPanel,
    MeasuredPoints,
    application_figure,
    hull_figure,
)
from perfcast.plots.files import save_figure
from perfcast.species.application import predict_app, predict_primitive
from perfcast.species.application_file import load_application

F = np.geomspace(1, 1e4, 50)


def test_hull_chart_with_measured_points(tmp_path):
    gpu = predict_primitive("1024x1024|tile(1x1024) -> 1024|element", hull_inputs(catalog()["gtx470"]).figures, F,
                            transfers=True).prediction
    cpu = predict_primitive("1024x1024|tile(1x1024) -> 1024|element", hull_inputs(catalog()["core-i7-930"]).figures,
                            F).prediction
    figure = hull_figure([
        HullPanel("GTX 470", gpu, show_transfer=True),
        HullPanel("i7-930", cpu, MeasuredPoints([1, 10, 100], [1e-3, 2e-3, 9e-3])),
    ])
    gpu_labels = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    cpu_labels = [t.get_text() for t in figure.axes[1].get_legend().get_texts()]
    expected = {"c0 compute", "m0 memory", "c1 floor: no FMA", "m1 floor: scattered accesses", "hull + t0 (transfers)"}
    assert expected <= set(gpu_labels)
    assert {"c1 floor: multi-threaded scalar", "c3 floor: single-threaded scalar", "measured"} <= set(cpu_labels)
    assert figure.axes[0].get_xscale() == "log" and "[ms]" in figure.axes[0].get_ylabel()
    path = save_figure(figure, tmp_path / "hull.png")
    with Image.open(path) as image:
        assert image.size[0] > image.size[1] > 400


def test_application_chart(tmp_path):
    application = load_application("examples/fast-focus.yaml")
    results = {name: predict_app(application, hull_inputs(catalog()[name]).figures)[0] for name in ("gtx470", "gts250")}
    figure = application_figure(results)
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert labels[0] == "histogram" and labels[-1] == "total"
    assert save_figure(figure, tmp_path / "app.svg").read_bytes()[:5] == b"<?xml"
