"""The in-core record of a campaign on PoCL's CPU device, run for real: PoCL with -g, Oclgrind's block counts, llvm-mca."""

import shutil

import pytest

from perfcast.errors import ToolError
from perfcast.kernels.campaign import HASH_ROUNDS


def _pocl_cpu_or_skip():
    """Return (platform, device, name) of PoCL's CPU device, or skip where a tool the record needs is missing."""
    for tool in ("oclgrind", "objdump", "g++"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    from perfcast.profiles.incore import BLOCKS_PLUGIN_SOURCE, mca_tool
    from perfcast.profiles.trace_plugin import build_oclgrind_plugin

    try:
        mca_tool()
        build_oclgrind_plugin(BLOCKS_PLUGIN_SOURCE)
    except ToolError as error:
        pytest.skip(str(error))
    from perfcast.campaign.incore_evidence import pocl_cpu_device

    found = pocl_cpu_device()
    if found is None:
        pytest.skip("no PoCL CPU device")
    return found


def test_the_hash_s_rounds_are_its_inner_loop_and_a_work_item_loop_costs_nothing():
    from perfcast.campaign.incore_evidence import run_pocl_incore
    from perfcast.profiles import incore

    platform, device, name = _pocl_cpu_or_skip()
    record = run_pocl_incore({"hash_int": 4096, "triad": 4096}, platform, device, name)
    # The code is PoCL's, built for the CPU its device names; llvm-mca times it on this machine's core.
    assert record["target"] in name and set(record["kernels"]) == {"hash_int", "triad"}
    tool = incore.mca_tool()
    assert record["cpu"] == incore.modelled_core(incore.llvm_host_cpu(tool), record["target"], incore.llvm_cpus(tool))
    hash_loops = [loop for loop in record["kernels"]["hash_int"]["loops"] if loop["inner"]]
    assert len(hash_loops) == 1
    rounds = hash_loops[0]
    # Oclgrind ran the round's block HASH_ROUNDS times a work-item; llvm-mca's steady state is at least the
    # ports' bound; the kernel's cycles are the formula's.
    assert rounds["executions_per_item"] == HASH_ROUNDS
    assert rounds["cycles"] >= rounds["ports"] > 0
    alone = HASH_ROUNDS / rounds["unroll"] * rounds["cycles"]  # one work-item's chain, nothing beside it
    if rounds["item_cycles"] is None:  # the work-item loop around it not laid out: its copies taken to overlap
        assert record["kernels"]["hash_int"]["cycles_per_item"] == pytest.approx(alone / rounds["copies"])
    else:  # laid out: the window overlaps work-items, never below the ports' bound nor above a lone chain
        assert record["kernels"]["hash_int"]["cycles_per_item"] == pytest.approx(rounds["item_cycles"])
        assert HASH_ROUNDS / rounds["unroll"] * rounds["ports"] <= rounds["item_cycles"] <= alone
    # The triad has no loop of its own: whatever loops PoCL made run over the work-items.
    assert record["kernels"]["triad"]["cycles_per_item"] == 0.0


class _Timer:
    """A timer whose in-core reading returns `found` or raises it."""

    def __init__(self, found):
        self.found, self.asked = found, []

    def incore(self, kernels, sizes):
        self.asked.append(sorted(sizes))
        if isinstance(self.found, Exception):
            raise self.found
        return self.found


def test_the_campaign_records_the_reading_or_a_note_and_asks_only_for_timed_kernels(tmp_path):
    from perfcast.campaign.archive import WorkingFolder
    from perfcast.campaign.run import _record_incore
    from perfcast.kernels.campaign import kernel_named

    kernels = [kernel_named("hash_int"), kernel_named("triad")]
    record = {"cpu": "znver4", "tool": "test", "kernels": {"hash_int": {"cycles_per_item": 80.0, "loops": []}}}
    for found, expected, note in ((record, record, None), (ToolError("llvm-mca is not on PATH"), None,
                                                            "no in-core floor: llvm-mca is not on PATH")):
        folder = WorkingFolder(tmp_path / f"run-{note is None}")
        manifest = {"format": "perfcast-campaign", "version": 1, "notes": [],
                    "kernels": {"hash_int": {"n": 1024, "median_s": 1e-3, "spread": 0.0, "precision": "int32"},
                                "triad": {"n": 1024}}}
        timer = _Timer(found)
        _record_incore(folder, manifest, timer, kernels, lambda label, done: None)
        assert manifest["incore"] == expected and timer.asked == [["hash_int"]]  # the triad was not timed
        assert (note in manifest["notes"]) if note else manifest["notes"] == []
        assert folder.manifest()["incore"] == expected  # saved: a resumed run does not ask again
    plain = {"format": "perfcast-campaign", "version": 1, "notes": [],
             "kernels": {"hash_int": {"n": 1024, "median_s": 1e-3, "spread": 0.0, "precision": "int32"}}}
    _record_incore(WorkingFolder(tmp_path / "cuda"), plain, object(), kernels, lambda label, done: None)
    assert plain["incore"] is None  # a backend with no reading of its code


def test_gcc_s_code_read_with_gcov_s_counts_prices_the_hash_s_rounds_and_n_body_s_vector_loop():
    """The C suite's record, run for real: gcc -g and --coverage, gcov, objdump, llvm-mca on this CPU."""
    for tool in ("gcc", "gcov", "objdump"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    from perfcast.campaign.native import NativeTimer
    from perfcast.kernels.campaign import kernel_named
    from perfcast.profiles.incore import llvm_cpus, llvm_host_cpu, mca_tool

    try:
        tool = mca_tool()
    except ToolError as error:
        pytest.skip(str(error))
    if llvm_host_cpu(tool) not in llvm_cpus(tool):
        pytest.skip("LLVM has no model of this CPU")
    kernels = [kernel_named(name) for name in ("hash_int", "nbody", "triad")]
    sizes = {"hash_int": 4096, "nbody": 512, "triad": 4096}
    record = NativeTimer.open(None).incore(kernels, sizes)
    assert record["vector_loops"] is True and set(record["kernels"]) == set(sizes)
    (rounds,) = [loop for loop in record["kernels"]["hash_int"]["loops"] if loop["inner"]]
    # gcov counted HASH_ROUNDS rounds a work-item: few enough to lay them into the loop over the work-items.
    assert rounds["flattened"] == HASH_ROUNDS and rounds["executions_per_item"] == pytest.approx(1.0, abs=0.01)
    assert rounds["cycles"] > 0
    assert record["kernels"]["hash_int"]["cycles_per_item"] == pytest.approx(rounds["cycles"], rel=0.01)
    # n-body's loop over the 512 bodies runs them all a work-item, laid out or at its own steady state.
    (bodies,) = [loop for loop in record["kernels"]["nbody"]["loops"] if loop["inner"]]
    if bodies["flattened"]:  # laid into the loop over the work-items: one pass a work-item, 512 bodies of trips
        assert bodies["executions_per_item"] == pytest.approx(1.0, abs=0.01)
        assert 512 / 64 <= bodies["flattened"] <= 512  # gcc's lanes: from none to 16 floats of a zmm, unrolled
    else:
        assert bodies["executions_per_item"] == 512 and bodies["lanes"] >= 1
    assert record["kernels"]["nbody"]["cycles_per_item"] > 0
    assert record["kernels"]["triad"]["cycles_per_item"] == 0.0
