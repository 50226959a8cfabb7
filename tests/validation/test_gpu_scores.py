"""Scoring on the GPU corpus, on a small synthetic kernel measured on two catalog GPUs."""

import math
from dataclasses import replace

import numpy as np
import pytest

from perfcast.devices.catalog import get_device
from perfcast.validation.corpus import CorpusError, CorpusKernel, KernelSource
from perfcast.validation.gpu_report import penalty_groups
from perfcast.validation.gpu_scores import (
    IMPLAUSIBLE,
    gpu_figures,
    hull_score,
    pair_score,
    portability_score,
    replay_gap,
    replay_scores,
    roofline_score,
    score_corpus,
)
from perfcast.validation.kernel_work import kernel_work

NAMES = ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "use_shmem")
PROBLEM = {"size": [4096, 4096], "filter": [15, 15], "element_bytes": 4}
CONFIGS = np.array([[32, 4, 1, 2, 1], [64, 4, 1, 2, 1], [32, 8, 1, 1, 1], [16, 1, 1, 1, 1]])


def _kernel(times_a: list[float], times_b: list[float]) -> CorpusKernel:
    times = np.array([times_a, times_b]).T
    status = np.full(times.shape, "ok", dtype="<U8")
    status[np.isnan(times)] = "runtime"
    return CorpusKernel("convolution-milo", "test", NAMES, CONFIGS, ("a100-40gb", "v100"), times,
                        np.zeros_like(times), status, PROBLEM,
                        (KernelSource("a100-40gb", "a", ""), KernelSource("v100", "b", "")), {})


@pytest.fixture(scope="module")
def gpus() -> dict:
    return {name: get_device(name) for name in ("a100-40gb", "v100")}


def _work():
    return kernel_work("convolution-milo", CONFIGS, NAMES, PROBLEM)


def test_a_time_below_the_bound_is_a_violation_and_far_below_it_a_broken_record(gpus: dict) -> None:
    work = _work()
    a100 = gpu_figures(gpus["a100-40gb"])
    naive = max(float(work.flop[0]) / a100.fma, float(work.dram[0]) / a100.bandwidth["DRAM"])
    dram = float(work.dram[0]) / a100.bandwidth["DRAM"]
    kernel = _kernel([naive * 0.9, naive * 1.5, dram / (IMPLAUSIBLE * 1.1), naive * 3], [1e-3] * 4)
    score = roofline_score(kernel, work, "a100-40gb", a100)
    assert score.naive_violations == 1  # row 0, 10 % under; the broken row 2 is counted apart
    assert list(score.implausible) == [2]
    assert score.best_row == 0  # the broken record is not the best
    assert score.naive_fraction == pytest.approx(1 / 0.9)
    assert not score.plausible(kernel)[2]


def test_a_space_mostly_broken_is_kept_out_whole(gpus: dict) -> None:
    work = _work()
    a100 = gpu_figures(gpus["a100-40gb"])
    dram = float(work.dram[0]) / a100.bandwidth["DRAM"]
    kernel = _kernel([dram / 10, dram / 10, dram / 10, dram * 50], [1e-3] * 4)
    score = roofline_score(kernel, work, "a100-40gb", a100)
    assert list(score.implausible) == [0, 1, 2, 3] and not score.plausible(kernel).any()
    scores = score_corpus([kernel], {kernel.name: work}, gpus)
    assert scores.pairs == [] and scores.usable[kernel.name] == ["v100"]
    assert any("no plausible configuration" in s for s in scores.skipped)


def test_the_spread_forgives_a_bound_beaten_within_it(gpus: dict) -> None:
    work = _work()
    a100 = gpu_figures(gpus["a100-40gb"])
    naive = max(float(work.flop[0]) / a100.fma, float(work.dram[0]) / a100.bandwidth["DRAM"])
    kernel = _kernel([naive * 0.95] * 4, [1e-3] * 4)
    spreads = kernel.spreads.copy()
    spreads[:, 0] = 0.1
    kernel = CorpusKernel(kernel.name, kernel.title, NAMES, CONFIGS, kernel.devices, kernel.times, spreads,
                          kernel.status, PROBLEM, kernel.sources, {})
    assert roofline_score(kernel, work, "a100-40gb", a100).naive_violations == 0


def test_the_hull_contains_a_time_inside_its_range_and_measures_a_miss(gpus: dict) -> None:
    work = _work()
    a100 = gpu_figures(gpus["a100-40gb"])
    inside = hull_score(_kernel([7e-4] * 4, [1e-3] * 4), work, "a100-40gb", a100, 0)
    assert inside.lower < 7e-4 < inside.upper and inside.contained and inside.miss == 1
    assert inside.width == pytest.approx(2.0)  # c1 = 2 c0: the FMA floor
    outside = hull_score(_kernel([inside.upper * 3] * 4, [1e-3] * 4), work, "a100-40gb", a100, 0)
    assert not outside.contained and outside.miss == pytest.approx(3.0)


