"""Suite bookkeeping: calibration, cache plateaus, and turning measurements into a measured profile."""

from pathlib import Path

import pytest

from perfcast.bench.suite import (
    MixPoint,
    Sample,
    SuiteResult,
    SweepPoint,
    cache_plateaus,
    calibrated_rate,
    compute_rounds_note,
    highest,
    in_rounds,
    measured_device,
    moved_bytes,
    rounds_at,
)
from perfcast.devices.catalog import catalog, device_to_yaml, parse_device_text


def test_calibration_grows_passes_until_long_enough():
    calls = []

    def run(passes):
        calls.append(passes)
        return passes * 1e-4  # 0.1 ms a pass

    sample = calibrated_rate(run, work_per_pass=1e6, repetitions=3, min_seconds=0.01)
    assert sample.value == pytest.approx(1e10)  # 1e6 units per 0.1 ms
    assert sample.repetitions == 3 and sample.spread == pytest.approx(0)
    assert calls[-1] * 1e-4 >= 0.01 and calls[-1] == calls[-2] == calls[-3]


def test_sample_refuses_nonsense():
    with pytest.raises(ValueError):
        Sample(0.0, 0.0, 1)
    with pytest.raises(ValueError):
        Sample(float("nan"), 0.0, 1)


def point(size, rate):
    return SweepPoint("triad", size, Sample(rate, 0.01, 3))


def test_cache_plateaus():
    points = [point(16e3, 500), point(32e3, 520), point(200e3, 300), point(400e3, 310),
              point(4e6, 150), point(8e6, 160), point(256e6, 40)]
    levels = cache_plateaus(points, [("L1", 96e3), ("L2", 2e6), ("L3", 32e6)])
    assert levels["L1"].value == pytest.approx(510)  # 16 and 32 kB: at most half of 96 kB
    assert levels["L2"].value == pytest.approx(305)  # above 192 kB, at most 1 MB
    assert levels["L3"].value == pytest.approx(160)  # above 4 MB (strictly) and at most 16 MB: only 8 MB
    assert set(levels) == {"L1", "L2", "L3"}


def test_cache_plateau_falls_back_to_any_point_inside_the_level():
    levels = cache_plateaus([point(16e3, 500), point(1.5e6, 200)], [("L1", 96e3), ("L2", 2e6)])
    assert levels["L2"].value == 200  # 1.5 MB is not at most half of 2 MB, but it does fit


def suite(**extra):
    result = SuiteResult(backend="test", tool="perfcast bench (test)", repetitions=3)
    result.dram = {"triad": Sample(20e9, 0.02, 3), "copy": Sample(22e9, 0.02, 3)}
    result.levels = {"L1": Sample(400e9, 0.05, 3), "L3": Sample(100e9, 0.05, 3)}
    result.compute = {("fp32", "fma"): Sample(80e9, 0.01, 3), ("fp32", "add_mul"): Sample(45e9, 0.01, 3),
                      ("int32", "fma"): Sample(20e9, 0.01, 3), ("int32", "add_mul"): Sample(60e9, 0.01, 3)}
    result.compute_ceilings = {"single thread": Sample(20e9, 0.01, 3), "impossible": Sample(90e9, 0.01, 3)}
    result.bandwidth_ceilings = {"single thread": Sample(25e9, 0.1, 3), "strided": Sample(5e9, 0.1, 3)}
    result.mix = [MixPoint(1.0, Sample(20e9, 0.01, 3))]
    for key, value in extra.items():
        setattr(result, key, value)
    return result


def test_measured_device_marks_every_figure_measured():
    base = catalog()["core-i7-930"]
    device = measured_device(base, suite(), today="2026-11-22")
    assert device.name == "core-i7-930-test"
    assert device.full_name.endswith("(measured)")
    assert device.dram_bandwidth == 20e9
    fma = device.peak["fp32"]["fma"]
    assert fma.value == 80e9 and fma.provenance.source == "measured"
    assert fma.provenance.tool == "perfcast bench (test)" and fma.provenance.repetitions == 3
    assert str(fma.provenance.date) == "2026-11-22"
    # the add kernel at 45 G adds/s is above half the FMA op rate but below it: kept as measured
    assert device.peak["fp32"]["add_mul"].value == 45e9
    # integer add faster than integer multiply-add is real and kept
    assert device.peak["int32"]["add_mul"].value == 60e9
    assert device.memory_level("L1").bandwidth.value == 400e9
    assert device.memory_level("L3").bandwidth.value == 100e9
    # a single-thread bandwidth above the all-thread triad is noise: dropped, as is a ceiling above the peak
    assert set(device.bandwidth_ceilings) == {"strided"}
    assert set(device.compute_ceilings) == {"single thread"}
    assert device.compute_units == base.compute_units  # structure comes from the base description
    assert parse_device_text(device_to_yaml(device)) == device


