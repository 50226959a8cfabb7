"""The suite's shared procedure for kernel runtimes: the compute kernels' shape, the host copy, the whole suite faked."""

from dataclasses import replace

import numpy as np
import pytest

from perfcast.bench.accelerator import (
    ATOMIC_ROUNDS,
    FIRST_TOUCH_BYTES,
    PEAK_KERNELS,
    SCALAR_INSTRUCTIONS,
    SCALAR_ROUNDS,
    UPLOAD_BYTES,
    PeakShape,
    SuiteShape,
    choose_peak_shapes,
    first_touch_rate,
    host_link_bytes,
    launch_and_group_rates,
    local_region_rates,
    peak_run,
    run_accelerator_suite,
    upload_run,
)
from perfcast.bench.suite import SuiteResult
from perfcast.errors import BackendUnavailable

SHAPE = SuiteShape(dram_bytes=1 << 20, smallest_sweep=1 << 10, sweep_points=2, compute_items=1024, lanes_per_item=8,
                   chain=64, stride=8, mix_steps=(1,), cache_levels=(), has_fp64=True)


class FakeKernel:
    """A compiled kernel whose throughput (lane-ops per second) is given."""

    def __init__(self, name: str, lane_ops_per_second: float) -> None:
        self.name, self.rate = name, lane_ops_per_second


class FakeRuntime:
    """Times a launch as the work it was told it does over its kernel's throughput."""

    group = 64

    def __init__(self) -> None:
        self.kernels: dict[str, FakeKernel] = {}
        self.launched: list[FakeKernel] = []

    def buffer(self, host):
        return host

    def timed(self, name, items, *args):
        kernel = self.kernels[name]
        chain = int(args[0])

        def run(passes):
            self.launched.append(kernel)
            return passes * items * chain / kernel.rate

        return run


def kernels_of(shape: PeakShape, speed: dict[int, float]) -> dict[str, FakeKernel]:
    """The six peak kernels of one shape; this shape's lanes run at speed[chains] lane-steps per second."""
    return {name: FakeKernel(f"{name}@{shape.label}", speed[shape.chains] / shape.lanes)
            for name, _, _ in PEAK_KERNELS.values()}


def test_the_fastest_shape_is_kept_per_precision_and_its_lanes_count_the_work():
    runtime = FakeRuntime()
    speed = {4: 1e9, 8: 3e9, 16: 2e9}
    candidates = {"fp32": [PeakShape(c) for c in (4, 8, 16)], "fp64": [PeakShape(c) for c in (4, 16)]}
    shape, notes = choose_peak_shapes(runtime, SHAPE, candidates, lambda s: kernels_of(s, speed),
                                      {"fp32": "native width 1"})
    assert runtime.kernels["peak_f32_fma"].name == "peak_f32_fma@8 x 1-wide"
    assert runtime.kernels["peak_f32_add"].name == "peak_f32_add@8 x 1-wide"
    assert runtime.kernels["peak_f64_fma"].name == "peak_f64_fma@16 x 1-wide"  # 8 was not a candidate for fp64
    assert shape.peak_lanes == {"peak_f32_fma": 8, "peak_f32_add": 8, "peak_f64_fma": 16, "peak_f64_add": 16}
    assert notes[0].startswith("fp32 compute kernels: 8 scalar chains (kept 8 x 1-wide; tried 4 x 1-wide")
    assert "native width 1" in notes[0] and "native width" not in notes[1]
    # The rate a kept shape reports is its work (lanes x chain x 2 op per FMA step) over its time.
    results = np.zeros(SHAPE.compute_items)
    run, work = peak_run(runtime, shape, "fp32", "fma", results)
    assert work / run(1) == pytest.approx(2 * 3e9)
    assert "8 x 1-wide 6 GOP/s" in notes[0] and "4 x 1-wide 2 GOP/s" in notes[0]


def test_a_shape_the_compiler_rejects_is_said_and_the_others_run():
    runtime = FakeRuntime()

    def build(shape):
        if shape.chains == 16:
            raise BackendUnavailable("too many registers")
        return kernels_of(shape, {4: 1e9, 8: 2e9})

    shape, notes = choose_peak_shapes(runtime, SHAPE, {"int32": [PeakShape(c, 4) for c in (4, 8, 16)]}, build)
    assert shape.peak_lanes["peak_i32_fma"] == 32
    assert notes[0].startswith("int32 compute kernels: 8 chains of 4-wide vectors (kept 8 x 4-wide;")
    assert notes[0].endswith("16 x 4-wide did not build).")
    with pytest.raises(BackendUnavailable, match="no int32 compute kernel built"):
        choose_peak_shapes(runtime, SHAPE, {"int32": [PeakShape(16)]}, build)


