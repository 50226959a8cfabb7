"""A user's own OpenCL kernel tuned through OpenClTunable: the documented plug-in interface, for real."""

import numpy as np
import pytest

from perfcast.tune.store import ResultsStore
from perfcast.tune.strategies import Session, exhaustive, hierarchical

cl = pytest.importorskip("pyopencl")

SOURCE = """
__kernel void scale(__global const float *x, __global float *y, float a)
{
    size_t base = get_global_id(0) * ITEMS;
    for (int i = 0; i < ITEMS; i++) y[base + i] = a * x[base + i] + 1.0f;
}
"""
N = 1 << 16


def make(broken=False):
    from perfcast.tune.opencl_kernel import OpenClTunable

    try:
        cl.get_platforms()
    except cl.Error:
        pytest.skip("no OpenCL platform")

    def arguments(context, size):
        n = size["n"]
        x = np.arange(n, dtype=np.float32)
        flags = cl.mem_flags
        return [cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x),
                cl.Buffer(context, flags.READ_WRITE, size=4 * n), np.float32(2.0)]

    return OpenClTunable(
        name="scale",
        source=SOURCE.replace("+ 1.0f", "+ 2.0f") if broken else SOURCE,
        kernel_name="scale",
        parameters={"items": (1, 4, 16), "wg": (1, 8, 64)},
        problem={"n": N},
        size_key="n",
        item_parameters=("items",),
        group_parameter="wg",
        arguments=arguments,
        ndrange=lambda c, size: (size["n"] // c["items"], c["wg"]),
        units_per_group=lambda c: c["items"] * c["wg"],
        work=lambda size: size["n"],
        reference=lambda size: 2.0 * np.arange(size["n"], dtype=np.float32) + 1.0,
        output=1,
        check_size={"n": 4096},
    )


def test_own_kernel_tunes_with_every_strategy(tmp_path):
    kernel = make()
    assert kernel.space.size() == 9
    store = ResultsStore(tmp_path / "r.sqlite")
    for strategy in (exhaustive, hierarchical):
        run_id, _ = store.open_run(kernel.name, strategy.__name__, kernel.environment(), kernel.target(), 2)
        result = strategy(Session(kernel, store, run_id, repetitions=2))
        assert kernel.invalid(result.best, kernel.size_for(result.best, kernel.groups_for_target(result.best))) is None
        assert result.measurement.metric > 0


def test_wrong_results_are_stored_and_never_win(tmp_path):
    """Every configuration of the broken kernel computes a wrong result: each is stored as such, none is timed."""
    kernel = make(broken=True)
    store = ResultsStore(tmp_path / "r.sqlite")
    run_id, _ = store.open_run(kernel.name, "exhaustive", kernel.environment(), kernel.target(), 1)
    with pytest.raises(RuntimeError, match="no configuration could run"):
        exhaustive(Session(kernel, store, run_id, repetitions=1))
    failures = store.failures(run_id)
    assert failures and {f["status"] for f in failures} == {"wrong"}
    assert all("differs from the reference" in f["message"] for f in failures)
    assert store.measurements(run_id) == []