def test_a_measured_profile_drops_the_compute_maxima_another_machine_measured():
    """The catalog's H100 carries the maxima a lent H100 measured; a slower card's profile must still be valid."""
    base = catalog()["h100-sxm5"]
    assert base.maxima is not None and base.maxima.compute
    device = measured_device(base, suite(), today="2026-11-27")  # fp32 FMA 80 GFLOP/s, far below 61 TFLOP/s
    assert not device.maxima.compute  # the peaks measured here are the maxima
    assert device.peak["fp32"]["fma"].value == 80e9
    assert set(device.maxima.bandwidth) == {"shared", "L2"}  # levels this suite did not measure


def test_stream_kernels_count_the_bytes_that_move():
    # 1000 doubles: a triad reads two arrays and writes one, and on a CPU reads the written line in first.
    assert moved_bytes("triad", 1000, 8, write_allocate=False) == 24_000
    assert moved_bytes("triad", 1000, 8, write_allocate=True) == 32_000
    assert moved_bytes("copy", 1000, 8, write_allocate=True) == 24_000
    assert moved_bytes("write", 1000, 4, write_allocate=True) == 8_000
    assert moved_bytes("read", 1000, 4, write_allocate=True) == 4_000


def test_measured_bandwidths_say_they_count_the_bytes_that_move():
    device = measured_device(catalog()["core-i7-930"], suite(), today="2026-11-22")
    assert device.memory_level("DRAM").bandwidth.provenance.counts == "moved"
    assert device.memory_level("L1").bandwidth.provenance.counts == "moved"
    # The boat hull counts the program's elements: on a CPU it takes the triad's program share, and says so.
    from perfcast.devices.hull_view import STREAM_TRIAD_SHARE, hull_inputs

    inputs = hull_inputs(device)
    assert inputs.figures.p_memory == pytest.approx(20e9 * STREAM_TRIAD_SHARE)
    assert "write-allocate" in inputs.sources["P_memory"]
    assert hull_inputs(catalog()["core-i7-930"]).figures.p_memory == catalog()["core-i7-930"].dram_bandwidth


def test_measured_device_keeps_the_rate_of_elementary_calls():
    device = measured_device(catalog()["core-i7-930"], suite(elementary={"fp32": Sample(2e9, 0.03, 3)}),
                             today="2026-11-22")
    calls = device.elementary["fp32"]
    assert calls.value == 2e9 and calls.provenance.source == "measured"
    assert "exp/log/sin" in calls.provenance.tool
    assert parse_device_text(device_to_yaml(device)) == device
    assert measured_device(catalog()["core-i7-930"], suite()).elementary == {}


def test_measured_device_needs_the_triad():
    with pytest.raises(ValueError, match="triad"):
        measured_device(catalog()["core-i7-930"], suite(dram={}))


def test_self_checks_flag_what_looks_wrong():
    from perfcast.bench.suite import self_checks

    quiet = suite()
    assert self_checks(quiet, catalog()["core-i7-930"]) == []
    wrong = suite(
        compute={("fp32", "fma"): Sample(1e9, 0.01, 3), ("fp32", "add_mul"): Sample(1e9, 0.01, 3)},
        levels={"L1": Sample(50e9, 0.01, 3), "L2": Sample(80e9, 0.01, 3)},
        dram={"triad": Sample(20e9, 0.5, 3)},
        mix=[MixPoint(1.0, Sample(40e9, 0.01, 3))],  # above min(1 GFLOP/s, 20 GB/s x 1 op/B)
    )
    found = " | ".join(self_checks(wrong, catalog()["core-i7-930"]))
    assert "peak fp32 add_mul: measured 1 GFLOP/s, below half the spec 89.6 GFLOP/s" in found  # i7-930
    assert "L1 bandwidth 50 GB/s is below L2's 80 GB/s" in found
    assert "intensity sweep at 1 op/B" in found and "above its roof" in found
    assert "spread above 20%" in found and "DRAM triad 50%" in found
    # The empty launches' rounds spread by design (threads awake or asleep): their spread is not flagged.
    from dataclasses import replace

    woken = replace(quiet, launches=Sample(9e5, 0.9, 5), work_groups=Sample(1e8, 0.5, 5))
    assert self_checks(woken, catalog()["core-i7-930"]) == []


