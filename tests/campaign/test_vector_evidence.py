"""The SIMD lanes the compiler gave each suite kernel: gcc's and PoCL's reports read, and run for real."""

import shutil
from pathlib import Path

import pytest

from perfcast.campaign.vector_evidence import (
    gcc_item_vector_bytes,
    gcc_vector_bytes,
    pocl_device,
    pocl_tool,
    pocl_vector_lanes,
    run_gcc_report,
)
from perfcast.kernels.campaign import C_SOURCE, KERNELS, TILE

DATA = Path(__file__).parents[1] / "data" / "campaign"

SOURCE = """#include <omp.h>
/* a comment */
double first(float *a, int n)
{
    for (int i = 0; i < n; i++) a[i] = 0;
    return 0;
}

static double helper(float x) { return x; }

double second(float *restrict a,
              const float *restrict b, int n)
{
    for (int i = 0; i < n; i++) a[i] = b[i];
    for (int i = 0; i < n; i++) a[i] += 1;
    return 0;
}

double third(int n)
{
    return n;
}
"""

REPORT = """s.c:5:23: optimized: loop vectorized using 32 byte vectors
s.c:5:23: optimized: loop vectorized using 64 byte vectors
s.c:9:1: optimized: basic block part vectorized using 32 byte vectors
s.c:14:23: optimized: loop vectorized using 16 byte vectors
s.c:15:23: optimized: loop vectorized using 32 byte vectors
s.c:15:23: optimized:  loop versioned for vectorization because of possible aliasing
"""


def _parsed(tmp_path, text, name="s.c"):
    from perfcast.species.c_source import parse_c_file

    path = tmp_path / name
    path.write_text(text)
    return parse_c_file(path)


def test_gcc_report_gives_each_function_its_widest_loop(tmp_path):
    assert gcc_vector_bytes(REPORT, _parsed(tmp_path, SOURCE)) == {"first": 64, "helper": 0, "second": 32, "third": 0}
    # The report speaks of s.c: the same functions in another file have no loop of its.
    assert gcc_vector_bytes(REPORT, _parsed(tmp_path, SOURCE, "other.c")) == {"first": 0, "helper": 0, "second": 0,
                                                                              "third": 0}


def test_only_loops_that_store_an_element_per_iteration_spread_work_items_over_lanes(tmp_path):
    source = _parsed(tmp_path, """double dot(float *c, const float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++) {
        float s = 0;
        for (int k = 0; k < n; k++) s += a[k] * b[k * n + i];
        c[i] = s;
    }
    return 0;
}

double poly(double *y, const double *x, int n)
{
    for (int i = 0; i < n; i++) {
        double v = x[i], s = 1.0;
        for (int k = 0; k < 16; k++) s = s * v + 0.5;
        y[i] = s;
    }
    return 0;
}
""")
    # gcc names the dot product's inner loop by its header (line 5), the polynomial's outer loop by its body's
    # first statement (line 14), as gcc 12 reports the suite's SGEMM and Horner loops.
    report = ("s.c:5:31: optimized: loop vectorized using 16 byte vectors\n"
              "s.c:14:21: optimized: loop vectorized using 64 byte vectors\n")
    assert gcc_vector_bytes(report, source) == {"dot": 16, "poly": 64}
    # The dot product's vector runs inside one work-item (a reduction into s): its work-items go one at a time.
    assert gcc_item_vector_bytes(report, source) == {"dot": 0, "poly": 64}


def test_a_loop_belongs_to_the_function_whose_body_holds_it(tmp_path):
    """A helper's loop is the helper's, a return type may stand on its own line, an `if {` is not a function."""
    from perfcast.campaign.vector_evidence import c_function_lines

    source = _parsed(tmp_path, "static inline float h(float *x)\n{\n    for (int i = 0; i < 4; i++) x[i] = 0;\n"
                     "    return 0;\n}\ndouble\nb(float *a,\n  int n)\n{\n    if (n) { a[0] = 1; }\n"
                     "    for (int i = 0; i < n; i++) a[i] = 0; /* a } in a comment */\n    return 0;\n}\n")
    assert c_function_lines(source) == {"h": (1, 4), "b": (7, 12)}  # from the name to the last statement
    report = ("s.c:3:5: optimized: loop vectorized using 16 byte vectors\n"
              "s.c:11:5: optimized: loop vectorized using 64 byte vectors\n")
    assert gcc_vector_bytes(report, source) == {"h": 16, "b": 64}


