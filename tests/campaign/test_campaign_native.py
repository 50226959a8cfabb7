"""The campaign's cpu backend: suite.c compiled and run for real, checked as the OpenCL and CUDA suites are."""

import ctypes
import shutil
import statistics
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from perfcast.campaign.archive import Archive
from perfcast.cli import app
from perfcast.errors import InputError
from perfcast.kernels.campaign import KERNELS

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed (make test installs it)")
CPU_PROFILE = Path(__file__).parents[2] / "docs" / "validation" / "bench-cpu-profile.yaml"
# Small sizes that every kernel's check still reaches (rows 0, n/2 and n - 1, row 5, 2048 SpMV rows, a middle plane).
SMALL = {"triad": 8192, "stencil7": 24, "sor_redblack": 64, "sgemm_naive": 64, "sgemm_tiled": 64,
         "histogram256": 10_000, "reduce_sum": 10_000, "transcendental": 8192, "nbody": 256, "spmv_csr": 4096,
         "hash_int": 8192, "horner_fp64": 8192}


@pytest.fixture(scope="module")
def timer():
    from perfcast.campaign.native import NativeTimer

    return NativeTimer.open(None)


@needs_gcc
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_each_c_kernel_computes_what_its_check_expects(timer, kernel):
    result = timer.time(kernel, SMALL[kernel.name], 10)
    assert result["check"] is None
    assert len(result["times_s"]) == 10 and statistics.median(result["times_s"]) > 0
    assert result["work_items"] == kernel.launch(SMALL[kernel.name]).items


@needs_gcc
def test_a_wrong_result_is_caught_by_the_check(timer, monkeypatch):
    """The check sees the C kernel's outputs: a kernel that leaves them untouched fails it."""
    import types

    triad = next(k for k in KERNELS if k.name == "triad")
    idle = types.SimpleNamespace(handle=types.SimpleNamespace(triad=lambda *arguments: 1e-3))  # computes nothing
    monkeypatch.setattr(timer, "library", idle)
    result = timer.time(triad, 8192, 10)
    assert result["check"] and result["times_s"] == [1e-3] * 10


def test_arguments_go_to_c_at_their_declared_width():
    from perfcast.campaign.native import c_arguments

    array = np.arange(4, dtype=np.float32)
    pointer, count, scale, wide = c_arguments([array, np.int32(7), np.float32(0.5), np.float64(2.0)])
    assert pointer.value == array.ctypes.data
    assert (type(count), count.value) == (ctypes.c_int32, 7)
    assert (type(scale), scale.value) == (ctypes.c_float, 0.5) and type(wide) is ctypes.c_double
    with pytest.raises(InputError, match="not a numpy int32"):
        c_arguments([7])  # a Python int would go in 8 bytes wide
    with pytest.raises(InputError, match="contiguous"):
        c_arguments([np.arange(8, dtype=np.float32)[::2]])


def test_the_cpu_backend_has_no_device_selector():
    from perfcast.campaign.native import NativeTimer

    with pytest.raises(InputError, match="OMP_NUM_THREADS"):
        NativeTimer.open("1")


@needs_gcc
@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind not installed")
def test_a_cpu_campaign_profiles_the_opencl_twins_and_says_so(tmp_path):
    archive = tmp_path / "cpu.zip"
    result = CliRunner().invoke(app, ["campaign", "run", "--backend", "cpu", "--quick", "-k", "triad", "-k",
                                      "histogram256", "--device-profile", str(CPU_PROFILE), "-o", str(archive)])
    assert result.exit_code == 0, result.output
    assert "note: the timed kernels are the C of suite.c" in " ".join(result.output.split())  # a caveat, no warning
    assert "warning:" not in result.output
    read = Archive.read(archive)
    assert read.manifest["backend"] == "cpu" and set(read.manifest["kernels"]) == {"triad", "histogram256"}
    assert all(record["check"] is None for record in read.manifest["kernels"].values())
    assert read.manifest["profiling"]["tool"].startswith("Oclgrind")
    assert "OpenCL twins in suite.cl" in read.manifest["profiling"]["note"]
    assert "C with OpenMP" in read.manifest["environment"]["platform"]
    vectorisation = read.manifest["vectorisation"]  # gcc's own report of the build the kernels were timed from
    assert "-fopt-info-vec-optimized" in vectorisation["tool"] and vectorisation["threads"] >= 1
    assert set(vectorisation["lanes"]) == {"triad", "histogram256"} and vectorisation["lanes"]["triad"] >= 4
    # gcc's code read with gcov's counts (§3.5), or a note saying which tool was missing: never a silent gap.
    incore = read.manifest["incore"]
    if incore is None:
        assert any(note.startswith("no in-core floor") for note in read.manifest["notes"])
    else:
        assert incore["vector_loops"] is True and set(incore["kernels"]) == {"triad", "histogram256"}
        assert incore["kernels"]["triad"]["cycles_per_item"] == 0.0  # its only loop is the one over the work-items
    report = CliRunner().invoke(app, ["campaign", "report", str(archive), "-o", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    text = (tmp_path / "report" / "report.md").read_text()
    assert "(cpu, quick)" in text and "OpenCL twins" in text and "| quantitative | 2 |" in text