def test_self_checks_flag_rates_the_peaks_rule_out():
    from dataclasses import replace

    from perfcast.bench.suite import self_checks

    peaks = {("int32", "fma"): Sample(80e9, 0.01, 3), ("int32", "add_mul"): Sample(150e9, 0.01, 3)}
    sane = replace(suite(compute=peaks), int_divisions=Sample(0.9e9, 0.01, 3),
                   scalar_instructions=Sample(30e9, 0.01, 3), atomics=Sample(0.3e9, 0.01, 3))
    assert not [w for w in self_checks(sane) if "divisions" in w or "scalar" in w or "atomic" in w]
    wrong = replace(sane, int_divisions=Sample(20e9, 0.01, 3), scalar_instructions=Sample(200e9, 0.01, 3),
                    atomics=Sample(250e9, 0.01, 3))
    found = " | ".join(self_checks(wrong))
    assert "int32 divisions: 20 G div/s, within 8x of the int32 multiply-add peak 80 GOP/s" in found
    assert "scalar instructions: 200 G inst/s, above the int32 add peak 150 GOP/s" in found
    assert "atomic increments: 250 G/s, above the scalar instructions' 200 G inst/s" in found


def test_self_checks_go_into_the_profile_notes():
    wrong = suite(levels={"L1": Sample(50e9, 0.01, 3), "L2": Sample(80e9, 0.01, 3)})
    device = measured_device(catalog()["core-i7-930"], wrong, today="2026-11-22")
    assert "Self-check: L1 bandwidth 50 GB/s is below L2's 80 GB/s" in device.notes


def test_launch_latency_is_the_median_batch_once_settled():
    from perfcast.bench.accelerator import launch_latency

    class Runtime:
        group = 4
        calls: list[int] = []
        # Warm-up batches: 22 us, then 8 us (settles), then 8 again; measured batches: medians 21, 10, 15 us.
        batches = iter([[22e-6] * 50, [8e-6] * 50, [8e-6] * 50,
                        [21e-6] * 5, [9e-6, 10e-6, 11e-6, 99e-6, 10e-6], [15e-6] * 5])

        def buffer(self, host):
            return host

        def launch_latencies(self, sink, launches):
            self.calls.append(launches)
            return next(self.batches)

    runtime = Runtime()
    sample = launch_latency(runtime, 5, batches=3, settle=0.0)
    assert runtime.calls == [50, 50, 50, 5, 5, 5]  # settle = 0: stops at the first batch that is no new best
    assert sample is not None and sample.value == pytest.approx(15e-6)
    assert sample.spread == pytest.approx((21 - 10) / 15) and sample.repetitions == 15


def test_peak_shapes_follow_the_native_vector_width():
    from perfcast.bench.opencl import peak_shapes

    assert peak_shapes(8) == [(8, 8), (16, 4), (16, 8)]  # fp32 on AVX2
    assert peak_shapes(4) == [(4, 8), (8, 4), (16, 4), (16, 8)]  # fp64 on AVX2
    assert peak_shapes(1) == [(1, 8), (2, 4), (16, 4), (16, 8)]  # GPUs report 1
    assert peak_shapes(16) == [(16, 8), (16, 4)]
    assert peak_shapes(3) == peak_shapes(1)  # not an OpenCL vector size