def test_the_hull_prices_a_class_s_conversions_at_each_gpu_s_rate() -> None:
    from perfcast.models.boathull import predict_gpu

    names = ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y")
    problem = {"samples": 1000, "dms": 64, "channels": 64, "max_shift": 10}
    configs = np.array([[32, 4, 1, 1]])
    work = kernel_work("dedispersion-milo", configs, names, problem)
    times = np.array([[1e-3]])
    kernel = CorpusKernel("dedispersion-milo", "test", names, configs, ("a100-pcie-40gb",), times,
                          np.zeros_like(times), np.full(times.shape, "ok", dtype="<U8"), problem,
                          (KernelSource("a100-pcie-40gb", "a", ""),), {})
    a100 = gpu_figures(get_device("a100-pcie-40gb"))
    # GA100: 108 SMs x 16 conversions a clock against 6912 FMA lanes: a conversion is 8 ops of the FMA peak
    assert a100.conversion_ops == pytest.approx(8, rel=1e-3)
    score = hull_score(kernel, work, "a100-pcie-40gb", a100, 0)
    plain = predict_gpu(work.hull.variables, a100.hull, [2 + 8], element_bytes=1)
    assert score.lower == pytest.approx(float(plain.lower[0]), rel=1e-3)
    assert score.lower > float(predict_gpu(work.hull.variables, a100.hull, [2], element_bytes=1).lower[0])
    no_rate = replace(a100, conversion_ops=None)
    with pytest.raises(CorpusError, match="no conversions figure"):
        hull_score(kernel, work, "a100-pcie-40gb", no_rate, 0)


def test_a_target_that_scales_by_bandwidth_is_predicted_exactly_by_that_baseline(gpus: dict) -> None:
    work = _work()
    a100, v100 = gpu_figures(gpus["a100-40gb"]), gpu_figures(gpus["v100"])
    ratio = a100.bandwidth["DRAM"] / v100.bandwidth["DRAM"]
    source = [1e-3, 2e-3, 3e-3, 4e-3]
    kernel = _kernel(source, [t * ratio for t in source])
    plausible = {d: kernel.measured(d) for d in kernel.devices}
    pair = pair_score(kernel, work, "a100-40gb", "v100", a100, gpu_figures(gpus["v100"], gpus["a100-40gb"]),
                      plausible)
    assert pair.n == 4 and pair.same_vendor
    assert pair.mape["bandwidth ratio"] == pytest.approx(0, abs=1e-12)
    assert pair.best_ape["bandwidth ratio"] == pytest.approx(0, abs=1e-12)
    assert pair.mape["max ratio"] == pytest.approx(abs(max(ratio, a100.fma / v100.fma) / ratio - 1))
    assert pair.rank_correlation == pytest.approx(1.0)
    assert np.isfinite(pair.projected).all() and pair.mape["perfcast"] >= 0


def test_a_configuration_failed_on_either_gpu_is_not_projected(gpus: dict) -> None:
    work = _work()
    kernel = _kernel([1e-3, 2e-3, math.nan, 4e-3], [1e-3, math.nan, 3e-3, 4e-3])
    plausible = {d: kernel.measured(d) for d in kernel.devices}
    a100, v100 = gpu_figures(gpus["a100-40gb"]), gpu_figures(gpus["v100"])
    pair = pair_score(kernel, work, "a100-40gb", "v100", a100, v100, plausible)
    assert pair.n == 2 and np.isnan(pair.projected[1]) and np.isnan(pair.projected[2])


def test_the_source_penalty_is_the_targets_best_on_the_source_over_the_sources_optimum(gpus: dict) -> None:
    work = _work()
    a100, v100 = gpu_figures(gpus["a100-40gb"]), gpu_figures(gpus["v100"])
    # The target's best (row 2) runs 12x the source's optimum on the source: row 3, which failed on the target
    # (not a shared configuration) yet is the source's fastest.
    kernel = _kernel([1e-3, 2e-3, 6e-3, 0.5e-3], [4e-3, 3e-3, 1e-3, math.nan])
    plausible = {d: kernel.measured(d) for d in kernel.devices}
    pair = pair_score(kernel, work, "a100-40gb", "v100", a100, v100, plausible)
    assert pair.best_row == 2
    assert pair.source_penalty == pytest.approx(6e-3 / 0.5e-3)  # the optimum over every plausible source row
    bands = penalty_groups([pair, replace(pair, source_penalty=1.0), replace(pair, source_penalty=2.9),
                            replace(pair, source_penalty=math.nan)])
    assert [len(group) for group in bands.values()] == [1, 1, 1]  # NaN (no shared configuration) in none
    assert list(bands) == ["1-1.5x", "1.5-3x", "above 3x"]


def test_portability_carries_the_sources_best_and_takes_the_best_of_the_top_k() -> None:
    kernel = _kernel([1e-3, 2e-3, 3e-3, 4e-3], [4e-3, 2e-3, 1e-3, 8e-3])
    plausible = {d: kernel.measured(d) for d in kernel.devices}
    projected = np.array([1.0, 3.0, 2.0, 4.0])  # the projection ranks rows 0, 2, 1, 3
    score = portability_score(kernel, "a100-40gb", "v100", plausible, projected, ks=(1, 2))
    assert score.best_carried == pytest.approx(1e-3 / 4e-3)
    assert score.projected_top == {1: pytest.approx(0.25), 2: pytest.approx(1.0)}