def test_peak_shape_words():
    assert PeakShape(8, 16).lanes == 128 and PeakShape(8, 16).label == "8 x 16-wide"
    assert PeakShape(8, 16).describe() == "8 chains of 16-wide vectors"
    assert PeakShape(4).describe() == "4 scalar chains"


def test_one_host_copy_is_256_mib_unless_the_device_allocates_less():
    assert host_link_bytes(80 * 2**30) == UPLOAD_BYTES == 256 * 2**20
    assert host_link_bytes(512 * 2**20) == 256 * 2**20  # half of the largest buffer
    assert host_link_bytes(300 * 2**20) == 128 * 2**20  # largest power of two <= 150 MiB
    assert host_link_bytes(8) == 4
    with pytest.raises(ValueError, match="no room"):
        host_link_bytes(4)


def test_the_upload_copies_its_own_buffer_of_the_shape_s_bytes():
    copies = []

    class Runtime(FakeRuntime):
        def timed_upload(self, target, host):
            copies.append((target.nbytes, host.nbytes))
            return lambda passes: passes * host.nbytes / 1e10

    run, moved = upload_run(Runtime(), replace(SHAPE, upload_bytes=4096))
    assert moved == 4096 and copies == [(4096, 4096)]
    assert run(2) == pytest.approx(2 * 4096 / 1e10)


def test_sweep_points_that_time_launches_are_left_out_of_the_plateaus():
    from perfcast.bench.accelerator import LAUNCH_BOUND, launch_free
    from perfcast.bench.suite import Sample, SweepPoint, cache_plateaus

    latency = Sample(6e-6, 0.01, 200)  # the H200's measured launch latency
    # A GPU whose L2 streams at 10 TB/s, each launch costing 6 µs on top: small working sets time the launches.
    points = [SweepPoint("triad", size, Sample(size / (size / 10e12 + 6e-6), 0.0, 5))
              for size in (2**18, 2**22, 2**24, 2**30)]
    kept = launch_free(points, latency)
    assert all(p.working_set / p.bandwidth.value >= LAUNCH_BOUND * latency.value for p in kept)
    assert [p.working_set for p in kept] == [2**30]  # only the DRAM-sized point is free of the launch
    assert "L2" not in cache_plateaus(kept, [("L2", 50e6)])  # so no L2 figure, rather than a launch rate
    assert cache_plateaus(points, [("L2", 50e6)])["L2"].value < 2e12  # what the sweep reported before
    assert launch_free(points, None) == points  # a runtime without a launch latency keeps every point


def test_a_set_walk_takes_lines_one_l1_set_span_apart_eight_times_what_the_level_before_holds():
    from perfcast.bench.accelerator import set_walk_index, set_walk_lines

    # 32 KiB L1 of 8 ways (a 4 KiB set span), 512 KiB L2 of 8 ways, 32 MiB L3 of 16 ways (a Zen 3 core's):
    # L2 holds 8 x 64 KiB / 4 KiB = 128 of the lines, L3 8192.
    walk = set_walk_lines([("L2", 512 * 2**10, 8, 64), ("L1", 32 * 2**10, 8, 64), ("L3", 32 * 2**20, 16, 64)])
    assert walk is not None and walk.stride == 4096
    assert walk.levels == (("L2", 64), ("L3", 1024))  # min(8 x 8, 128 / 2), min(8 x 128, 8192 / 2)
    # A level whose set span is below the stride holds only its ways of them; one that holds fewer than four
    # times the level before is left out; without L1's ways there is no walk.
    small = set_walk_lines([("L1", 32 * 2**10, 8, 64), ("L2", 64 * 2**10, 16, 64)])
    assert small is None  # L2: 16 x max(1, 4 KiB / 4 KiB) = 16 lines, below 4 x 8
    assert set_walk_lines([("L1", 32 * 2**10, None, 64), ("L2", 2**20, 16, 64)]) is None
    index = set_walk_index(walk, 64, 10000, 4)
    assert set(np.unique(index * 4 % 4096)) == {0}  # every line in the same L1 set
    assert len(np.unique(index)) == 64 and index.max() == 63 * 1024
    with pytest.raises(ValueError, match="whole number"):
        set_walk_index(walk, 64, 10, 3)