def test_best_of_runs_keeps_each_measured_figure_s_highest_and_nothing_else():
    from perfcast.bench.suite import best_of_runs
    from perfcast.devices.catalog import load_device_file
    from perfcast.devices.schema import Figure

    profile = load_device_file(Path(__file__).parents[2] / "docs" / "validation" / "bench-opencl-pocl-profile.yaml")

    def scaled(level_name, factor, device=profile):
        memory = [level.model_copy(update={"bandwidth": Figure.measured(level.bandwidth.value * factor, "t", "2026-11-23")})
                  if level.level == level_name else level for level in device.memory]
        return device.model_copy(update={"memory": memory})

    slow_dram, slow_l1 = scaled("DRAM", 0.5), scaled("L1", 0.8)
    best = best_of_runs([slow_dram, slow_l1])
    for level in ("DRAM", "L1"):
        assert best.memory_level(level).bandwidth.value == pytest.approx(profile.memory_level(level).bandwidth.value)
    assert best.memory_level("DRAM").bandwidth.provenance.note.endswith("the other gave 0.50 of it")
    assert best.memory_level("L1").bandwidth.provenance.source == profile.memory_level("L1").bandwidth.provenance.source
    assert best.peak == profile.peak  # the same in both runs: kept as it was
    assert best.memory_level("L1").size == profile.memory_level("L1").size
    assert best_of_runs([profile]) is profile
    with pytest.raises(ValueError, match="different devices"):
        best_of_runs([profile, profile.model_copy(update={"name": "other"})])
    with pytest.raises(ValueError, match="no measured profiles"):
        best_of_runs([])
    # List entries that name different things are not merged: the first run's stays.
    fewer = profile.model_copy(update={"memory": [m for m in profile.memory if m.level != "L2"] + [
        next(m for m in profile.memory if m.level == "L2")]})
    assert [m.level for m in fewer.memory] != [m.level for m in profile.memory]
    mixed = best_of_runs([fewer, scaled("DRAM", 2.0)])
    assert [m.level for m in mixed.memory] == [m.level for m in fewer.memory]
    assert mixed.memory_level("DRAM").bandwidth.value == pytest.approx(2 * profile.memory_level("DRAM").bandwidth.value)


def test_best_of_runs_takes_a_figure_from_the_runs_that_have_it():
    """A run written before the bench measured a figure (None there) leaves it to the runs that have it."""
    from perfcast.bench.suite import best_of_runs
    from perfcast.devices.catalog import load_device_file
    from perfcast.devices.schema import Figure

    profile = load_device_file(Path(__file__).parents[2] / "docs" / "validation" / "bench-opencl-pocl-profile.yaml")
    older = profile.model_copy(update={"atomics": None})
    newer = profile.model_copy(update={"atomics": Figure.measured(2.5e8, "t", "2026-11-26")})
    assert best_of_runs([older, newer]).atomics.value == pytest.approx(2.5e8)
    assert best_of_runs([newer, older]).atomics.value == pytest.approx(2.5e8)
    assert best_of_runs([older, older]).atomics is None


def test_best_of_runs_lists_each_run_s_self_checks_under_that_run():
    from perfcast.bench.suite import best_of_runs, profile_warnings
    from perfcast.devices.catalog import load_device_file

    profile = load_device_file(Path(__file__).parents[2] / "docs" / "validation" / "bench-opencl-pocl-profile.yaml")
    base = "Measured by perfcast bench (opencl) on 2026-11-23. Kernel launch latency 21 µs."
    first = profile.model_copy(update={"notes": f"{base} Self-check: spread above 20% (a noisy machine; rerun when it "
                                                "is quiet): DRAM triad 33%. Self-check: peak fp32 fma: measured 61.2 "
                                                "GFLOP/s, below half the estimated 174 GFLOP/s."})
    second = profile.model_copy(update={"notes": f"{base} Self-check: L1 bandwidth 100 GB/s is below L2's 120 GB/s."})
    quiet = profile.model_copy(update={"notes": base})
    notes = best_of_runs([first, quiet, second]).notes.splitlines()
    assert notes[0] == base  # the first run's notes, without its warnings
    assert notes[1].startswith("Each measured figure is the best of 3 runs")
    assert notes[2:] == [
        "Run 1 of 3 warned: spread above 20% (a noisy machine; rerun when it is quiet): DRAM triad 33%.",
        "Run 1 of 3 warned: peak fp32 fma: measured 61.2 GFLOP/s, below half the estimated 174 GFLOP/s.",
        "Run 3 of 3 warned: L1 bandwidth 100 GB/s is below L2's 120 GB/s.",
    ]
    assert "Self-check" not in best_of_runs([quiet, quiet]).notes
    assert profile_warnings(first) == ["spread above 20% (a noisy machine; rerun when it is quiet): DRAM triad 33%",
                                       "peak fp32 fma: measured 61.2 GFLOP/s, below half the estimated 174 GFLOP/s"]
    assert profile_warnings(best_of_runs([first, quiet, second])) == [
        "run 1: spread above 20% (a noisy machine; rerun when it is quiet): DRAM triad 33%",
        "run 1: peak fp32 fma: measured 61.2 GFLOP/s, below half the estimated 174 GFLOP/s",
        "run 3: L1 bandwidth 100 GB/s is below L2's 120 GB/s"]
    assert profile_warnings(quiet) == []
    # Merged before the warnings were listed per run: the first run's line, then the merge's own.
    older = profile.model_copy(update={"notes": f"{base} Self-check: L1 bandwidth 100 GB/s is below L2's 120 GB/s.\n"
                                                "Each measured figure is the best of 2 runs of perfcast bench."})
    assert profile_warnings(older) == ["run 1: L1 bandwidth 100 GB/s is below L2's 120 GB/s"]


