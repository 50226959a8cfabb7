"""The OpenCL backend, run for real on whatever OpenCL device this machine has (PoCL on CPUs)."""

import pytest

from perfcast.bench.backends import BackendUnavailable
from perfcast.bench.suite import measured_device
from perfcast.devices.catalog import device_to_yaml, parse_device_text

pyopencl = pytest.importorskip("pyopencl")

from perfcast.bench.opencl import OpenClBackend, list_devices  # noqa: E402


def _devices():
    try:
        return list_devices()
    except BackendUnavailable:
        return []


pytestmark = pytest.mark.skipif(not _devices(), reason="no OpenCL device (make test installs PoCL with apt-get)")


@pytest.fixture(scope="module")
def backend(opencl_backend):
    return opencl_backend  # tests/conftest.py: opened once per session


@pytest.fixture(scope="module")
def quick_suite(opencl_quick_suite):
    return opencl_quick_suite  # tests/conftest.py: measured for real once per session


def test_quick_suite(quick_suite):
    assert {"read", "write", "copy", "triad"} == set(quick_suite.dram)
    assert 1e8 < quick_suite.dram["triad"].value < 1e13
    assert {("fp32", "fma"), ("fp32", "add_mul"), ("int32", "fma")} <= set(quick_suite.compute)
    assert quick_suite.compute[("fp32", "fma")].value > 1e9
    assert "shared" in quick_suite.levels and quick_suite.host_link is not None
    assert {"strided", "uncoalesced"} <= set(quick_suite.bandwidth_ceilings)
    assert len(quick_suite.mix) == 4
    # int32 divisions by a run-time divisor: slower than the int32 multiply-add peak on every device.
    assert 1e6 < quick_suite.int_divisions.value < quick_suite.compute[("int32", "fma")].value / 2


def test_scalar_instructions_and_atomics_on_a_cpu_device(backend, quick_suite):
    if not backend.is_cpu:
        assert quick_suite.scalar_instructions is None and quick_suite.atomics is None
        assert quick_suite.first_touches is None
        return
    scalar = quick_suite.scalar_instructions.value
    assert quick_suite.int_divisions.value < scalar < quick_suite.compute[("int32", "add_mul")].value
    assert 1e6 < quick_suite.atomics.value < scalar / 4
    # A fresh page costs an operating system's fault: between 10 ns and 100 µs on any machine we know (a 2 MiB
    # page, where transparent huge pages are always on, up to 512 times that).
    assert quick_suite.first_touches is not None
    assert 20 < quick_suite.first_touches.value < 1e8


def test_empty_launches_and_work_groups_on_a_cpu_device(backend, quick_suite):
    """A CPU runtime's own time of a launch and of each work-group (§3.8), from the empty kernel, run for real."""
    if not backend.cpu_rates:  # PoCL's CPU device only, as the scalar-instruction and atomic rates
        assert quick_suite.launches is None and quick_suite.work_groups is None
        return
    # A launch's device time: between 100 ns and 1 ms on any runtime we know (PoCL 3.1 on a 2-core Zen 3: ~1 µs).
    assert 1e3 < quick_suite.launches.value < 1e7
    noted = any("Empty work-groups" in note for note in quick_suite.notes)
    assert (quick_suite.work_groups is not None) != noted
    if quick_suite.work_groups is not None:
        # A further work-group costs less than a launch, and more than 10 ps (4,096 of them took about 20 µs on
        # that VM: 5-12 ns each).
        assert quick_suite.launches.value < quick_suite.work_groups.value < 1e11


def test_the_guarded_triad_on_a_cpu_device(backend, quick_suite):
    """On a CPU device the triad written with `if (i < n)` is timed too: a ceiling below the DRAM triad, or a note.

    Where it is a ceiling, the copy written the same way is timed beside it (§3.6: a masked load's and store's cost).
    """
    from perfcast.devices.schema import GUARDED_ACCESSES, GUARDED_COPY

    guarded = quick_suite.bandwidth_ceilings.get(GUARDED_ACCESSES)
    copy = quick_suite.bandwidth_ceilings.get(GUARDED_COPY)
    if not backend.is_cpu:
        assert guarded is None and copy is None
        return
    noted = any("Global triad, guarded" in note for note in quick_suite.notes)
    assert (guarded is not None) != noted  # one or the other, never both
    assert (copy is not None) == (guarded is not None)
    if guarded is not None and copy is not None:
        assert 1e8 < guarded.value < quick_suite.dram["triad"].value and 1e8 < copy.value < 1e12


def test_random_loads_on_a_cpu_device(backend, quick_suite):
    from perfcast.bench.opencl import host_random_levels

    loads = quick_suite.random_loads
    if not backend.is_cpu:
        assert loads == {}
        return
    assert set(loads) == {"DRAM", *(level for level, _ in host_random_levels())}
    sets = {(level, size) for level, sizes in quick_suite.random_loads_by_size.items() for size in sizes}
    assert sets == set(host_random_levels()) | set(host_random_levels(doublings=True))
    assert all(quick_suite.random_loads_by_size[level][size] is loads[level] for level, size in host_random_levels())
    assert loads["DRAM"].value == pytest.approx(quick_suite.bandwidth_ceilings["uncoalesced"].value / 4)
    assert all(sample.value > loads["DRAM"].value for level, sample in loads.items() if level != "DRAM")
    # The same sets at computed addresses, no index array read: each set measured both ways.
    computed = quick_suite.random_loads_computed
    assert {(level, size) for level, sizes in computed.items() for size in sizes} == sets
    assert all(sample.value > 0 and sample.repetitions >= 1 for sizes in computed.values() for sample in sizes.values())
    device = parse_device_text(device_to_yaml(measured_device(backend.base_device(), quick_suite)))
    assert {level: set(sizes) for level, sizes in device.random_loads_computed.items()} == \
        {level: set(sizes) for level, sizes in computed.items()}
    # The same kernel through lines of one L1 set, per level the host's caches give (none without their ways).
    from perfcast.bench.opencl import host_set_walk

    walk = host_set_walk()
    walked = quick_suite.set_walk_loads
    assert set(walked) == {level for level, _ in (walk.levels if walk else ())}
    for level, sample in walked.items():
        assert loads["DRAM"].value / 2 < sample.value < 1.5 * loads[level].value