def test_random_working_sets_sit_between_each_level_and_the_one_before():
    from perfcast.bench.accelerator import random_working_sets

    # The 2-core Xeon VM: 48 KiB L1, 2 MiB L2 per core, a 480 MiB L3 the guest is told of.
    found = random_working_sets([("L1", 48 * 2**10), ("L2", 2 * 2**20), ("L3", 480 * 2**20)])
    assert found == [("L2", 192 * 2**10), ("L3", 8 * 2**20)]  # four times the level before
    # A desktop's 1 MiB L2 under a 4 MiB L3: capped at half of the L3.
    assert random_working_sets([("L2", 2**20), ("L3", 4 * 2**20)]) == [("L3", 2 * 2**20)]
    # A level under four times the one before it cannot be isolated: left out.
    assert random_working_sets([("L1", 32 * 2**10), ("L2", 96 * 2**10)]) == []
    assert random_working_sets([]) == []


def test_random_working_sets_double_up_to_half_of_their_level():
    from perfcast.bench.accelerator import random_working_set_doublings

    # A Zen 3 core: 32 KiB L1, 512 KiB L2, 32 MiB L3. L2's own set is 128 KiB, L3's 2 MiB; doublings to half.
    found = random_working_set_doublings([("L1", 32 * 2**10), ("L2", 512 * 2**10), ("L3", 32 * 2**20)])
    assert found == [("L2", 256 * 2**10), ("L3", 4 * 2**20), ("L3", 8 * 2**20), ("L3", 16 * 2**20)]
    # A level whose own set is already half of it has none; no level, none.
    assert random_working_set_doublings([("L2", 2**20), ("L3", 4 * 2**20)]) == []
    assert random_working_set_doublings([]) == []