def test_a_measured_profile_keeps_the_maxima_it_did_not_measure():
    """The V100's published L1 and L2 maxima stay where the suite measured neither level; DRAM and compute go."""
    base = catalog()["v100"]
    device = measured_device(base, suite(levels={"L3": Sample(100e9, 0.05, 3)}), today="2026-11-27")
    assert set(device.maxima.bandwidth) == {"L1", "L2"}
    assert device.maxima.bandwidth["L2"].value == base.maxima.bandwidth["L2"].value
    assert not device.maxima.compute
    measured_l2 = measured_device(base, suite(levels={"L2": Sample(1e12, 0.05, 3)}), today="2026-11-27")
    assert set(measured_l2.maxima.bandwidth) == {"L1"}


def test_rounds_take_the_measurements_in_turn_and_say_each_before_it_runs():
    taken, said = [], []

    def measurement(label, rates):
        values = iter(rates)

        def measure():
            taken.append(label)
            return Sample(next(values), 0.01, 3)

        return measure

    rounds = in_rounds({"a": measurement("a", [1.0, 3.0, 2.0]), "b": measurement("b", [5.0, 5.0, 5.0])}, 3, said.append)
    assert taken == ["a", "b"] * 3 and said == taken
    assert [s.value for s in rounds["a"]] == [1.0, 3.0, 2.0]
    assert highest(rounds["a"]).value == 3.0 and highest(rounds["b"]).value == 5.0
    with pytest.raises(ValueError, match="at least 1"):
        in_rounds({"a": lambda: Sample(1.0, 0.0, 1)}, 0)
    with pytest.raises(ValueError, match="no samples"):
        highest([])


def test_the_rounds_note_names_only_the_figures_whose_rounds_lie_apart():
    def samples(*rates):
        return [Sample(rate, 0.01, 3) for rate in rates]

    assert compute_rounds_note({"peak": samples(2.0)}) is None  # one round: nothing to say
    note = compute_rounds_note({"scalar instructions": samples(1.58e10, 2.48e10, 2.57e10),
                                "peak fp32 fma": samples(1.20e11, 1.19e11, 1.21e11)})
    assert note.startswith("Peaks and core-bound rates: each the best of 3 rounds")
    assert "scalar instructions 1.58e+10, 2.48e+10, 2.57e+10" in note and "peak fp32 fma" not in note
    quiet = compute_rounds_note({"peak fp32 fma": samples(1.20e11, 1.19e11)})
    assert quiet is not None and "apart" not in quiet


def test_rounds_go_to_the_last_spot_first_then_the_first_then_between():
    spots = ("start", "middle", "end")
    assert rounds_at(1, spots) == {"start": 0, "middle": 0, "end": 1}
    assert rounds_at(2, spots) == {"start": 1, "middle": 0, "end": 1}
    assert rounds_at(3, spots) == {"start": 1, "middle": 1, "end": 1}
    assert rounds_at(5, spots) == {"start": 1, "middle": 1, "end": 3}
    with pytest.raises(ValueError):
        rounds_at(0, spots)