def test_a_target_that_measured_part_of_the_space_is_scored_on_what_it_measured() -> None:
    kernel = _kernel([1e-3, 2e-3, 3e-3, 4e-3], [math.nan, 2e-3, 1e-3, math.nan])
    kernel.status[[0, 3], 1] = "absent"  # a lent GPU's search timed rows 1 and 2 only
    plausible = {d: kernel.measured(d) for d in kernel.devices}
    projected = np.array([1.0, 3.0, 2.0, 4.0])
    score = portability_score(kernel, "a100-40gb", "v100", plausible, projected, ks=(1, 2))
    assert math.isnan(score.best_carried)  # the source's best (row 0) is unknown there, not failed
    assert score.projected_top == {1: pytest.approx(1.0), 2: pytest.approx(1.0)}  # row 2 ranks first of 1 and 2


def test_a_column_with_little_of_the_space_is_not_replayed_and_says_why() -> None:
    kernel = _kernel([1e-3, 2e-3, 3e-3, 4e-3], [math.nan, math.nan, math.nan, 1e-3])
    kernel.status[:3, 1] = "absent"
    assert replay_gap(kernel, "a100-40gb") == ""
    assert "1 of its 4 configurations measured" in replay_gap(kernel, "v100")
    assert [s.device for s in replay_scores([kernel], {kernel.name: ["a100-40gb", "v100"]}, 1, 4)] == ["a100-40gb"]


def test_scoring_the_corpus_covers_every_pair_and_leaves_out_gpus_it_does_not_know(gpus: dict) -> None:
    kernel = _kernel([1e-3, 2e-3, 3e-3, 4e-3], [2e-3, 3e-3, 4e-3, 5e-3])
    scores = score_corpus([kernel], {kernel.name: _work()}, gpus)
    assert len(scores.roofline) == 2 and len(scores.hull) == 2
    assert [(p.source, p.target) for p in scores.pairs] == [("a100-40gb", "v100"), ("v100", "a100-40gb")]
    partial = score_corpus([kernel], {kernel.name: _work()}, {"v100": gpus["v100"]})
    assert partial.pairs == [] and any("a100-40gb: not in the device catalog" in s for s in partial.skipped)


def test_a_level_without_a_bandwidth_is_charged_to_l1_and_said(gpus: dict) -> None:
    from perfcast.validation.gpu_scores import _charged, _left_out

    hits = {"L1": 10.0, "L2": 5.0, "DRAM": 1.0}
    assert _charged(hits, 3.0, {"L1": True, "L2": False, "shared": True}) == ({"L1": 15.0, "DRAM": 1.0}, 3.0)
    assert _charged(hits, 3.0, {"L1": False, "L2": True, "shared": False}) == ({"L2": 5.0, "DRAM": 1.0}, 0.0)
    assert _left_out({"L1": True, "L2": False, "shared": True}) == ("L2 charged to L1",)
    assert _left_out({"L1": False, "L2": False, "shared": True}) == ("L2 left out", "L1 left out")


def test_the_projected_interval_contains_a_target_inside_it_within_its_spread(gpus: dict) -> None:
    work = _work()
    kernel = _kernel([1e-3, 2e-3, 3e-3, 4e-3], [1e-3, 2e-3, 3e-3, 4e-3])
    plausible = {d: kernel.measured(d) for d in kernel.devices}
    a100, v100 = gpu_figures(gpus["a100-40gb"]), gpu_figures(gpus["v100"], gpus["a100-40gb"])
    pair = pair_score(kernel, work, "a100-40gb", "v100", a100, v100, plausible)
    # the target's times are set inside each configuration's projected interval
    inside = _kernel([1e-3, 2e-3, 3e-3, 4e-3], list(pair.projected))
    again = pair_score(inside, work, "a100-40gb", "v100", a100, v100, {d: inside.measured(d) for d in inside.devices})
    assert again.contained == 1.0 and again.best_contained
    assert again.mape["perfcast"] == pytest.approx(0, abs=1e-9)
    assert again.tuned_ape["perfcast"] == pytest.approx(0, abs=1e-9)


def test_the_hull_range_is_widened_by_the_measurements_spread(gpus: dict) -> None:
    work = _work()
    a100 = gpu_figures(gpus["a100-40gb"])
    first = hull_score(_kernel([1e-3] * 4, [1e-3] * 4), work, "a100-40gb", a100, 0)
    above = first.upper * 1.05
    kernel = _kernel([above] * 4, [1e-3] * 4)
    assert not hull_score(kernel, work, "a100-40gb", a100, 0).contained
    spreads = kernel.spreads.copy()
    spreads[:, 0] = 0.1
    noisy = CorpusKernel(kernel.name, kernel.title, NAMES, CONFIGS, kernel.devices, kernel.times, spreads,
                         kernel.status, PROBLEM, kernel.sources, {})
    assert hull_score(noisy, work, "a100-40gb", a100, 0).contained
