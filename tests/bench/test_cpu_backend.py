"""The native CPU backend and the references, run for real at small sizes."""

import shutil

import numpy as np
import pytest

from perfcast.bench.reference import compare_with_references, run_peakflops, run_stream
from perfcast.bench.suite import measured_device
from perfcast.devices.catalog import device_to_yaml, parse_device_text
from perfcast.devices.roofline_view import device_roofline
from perfcast.kernels.native import VectorIsa

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="the native benchmarks need gcc")


@pytest.fixture(scope="module")
def host(cpu_host):
    return cpu_host  # tests/conftest.py: detected once per session


@pytest.fixture(scope="module")
def quick_suite(cpu_quick_suite):
    return cpu_quick_suite  # tests/conftest.py: measured for real once per session, its progress checked


def test_quick_suite_measures_everything(quick_suite):
    assert {"read", "write", "copy", "triad"} == set(quick_suite.dram)
    assert {("fp32", "fma"), ("fp64", "fma"), ("int32", "add_mul")} <= set(quick_suite.compute)
    assert {"single thread", "no SIMD"} == set(quick_suite.compute_ceilings)
    assert {"strided", "uncoalesced"} <= set(quick_suite.bandwidth_ceilings)
    assert len(quick_suite.mix) == 9 and len(quick_suite.sweep) >= 10
    assert "L1" in quick_suite.levels


def test_quick_suite_is_physically_sensible(quick_suite):
    dram = quick_suite.dram["triad"].value
    assert 1e9 < dram < 1e12
    # Every cache level above DRAM. Not L1 above L2: on the shared AVX2 EPYC VM the quick L1 plateau was
    # 460 GB/s most of the time against L2's 200, but 178 in one test run, when the VM was busy.
    levels = quick_suite.levels
    assert min(level.value for level in levels.values()) > dram
    assert any("placements" in note for note in quick_suite.notes)
    fp32, fp64 = quick_suite.compute[("fp32", "fma")].value, quick_suite.compute[("fp64", "fma")].value
    assert 1.4 < fp32 / fp64 < 2.8  # twice the lanes
    assert quick_suite.compute_ceilings["no SIMD"].value < fp32 / 4
    assert quick_suite.bandwidth_ceilings["uncoalesced"].value < dram
    intensities = [p.intensity for p in quick_suite.mix]
    assert intensities == sorted(intensities)
    # A library exp, log or sin takes tens of cycles: far fewer calls than vector FMAs per second, more than
    # a million.
    for precision in ("fp32", "fp64"):
        calls = quick_suite.elementary[precision].value
        assert 1e6 < calls < fp32 / 2 / 8
    # An int32 division takes a divider several cycles and no vector unit has one: fewer per second than the
    # scalar integer adds one core issues in a cycle (the vector add peak over its lanes), more than a million.
    divisions = quick_suite.int_divisions.value
    assert 1e6 < divisions < quick_suite.compute[("int32", "add_mul")].value / 2 / 4
    # Scalar instructions: fewer than the vector unit's integer adds (they fill a lane each), more than divisions.
    # An atomic increment is a locked add: fewer per second than a core's scalar instructions.
    scalar = quick_suite.scalar_instructions.value
    assert divisions < scalar < quick_suite.compute[("int32", "add_mul")].value / 2
    assert 1e6 < quick_suite.atomics.value < scalar / 4


def test_random_loads_per_level_are_measured_and_slow_down_outward(host, quick_suite):
    from perfcast.bench.accelerator import random_working_sets

    reach = [(m.level, m.size.value) for m in host.memory if m.level in ("L1", "L2", "L3") and m.size is not None]
    loads = quick_suite.random_loads
    assert set(loads) == {"DRAM", *(level for level, _ in random_working_sets(reach))}
    # DRAM's is the uncoalesced ceiling per 8-byte load; a level nearer the core is never slower than DRAM.
    assert loads["DRAM"].value == pytest.approx(quick_suite.bandwidth_ceilings["uncoalesced"].value / 8)
    assert all(sample.value > loads["DRAM"].value for level, sample in loads.items() if level != "DRAM")
    device = measured_device(host, quick_suite)
    assert set(device.random_loads) == set(loads)
    # Each cache level's rate over its own set and over doublings of it: the level's figure is its own set's.
    from perfcast.bench.accelerator import random_working_set_doublings

    sets = {(level, size) for level, sizes in quick_suite.random_loads_by_size.items() for size in sizes}
    assert sets == set(random_working_sets(reach)) | set(random_working_set_doublings(reach))
    for level, size in random_working_sets(reach):
        assert quick_suite.random_loads_by_size[level][size] is loads[level]
    assert {level: set(sizes) for level, sizes in device.random_loads_by_size.items()} == \
        {level: set(sizes) for level, sizes in quick_suite.random_loads_by_size.items()}