def test_launch_latency_and_the_read_widths(quick_suite):
    """Launch latency as clpeak counts it (queued to start), and the widest read kept of those tried."""
    latency = quick_suite.launch_latency
    assert latency is not None and 1e-7 < latency.value < 1e-2  # between 0.1 us and 10 ms a launch
    assert latency.repetitions == 4 * 25  # the quick suite: four batches of 25
    note = next(n for n in quick_suite.notes if n.startswith("Global read:"))
    assert "1-wide" in note and "16-wide" in note and "kept" in note


def test_the_compute_kernels_shape_is_chosen_among_those_tried(backend, quick_suite):
    from perfcast.bench.opencl import peak_shapes

    notes = [n for n in quick_suite.notes if " compute kernels: " in n]
    assert [n.split()[0] for n in notes][:2] == ["fp32", "int32"]
    native = backend.device.native_vector_width_float
    for width, chains in peak_shapes(native):
        assert f"{chains} x {width}-wide" in notes[0]
    # The kept shape is the fastest tried, and the peak is measured with it.
    tried = {part.split(" GOP/s")[0].rsplit(" ", 1)[0]: float(part.split(" GOP/s")[0].rsplit(" ", 1)[1])
             for part in notes[0].split("; tried ")[1].split("; native")[0].split(", ")}
    kept = notes[0].split("(kept ")[1].split(";")[0]  # "8 x 16-wide"
    assert tried[kept] == max(tried.values())


def test_profile(backend, quick_suite):
    profile = measured_device(backend.base_device(), quick_suite)
    assert profile.name.endswith("-opencl")
    assert profile.peak["fp32"]["fma"].provenance.tool.startswith("perfcast bench (opencl backend")
    assert parse_device_text(device_to_yaml(profile)) == profile


def test_selecting_a_device(backend):
    key, device = _devices()[0]
    assert OpenClBackend.open(key, 1).device == device
    with pytest.raises(BackendUnavailable, match="no OpenCL device 'no-such-device'"):
        OpenClBackend.open("no-such-device", 1)


def test_a_gpu_description_says_which_figures_are_estimates(monkeypatch):
    """What OpenCL does not report (warp size, thread count) is marked estimated in the profile's notes."""
    from types import SimpleNamespace

    from perfcast.bench import opencl
    from perfcast.bench.opencl import OpenClBackend

    monkeypatch.setattr(OpenClBackend, "is_cpu", property(lambda self: False))
    gpu = SimpleNamespace(
        name="Radeon Test GPU", vendor="Advanced Micro Devices, Inc.", driver_version="1.0",
        platform=SimpleNamespace(name="AMD APP"), local_mem_size=65536, global_mem_size=16 * 2**30,
        global_mem_cache_size=4 * 2**20, max_compute_units=60, max_work_group_size=256, max_clock_frequency=1500,
    )
    base = OpenClBackend(gpu).base_device()
    assert base.known is None
    assert base.structure["warp_size"] == 64 and base.structure["threads"] == 60 * 256
    assert "Estimated, not reported by OpenCL: warp size 64" in base.structure["notes"]
    assert base.structure["name"] == "opencl-radeon-test-gpu"
    assert opencl is not None


def test_bench_cl_takes_the_elementary_chains_from_python(backend):
    """bench.cl refuses to build without the -D that sets its elementary kernels' independent values."""
    from perfcast.bench.accelerator import chain_defines
    from perfcast.bench.opencl import PER_ITEM, SOURCE
    from perfcast.kernels.opencl import build_program

    context = pyopencl.Context([backend.device])
    with pytest.raises(pyopencl.RuntimeError, match="ELEMENTARY_CHAINS"):
        build_program(pyopencl, context, SOURCE.read_text(), [f"-DPER_ITEM={PER_ITEM}"])
    assert build_program(pyopencl, context, SOURCE.read_text(), [f"-DPER_ITEM={PER_ITEM}", *chain_defines()])


def test_the_latency_launch_is_clpeak_s_one_largest_group_per_compute_unit(backend):
    """Queued to start, each launch finished before the next, over the device's largest groups, one per unit."""
    import types

    from perfcast.bench.opencl import _OpenClRuntime

    launched = []

    def enqueue(queue, kernel, global_size, local_size):
        launched.append((global_size, local_size))
        waited = 20_000 * sum(1 for entry in launched if entry != "finished")  # ns: 20 us, then 40 us
        return types.SimpleNamespace(profile=types.SimpleNamespace(queued=1000, start=1000 + waited))

    cl = types.SimpleNamespace(enqueue_nd_range_kernel=enqueue)
    queue = types.SimpleNamespace(finish=lambda: launched.append("finished"))
    empty = types.SimpleNamespace(set_args=lambda *args: None)
    runtime = _OpenClRuntime(cl, None, queue, {"empty": empty}, 256, units=3, largest_group=4096)
    assert runtime.launch_latencies(object(), 2) == pytest.approx([20e-6, 40e-6])
    assert launched == [((3 * 4096,), (4096,)), "finished", ((3 * 4096,), (4096,)), "finished"]
    # The real runtime takes the empty kernel's largest group on this device.
    largest = backend.probe().runtime.largest_group
    assert 1 <= largest <= backend.device.max_work_group_size
