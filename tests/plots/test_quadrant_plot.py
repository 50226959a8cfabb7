"""The quadrant-split chart (spec §3): one kernel, several devices, arrows to each estimate."""

import math

import pytest
from PIL import Image

from perfcast.models.quantitative import DeviceRates, KernelCounts, predict_counts
from perfcast.plots.files import save_figure
from perfcast.plots.quadrant import _estimate, quadrant_figure

KERNEL = KernelCounts(fma32=400, fma64=0, ldst=200, inst_warp=100, fp32=1000, fp64=0, int=300, dram_read=20,
                      dram_write=5)
FAST_MEMORY = DeviceRates(1e12, 5e11, 4e11, 5e11, 2.5e11, 2e12)
SLOW_MEMORY = DeviceRates(1e12, 5e11, 4e11, 5e11, 2.5e11, 50e9)


def predictions():
    return [("fast-memory", predict_counts(KERNEL, FAST_MEMORY)), ("slow-memory", predict_counts(KERNEL, SLOW_MEMORY))]


def test_estimates_lie_on_the_kernel_line():
    for _, p in predictions():
        x, y = _estimate(p)
        assert y == pytest.approx(p.o_krn * x)
        assert y == pytest.approx(p.performance / 1e9)
    (_, compute), (_, memory) = predictions()
    assert compute.bound == "compute" and memory.bound == "memory"
    assert _estimate(memory)[0] == pytest.approx(50.0)  # straight below the device: same bandwidth
    assert _estimate(compute)[1] == pytest.approx(compute.t_op_adjusted / 1e9)  # left of it: same throughput


def test_a_kernel_slowed_by_its_divisions_lies_on_its_line_below_both_roofs():
    from perfcast.models.quantitative import division_cost, kernel_parameters, predict

    plain = predict(kernel_parameters(KERNEL), FAST_MEMORY)
    divided = predict(kernel_parameters(KERNEL), FAST_MEMORY, divisions=division_cost(1e3, 1e9))  # 1 us
    assert divided.bound == "division"
    x, y = _estimate(divided)
    assert y == pytest.approx(divided.performance / 1e9) and y == pytest.approx(divided.o_krn * x)
    assert y < plain.t_op_adjusted / 1e9 and x < FAST_MEMORY.b_mem / 1e9


@pytest.mark.parametrize("log", [False, True])
def test_png(tmp_path, log):
    figure = quadrant_figure("k", predictions(), log=log)
    ax = figure.axes[0]
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert any("O_krn = 0.0" in label or "O_krn = 1.75" in label for label in labels)
    assert any("fast-memory: compute bound" in label for label in labels)
    assert any("slow-memory: memory bound" in label for label in labels)
    path = save_figure(figure, tmp_path / "q.png")
    with Image.open(path) as image:
        assert image.size[0] > 500


def test_kernel_without_traffic():
    kernel = KernelCounts(0, 0, 10, 10, 100, 0, 10, 0, 0)
    p = predict_counts(kernel, SLOW_MEMORY)
    assert math.isinf(p.o_krn)
    figure = quadrant_figure("no traffic", [("d", p)])
    assert "no DRAM traffic" in " ".join(t.get_text() for t in figure.axes[0].get_legend().get_texts())


def test_needs_a_device():
    with pytest.raises(ValueError):
        quadrant_figure("k", [])