def test_set_walk_loads_per_level_are_measured_where_the_caches_have_ways(host, quick_suite):
    from perfcast.bench.accelerator import set_walk_lines

    walk = set_walk_lines([(m.level, m.size.value, m.ways, m.line) for m in host.memory
                           if m.level in ("L1", "L2", "L3") and m.size is not None])
    walked = quick_suite.set_walk_loads
    assert set(walked) == {level for level, _ in (walk.levels if walk else ())}
    # Lines of one L1 set are never served much faster than random lines of the same level (on a Zen 3 they
    # came 2-7x slower), and never slower than DRAM's random loads by far.
    for level, sample in walked.items():
        assert quick_suite.random_loads["DRAM"].value / 2 < sample.value < 1.5 * quick_suite.random_loads[level].value
    assert set(measured_device(host, quick_suite).set_walk_loads) == set(walked)


def test_profile_from_the_suite(host, quick_suite):
    profile = measured_device(host, quick_suite)
    assert profile.name == f"{host.name}-cpu"
    assert parse_device_text(device_to_yaml(profile)) == profile
    roof = device_roofline(profile, "fp32")
    assert roof.peak == quick_suite.compute[("fp32", "fma")].value
    assert "no SIMD" in {c.name for c in roof.compute_ceilings}


def test_references_run():
    rates = run_stream(2_000_000, 3)
    assert 1e9 < rates["triad"] < 1e12
    assert 1e9 < run_peakflops(1_000_000, 3) < 1e14


def test_side_by_side_comparison_runs():
    results = compare_with_references(threads=2, dram_elements=2_000_000, rounds=1)
    assert [c.figure for c in results] == ["DRAM triad bandwidth", "fp32 FMA peak"]
    for c in results:
        assert len(c.perfcast) == len(c.reference) == 1 and np.isfinite(c.ratio) and c.ratio > 0


@pytest.fixture(scope="module")
def library():
    from perfcast.bench.cpu import bench_library

    return bench_library()


def test_arrays_start_on_a_page():
    from perfcast.bench.cpu import aligned_full

    for count, dtype in ((1, np.float64), (1000, np.float32), (3_000_000, np.float64)):
        array = aligned_full(count, 0.5, dtype)
        assert array.ctypes.data % 4096 == 0 and array.size == count and array.dtype == dtype
        assert np.all(array == 0.5)


def test_a_copy_on_a_page_keeps_shape_type_and_values():
    from perfcast.bench.cpu import on_page

    rng = np.random.default_rng(1)
    for array in (rng.random((33, 7), np.float32), np.arange(5, dtype=np.int32), rng.random(1 << 20)):
        placed = on_page(array[1:])  # a view 4 or 8 B past numpy's start: off any line
        assert placed.ctypes.data % 4096 == 0 and placed.flags.c_contiguous
        assert placed.shape == array[1:].shape and placed.dtype == array.dtype and np.array_equal(placed, array[1:])
    assert on_page(np.zeros(0, np.float32)).size == 0


def test_streaming_shares_start_on_their_own_pages(library):
    import ctypes

    from perfcast.bench.cpu import streaming_arrays

    # 1365 doubles on 2 threads: shares of 683 and 682, the second starting on the next page after the first's.
    assert library.spaced_extent(1365, 2) == 1024 + 682
    assert library.spaced_extent(1365, 1) == 1365
    assert library.spaced_extent(1, 2) == 1  # the second thread has nothing to do
    a, _, _ = streaming_arrays(library, 1365, 2)
    a[:] = np.nan
    library.mem_write(a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), 1365, 1, 2)  # pass 0 writes 0.0
    written = np.flatnonzero(~np.isnan(a))
    assert np.array_equal(written, np.r_[0:683, 1024:1706])


