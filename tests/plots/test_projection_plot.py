"""The projection's roofline panels: the kernel-specific ceilings drawn, the core-bound one where it exists."""

from perfcast.models.projection import GpuMaxima, ProjectedKernel, project
from perfcast.plots.projection import projection_rooflines_figure

MAXIMA = GpuMaxima(fma=100e9, add_mul=50e9, l1=400e9, l2=200e9, dram=40e9, shared=None)
HALF = GpuMaxima(fma=50e9, add_mul=25e9, l1=200e9, l2=100e9, dram=34e9, shared=None)
KERNEL = ProjectedKernel(n_fma=1e6, n_add=0, n_mul=0, active_threads=32, hits={"L1": 8e6, "L2": 4e6, "DRAM": 4e6},
                         shared_bytes=0, shared_efficiency=1.0, flop=2e6, time=1e-3)


def _labels(figure):
    return [[text.get_text() for text in ax.get_legend().get_texts()] for ax in figure.axes]


def test_the_core_bound_ceiling_is_drawn_on_each_panel_that_has_one():
    capped = project(KERNEL, MAXIMA, HALF, core_times=(1e-3, 2e-3))
    left, right = _labels(projection_rooflines_figure("k", "two", "one", capped, measured_target=2e-3))
    assert any(label.startswith("Perf_core (core-bound time) 2 GFLOP/s") for label in left)
    assert any(label.startswith("Perf_core (core-bound time) 1 GFLOP/s") for label in right)
    plain = project(KERNEL, MAXIMA, HALF)
    assert not any("Perf_core" in label for panel in _labels(projection_rooflines_figure("k", "a", "b", plain))
                   for label in panel)