class WholeSuiteRuntime:
    """Every kernel the suite launches, timed as `NS_PER_ITEM` ns per work-item and pass; the launches recorded."""

    group = 64
    NS_PER_ITEM = 2.0

    def __init__(self) -> None:
        self.kernels: dict[str, object] = {}
        self.launched: list[tuple[str, int]] = []

    def buffer(self, host):
        return host

    def fresh_buffer(self, nbytes):
        return np.zeros(nbytes // 4, np.int32)

    def _run(self, name: str, items: int):
        def run(passes):
            self.launched.append((name, items))
            return passes * items * self.NS_PER_ITEM * 1e-9

        return run

    def timed(self, name, items, *args):
        return self._run(name, items)

    def timed_local(self, items, k, sink):
        return self._run("local_ldst", items)

    def timed_upload(self, target, host):
        return self._run("upload", host.size)

    def launch_latencies(self, sink, launches):
        return [5e-6] * launches

    def launch_durations(self, sink, groups, launches):
        self.launched.append(("no_work", groups * self.group))
        return [1e-6] * launches  # every launch alike: work-groups cost nothing measurable


@pytest.mark.parametrize("cpu_rates", [True, False])
def test_the_whole_suite_measures_the_cpu_rates_only_when_asked_and_counts_its_steps(cpu_rates):
    runtime, labels = WholeSuiteRuntime(), []
    shape = replace(SHAPE, cpu_rates=cpu_rates)
    suite = SuiteResult("opencl", "fake", repetitions=1)
    run_accelerator_suite(runtime, shape, suite, lambda label, fraction: labels.append((label, fraction)), 1e-6)
    launched = {name for name, _ in runtime.launched}
    seconds_per_pass = shape.compute_items * WholeSuiteRuntime.NS_PER_ITEM * 1e-9
    if cpu_rates:
        assert {"scalar_issue", "atomic_increments"} <= launched
        # The work each launch is said to do: every work-item's rounds, in Oclgrind's instructions for the issue rate.
        assert suite.scalar_instructions.value == pytest.approx(
            shape.compute_items * SCALAR_ROUNDS * SCALAR_INSTRUCTIONS / seconds_per_pass)
        assert suite.atomics.value == pytest.approx(shape.compute_items * ATOMIC_ROUNDS / seconds_per_pass)
        # Every launch of this runtime takes the same time, so fresh pages cost nothing: no rate, and a note.
        assert "touch_pages" in launched and suite.first_touches is None
        assert any("First touches" in note for note in suite.notes)
        # Empty launches of 1 to 4096 work-groups, all alike here: a launch rate, no work-group rate, a note.
        assert suite.launches.value == pytest.approx(1e6) and suite.work_groups is None
        assert any("Empty work-groups" in note for note in suite.notes)
    else:
        assert not {"scalar_issue", "atomic_increments", "touch_pages"} & launched
        assert suite.scalar_instructions is None and suite.atomics is None and suite.first_touches is None
        assert "no_work" not in launched and suite.launches is None and suite.work_groups is None
    # The declared step count matches the steps taken: k steps report 0, 1/k, ..., (k-1)/k, then done at 1.
    steps = [fraction for label, fraction in labels if label != "done"]
    assert labels[-1] == ("done", 1.0)
    assert steps == pytest.approx([i / len(steps) for i in range(len(steps))])
    assert suite.int_divisions is not None and "shared" in suite.levels


class BusyFirstRoundRuntime(WholeSuiteRuntime):
    """The whole suite's runtime, with the first `slow` scalar-issue runs at half speed (a neighbour's burst)."""

    def __init__(self, slow: int) -> None:
        super().__init__()
        self.slow = slow

    def _run(self, name: str, items: int):
        fast = super()._run(name, items)
        if name != "scalar_issue":
            return fast

        def run(passes):
            self.slow -= 1
            return fast(passes) * (2.0 if self.slow >= 0 else 1.0)

        return run


def test_each_core_bound_figure_is_the_best_of_its_rounds_and_the_note_says_the_rounds():
    # A round here is four runs (one to warm, two to calibrate, one timed): the burst covers the first round.
    runtime = BusyFirstRoundRuntime(slow=4)
    shape = replace(SHAPE, cpu_rates=True, compute_rounds=3)
    suite = SuiteResult("opencl", "fake", repetitions=1)
    run_accelerator_suite(runtime, shape, suite, lambda label, fraction: None, 1e-6)
    seconds_per_pass = shape.compute_items * WholeSuiteRuntime.NS_PER_ITEM * 1e-9
    assert suite.scalar_instructions.value == pytest.approx(
        shape.compute_items * SCALAR_ROUNDS * SCALAR_INSTRUCTIONS / seconds_per_pass)
    launches = [name for name, _ in runtime.launched]
    assert launches.count("int_division") == 12 and launches.count("scalar_issue") == 12
    # The rounds lie apart: one before the sweep, one between the stream kernels and the strided reads, one
    # after the host copy.
    rounds_at = [i for i, name in enumerate(launches) if name == "scalar_issue"][::4]
    assert rounds_at[0] < launches.index("mem_triad")
    assert launches.index("mem_triad") < rounds_at[1] < launches.index("mem_strided")
    assert launches.index("upload") < rounds_at[2]
    note = next(note for note in suite.notes if note.startswith("Peaks and core-bound rates"))
    assert "best of 3 rounds" in note and "scalar instructions" in note and "integer divisions" not in note


class FreshPagesRuntime:
    """A launch of touch_pages takes 5 µs, plus `us_per_page` per page on a buffer's first launch."""

    group = 64

    def __init__(self, us_per_page: float) -> None:
        self.us_per_page, self.fresh = us_per_page, 0

    def fresh_buffer(self, nbytes):
        self.fresh += 1
        return {"touched": False, "bytes": nbytes}

    def timed(self, name, items, buffer):
        assert name == "touch_pages" and items == buffer["bytes"] // 4096

        def run(passes):
            first, buffer["touched"] = not buffer["touched"], True
            return passes * 5e-6 + (items * self.us_per_page * 1e-6 if first else 0.0)

        return run


def test_the_first_touch_rate_is_the_faults_over_the_first_launchs_extra_time():
    runtime = FreshPagesRuntime(1.25)
    no_count = lambda: 0  # noqa: E731 - a runtime in another process: no fault counted, the 4 KiB pages stored
    few = iter(range(0, 10**6, 3))  # three faults of the host's own around each launch: the pages count too
    assert first_touch_rate(FreshPagesRuntime(1.25), 2, faults=lambda: next(few)).value == pytest.approx(1e6 / 1.25)
    sample = first_touch_rate(runtime, 4, faults=no_count)
    assert sample.value == pytest.approx(1e6 / 1.25) and sample.repetitions == 4 and sample.spread == 0.0
    assert runtime.fresh == 4  # a new buffer each round: pages freed and allocated again may be mapped already
    assert first_touch_rate(FreshPagesRuntime(0.0), 4, faults=no_count) is None  # mapped at creation: no cost
    # Transparent huge pages always on: the first launch's 16384 stores fault 32 times, each 512 times as dear.
    counter = iter(range(0, 10**6, 32))
    huge = first_touch_rate(FreshPagesRuntime(1.25), 2, faults=lambda: next(counter))
    assert huge.value == pytest.approx(32 / (FIRST_TOUCH_BYTES // 4096 * 1.25e-6))


class EmptyLaunchRuntime:
    """Empty launches that take `fixed` s plus `per_group` s a work-group past the first, the first `noisy` rounds 2x."""

    group = 16

    def __init__(self, fixed: float, per_group: float, noisy: int = 0) -> None:
        self.fixed, self.per_group, self.noisy = fixed, per_group, noisy
        self.counts: list[int] = []

    def buffer(self, host):
        return host

    def launch_durations(self, sink, groups, launches):
        self.counts.append(groups)
        slow = 2.0 if len(self.counts) <= 4 * self.noisy else 1.0
        return [slow * (self.fixed + (groups - 1) * self.per_group)] * (launches - 1) + [1.0]  # one outlier


def test_launch_and_work_group_rates_are_the_empty_kernels_intercept_and_slope():
    runtime = EmptyLaunchRuntime(1e-6, 8.5e-9)
    launch, groups = launch_and_group_rates(runtime, 3, launches=5)
    assert launch.value == pytest.approx(1e6) and launch.repetitions == 3  # the medians drop the outlier launch
    assert groups.value == pytest.approx(1 / 8.5e-9)
    # Every count in each round, the first count rotated from round to round.
    assert runtime.counts == [1, 16, 256, 4096, 16, 256, 4096, 1, 256, 4096, 1, 16]
    # A round slowed by the host's other work is one of three: the median keeps the others' figure, the spread says it.
    noisy, _ = launch_and_group_rates(EmptyLaunchRuntime(1e-6, 8.5e-9, noisy=1), 3, launches=5)
    assert noisy.value == pytest.approx(1e6) and noisy.spread == pytest.approx(0.5)
    # Work-groups that cost nothing (a GPU's scheduler): a launch rate, no work-group rate.
    launch, groups = launch_and_group_rates(EmptyLaunchRuntime(2e-6, 0.0), 3, launches=5)
    assert launch.value == pytest.approx(5e5) and groups is None
    # Launches that take no time (a timer too coarse): neither figure, though the slope is positive.
    launch, groups = launch_and_group_rates(EmptyLaunchRuntime(0.0, 1e-8), 3, launches=5)
    assert launch is None and groups is None
    with pytest.raises(ValueError, match="one work-group"):
        launch_and_group_rates(runtime, 1, counts=(16, 256))


class BarrierRegionRuntime:
    """§3.9's kernels at `access` s a local access, `crossing` s a crossing and `value` s a further live value."""

    def __init__(self, access: float, crossing: float, value: float = 0.0, group: int = 256) -> None:
        self.access, self.crossing, self.value, self.group = access, crossing, value, group
        self.launched: list[object] = []

    def buffer(self, host):
        return host

    def timed(self, name, items, *args):
        if name == "local_loads":
            loads, mask, _ = args
            assert int(loads) == 1024 and int(mask) == self.group - 1
            per_item, shape = (1 + int(loads)) * self.access + self.crossing, "loads"
        else:
            crossings = int(args[0])
            extra = {"barrier_regions": 0, "barrier_context": 7}[name]
            per_item, shape = crossings * (self.crossing + extra * self.value), (name[8], crossings)

        def run(passes):
            self.launched.append(shape)
            return passes * items * (per_item + 1e-9)  # 1 ns a work-item of its own in each kernel

        return run


def test_local_accesses_crossings_and_live_values_are_a_time_and_two_slopes():
    runtime = BarrierRegionRuntime(0.25e-9, 0.08e-9, 0.06e-9)
    accesses, crossings, values = local_region_rates(runtime, 8192, 5)
    # The work-item's own nanosecond (its loop, its store) is in the access figure: 1025 accesses share it.
    assert accesses.value == pytest.approx(1 / (0.25e-9 + 1e-9 / 1025))
    assert crossings.value == pytest.approx(1 / 0.08e-9) and values.value == pytest.approx(1 / 0.06e-9)
    assert accesses.repetitions == crossings.repetitions == values.repetitions == 5
    assert accesses.spread == pytest.approx(0, abs=1e-9)
    # The five launches each round, the first rotated from round to round.
    shapes = ["loads", ("r", 1), ("r", 256), ("c", 1), ("c", 256)]
    assert runtime.launched == [shape for turn in range(5) for shape in shapes[turn:] + shapes[:turn]]
    # Barriers that cost nothing, nor their values: an access rate alone.
    assert local_region_rates(BarrierRegionRuntime(0.25e-9, 0.0), 8192, 3)[1:] == (None, None)
    # Work-groups larger than the kernels' local array: nothing measured.
    assert local_region_rates(BarrierRegionRuntime(0.25e-9, 0.08e-9, group=2048), 8192, 3) == (None, None, None)