def test_triad_refuses_arrays_too_short_for_the_layout(library):
    from perfcast.bench.cpu import aligned_full, triad_rate

    arrays = (aligned_full(1365, 1.0), aligned_full(1365, 2.0), aligned_full(1365, 0.5))
    with pytest.raises(ValueError, match="streaming_arrays"):
        triad_rate(library, arrays, 1365, 2, 1, 0.001)
    assert triad_rate(library, arrays, 1365, 1, 1, 0.001).value > 0


def test_placed_arrays_keeps_the_fastest_of_the_placements_tried(library):
    from perfcast.bench.cpu import placed_arrays

    arrays, rates = placed_arrays(library, 4096, 2, 1365, 0.002, candidates=3)
    assert len(rates) == 3 and all(rate > 0 for rate in rates)
    assert all(a.size >= library.spaced_extent(4096, 2) and a.ctypes.data % 4096 == 0 for a in arrays)
    assert np.all(arrays[1] == 2.0) and np.all(arrays[2] == 0.5)  # the probe wrote arrays[0]


def test_bench_c_takes_the_elementary_chains_from_python(tmp_path):
    """bench.c has no count of its own for the elementary and division kernels' values: without the -D it refuses
    to build."""
    import subprocess

    from perfcast.bench.accelerator import DIVISION_CHAINS, ELEMENTARY_CALLS, ELEMENTARY_CHAINS, chain_defines
    from perfcast.bench.cpu import SOURCE
    from perfcast.kernels.native import native_flags

    assert chain_defines() == (f"-DELEMENTARY_CHAINS={ELEMENTARY_CHAINS}", f"-DDIVISION_CHAINS={DIVISION_CHAINS}")
    assert ELEMENTARY_CALLS == 3 * ELEMENTARY_CHAINS  # exp, log and sin on each value
    flags = [f for f in native_flags() if f not in ("-shared", "-fPIC")]
    bare = subprocess.run(["gcc", *flags, "-fsyntax-only", str(SOURCE)], capture_output=True, text=True)
    assert bare.returncode != 0 and "ELEMENTARY_CHAINS" in bare.stderr
    built = subprocess.run(["gcc", *flags, *chain_defines(), "-fsyntax-only", str(SOURCE)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr


@pytest.mark.parametrize("isa", [VectorIsa("AVX-512", 64, 32), VectorIsa("AVX2", 32, 16), VectorIsa("scalar", 4, 16)])
def test_register_blocks_come_from_python_and_the_vector_build_keeps_them_in_registers(tmp_path, isa):
    """bench.c takes REGISTER_BYTES and CHAINS from vector_isa() only, and each compute kernel's loop over its
    chains is unrolled into registers: no FMA of the vector build reads or writes memory (gcc 12 left a 384-float
    block in memory on an AVX-512 Zen 4 and measured half the fp32 peak)."""
    import re
    import subprocess

    from perfcast.bench.accelerator import chain_defines
    from perfcast.bench.cpu import SOURCE

    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    base = ["gcc", "-O3", "-fopenmp", *chain_defines(), "-S", "-o", str(tmp_path / "bench.s"), str(SOURCE)]
    bare = subprocess.run(base, capture_output=True, text=True)
    assert bare.returncode != 0 and "CHAINS" in bare.stderr
    # x86-64 targets whatever this machine is: the assembly is read, not run.
    target = {"AVX-512": ["-march=x86-64-v4", "-mprefer-vector-width=512"], "AVX2": ["-march=x86-64-v3"],
              "scalar": ["-march=x86-64-v3", "-fno-tree-vectorize", "-fno-tree-slp-vectorize"]}[isa.name]
    if subprocess.run(["gcc", "-dumpmachine"], capture_output=True, text=True).stdout.split("-")[0] != "x86_64":
        pytest.skip("the assembly check reads x86 assembly")
    built = subprocess.run([*base[:1], *target, *isa.defines(), *base[1:]], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    if isa.name == "scalar":
        return  # plain arrays there (one-lane vectors are not promoted to registers): built, not inspected
    text = (tmp_path / "bench.s").read_text()
    for kernel in ("peak_f32_fma", "peak_f64_fma", "mix_f32"):
        body = re.search(rf"^{kernel}\._omp_fn\.\d+:(.*?)\.cfi_endproc", text, re.S | re.M)
        assert body, kernel
        fmas = re.findall(r"^\s*vfmadd\w+\s+(.*)$", body[1], re.M)
        assert len(fmas) >= isa.registers * 3 // 4, (kernel, len(fmas))  # every chain unrolled
        assert not [operands for operands in fmas if "(" in operands], kernel  # and none from memory