def test_pocl_remarks_give_each_kernel_its_work_group_loop():
    """Recorded on PoCL 3.1: the loops over work-items, not a kernel's own loops (sgemm_naive's k loop)."""
    lanes = pocl_vector_lanes((DATA / "pocl-vectorizer-remarks.txt").read_text(), [k.name for k in KERNELS])
    assert lanes == {"triad": 8, "stencil7": 8, "sor_redblack": 8, "sgemm_naive": 1, "sgemm_tiled": 4,
                     "histogram256": 1, "reduce_sum": 8, "transcendental": 1, "nbody": 1, "spmv_csr": 1,
                     "hash_int": 1, "horner_fp64": 1}  # hash_int: its copy for zero rounds went 8 wide, its rounds not
    assert pocl_vector_lanes("", ["triad"]) == {}  # no remarks (not PoCL): nothing known
    only_own_loop = ("<unknown>:0:0: '_Z13get_global_idj' inlined into 'triad' with (cost=always)"
                     "<unknown>:0:0: vectorized loop (vectorization width: 16, interleaved count: 1)")
    assert pocl_vector_lanes(only_own_loop, ["triad"]) == {}
    # An unlisted kernel compiled after triad: its remarks are not triad's.
    after = ("<unknown>:0:0: '_pocl_kernel_triad' inlined into '_pocl_kernel_triad_workgroup' with (cost=always)"
             "<unknown>:0:0: vectorized loop (vectorization width: 8, interleaved count: 1)"
             "<unknown>:0:0: '_pocl_kernel_other' inlined into '_pocl_kernel_other_workgroup' with (cost=always)"
             "<unknown>:0:0: loop not vectorized: cannot prove it is safe to reorder floating-point operations")
    assert pocl_vector_lanes(after, ["triad"]) == {"triad": 8}


def test_the_report_is_named_by_pocls_version_and_only_pocl_devices_are_asked():
    assert pocl_tool("OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts") == "PoCL 3.1+debian vectoriser remarks"
    assert pocl_tool("OpenCL 3.0 CUDA 13.0") == "PoCL vectoriser remarks"
    assert pocl_device("no device is named this") is None  # another platform's device, or none at all


def test_pocl_runs_the_devices_of_its_own_platform_only():
    cl = pytest.importorskip("pyopencl")
    try:
        found = [(p, d) for p in cl.get_platforms() for d in p.get_devices()]
    except cl.Error:
        pytest.skip("no OpenCL platform")
    if not found:
        pytest.skip("no OpenCL device")
    for platform, device in found:
        answer = pocl_device(device.name)
        if "portable computing language" in platform.name.lower():
            assert answer is not None and answer[0].startswith("PoCL") and answer[1] == device.max_compute_units
        elif not any(device.name.strip() == other.name.strip() for p, other in found if p != platform):
            assert answer is None


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_gcc_reports_on_the_suite_for_real():
    from perfcast.campaign.native import C_FLAGS
    from perfcast.kernels.native import DEFAULT_FLAGS
    from perfcast.species.c_source import parse_c_file

    widest = gcc_vector_bytes(run_gcc_report(C_SOURCE, (*DEFAULT_FLAGS, *C_FLAGS, f"-DTILE={TILE}")),
                              parse_c_file(C_SOURCE, {"TILE": TILE}))
    assert {k.name for k in KERNELS} <= set(widest)
    assert widest["triad"] >= 16  # any SIMD unit gcc targets at -O3 takes the triad
    report = run_gcc_report(C_SOURCE, (*DEFAULT_FLAGS, *C_FLAGS, f"-DTILE={TILE}"))
    items = gcc_item_vector_bytes(report, parse_c_file(C_SOURCE, {"TILE": TILE}))
    assert items["triad"] == widest["triad"] and items["sgemm_naive"] == 0  # a dot product per work-item


def test_the_compilers_report_narrows_the_cpu_boat_hull():
    """PoCL left horner_fp64 scalar and vectorised triad at 8 of 16 lanes, on both cores: c2 and c3 go."""
    from perfcast.campaign.score import score_kernel
    from perfcast.devices.catalog import get_device, load_device_file
    from perfcast.kernels.campaign import kernel_named

    device = load_device_file(Path(__file__).parents[2] / "docs" / "validation" / "bench-opencl-pocl-profile.yaml")
    report = {"tool": "PoCL 3.1 vectoriser remarks", "lanes": {"triad": 8, "horner_fp64": 1}, "threads": 64}
    for name in ("triad", "horner_fp64"):
        kernel = kernel_named(name)
        record = {"median_s": 0.01, "spread": 0.0, "n": kernel.sizes[1]}
        spec = score_kernel(kernel, record, device, None).predictions["boat hull"]
        told = score_kernel(kernel, record, device, None, report).predictions["boat hull"]
        assert told.lower == pytest.approx(spec.lower) and told.upper < spec.upper
        assert "floors by the compiler (PoCL 3.1 vectoriser remarks): 64 threads, so no single-thread floor" \
            in told.detail
    horner = score_kernel(kernel_named("horner_fp64"), {"median_s": 0.01, "spread": 0.0, "n": 1 << 20}, device,
                          None, report).predictions["boat hull"]
    assert "left scalar" in horner.detail
    # Fewer threads than the hull counts keep c2 and c3; the lanes alone then move c3 = (L / l)·N·c0.
    one = {"tool": "gcc", "lanes": {"triad": 16}, "threads": 1}
    record = {"median_s": 0.01, "spread": 0.0, "n": 1 << 20}
    wide = score_kernel(kernel_named("triad"), record, device, None, one).predictions["boat hull"]
    unknown = score_kernel(kernel_named("triad"), record, device, None, {**one, "lanes": {}}).predictions["boat hull"]
    assert wide.upper < unknown.upper and "1 threads of the 2 the hull counts" in wide.detail
    gpu = score_kernel(kernel_named("triad"), {"median_s": 0.01, "spread": 0.0, "n": 1 << 20}, get_device("h200"),
                       None, report).predictions["boat hull"]
    assert "compiler" not in gpu.detail  # a GPU's hull has no CPU floors to rule out
