"""The roofline chart is written as a real image with the expected content."""

import pytest
from PIL import Image

from perfcast.devices.catalog import catalog
from perfcast.devices.roofline_view import device_roofline
from perfcast.models.roofline import LocalityWall
from perfcast.plots.files import save_figure
from perfcast.plots.roofline import KernelMark, roofline_figure


@pytest.fixture
def figure():
    device = catalog()["core-i7-930"]
    roof = device_roofline(device, "fp64")
    kernels = [
        KernelMark("triad", 2 / 24),
        KernelMark("stencil", {"L1": 0.1, "L2": 0.3, "DRAM": 0.8}),
        KernelMark("dgemm", 50.0, performance=30e9),
    ]
    walls = [LocalityWall("+capacity", 0.4)]
    return roofline_figure(roof, kernels, walls=walls, levels={"L1": 400e9, "L2": 200e9, "DRAM": 25.6e9})


def test_png_is_a_valid_image_of_sensible_size(figure, tmp_path):
    path = save_figure(figure, tmp_path / "roofline.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 20_000
    with Image.open(path) as image:
        assert image.size == (1080, 720)
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
        assert len(colours) > 50, "a blank image is not a chart"


@pytest.mark.parametrize(("suffix", "magic"), [(".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_vector_formats(figure, tmp_path, suffix, magic):
    path = save_figure(figure, tmp_path / f"roofline{suffix}")
    assert path.read_bytes()[: len(magic)] == magic


def test_chart_content(figure):
    ax = figure.axes[0]
    assert "op/B" in ax.get_xlabel() and "GFLOP/s" in ax.get_ylabel()
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert any(label.startswith("roof: 44.8 GFLOP/s") for label in legend)
    assert {"triad", "dgemm", "stencil (L1)", "stencil (DRAM)", "L1 400 GB/s"} <= set(legend)
    labels = [text.get_text() for text in ax.texts]
    assert any("no SIMD" in label for label in labels)
    assert any("+capacity" in label for label in labels)
    low, high = ax.get_xlim()
    assert low <= 2 / 24 and high >= 50.0


def test_unknown_format_is_refused(figure, tmp_path):
    with pytest.raises(ValueError, match="use one of"):
        save_figure(figure, tmp_path / "roofline.bmp")
