"""The campaign for real on PoCL (--quick), its archive, resuming, and the scoring rules of spec §6."""

import dataclasses
import json
import math
import os
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from perfcast.campaign.archive import Archive, ArchiveError, WorkingFolder
from perfcast.campaign.report import score_archive
from perfcast.campaign.score import KernelScore, Prediction, contains, summarise
from perfcast.cli import app
from perfcast.kernels.campaign import KERNELS, TILE, kernel_named

runner = CliRunner()
DEVICE_PROFILE = Path(__file__).parents[2] / "docs" / "validation" / "bench-opencl-pocl-profile.yaml"


def _have_pocl() -> bool:
    try:
        from perfcast.bench.opencl import list_devices

        return bool(list_devices())
    except Exception:  # noqa: BLE001 - any failure means no OpenCL here
        return False


needs_opencl = pytest.mark.skipif(not _have_pocl(), reason="no OpenCL device (apt-get install pocl-opencl-icd)")
needs_oclgrind = pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind not installed")


def test_the_suite():
    names = [k.name for k in KERNELS]
    assert len(names) >= 12 and len(set(names)) == len(names)
    assert {"triad", "stencil7", "sor_redblack", "sgemm_naive", "sgemm_tiled", "histogram256", "reduce_sum",
            "transcendental", "nbody", "spmv_csr", "hash_int", "horner_fp64"} <= set(names)
    cuda = (Path(__file__).parents[2] / "src/perfcast/kernels/campaign/suite.cu").read_text()
    for kernel in KERNELS:
        n = kernel.sizes[0]
        assert kernel.work(n) > 0 and kernel.dram_bytes(n) > 0
        assert f"void {kernel.name}(" in cuda, f"{kernel.name} has no CUDA version"
        if kernel.precision != "fp64" and kernel.name not in ("nbody", "histogram256"):
            # Sizes well past a 32 MiB last-level cache, except where the kernel is compute bound by design.
            assert kernel.dram_bytes(n) > 64 * 2**20 or kernel.name.startswith("sgemm"), kernel.name


@needs_opencl
@needs_oclgrind
def test_quick_campaign_end_to_end(tmp_path):
    archive = tmp_path / "pocl.zip"
    result = runner.invoke(app, ["campaign", "run", "--backend", "opencl", "--quick", "-o", str(archive),
                                 "--device-profile", str(DEVICE_PROFILE)])
    assert result.exit_code == 0, result.output
    assert archive.stat().st_size < 16 * 2**20
    assert not WorkingFolder.for_archive(archive).exists()
    read = Archive.read(archive)
    kernels = read.manifest["kernels"]
    assert set(kernels) == {k.name for k in KERNELS}
    for name, record in kernels.items():
        assert record.get("check") is None, (name, record.get("check"))  # every result is right
        assert len(record["times_s"]) >= 10 and record["median_s"] > 0
        worst = record["profile"]["scaling_worst"]
        assert worst[1] <= 0.01, (name, worst)  # counts scale with the work-items
        # Simulated traffic moves at least the compulsory footprint (histogram: its bins stay in cache)
        simulated = record["simulated_bytes"]
        assert simulated["dram_bytes"] >= 0.95 * record["footprint_bytes"]["read"], name
    assert read.manifest["profiling"]["traffic"]["levels"][0]["name"] == "L1"
    vectorisation = read.manifest["vectorisation"]  # PoCL's vectoriser says what it did with each kernel
    if vectorisation is not None:
        assert vectorisation["tool"].startswith("PoCL") and set(vectorisation["lanes"]) == set(kernels)
        assert all(lanes >= 1 for lanes in vectorisation["lanes"].values()) and vectorisation["threads"] >= 1
    incore = read.manifest["incore"]  # on PoCL's CPU device with llvm-mca: the inner loops of the code it ran
    if incore is not None:
        assert set(incore["kernels"]) <= set(kernels) and "nbody" in incore["kernels"]
        # n-body's inner loop runs once a work-item and body; the triad has no loop of its own.
        assert incore["kernels"]["nbody"]["cycles_per_item"] > 0 and incore["kernels"]["triad"]["cycles_per_item"] == 0
    scores = score_archive(read)
    assert {s.kernel for s in scores.scores} == set(kernels)
    assert scores.summaries["quantitative"].n == len(KERNELS)
    report = runner.invoke(app, ["campaign", "report", str(archive), "-o", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    text = (tmp_path / "report" / "report.md").read_text()
    assert "perfcast campaign report" in text and "| quantitative |" in text
    assert (tmp_path / "report" / "predicted-vs-measured.png").stat().st_size > 10_000
    # Projected onto its own device, each kernel returns its measurement (spec §4), the integer ones in int32.
    projected = runner.invoke(app, ["project", str(archive), "--to", str(archive), "--json"])
    assert projected.exit_code == 0, projected.output
    data = json.loads(projected.stdout)
    assert {row["kernel"] for row in data["kernels"]} == set(kernels) and not data["left_out"]
    assert {row["kernel"] for row in data["kernels"] if row["precision"] == "int32"} == {
        k.name for k in KERNELS if k.precision == "int32"} != set()
    for row in data["kernels"]:
        assert row["ape"] == pytest.approx(0, abs=1e-9) and row["contained"], row["kernel"]
        # L2 (and L3) only where the traffic was simulated through this device's caches
        assert {"L1", "DRAM"} <= set(row["per_level_op_s"]) <= {"L1", "L2", "L3", "DRAM"}
    both = runner.invoke(app, ["campaign", "report", str(archive), str(archive), "-o", str(tmp_path / "both")])
    assert both.exit_code == 0, both.output
    text = (tmp_path / "both" / "report.md").read_text()
    assert text.count("## Projection (§4)") == 2 and f"| {len(kernels)} | 0.0% | 0.0% |" in text
    assert (tmp_path / "both" / "projection-1-to-2.png").stat().st_size > 10_000


def test_a_quick_run_traces_a_quarter_of_the_accesses_and_still_two_waves():
    from perfcast.campaign.run import TRAFFIC_ACCESSES, TRAFFIC_ACCESSES_QUICK, _traced_groups

    triad = kernel_named("triad")
    n = triad.sizes[1]
    full = _traced_groups(triad, n, 3.0, 2)
    quick = _traced_groups(triad, n, 3.0, 2, TRAFFIC_ACCESSES_QUICK)
    group_items = int(np.prod(triad.profile_launch(n, 1).local_size))
    # 3 accesses a work-item: the sample's accesses are the budget's, to one work-group's worth
    assert full * 3 * group_items <= TRAFFIC_ACCESSES < (full + 1) * 3 * group_items
    assert quick * 3 * group_items <= TRAFFIC_ACCESSES_QUICK < (quick + 1) * 3 * group_items
    assert quick < full
    # However many accesses a work-item makes, two waves of the cores are traced.
    assert _traced_groups(triad, n, 1e9, 2, TRAFFIC_ACCESSES_QUICK) == 4


@needs_opencl
def test_an_interrupted_run_keeps_what_it_measured_and_resumes(tmp_path):
    from perfcast.campaign.run import CampaignOptions, run_campaign

    archive = tmp_path / "r.zip"
    options = CampaignOptions("opencl", archive, quick=True, kernels=("triad", "histogram256"),
                              device_profile=DEVICE_PROFILE)

    def stop_at_histogram(label, done):
        if "histogram256" in label:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_campaign(options, stop_at_histogram)
    folder = WorkingFolder.for_archive(archive)
    assert folder.exists() and set(folder.manifest()["kernels"]) == {"triad"}
    first = folder.manifest()["kernels"]["triad"]["times_s"]
    unfinished = Archive.read(folder.path)  # an unfinished run can be read too
    assert unfinished.manifest["device"]
    if shutil.which("oclgrind") is None:
        return
    run_campaign(options)
    done = Archive.read(archive).manifest
    assert done["kernels"]["triad"]["times_s"] == first  # kept, not measured again
    assert "histogram256" in done["kernels"] and any(note.startswith("resumed") for note in done["notes"])


def test_a_resume_with_other_options_is_refused_naming_each(tmp_path):
    from dataclasses import replace

    from perfcast.campaign.run import CampaignOptions, _fresh_manifest, _resume_differences

    options = CampaignOptions("opencl", tmp_path / "r.zip", repetitions=10, kernels=("triad",))
    manifest = _fresh_manifest(options)
    assert _resume_differences(manifest, options) == []
    other = replace(options, repetitions=30, kernels=("triad", "nbody"), device_runs=1)
    assert _resume_differences(manifest, other) == [
        "repetitions: 10 then, 30 now", "kernels: ['triad'] then, ['nbody', 'triad'] now", "device_runs: 2 then, 1 now"]
    older = {k: v for k, v in manifest.items() if k != "options"}  # a run begun before options were kept
    assert _resume_differences(older, other) == ["repetitions: 10 then, 30 now"]


def test_archive_format_and_version_are_checked(tmp_path):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "perfcast-campaign", "version": 9}))
    with pytest.raises(ArchiveError, match="version 9; this perfcast reads version 1"):
        Archive.read(path)
    path.write_text("not a zip")
    with pytest.raises(ArchiveError, match="cannot read"):
        Archive.read(path)


def test_an_archive_whose_manifest_decompresses_past_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    import perfcast.campaign.archive as archive_module

    monkeypatch.setattr(archive_module, "MAX_MEMBER_BYTES", 1000)
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:  # 1 MB of spaces in a few kB
        z.writestr("manifest.json", '{"format": "perfcast-campaign", "version": 1' + " " * 1_000_000 + "}")
        z.writestr("device.yaml", "name: x\n")
    assert path.stat().st_size < 10_000
    with pytest.raises(ArchiveError, match="manifest.json decompresses to more than"):
        Archive.read(path)


def _archive_with(tmp_path, manifest_text: str):
    path = tmp_path / "m.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("manifest.json", manifest_text)
        z.writestr("device.yaml", "name: x\n")
    return path


HEAD = '"format": "perfcast-campaign", "version": 1'


@pytest.mark.parametrize(("manifest", "message"), [
    ('{' + HEAD + ', "kernels": {"triad": {"median_s": -6.7e-05}}}', "median_s must be"),
    ('{' + HEAD + ', "kernels": {"triad": {"median_s": "fast"}}}', "median_s must be"),
    ('{' + HEAD + ', "kernels": {"triad": {"spread": null, "median_s": 1e-3}}}', "a timed kernel needs spread"),
    ('{' + HEAD + ', "kernels": {"triad": {"median_s": 1e-3, "spread": 0.01}}}', "needs n, its size"),
    ('{' + HEAD + ', "kernels": {"triad": {"median_s": 1e-3, "spread": 0.01, "n": 8, "precision": "fp128"}}}',
     "precision 'fp128' is not one of"),
    ('{' + HEAD + ', "kernels": {"triad": {"median_s": 1e-3, "spread": 0.01, "n": 8, "precision": "fp32"}}}', None),
    ('{' + HEAD + ', "kernels": {"triad": {"n": 8}}}', None),  # not timed yet: an unfinished run
    ('{' + HEAD + ', "kernels": {"triad": {"median_s": 0, "spread": 0, "n": 8, "precision": "fp32"}}}',
     "median_s must be a positive number"),  # a suite kernel: timed, so above 0
    ('{' + HEAD + ', "kind": "program", "kernels": {"k": {"median_s": 0, "spread": 0, "min_s": 0}}}', None),
    ('{' + HEAD + ', "kernels": {"a": 1, "a": 2}}', "^[^(]*'a' appears twice"),  # said once, not wrapped
    ('{' + HEAD + ', "kernels": {"triad": {"median_s": 1e-3}, "triad": {"median_s": 1}}}', "'triad' appears twice"),
    ('{' + HEAD + ', "kernels": [1, 2]}', "'kernels' must map"),
    ('{' + HEAD + ', "kernels": {"triad": "fast"}}', "its record must be a mapping"),
    ('{' + HEAD + ', "kernels": {"triad": {"times_s": [1e-3, -1]}}}', "times_s must be a list of times"),
    ('{' + HEAD + ', "kernels": {"triad": {"global_size": [1.5]}}}', "global_size must be a list of positive integers"),
    ('{' + HEAD + ', "kernels": {}, "environment": "x"}', "'environment' must be a mapping"),
    ('{' + HEAD + ', "kernels": {}' + ', "notes": {}}', "'notes' must be a list"),
    ('{' + HEAD + ', "kernels": {}, "vectorisation": {"tool": "gcc", "lanes": {"triad": 16}, "threads": 2}}', None),
    ('{' + HEAD + ', "kernels": {}, "vectorisation": null}', None),  # no report (CUDA, not PoCL)
    ('{' + HEAD + ', "kernels": {}, "vectorisation": {"lanes": {"triad": 0}, "threads": 2}}',
     "'vectorisation' needs lanes"),
    ('{' + HEAD + ', "kernels": {}, "vectorisation": {"lanes": {"triad": 8}, "threads": true}}',
     "'vectorisation' needs lanes"),
    ('{' + HEAD + ', "kernels": {}, "vectorisation": []}', "'vectorisation' must be a mapping"),
    ('{' + HEAD + ', "kernels": {}, "incore": {"cpu": "znver4", "kernels": {"hash_int": {"cycles_per_item": 80}}}}',
     None),
    ('{' + HEAD + ', "kernels": {}, "incore": null}', None),  # not PoCL's CPU device, or the step failed
    ('{' + HEAD + ', "kernels": {}, "incore": {"kernels": {"hash_int": {"cycles_per_item": -1}}}}',
     "'incore' needs kernels"),
    ('{' + HEAD + ', "kernels": {}, "incore": {"kernels": {"hash_int": 80}}}', "'incore' needs kernels"),
    ('{' + HEAD + ', "kernels": {}, "incore": [1]}', "'incore' must be a mapping"),
    ('[' * 100_000 + ']' * 100_000, "nested too deeply|not a perfcast campaign archive"),
    ('{' + HEAD + ', "kernels": {"triad": {"median_s": 1e-3}}', "not valid JSON"),
])
def test_a_manifest_that_breaks_what_the_scores_read_is_refused_with_the_field(tmp_path, manifest, message):
    path = _archive_with(tmp_path, manifest)
    if message is None:
        Archive.read(path)
        return
    with pytest.raises(ArchiveError, match=message):
        Archive.read(path)


def test_a_damaged_member_is_an_archive_error(tmp_path):
    path = _archive_with(tmp_path, '{' + HEAD + ', "kernels": {"triad": {"median_s": 0.001}}}')
    data = bytearray(path.read_bytes())
    start = data.index(b'{"format"')
    data[start + 5] ^= 0x01  # the member's CRC no longer matches
    path.write_bytes(bytes(data))
    with pytest.raises(ArchiveError, match="cannot read the campaign archive"):
        Archive.read(path)


def test_report_reads_its_inputs_before_making_its_folder_and_refuses_a_file(tmp_path):
    from perfcast.campaign.report import write_report
    from perfcast.errors import InputError

    folder = tmp_path / "new" / "deeper"
    with pytest.raises(ArchiveError):
        write_report([tmp_path / "missing.zip"], folder, "perfcast campaign report")
    assert not (tmp_path / "new").exists()
    real = Path(__file__).parents[2] / "docs" / "validation" / "gpu-h200" / "campaign-h200.zip"
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        write_report([real], tmp_path / "file", "perfcast campaign report")


def test_the_variables_that_shape_a_run_are_kept(monkeypatch):
    from perfcast.campaign.run import runtime_variables

    monkeypatch.setenv("POCL_MAX_PTHREAD_COUNT", "1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setenv("HOME_OF_SOMETHING_ELSE", "x")
    found = runtime_variables()
    assert found["POCL_MAX_PTHREAD_COUNT"] == "1" and found["CUDA_VISIBLE_DEVICES"] == "0"
    assert "HOME_OF_SOMETHING_ELSE" not in found


def test_scoring_rules():
    scores = [
        KernelScore("a", 1.0, 0.05, {"quantitative": Prediction("quantitative", "point", 1.2, ape=0.2),
                                     "boat hull": Prediction("boat hull", "range", 1.0, 0.5, 0.96, 0.0, True),
                                     "roofline": Prediction("roofline", "bound", 1.04, efficiency=1.04,
                                                            violation=False)}),
        KernelScore("b", 2.0, 0.0, {"quantitative": Prediction("quantitative", "point", 1.0, ape=0.5),
                                    "boat hull": Prediction("boat hull", "range", 3.0, 2.5, 4.0, 0.5, False),
                                    "roofline": Prediction("roofline", "bound", 2.2, efficiency=1.1, violation=True)},
                    left_out={}),
        KernelScore("c", 1.0, 0.0, {}, {"quantitative": "no profile"}),
    ]
    q = summarise(scores, "quantitative")
    assert (q.n, q.mape, q.median_ape, q.worst) == (2, pytest.approx(0.35), pytest.approx(0.35), ("b", 0.5))
    assert q.left_out == {"c": "no profile"}
    hull = summarise(scores, "boat hull")
    assert hull.contained == (1, 2)
    assert hull.median_width == pytest.approx((0.96 / 0.5 + 4.0 / 2.5) / 2)  # ranges 1.92x and 1.6x
    assert hull.narrow_contained == 1  # a, inside and under 3x
    assert summarise(scores, "roofline").violations == ("b",)
    assert summarise(scores, "quantitative").median_width is None


def test_score_kernel_on_a_catalog_gpu():
    """Containment and violations come from the real models: a time below the roofline bound is a violation."""
    from perfcast.campaign.score import score_kernel
    from perfcast.devices.catalog import get_device
    from perfcast.kernels.campaign import kernel_named

    triad, device = kernel_named("triad"), get_device("v100")
    n = triad.sizes[0]
    bound = triad.dram_bytes(n) / 900e9  # DRAM bound at 900 GB/s
    fast = score_kernel(triad, {"median_s": bound / 2, "spread": 0.05, "n": n}, device, None)
    assert fast.predictions["roofline"].time == pytest.approx(bound)
    assert fast.predictions["roofline"].violation is True
    assert fast.left_out["quantitative"] == "no profile of this kernel in the archive"
    hull = fast.predictions["boat hull"]
    slow = score_kernel(triad, {"median_s": (hull.lower + hull.upper) / 2, "spread": 0.0, "n": n}, device, None)
    assert slow.predictions["boat hull"].contained is True and slow.predictions["roofline"].violation is False
    assert score_kernel(triad, {"median_s": hull.upper * 1.2, "spread": 0.1, "n": n}, device,
                        None).predictions["boat hull"].contained is False


def test_the_quantitative_score_prices_elementary_calls_at_the_devices_rate():
    """An Oclgrind-style profile of 1000 exp calls: 8 instructions each, or the device's 40 once it has a rate."""
    from perfcast.campaign.score import score_kernel
    from perfcast.devices.catalog import get_device
    from perfcast.devices.schema import Device
    from perfcast.kernels.campaign import kernel_named
    from perfcast.profiles.profile import KernelProfile

    kernel, v100 = kernel_named("transcendental"), get_device("v100")
    # Compute bound on purpose (two DRAM sectors): a memory-bound time would not depend on the instructions.
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 1000.0, "inst_warp": 10000 / 32, "fp32": 8000.0,
               "fp64": 0.0, "int": 0.0, "dram_read": 1.0, "dram_write": 1.0, "elementary_fp32": 1000.0}
    profile = KernelProfile("transcendental", 1, metrics)
    record = {"median_s": 1e-3, "spread": 0.0, "n": kernel.sizes[-1]}
    fixed = score_kernel(kernel, record, v100, profile).predictions["quantitative"]
    data = v100.model_dump(mode="json", exclude_none=True)
    data["elementary"] = {"fp32": {"value": 15.67e12 / 2 / 40, "source": "measured", "tool": "test",
                                   "date": "2026-11-23"}}
    priced = score_kernel(kernel, record, Device.from_mapping(data), profile).predictions["quantitative"]
    assert "elementary" not in fixed.detail
    assert "1e+03 fp32 elementary calls at 40 instructions each" in priced.detail
    # 40 000 fp32 instructions where there were 8 000, at a better instruction mix (E_instr 0.73 -> 0.93)
    assert 3.5 < priced.time / fixed.time < 4


def test_the_quantitative_score_has_a_division_cost_where_the_device_measured_divisions():
    """A profile with 10^6 integer divisions: nothing added without the device's rate (said), 10 ms at 10^8 div/s."""
    from perfcast.campaign.score import score_kernel
    from perfcast.devices.catalog import get_device
    from perfcast.devices.schema import Device
    from perfcast.kernels.campaign import kernel_named
    from perfcast.profiles.profile import KernelProfile

    kernel, v100 = kernel_named("stencil7"), get_device("v100")
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 1000.0, "inst_warp": 10000 / 32, "fp32": 8000.0,
               "fp64": 0.0, "int": 1e6, "dram_read": 1.0, "dram_write": 1.0, "div_int": 1e6}
    profile = KernelProfile("stencil7", 1, metrics)
    record = {"median_s": 1e-2, "spread": 0.0, "n": kernel.sizes[-1]}
    plain = score_kernel(kernel, record, v100, profile).predictions["quantitative"]
    assert plain.time < 1e-4 and "1e+06 integer divisions, no measured rate of them" in plain.detail
    data = v100.model_dump(mode="json", exclude_none=True)
    data["int_divisions"] = {"value": 1e8, "source": "measured", "tool": "test", "date": "2026-11-26"}
    floored = score_kernel(kernel, record, Device.from_mapping(data), profile).predictions["quantitative"]
    assert floored.time == pytest.approx(plain.time + 1e-2) and floored.ape == pytest.approx(0.0, abs=0.01)
    assert "division bound" in floored.detail and "1e+06 integer divisions / 1e+08 div/s" in floored.detail


def test_divisions_the_compiled_code_has_no_divide_for_are_not_priced():
    """§3.2: a kernel whose compiled code holds no integer divide loses its counted divisions' time, and says why."""
    from perfcast.campaign.score import score_kernel, without_compiled_out_divisions
    from perfcast.devices.catalog import get_device
    from perfcast.devices.schema import Device
    from perfcast.kernels.campaign import kernel_named
    from perfcast.profiles.profile import KernelProfile

    kernel, v100 = kernel_named("stencil7"), get_device("v100")
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 1000.0, "inst_warp": 10000 / 32, "fp32": 8000.0,
               "fp64": 0.0, "int": 1e6, "dram_read": 1.0, "dram_write": 1.0, "div_int": 1e6}
    profile = KernelProfile("stencil7", 1, metrics)
    data = v100.model_dump(mode="json", exclude_none=True)
    data["int_divisions"] = {"value": 1e8, "source": "measured", "tool": "test", "date": "2026-11-28"}
    device = Device.from_mapping(data)
    record = {"median_s": 1e-2, "spread": 0.0, "n": kernel.sizes[-1]}
    divides = {"kernels": {"stencil7": {"cycles_per_item": 0.0, "divides": 3}}}
    shifts = {"kernels": {"stencil7": {"cycles_per_item": 0.0, "divides": 0}}}
    unread = {"kernels": {"stencil7": {"cycles_per_item": 0.0}}}  # a reading older than the count
    priced = score_kernel(kernel, record, device, profile, None, divides).predictions["quantitative"]
    assert priced.time == pytest.approx(score_kernel(kernel, record, device, profile, None, unread)
                                        .predictions["quantitative"].time)
    assert priced.time > 1e-2 and "division bound" in priced.detail
    freed = score_kernel(kernel, record, device, profile, None, shifts).predictions["quantitative"]
    assert freed.time == pytest.approx(priced.time - 1e-2)
    assert "division" not in freed.bound and "no divide instruction for the profile's 1e+06" in freed.detail
    # The profile itself: its count gone, a note kept; unchanged where the code divides, was not read, or counts none.
    stripped, note = without_compiled_out_divisions(profile, "stencil7", shifts)
    assert stripped.metrics["div_int"] == 0.0 and note in stripped.notes and profile.metrics["div_int"] == 1e6
    assert without_compiled_out_divisions(profile, "stencil7", divides) == (profile, None)
    assert without_compiled_out_divisions(profile, "stencil7", None) == (profile, None)
    assert without_compiled_out_divisions(profile, "other", shifts) == (profile, None)
    none = KernelProfile("stencil7", 1, {**metrics, "div_int": 0.0})
    assert without_compiled_out_divisions(none, "stencil7", shifts) == (none, None)


def test_the_issue_floor_applies_where_the_compilers_report_says_scalar():
    """10^6 instructions at 10^9 inst/s: a 1 ms floor for a kernel left scalar, none for a vectorised one or without a rate."""
    from perfcast.campaign.score import score_kernel
    from perfcast.devices.catalog import get_device
    from perfcast.devices.schema import Device
    from perfcast.kernels.campaign import kernel_named
    from perfcast.profiles.profile import KernelProfile

    kernel, v100 = kernel_named("hash_int"), get_device("v100")
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 1000.0, "inst_warp": 1e6 / 32, "fp32": 0.0, "fp64": 0.0,
               "int": 9e5, "dram_read": 1.0, "dram_write": 1.0, "elementary_fp32": 0.0, "elementary_fp64": 0.0}
    profile = KernelProfile("hash_int", 1, metrics)
    record = {"median_s": 1e-3, "spread": 0.0, "n": kernel.sizes[-1]}
    scalar = {"lanes": {"hash_int": 1}, "tool": "test"}
    plain = score_kernel(kernel, record, v100, profile, scalar).predictions["quantitative"]
    assert plain.time < 1e-4 and "issue floor" not in plain.detail  # no rate: nothing to floor at
    data = v100.model_dump(mode="json", exclude_none=True)
    data["scalar_instructions"] = {"value": 1e9, "source": "measured", "tool": "test", "date": "2026-11-26"}
    device = Device.from_mapping(data)
    floored = score_kernel(kernel, record, device, profile, scalar).predictions["quantitative"]
    assert floored.time == pytest.approx(1e-3) and "issue bound" in floored.detail
    assert "1e+06 instructions left scalar / 1e+09 inst/s" in floored.detail
    vectorised = {"lanes": {"hash_int": 16}, "tool": "test"}
    assert score_kernel(kernel, record, device, profile, vectorised).predictions["quantitative"].time == plain.time
    unknown = score_kernel(kernel, record, device, profile).predictions["quantitative"]
    assert unknown.time == plain.time and "no compiler's report says whether the kernel ran scalar" in unknown.detail


def test_the_in_core_floor_applies_to_a_kernel_left_scalar_on_a_cpu():
    """80 cycles a work-item x 2^20 work-items on the device's cores at its clock; none vectorised or unrecorded."""
    from perfcast.campaign.score import kernel_incore_cycles, score_kernel
    from perfcast.devices.catalog import get_device
    from perfcast.kernels.campaign import kernel_named
    from perfcast.profiles.profile import KernelProfile

    kernel = kernel_named("hash_int")
    cpu = get_device("epyc-9654")
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 1000.0, "inst_warp": 1e6 / 32, "fp32": 0.0, "fp64": 0.0,
               "int": 9e5, "dram_read": 1.0, "dram_write": 1.0, "elementary_fp32": 0.0, "elementary_fp64": 0.0}
    profile = KernelProfile("hash_int", 1, metrics)
    items = 1 << 20
    record = {"median_s": 1e-3, "spread": 0.0, "n": kernel.sizes[-1], "work_items": items}
    incore = {"cpu": "znver4", "kernels": {"hash_int": {"cycles_per_item": 80.0, "loops": []}}}
    assert kernel_incore_cycles("hash_int", incore, items) == 80.0 * items
    assert kernel_incore_cycles("triad", incore, items) is None and kernel_incore_cycles("hash_int", None, items) is None
    # A program's group, read at another size: its instructions at the read launch's cycles an instruction.
    read = {"kernels": {"k": {"cycles_per_item": 80.0, "instructions_per_item": 160.0}}}
    assert kernel_incore_cycles("k", read, items, instructions=1e6) == pytest.approx(0.5e6)
    assert kernel_incore_cycles("hash_int", incore, items, instructions=1e6) is None  # no instruction count read
    # A kernel built in both precisions whose builds disagree: each group takes its own precision's reading.
    md = {"kernels": {}, "precisions": {"k": {"fp32": {"cycles_per_item": 12.4, "instructions_per_item": 40.0},
                                              "fp64": {"cycles_per_item": 14.9, "instructions_per_item": 40.0}}}}
    assert kernel_incore_cycles("k", md, items, 1e6, "fp32") == pytest.approx(12.4 / 40 * 1e6)
    assert kernel_incore_cycles("k", md, items, 1e6, "fp64") == pytest.approx(14.9 / 40 * 1e6)
    assert kernel_incore_cycles("k", md, items, 1e6) is None and kernel_incore_cycles("k", md, items, 1e6, "fp16") is None
    scalar = {"lanes": {"hash_int": 1}, "tool": "test"}
    floored = score_kernel(kernel, record, cpu, profile, scalar, incore).predictions["quantitative"]
    expected = 80.0 * items / (cpu.compute_units * cpu.clock.peak.value)
    assert floored.time == pytest.approx(expected) and "in-core bound" in floored.detail
    plain = score_kernel(kernel, record, cpu, profile, scalar).predictions["quantitative"]
    assert plain.time < expected
    vectorised = {"lanes": {"hash_int": 16}, "tool": "test"}
    assert score_kernel(kernel, record, cpu, profile, vectorised, incore).predictions["quantitative"].time < expected
    local = KernelProfile("hash_int", 1, {**metrics, "local_ldst": 100.0})  # local memory: barriers, regions
    assert score_kernel(kernel, record, cpu, local, scalar, incore).predictions["quantitative"].time < expected
    gpu = get_device("v100")  # a record on a GPU's archive (it never has one) floors nothing there
    assert "in-core" not in score_kernel(kernel, record, gpu, profile, scalar, incore).predictions["quantitative"].detail
    # gcc's code read with gcov's counts prices vector loops too, and the C build has no barriers: it floors
    # a vectorised kernel and one whose OpenCL twin's profile counts local memory.
    c_record = {**incore, "vector_loops": True}
    for lanes, twin in ((vectorised, profile), (scalar, local)):
        c_floored = score_kernel(kernel, record, cpu, twin, lanes, c_record).predictions["quantitative"]
        assert c_floored.time == pytest.approx(expected) and "in-core bound" in c_floored.detail


def test_the_whole_compiled_code_of_a_c_kernel_stands_for_the_core():
    """§3.5, C kernels: gcc's reading of the loop over the work-items replaces §3's compute roof and the floors."""
    from perfcast.campaign.score import kernel_item_cycles, score_kernel
    from perfcast.devices.catalog import get_device
    from perfcast.kernels.campaign import kernel_named
    from perfcast.profiles.profile import KernelProfile

    kernel = kernel_named("sor_redblack")
    cpu = get_device("epyc-9654")
    # Oclgrind's build counts 53 instructions a work-item where gcc's loop has 14: §3.3 overprices the scalar loop.
    metrics = {"fma_fp32": 2e6, "fma_fp64": 0.0, "ldst": 7e6, "inst_warp": 53e6 / 32, "fp32": 9e6, "fp64": 0.0,
               "int": 25e6, "div_int": 1e6, "dram_read": 1e3, "dram_write": 250.0, "elementary_fp32": 0.0,
               "elementary_fp64": 0.0}
    profile = KernelProfile("sor_redblack", 1, metrics)
    items = 1 << 20
    record = {"median_s": 1e-3, "spread": 0.0, "n": kernel.sizes[-1], "work_items": items}
    reading = {"cycles_per_item": 0.0, "item_cycles": 6.5, "divides": 1, "loops": []}
    gcc = {"cpu": "znver4", "vector_loops": True, "kernels": {"sor_redblack": reading}}
    assert kernel_item_cycles("sor_redblack", gcc, items) == pytest.approx(6.5 * items)
    pocl = {"cpu": "znver4", "kernels": {"sor_redblack": reading}}  # PoCL's reading: its regions are not the source's
    assert kernel_item_cycles("sor_redblack", pocl, items) is None
    assert kernel_item_cycles("triad", gcc, items) is None
    unread = {**gcc, "kernels": {"sor_redblack": {**reading, "item_cycles": None}}}
    assert kernel_item_cycles("sor_redblack", unread, items) is None
    scalar = {"lanes": {"sor_redblack": 1}, "tool": "test"}
    read = score_kernel(kernel, record, cpu, profile, scalar, gcc).predictions["quantitative"]
    expected = 6.5 * items / (cpu.compute_units * cpu.clock.peak.value)
    assert read.bound == "in-core" and read.time == pytest.approx(expected)
    assert "whole compiled code" in read.detail
    before = score_kernel(kernel, record, cpu, profile, scalar, unread).predictions["quantitative"]
    assert before.bound != "in-core" and "whole compiled code" not in before.detail


def test_a_kernel_whose_code_masks_its_accesses_streams_at_the_guarded_triads_rate():
    """§3.6: B_mem of a kernel whose compiled code masks its loads and stores is the bench's guarded triad's."""
    from perfcast.campaign.score import masked_code, predict_profiled
    from perfcast.devices.quantitative_view import quantitative_inputs
    from perfcast.devices.schema import GUARDED_ACCESSES, Device
    from perfcast.profiles.profile import KernelProfile

    plain = _cpu_inputs()
    data = plain.device.model_dump(mode="json", exclude_none=True)
    guarded_rate = plain.rates.b_mem / 2
    data["bandwidth_ceilings"] = {**data.get("bandwidth_ceilings", {}), GUARDED_ACCESSES: {
        "value": guarded_rate, "source": "measured", "tool": "test", "date": "2026-11-28"}}
    cpu = quantitative_inputs(Device.from_mapping(data))
    assert cpu.guarded_dram == pytest.approx(guarded_rate) and plain.guarded_dram is None
    assert "B_mem, masked accesses (CPU)" in cpu.sources
    # A triad's counts: memory bound, its time the bytes over B_mem.
    n = 1e6
    metrics = {"fma_fp32": n, "fma_fp64": 0.0, "ldst": 3 * n, "inst_warp": 6 * n / 32, "fp32": n, "fp64": 0.0,
               "int": 2 * n, "dram_read": 8 * n / 32, "dram_write": 4 * n / 32}
    triad = KernelProfile("triad", 1, metrics)
    unmasked, _, _ = predict_profiled(triad, cpu, 8)
    masked, detail, _ = predict_profiled(triad, cpu, 8, masked=True)
    assert unmasked.bound == masked.bound == "memory"
    assert masked.time == pytest.approx(2 * unmasked.time) and "the guarded triad's" in detail
    assert predict_profiled(triad, plain, 8, masked=True)[0].time == pytest.approx(unmasked.time)  # not measured
    # A guarded rate at the DRAM figure (AVX-512 masks for free; the bench writes none above it) changes nothing.
    data["bandwidth_ceilings"][GUARDED_ACCESSES]["value"] = plain.rates.b_mem
    fast = quantitative_inputs(Device.from_mapping(data))
    assert predict_profiled(triad, fast, 8, masked=True)[0].time == pytest.approx(unmasked.time)
    record = {"kernels": {"triad": {"cycles_per_item": 0.0, "masked": True}, "old": {"cycles_per_item": 0.0}}}
    assert masked_code("triad", record) and not masked_code("old", record) and not masked_code("triad", None)


def test_a_masked_kernel_pays_its_masked_loads_and_stores_from_any_level_where_the_bench_timed_the_guarded_copy():
    """§3.6: with the guarded copy beside the triad, each global load and store costs a masked one's, cache or not."""
    from perfcast.campaign.score import counts_fills, predict_profiled
    from perfcast.devices.quantitative_view import quantitative_inputs
    from perfcast.devices.schema import GUARDED_ACCESSES, GUARDED_COPY, Device
    from perfcast.profiles.profile import KernelProfile

    plain = _cpu_inputs()
    data = plain.device.model_dump(mode="json", exclude_none=True)
    figure = {"source": "measured", "tool": "test", "date": "2026-11-29"}
    fill = 4.0 if counts_fills(plain.device) else 0.0
    # Per element: triad 5 ns (2 loads, 1 store), copy 3 ns (1 load, 1 store): a load 2 ns, a store 1 ns.
    data["bandwidth_ceilings"] = {**data.get("bandwidth_ceilings", {}),
                                  GUARDED_ACCESSES: {"value": (12 + fill) / 5e-9, **figure},
                                  GUARDED_COPY: {"value": (8 + fill) / 3e-9, **figure}}
    cpu = quantitative_inputs(Device.from_mapping(data))
    assert "masked loads and stores (CPU)" in cpu.sources
    # A copy whose bytes a cache serves (no DRAM traffic): 1e6 loads and stores of 4-byte elements.
    n = 1e6
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 2 * n, "inst_warp": 3 * n / 32, "fp32": 0.0, "fp64": 0.0,
               "int": n, "dram_read": 0.0, "dram_write": 0.0, "global_load_bytes": 4 * n, "global_store_bytes": 4 * n}
    copy = KernelProfile("copy", 1, metrics)
    unmasked, _, _ = predict_profiled(copy, cpu, 8)
    masked, detail, _ = predict_profiled(copy, cpu, 8, masked=True)
    assert unmasked.time < 1e-3 and masked.bound == "masked"
    assert masked.time == pytest.approx(n * 2e-9 + n * 1e-9) and "masked-access floor" in detail
    # Without the copy's figure the two costs are not told apart: no floor, as before.
    del data["bandwidth_ceilings"][GUARDED_COPY]
    triad_only = quantitative_inputs(Device.from_mapping(data))
    assert predict_profiled(copy, triad_only, 8, masked=True)[0].time == pytest.approx(unmasked.time)


def _cpu_inputs(shared: float | None = None, elementary: float | None = None):  # type: ignore[no-untyped-def]
    """Zen 4 (256-bit SIMD) from the catalog, with a measured local-memory bandwidth and call rate if given."""
    from perfcast.devices.catalog import get_device
    from perfcast.devices.quantitative_view import quantitative_inputs
    from perfcast.devices.schema import Device

    data = get_device("epyc-9654").model_dump(mode="json", exclude_none=True)
    measured = {"source": "measured", "tool": "test", "date": "2026-11-27"}
    if shared is not None:
        data["memory"].append({"level": "shared", "scope": "device", "bandwidth": {"value": shared, **measured}})
    if elementary is not None:
        peak = quantitative_inputs(Device.from_mapping(data)).rates.t_sp
        data["elementary"] = {"fp32": {"value": peak / 2 / elementary, **measured}}
    return quantitative_inputs(Device.from_mapping(data))


def test_a_cpus_t_ldst_takes_global_accesses_at_l1_in_the_kernels_vectors_and_local_ones_apart():
    """§3.6: with the compiler's lanes, T_ldst is cpu_ldst_rate's mix; without them, or on a GPU, §3's T_ldst."""
    from perfcast.campaign.score import predict_profiled
    from perfcast.devices.catalog import get_device
    from perfcast.devices.quantitative_view import quantitative_inputs
    from perfcast.models.quantitative import cpu_ldst_rate
    from perfcast.profiles.profile import KernelProfile

    cpu = _cpu_inputs(shared=40e9)  # local memory measured at 10 G accesses/s
    l1 = cpu.device.memory_level("L1").bandwidth.value
    assert cpu.l1_bandwidth == l1 and cpu.simd_bits == 256 and cpu.local_rate == pytest.approx(10e9)
    assert "T_ldst, global (CPU)" in cpu.sources
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 4e5, "inst_warp": 1e6 / 32, "fp32": 1e5, "fp64": 0.0,
               "int": 1e5, "dram_read": 1.0, "dram_write": 1.0, "local_ldst": 1e5}
    profile = KernelProfile("k", 1, metrics)
    for lanes in (1, 4, 8, 16):  # 8 fp32 lanes in 256 bits; 16 is clamped to them
        p, detail, _ = predict_profiled(profile, cpu, lanes)
        assert p.rates.t_ldst == pytest.approx(cpu_ldst_rate(4e5, 1e5, lanes, 8, l1 / 4, 10e9))
        assert f"global accesses at L1 in {min(lanes, 8)} of 8 lanes, 25% local at the local-memory rate" in detail
    assert predict_profiled(profile, cpu, 8)[0].time <= predict_profiled(profile, cpu, 1)[0].time
    # Without a measured local memory (the C backend's profile) local accesses are global ones: all at L1.
    stand_in = _cpu_inputs()
    p, detail, _ = predict_profiled(profile, stand_in, 4)
    assert stand_in.local_rate is None
    assert p.rates.t_ldst == pytest.approx(l1 / 4 * 4 / 8) and "local" not in detail.split("§3.6")[1].split(")")[0]
    # An fp64 kernel: 4 lanes of 8 B in 256 bits, the L1 serving 8-byte accesses.
    fp64 = KernelProfile("k", 1, {**metrics, "fp32": 0.0, "fp64": 1e5})
    assert predict_profiled(fp64, cpu, 8)[0].rates.t_ldst == pytest.approx(cpu_ldst_rate(4e5, 1e5, 4, 4, l1 / 8, 10e9))
    for unknown_lanes in (None, 0):  # no report, or a report that gives no width: §3's T_ldst
        unknown, detail, _ = predict_profiled(profile, cpu, unknown_lanes)
        assert unknown.rates.t_ldst == cpu.rates.t_ldst and "§3.6" not in detail
    gpu = quantitative_inputs(get_device("v100"))
    assert gpu.l1_bandwidth is None and predict_profiled(profile, gpu, 16)[0].rates.t_ldst == gpu.rates.t_ldst
    # §3.9: where the bench measured local accesses in independent chains, those are the local ones' rate.
    independent = dataclasses.replace(cpu, local_loads=25e9)
    p, detail, _ = predict_profiled(profile, independent, 4)
    assert p.rates.t_ldst == pytest.approx(cpu_ldst_rate(4e5, 1e5, 4, 8, l1 / 4, 25e9))
    assert "25% local at the independent local accesses' rate (§3.9)" in detail
    assert p.time <= predict_profiled(profile, cpu, 4)[0].time
    # Not where the device has no local memory measured: its local accesses are global ones.
    assert (predict_profiled(profile, dataclasses.replace(stand_in, local_loads=25e9), 4)[0].rates.t_ldst
            == pytest.approx(l1 / 4 * 4 / 8))


def test_an_integer_kernel_vectorised_on_bytes_does_four_times_the_work_a_vector_instruction():
    """§3.6: 32 lanes of a 256-bit vector and 1-byte stores (a byte memset): integer rates x4, L1 accesses in 32 lanes."""
    from perfcast.campaign.score import predict_profiled
    from perfcast.profiles.profile import KernelProfile

    cpu = _cpu_inputs()
    assert cpu.simd_bits == 256
    n = 1e6
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "fp32": 0.0, "fp64": 0.0, "int": 3 * n, "ldst": n,
               "global_ldst": n, "global_store_bytes": n, "global_load_bytes": 0.0, "inst_warp": 7 * n / 32,
               "dram_read": 0.0, "dram_write": 1.0}
    memset = KernelProfile("memset", 1, metrics)
    words, detail, _ = predict_profiled(memset, cpu, 8)  # the report's 8 lanes: 4-byte lanes fill the vector
    bytes_, detail32, _ = predict_profiled(memset, cpu, 32)
    assert bytes_.rates.t_int == pytest.approx(4 * words.rates.t_int)
    assert bytes_.rates.t_add == pytest.approx(4 * words.rates.t_add)
    assert words.bound == bytes_.bound == "compute" and bytes_.time < words.time
    assert "integer rates x4" in detail32 and "accesses at L1 in 32 of 32 lanes" in detail32
    assert "integer rates" not in detail
    # 2-byte stores at 16 lanes: x2.
    shorts = KernelProfile("memset", 1, {**metrics, "global_store_bytes": 2 * n})
    assert predict_profiled(shorts, cpu, 16)[0].rates.t_int == pytest.approx(2 * words.rates.t_int)
    # Either reading alone is not enough: 4-byte accesses at 16 lanes (two registers a vector), or bytes at 8
    # lanes; nor is floating-point work, whatever its lanes.
    ints = KernelProfile("memset", 1, {**metrics, "global_store_bytes": 4 * n})
    assert predict_profiled(ints, cpu, 16)[0].rates.t_int == pytest.approx(words.rates.t_int)
    assert predict_profiled(memset, cpu, 4)[0].rates.t_int == pytest.approx(words.rates.t_int)
    floats = KernelProfile("memset", 1, {**metrics, "fp32": n, "add_fp32": n})
    assert predict_profiled(floats, cpu, 32)[0].rates.t_int == pytest.approx(words.rates.t_int)


def test_a_kernel_left_scalar_whose_statements_were_packed_takes_the_compiled_code_s_lanes():
    """The report's 1 gives way to the compiled arithmetic's lanes (rounded) where the run read the code."""
    from perfcast.campaign.score import kernel_lanes, packed_lanes

    report = {"lanes": {"scalar": 1, "wide": 16}}
    read = {"kernels": {"scalar": {"fp_lanes": 7.6}, "wide": {"fp_lanes": 3.0}, "flat": {"fp_lanes": 1.4}}}
    assert kernel_lanes("scalar", report, read) == 7 and packed_lanes("scalar", read) == 7  # rounded down
    assert kernel_lanes("wide", report, read) == 16  # the work-item loop's own width stands
    assert kernel_lanes("scalar", report, None) == 1 and kernel_lanes("scalar", report, {"kernels": {}}) == 1
    for mostly_scalar in (1.4, 1.75, 1.99):  # a float4's one packed subtraction among scalar operations (md)
        assert kernel_lanes("scalar", report, {"kernels": {"scalar": {"fp_lanes": mostly_scalar}}}) == 1
    # A kernel built in both precisions: the group's builds' reading first, else the kernel's.
    split = {"kernels": {"scalar": {"fp_lanes": 3.9}},
             "precisions": {"scalar": {"fp32": {"fp_lanes": 7.5}, "fp64": {"fp_lanes": 3.9}}}}
    assert [kernel_lanes("scalar", report, split, p) for p in ("fp32", "fp64", None)] == [7, 3, 3]
    assert kernel_lanes("scalar", report, {"kernels": {"scalar": {"fp_lanes": None}}}) == 1
    assert kernel_lanes("flat", report, read) is None and kernel_lanes("scalar", None, read) is None
    assert packed_lanes("flat", read) is None and packed_lanes("scalar", None) is None


def test_a_kernel_whose_inner_loops_run_scalar_arithmetic_gives_up_the_reports_widest_vector():
    """PoCL vectorises reduce_sum's first region 8 wide and leaves its reduction scalar: the reading says which runs."""
    from perfcast.campaign.score import kernel_lanes, scalar_arithmetic

    def reading(fp_lanes: float | None, loops: list[tuple[int, float, bool]], per_item: float = 84.0) -> dict:
        """An in-core record: (instructions an iteration, iterations a work-item, inner) per loop."""
        return {"fp_lanes": fp_lanes, "instructions_per_item": per_item,
                "loops": [{"instructions": n, "executions_per_item": e, "inner": inner, "unroll": 1, "copies": 1}
                          for n, e, inner in loops]}

    report = {"lanes": {"reduce": 8, "tiled": 4, "region": 4, "stencil": 4}}
    read = {"kernels": {"reduce": reading(1.0, [(15, 8.0, True), (112, 9.0, True), (9, 1.0, False)]),
                        "tiled": reading(4.0, [(19, 64.0, True)]),  # inner loops of vector arithmetic
                        # no inner loop: the loops matched need not be the work's (bpnn_adjust_weights_ocl)
                        "region": reading(1.0, [(20, 1.0, False)]),
                        # an inner loop with a fifth of the work (SHOC stencil2d): 35 x 4 of 700
                        "stencil": reading(1.0, [(35, 4.0, True)], per_item=700.0)}}
    assert kernel_lanes("reduce", report, read) == 1 and scalar_arithmetic("reduce", read)
    assert kernel_lanes("tiled", report, read) == 4 and not scalar_arithmetic("tiled", read)
    assert kernel_lanes("region", report, read) == 4 and not scalar_arithmetic("region", read)
    assert kernel_lanes("stencil", report, read) == 4 and not scalar_arithmetic("stencil", read)
    half = {"kernels": {"stencil": reading(1.0, [(35, 10.0, True)], per_item=700.0)}}  # exactly half: scalar
    assert kernel_lanes("stencil", report, half) == 1
    assert kernel_lanes("reduce", report, None) == 8  # the code not read: the report stands
    assert kernel_lanes("reduce", report, {"kernels": {"reduce": reading(None, [(15, 8.0, True)])}}) == 8
    # The group's builds' reading first, as for packed statements.
    split = {"kernels": {"reduce": reading(1.0, [(15, 8.0, True)])},
             "precisions": {"reduce": {"fp32": reading(8.0, [(15, 8.0, True)])}}}
    assert [kernel_lanes("reduce", report, split, p) for p in ("fp32", None)] == [8, 1]


def test_reduce_sum_on_zen3_is_priced_at_its_scalar_issue():
    """The committed Zen 3 archive: PoCL's report says 8 lanes, the reading scalar inner loops; §3.3 then binds."""
    from perfcast.campaign.report import score_archive

    zen3 = Path(__file__).parents[2] / "docs" / "validation" / "projection-pocl" / "zen3-avx2" / "pocl-2core-zen3.zip"
    scores = {s.kernel: s for s in score_archive(Archive.read(zen3)).scores}
    reduce = scores["reduce_sum"].predictions["quantitative"]
    assert reduce.bound == "issue" and "issue floor" in reduce.detail
    assert reduce.ape < 0.25  # 10.8 % (it was 55.5 % at the report's 8 lanes)
    assert scores["sgemm_tiled"].predictions["quantitative"].bound != "issue"  # its FMAs run 4 wide


def test_a_packed_kernel_loads_its_local_operands_in_its_vectors():
    """§3.6: packed statements price local accesses as global ones, at L1 in the lanes; the detail says so."""
    from perfcast.campaign.score import predict_profiled
    from perfcast.models.quantitative import cpu_ldst_rate
    from perfcast.profiles.profile import KernelProfile

    cpu = _cpu_inputs(shared=40e9)
    l1 = cpu.device.memory_level("L1").bandwidth.value
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 4e5, "inst_warp": 1e6 / 32, "fp32": 1e5, "fp64": 0.0,
               "int": 1e5, "dram_read": 1.0, "dram_write": 1.0, "local_ldst": 1e5}
    profile = KernelProfile("k", 1, metrics)
    packed, detail, _ = predict_profiled(profile, cpu, 8, packed=True)
    assert packed.rates.t_ldst == pytest.approx(cpu_ldst_rate(4e5, 1e5, 8, 8, l1 / 4, None)) == pytest.approx(l1 / 4)
    assert "packed into vectors by the compiler, its local and global accesses at L1 in 8 of 8 lanes)" in detail
    apart = predict_profiled(profile, cpu, 8)[0]
    assert apart.rates.t_ldst < packed.rates.t_ldst and packed.time <= apart.time
    # Its scalar chains keep the in-core floor (§3.5) where it has no barriers; with local memory, none applies.
    private = KernelProfile("k", 1, {**metrics, "local_ldst": 0.0})
    chained, detail, _ = predict_profiled(private, cpu, 8, incore_cycles=1e9, packed=True)
    assert chained.bound == "in-core" and chained.incore is not None
    assert "cycles of inner loops /" in detail and "laid out" not in detail
    laid, detail, _ = predict_profiled(private, cpu, 8, incore_cycles=1e9, packed=True, laid_out=True)
    assert laid.time == chained.time and "cycles of the work-items' code laid out, inner loops included /" in detail
    assert predict_profiled(private, cpu, 8, incore_cycles=1e9)[0].incore is None  # the report's own 8 lanes
    assert predict_profiled(profile, cpu, 8, incore_cycles=1e9, packed=True)[0].incore is None  # barriers
    # Its own float4 loads (16 B an access, as the profile counts them) are the vectors already: 8 x 4 / 16 = 2.
    float4 = KernelProfile("k", 1, {**metrics, "global_load_bytes": 4.8e6, "local_load_bytes": 1.6e6})
    wide, detail, _ = predict_profiled(float4, cpu, 8, packed=True)
    assert wide.rates.t_ldst == pytest.approx(cpu_ldst_rate(4e5, 1e5, 2, 8, l1 / 4, None))
    assert "accesses at L1 in 2 of 8 lanes" in detail
    # Counted with the global accesses apart, private ones (here 2e5 of the 4e5) do not dilute the bytes an access:
    # 6.4e6 B over 1e5 global and 1e5 local accesses, 32 B each, gain 8 x 4 / 32 = 1 lane.
    apart = KernelProfile("k", 1, {**float4.metrics, "global_ldst": 1e5})
    assert "accesses at L1 in 1 of 8 lanes" in predict_profiled(apart, cpu, 8, packed=True)[1]
    # Scalar accesses (4 B each, or fewer: bytes of chars) gain all the lanes.
    scalar = KernelProfile("k", 1, {**metrics, "global_load_bytes": 1.0e6, "local_load_bytes": 2e5})
    assert predict_profiled(scalar, cpu, 8, packed=True)[0].rates.t_ldst == pytest.approx(packed.rates.t_ldst)
    # A program's group: the report's 1 and the read code's 8 lanes reach the prediction through score_profiled.
    from perfcast.campaign.score import score_profiled

    record = {"median_s": 1e-3, "spread": 0.01, "work_items": 1024, "kernel": "k"}
    read = {"kernels": {"k": {"fp_lanes": 8.0, "cycles_per_item": 1.0, "instructions_per_item": 1e6}}}
    scored = score_profiled("k[1024/64]", record, cpu.device, profile, None, {"lanes": {"k": 1}}, read)
    assert "packed into vectors by the compiler, its local and global accesses at L1 in 8 of 8 lanes" in (
        scored.predictions["quantitative"].detail)
    left = score_profiled("k[1024/64]", record, cpu.device, profile, None, {"lanes": {"k": 1}}, None)
    assert "packed" not in left.predictions["quantitative"].detail


def test_a_vectorised_cpu_kernels_elementary_calls_share_the_measured_call_among_its_lanes():
    """§3.6: 10^5 calls at a measured 400 instructions each; a kernel 8 lanes wide gives each work-item 50."""
    from perfcast.campaign.score import predict_profiled
    from perfcast.devices.catalog import get_device
    from perfcast.devices.quantitative_view import quantitative_inputs
    from perfcast.profiles.profile import KernelProfile

    cpu = _cpu_inputs(elementary=400)
    assert cpu.elementary_cost["fp32"] == pytest.approx(400)
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 2e5, "inst_warp": 2e6 / 32, "fp32": 1e6, "fp64": 0.0,
               "int": 1e5, "dram_read": 1.0, "dram_write": 1.0, "elementary_fp32": 1e5}
    profile = KernelProfile("k", 1, metrics)
    for lanes, share in ((8, 50.0), (16, 50.0), (2, 200.0)):  # 8 fp32 lanes in 256 bits: 16 is clamped to them
        vectorised, detail, _ = predict_profiled(profile, cpu, lanes)
        assert vectorised.kernel.i_ops == pytest.approx(profile.counts({"fp32": share}).fp32)
        assert f"at {share:.3g} instructions each (the device's measured rate, shared by the lanes (§3.6))" in detail
    for lanes in (1, None):  # scalar, or no report: the measured call as it is
        scalar, detail, _ = predict_profiled(profile, cpu, lanes)
        assert scalar.kernel.i_ops == pytest.approx(profile.counts({"fp32": 400}).fp32) and "shared by" not in detail
    # Packed statements of one work-item call the scalar routine: the packing's lanes do not share the call.
    packed, detail, _ = predict_profiled(profile, cpu, 8, packed=True)
    assert packed.kernel.i_ops == pytest.approx(profile.counts({"fp32": 400}).fp32) and "shared by" not in detail
    data = get_device("v100").model_dump(mode="json", exclude_none=True)  # a GPU's calls are never shared
    data["elementary"] = {"fp32": {"value": 1e10, "source": "measured", "tool": "test", "date": "2026-11-27"}}
    from perfcast.devices.schema import Device

    gpu = quantitative_inputs(Device.from_mapping(data))
    assert "shared by" not in predict_profiled(profile, gpu, 16)[1]


def _scored_without_and_with(kernel_name: str, device_name: str, counts: dict, figure: str, rate: float):
    """Return the quantitative prediction of a profiled suite kernel on a device without, then with, a measured rate."""
    from perfcast.campaign.score import score_kernel
    from perfcast.devices.catalog import get_device
    from perfcast.devices.schema import Device
    from perfcast.kernels.campaign import kernel_named
    from perfcast.profiles.profile import KernelProfile

    kernel, device = kernel_named(kernel_name), get_device(device_name)
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 1000.0, "inst_warp": 1e7 / 32, "fp32": 0.0, "fp64": 0.0,
               "int": 9e6, "dram_read": 1.0, "dram_write": 1.0, **counts}
    profile = KernelProfile(kernel_name, 1, metrics)
    record = {"median_s": 4e-3, "spread": 0.0, "n": kernel.sizes[-1]}
    plain = score_kernel(kernel, record, device, profile).predictions["quantitative"]
    data = device.model_dump(mode="json", exclude_none=True)
    data[figure] = {"value": rate, "source": "measured", "tool": "test", "date": "2026-11-27"}
    priced = score_kernel(kernel, record, Device.from_mapping(data), profile).predictions["quantitative"]
    return plain, priced


def test_the_quantitative_score_has_an_atomic_cost_where_the_device_measured_atomics():
    """10^6 atomics: said and left out without the device's rate, 4 ms added at 2.5 x 10^8 atomic/s."""
    plain, priced = _scored_without_and_with("histogram256", "v100", {"atomics": 1e6}, "atomics", 2.5e8)
    assert "1e+06 atomics, no measured rate of them" in plain.detail
    assert priced.time == pytest.approx(plain.time + 4e-3) and "atomic bound" in priced.detail


def test_the_quantitative_score_prices_first_touched_pages_where_the_device_measured_them():
    """3000 + 1000 pages touched first: said and left out without the device's rate, 4 ms added at 10^6 page/s."""
    from perfcast.campaign.score import first_touch_term
    from perfcast.devices.catalog import get_device
    from perfcast.devices.quantitative_view import quantitative_inputs
    from perfcast.profiles.profile import KernelProfile

    pages = {"first_store_pages": 3000.0, "first_load_pages": 1000.0}
    plain, priced = _scored_without_and_with("triad", "epyc-9654", pages, "first_touches", 1e6)
    assert "4e+03 pages touched first, no measured rate of first touches (not priced)" in plain.detail
    assert priced.time == pytest.approx(plain.time + 4e-3) and "first-touch cost 0.004 s" in priced.detail
    # A profile without the counts (a trace before them, ncu's) and one with none touched first: nothing priced.
    inputs = quantitative_inputs(get_device("epyc-9654"))
    assert first_touch_term(KernelProfile("k", 1, {"fp32": 1.0}), inputs) == (None, None)
    assert first_touch_term(KernelProfile("k", 1, dict.fromkeys(pages, 0.0)), inputs) == (None, None)


def test_the_quantitative_score_adds_barrier_crossings_where_the_device_measured_them():
    """§3.9: 2 x 10^6 crossings said and left out without the CPU's rate, 1 ms added at 2 x 10^9 crossing/s."""
    from perfcast.campaign.score import barrier_term, predict_profiled
    from perfcast.devices.catalog import get_device
    from perfcast.devices.quantitative_view import quantitative_inputs
    from perfcast.profiles.profile import KernelProfile

    cpu = _cpu_inputs(shared=40e9)  # PoCL's device profile: local memory measured
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 1000.0, "inst_warp": 1e7 / 32, "fp32": 0.0, "fp64": 0.0,
               "int": 9e6, "dram_read": 1.0, "dram_write": 1.0, "barriers": 2e6}
    profile = KernelProfile("k", 1, metrics)
    plain, detail, left_out = predict_profiled(profile, cpu)
    assert left_out["barriers"] == "2e+06 barrier crossings, no measured rate of them (not priced)"
    priced, detail, left_out = predict_profiled(profile, dataclasses.replace(cpu, barriers=2e9))
    assert priced.time == pytest.approx(plain.time + 1e-3) and "barrier cost 0.001 s" in detail
    assert left_out["barriers"] == "the values kept live across barriers: not counted (no IR of the kernel) (not priced)"
    # With the values the IR gives (3 a crossing: 2 beyond the bench's one) and the device's rate of them: 1 ms more.
    counts = {"barriers": 2e6, "barrier_values": 6e6}
    cost, unpriced = barrier_term(KernelProfile("k", 1, counts), dataclasses.replace(cpu, barriers=2e9,
                                                                                      barrier_values=4e9))
    assert cost.time == pytest.approx(1e-3 + 1e-3) and unpriced is None
    assert barrier_term(KernelProfile("k", 1, counts), dataclasses.replace(cpu, barriers=2e9))[1] == (
        "the values kept live across barriers: no measured rate of them (not priced)")
    # No barrier counted: nothing; a GPU's barriers (its warps wait in hardware), and a C build's device (no local
    # memory measured: its code crosses none, even where a PoCL bench lent it the rates): nothing, nothing said.
    gpu = quantitative_inputs(get_device("v100"))
    c_build = dataclasses.replace(quantitative_inputs(get_device("epyc-9654")), barriers=2e9)
    assert barrier_term(KernelProfile("k", 1, {"fp32": 1.0}), cpu) == (None, None)
    assert barrier_term(KernelProfile("k", 1, {"barriers": 5.0}), gpu) == (None, None)
    assert barrier_term(KernelProfile("k", 1, {"barriers": 5.0}), c_build) == (None, None)


def test_the_quantitative_score_adds_the_launch_and_its_work_groups_where_the_device_measured_them():
    """§3.8: a suite kernel's launch is priced at its own work-groups; a program's group at its record's NDRange."""
    from perfcast.campaign.score import score_profiled
    from perfcast.devices.catalog import get_device
    from perfcast.devices.schema import Device
    from perfcast.kernels.campaign import kernel_named
    from perfcast.profiles.profile import KernelProfile

    kernel = kernel_named("triad")
    launch = kernel.launch(kernel.sizes[-1])
    groups = launch.items // math.prod(launch.local_size)
    plain, priced = _scored_without_and_with("triad", "epyc-9654", {}, "launches", 1e6)
    assert "launch cost" not in plain.detail
    assert "no measured rate of empty launches (not priced)" in plain.detail  # a CPU without the figures
    # A rate of launches alone: 1 µs, whatever the work-groups.
    assert priced.time == pytest.approx(plain.time + 1e-6)
    assert f"{groups} work-groups, no rate of them measured" in priced.detail
    data = get_device("epyc-9654").model_dump(mode="json", exclude_none=True)
    for figure, rate in (("launches", 1e6), ("work_groups", 1e8)):
        data[figure] = {"value": rate, "source": "measured", "tool": "test", "date": "2026-11-29"}
    device = Device.from_mapping(data)
    # A 2-D suite kernel: its work-groups per dimension, multiplied (sgemm_tiled: TILE x TILE groups).
    from perfcast.campaign.score import score_kernel

    tiled = kernel_named("sgemm_tiled")
    n = tiled.sizes[-1]
    shape = tiled.launch(n)
    assert len(shape.global_size) == 2
    tiles = math.prod(-(-whole // part) for whole, part in zip(shape.global_size, shape.local_size))
    counts = {"fma_fp32": 1e9, "fma_fp64": 0.0, "ldst": 1e8, "inst_warp": 3e9 / 32, "fp32": 2e9, "fp64": 0.0,
              "int": 1e8, "dram_read": 1e6, "dram_write": 1e6}
    record = {"median_s": 0.5, "spread": 0.0, "n": n}
    bare = score_kernel(tiled, record, get_device("epyc-9654"), KernelProfile("sgemm_tiled", 1, counts))
    timed = score_kernel(tiled, record, device, KernelProfile("sgemm_tiled", 1, counts))
    assert timed.predictions["quantitative"].time == pytest.approx(
        bare.predictions["quantitative"].time + 1e-6 + (tiles - 1) * 1e-8)
    # The C backend's kernels are loops in one call, not a runtime's launches: nothing priced, nothing said.
    looped = score_kernel(tiled, record, device, KernelProfile("sgemm_tiled", 1, counts), launched=False)
    assert looped.predictions["quantitative"].time == pytest.approx(bare.predictions["quantitative"].time)
    assert "launch" not in looped.predictions["quantitative"].detail
    metrics = {"fma_fp32": 0.0, "fma_fp64": 0.0, "ldst": 1000.0, "inst_warp": 1e4 / 32, "fp32": 0.0, "fp64": 0.0,
               "int": 9e3, "dram_read": 1.0, "dram_write": 1.0}
    profile = KernelProfile("k", 1, metrics, work_items=65536)
    record = {"median_s": 1e-5, "spread": 0.0, "kernel": "k", "global_size": [65536], "local_size": [256],
              "work_items": 65536}
    unpriced = score_profiled("k", record, get_device("epyc-9654"), profile).predictions["quantitative"]
    scored = score_profiled("k", record, device, profile).predictions["quantitative"]
    # 256 work-groups: 1 µs + 255 x 10 ns.
    assert scored.time == pytest.approx(unpriced.time + 1e-6 + 255e-8)
    assert "1 launch / 1e+06 launch/s + 255 more work-groups / 1e+08 group/s" in scored.detail
    # NULL local size: the runtime chose the work-groups, the log does not say how many; priced as one, said so.
    chosen = score_profiled("k", {**record, "local_size": None}, device, profile).predictions["quantitative"]
    assert chosen.time == pytest.approx(unpriced.time + 1e-6) and "the runtime chose, priced as one" in chosen.detail


def test_the_boat_hull_prices_elementary_calls_at_the_devices_rate():
    """transcendental's f = 35 counts 3 calls at 8 ops; at a rate of P/400 calls/s each costs 400: f = 1211."""
    from perfcast.campaign.score import score_kernel
    from perfcast.devices.catalog import get_device
    from perfcast.devices.hull_view import elementary_ops, hull_inputs
    from perfcast.devices.schema import Device
    from perfcast.kernels.campaign import kernel_named
    from perfcast.species.application import predict_primitive

    kernel, v100 = kernel_named("transcendental"), get_device("v100")
    n = kernel.sizes[-1]
    record = {"median_s": 1e-3, "spread": 0.0, "n": n}
    assert elementary_ops(v100).ops == 8 and "no measured rate" in elementary_ops(v100).source
    fixed = score_kernel(kernel, record, v100, None).predictions["boat hull"]
    data = v100.model_dump(mode="json", exclude_none=True)
    data["elementary"] = {"fp32": {"value": 15.67e12 / 400, "source": "measured", "tool": "test",
                                   "date": "2026-11-23"}}
    measured = Device.from_mapping(data)
    assert elementary_ops(measured).ops == pytest.approx(400)
    priced = score_kernel(kernel, record, measured, None).predictions["boat hull"]
    assert "f = 1211: 3 elementary calls at 400 ops per call = P_compute 15.67 TFLOP/s" in priced.detail
    assert "f = 35: 3 elementary calls at 8 ops per call (classify's count" in fixed.detail
    by_hand = predict_primitive(kernel.species, hull_inputs(measured).figures, 1211, bind=kernel.bind(n))
    assert priced.lower == pytest.approx(float(by_hand.prediction.lower[0]))
    # Memory bound at 8 ops a call (m0 = 8 B x n / 900 GB/s); compute bound at 400: c0 = n x (1211 x m + o) / P,
    # with binarization's m = 1 and o = 16.
    assert fixed.lower == pytest.approx(8.0 * n / 900e9, rel=1e-3)
    assert priced.lower == pytest.approx(n * (1211 + 16) / 15.67e12, rel=1e-3)


@pytest.mark.parametrize("backend", ["opencl", "cuda", "cpu"])
def test_every_campaign_backend_opens_or_says_why(backend):
    from perfcast.campaign.run import CAMPAIGN_BACKENDS
    from perfcast.errors import BackendUnavailable

    assert set(CAMPAIGN_BACKENDS) == {"opencl", "cuda", "cpu"}
    try:
        timer = CAMPAIGN_BACKENDS[backend][1](None)
    except BackendUnavailable as error:
        assert str(error)
        return
    assert timer.environment()["device"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])  # CUDA 13 builds no sm_70
def test_the_cuda_suite_compiles(tmp_path, arch):
    import subprocess

    from perfcast.kernels.campaign import CUDA_SOURCE, TILE

    done = subprocess.run(["nvcc", "-cubin", f"-arch={arch}", f"-DTILE={TILE}", "-o", str(tmp_path / "s.cubin"),
                           str(CUDA_SOURCE)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    if shutil.which("cuobjdump") is None:
        return
    listing = subprocess.run(["cuobjdump", "-symbols", str(tmp_path / "s.cubin")], capture_output=True, text=True)
    if listing.returncode == 0:
        for kernel in KERNELS:
            assert kernel.name in listing.stdout  # extern "C": the names ncu and CuPy see


def test_cuda_launch_shapes_match_the_opencl_ones():
    from perfcast.campaign.cuda import _grid

    for kernel in KERNELS:
        launch = kernel.launch(kernel.sizes[1])
        grid, block = _grid(launch)
        assert block == launch.local_size
        assert tuple(g * b for g, b in zip(grid, block)) == launch.global_size


def test_a_backend_that_cannot_run_leaves_no_working_folder(tmp_path, monkeypatch):
    """Asked on a machine without the backend, the run says why and keeps nothing (nothing to resume)."""
    from perfcast.campaign import run as campaign_run
    from perfcast.errors import BackendUnavailable

    def unavailable(selector):
        raise BackendUnavailable("no such device here")

    monkeypatch.setitem(campaign_run.CAMPAIGN_BACKENDS, "cuda", ("stand-in", unavailable))
    archive = tmp_path / "c.zip"
    with pytest.raises(BackendUnavailable, match="no such device"):
        campaign_run.run_campaign(campaign_run.CampaignOptions("cuda", archive))
    assert list(tmp_path.iterdir()) == []


class _StandInTimer:
    """Times every kernel at 1 ms: the campaign's flow without a device."""

    def supports(self, kernel):
        return None

    def time(self, kernel, n, repetitions):
        return {"times_s": [1e-3] * repetitions, "check": None, "work_items": 1}

    def environment(self):
        return {"device": "stand-in"}


def _dram_scaled(device, factor):
    """The device with its DRAM bandwidth times `factor`."""
    from perfcast.devices.schema import Figure

    memory = [level.model_copy(update={"bandwidth": Figure.measured(level.bandwidth.value * factor, "stand-in bench",
                                                                   "2026-11-23")})
              if level.level == "DRAM" else level for level in device.memory]
    return device.model_copy(update={"memory": memory})


def test_the_device_is_measured_before_and_after_the_kernels_and_keeps_the_best(tmp_path, monkeypatch):
    from perfcast.campaign import run as campaign_run
    from perfcast.devices.catalog import load_device_file, parse_device_text

    measured = load_device_file(DEVICE_PROFILE)
    benches = []

    def bench(options, progress):
        benches.append([name for name in campaign_run.WorkingFolder.for_archive(archive).manifest()["kernels"]])
        if len(benches) == 2 and interrupt:
            raise KeyboardInterrupt
        return _dram_scaled(measured, {1: 0.5, 2: 1.0, 3: 1.0}[len(benches)])

    monkeypatch.setitem(campaign_run.CAMPAIGN_BACKENDS, "opencl", ("stand-in", lambda selector: _StandInTimer()))
    monkeypatch.setattr(campaign_run, "_bench", bench)
    monkeypatch.setattr(campaign_run, "_profile_kernels", lambda *args: None)
    archive = tmp_path / "c.zip"
    options = campaign_run.CampaignOptions("opencl", archive, kernels=("triad", "stencil7"))
    interrupt = True
    with pytest.raises(KeyboardInterrupt):  # stopped during the second run of the bench
        campaign_run.run_campaign(options)
    assert benches == [[], ["triad", "stencil7"]]  # the first before the kernels, the second after
    interrupt = False
    campaign_run.run_campaign(options)  # resumes: the kernels and the first run are kept
    assert len(benches) == 3
    with zipfile.ZipFile(archive) as z:
        names = set(z.namelist())
        profile = parse_device_text(z.read("device.yaml").decode(), "device.yaml")
        manifest = json.loads(z.read("manifest.json"))
    assert {"device-run-1.yaml", "device-run-2.yaml", "device.yaml"} <= names and manifest["device_runs"] == 2
    dram = profile.memory_level("DRAM").bandwidth
    assert dram.value == pytest.approx(measured.memory_level("DRAM").bandwidth.value)  # the better run's
    assert dram.provenance.note.endswith("the other gave 0.50 of it")
    assert "best of 2 runs of perfcast bench" in profile.notes
    report = runner.invoke(app, ["campaign", "report", str(archive), "-o", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    assert "each figure the best of 2 runs, the first before the kernels" in (tmp_path / "report" / "report.md").read_text()


def test_one_device_run_is_allowed_and_out_of_range_refused(tmp_path, monkeypatch):
    from perfcast.campaign import run as campaign_run
    from perfcast.devices.catalog import load_device_file
    from perfcast.errors import InputError

    calls = []
    monkeypatch.setitem(campaign_run.CAMPAIGN_BACKENDS, "opencl", ("stand-in", lambda selector: _StandInTimer()))
    monkeypatch.setattr(campaign_run, "_bench", lambda options, progress: calls.append(1) or load_device_file(DEVICE_PROFILE))
    monkeypatch.setattr(campaign_run, "_profile_kernels", lambda *args: None)
    archive = tmp_path / "one.zip"
    campaign_run.run_campaign(campaign_run.CampaignOptions("opencl", archive, kernels=("triad",), device_runs=1))
    assert len(calls) == 1
    with pytest.raises(InputError, match="--device-runs 0"):
        campaign_run.run_campaign(campaign_run.CampaignOptions("opencl", tmp_path / "x.zip", device_runs=0))


def _gpu_campaign_with_a_fake_ncu(tmp_path, monkeypatch, writes_log: str):
    """Put an ncu on PATH whose run does `writes_log` (Python, `log` the --log-file path), and the campaign's CUDA
    backend and bench on stand-ins; return the campaign module."""
    import stat
    import sys

    from perfcast.campaign import run as campaign_run
    from perfcast.devices.catalog import load_device_file

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ncu = bin_dir / "ncu"
    ncu.write_text(f"""#!{sys.executable}
import shutil, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("Version 2025.3.1.0")
    sys.exit(0)
log = args[args.index("--log-file") + 1]
{writes_log}
""")
    ncu.chmod(ncu.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setitem(campaign_run.CAMPAIGN_BACKENDS, "cuda", ("stand-in", lambda selector: _StandInTimer()))
    monkeypatch.setattr(campaign_run, "_bench", lambda options, progress: load_device_file(DEVICE_PROFILE))
    return campaign_run


def test_ncu_denied_the_counters_keeps_the_timings_and_says_why(tmp_path, monkeypatch):
    """On a GPU whose counters are kept to administrators the archive holds the timings, and the report says why
    it has no quantitative predictions."""
    _gpu_campaign_with_a_fake_ncu(tmp_path, monkeypatch, (
        'open(log, "w").write("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU '
        'Performance Counters on the target device 0.\\n==WARNING== No kernels were profiled.\\n")'))
    archive = tmp_path / "gpu.zip"
    result = runner.invoke(app, ["campaign", "run", "--backend", "cuda", "--device-runs", "1", "-k", "triad", "-k",
                                 "stencil7", "-o", str(archive)])
    assert result.exit_code == 0, result.output
    assert "warning:" in result.output and "ERR_NVGPUCTRPERM" in result.output
    read = Archive.read(archive)
    assert read.manifest["profiling"]["tool"] is None
    assert "restricted to administrators" in read.manifest["profiling"]["note"]
    assert set(read.manifest["kernels"]) == {"triad", "stencil7"}
    with zipfile.ZipFile(archive) as z:
        assert "raw/ncu.ncu.txt" in z.namelist() and "profile.yaml" not in z.namelist()
    scores = score_archive(read)
    assert scores.summaries["roofline"].n == 2 and scores.summaries["quantitative"].n == 0
    report = runner.invoke(app, ["campaign", "report", str(archive), "-o", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    assert "- profiles: none (Nsight Compute profiled nothing: the GPU's performance counters are restricted" in (
        tmp_path / "report" / "report.md").read_text()


def test_a_kernel_ncu_did_not_profile_is_named_and_the_others_kept(tmp_path, monkeypatch):
    sample = Path(__file__).parents[1] / "data" / "profiles" / "ncu-raw-constructed.csv"  # holds triad only
    campaign_run = _gpu_campaign_with_a_fake_ncu(tmp_path, monkeypatch, f"shutil.copyfile({str(sample)!r}, log)")
    archive = campaign_run.run_campaign(campaign_run.CampaignOptions(
        "cuda", tmp_path / "gpu.zip", kernels=("triad", "stencil7"), device_runs=1))
    read = Archive.read(archive)
    assert read.manifest["profiling"]["note"].startswith("Nsight Compute profiled no launch of stencil7")
    assert "profile" in read.manifest["kernels"]["triad"] and "profile" not in read.manifest["kernels"]["stencil7"]
    scores = {s.kernel: s for s in score_archive(read).scores}
    assert "quantitative" in scores["triad"].predictions
    assert scores["stencil7"].left_out["quantitative"] == "no profile of this kernel in the archive"


def _fake_cupy_for_the_suite(launched):
    """A stand-in for CuPy that runs the triad on the host (the other kernels do nothing), 1 ms per launch."""
    import types

    clock = [0.0]

    class Array:
        def __init__(self, host):
            self.host = np.array(host)

    class Function:
        def __init__(self, name):
            self.name = name

        def __call__(self, grid, block, args):
            launched.append((self.name, grid, block))
            if self.name == "triad":
                a, b, c, s, n = args
                a.host[:n] = b.host[:n] + s * c.host[:n]
            clock[0] += 1e-3

    class RawModule:
        def __init__(self, code, options):
            assert 'extern "C" __global__ void triad' in code and options == (f"-DTILE={TILE}",)

        def get_function(self, name):
            return Function(name)

    class Event:
        def record(self):
            self.at = clock[0]

        def synchronize(self):
            pass

    cupy = types.ModuleType("cupy")
    cupy.RawModule, cupy.asarray, cupy.asnumpy = RawModule, Array, lambda array: array.host.copy()
    cupy.cuda = types.SimpleNamespace(Event=Event, get_elapsed_time=lambda a, b: (b.at - a.at) * 1e3,
                                      Device=lambda index=0: types.SimpleNamespace(synchronize=lambda: None))
    return cupy


def test_the_cuda_timer_and_the_program_ncu_runs_on_a_stand_in_for_cupy(monkeypatch):
    """The campaign's CUDA side without a GPU: arguments, checks, event times, and the program ncu profiles."""
    import sys

    from perfcast.campaign.cuda import CudaTimer, _module, main

    launched = []
    cupy = _fake_cupy_for_the_suite(launched)
    timer = CudaTimer(cupy, 0, _module(cupy))
    triad = timer.time(kernel_named("triad"), 4096, 10)
    assert triad["check"] is None and triad["times_s"] == pytest.approx([1e-3] * 10)
    assert triad["work_items"] == 4096 and len(launched) == 12  # the checked launch, a warm-up, 10 timed
    stencil = timer.time(kernel_named("stencil7"), 32, 10)
    assert stencil["check"] and "stencil7" in stencil["check"]  # nothing computed it: the check says so
    launched.clear()
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    assert main(["triad=4096,nbody=256"]) == 0
    assert [name for name, _, _ in launched] == ["triad", "nbody"]  # each once, in the suite's order


def _hull_score(measured: float, bound: str = "division", ape: float | None = 0.01) -> KernelScore:
    score = KernelScore("stencil7", measured, 0.05)
    score.predictions["boat hull"] = Prediction("boat hull", "range", 17e-3, 14.5e-3, 19.9e-3, 0.7,
                                                contains(14.5e-3, 19.9e-3, measured, 0.05), terms=("m0", "c1"))
    if bound:
        score.predictions["quantitative"] = Prediction("quantitative", "point", measured, ape=ape, bound=bound)
    return score


def test_a_hull_miss_names_what_the_hull_lacks_or_the_figure_the_kernel_beat():
    from perfcast.campaign.score import HULL_LACKS, hull_miss

    above = hull_miss(_hull_score(61.2e-3))  # the Xeon PoCL stencil7: 3.08x the upper end, bound by divisions
    assert above is not None and above.startswith("3.08x the hull's upper end (c1);")
    assert "APE 1%" in above and "division bound" in above and HULL_LACKS["division"] in above
    assert "no quantitative prediction" in hull_miss(_hull_score(61.2e-3, bound=""))
    below = hull_miss(_hull_score(7.0e-3))
    assert below is not None and below.startswith("2.07x faster than the hull's lower end (m0, the memory bandwidth)")
    assert hull_miss(_hull_score(17e-3)) is None  # inside
    assert hull_miss(KernelScore("k", 1.0, 0.0)) is None  # no hull
    from typing import get_args

    from perfcast.models.quantitative import Bound

    assert set(HULL_LACKS) == set(get_args(Bound))  # every term the quantitative model can bind on is named


def test_a_reading_says_whether_it_laid_out_a_work_item_s_code():
    from perfcast.campaign.score import incore_laid_out

    def record(item_cycles, inner=True):  # type: ignore[no-untyped-def]
        return {"kernels": {"k": {"cycles_per_item": 16.0, "loops": [
            {"inner": inner, "cycles": 4.0, "executions_per_item": 16.0, "unroll": 1, "copies": 2,
             "item_cycles": item_cycles}]}}}

    assert incore_laid_out("k", record(16.0))
    assert not incore_laid_out("k", record(None)) and not incore_laid_out("k", record(16.0, inner=False))
    older = {"kernels": {"k": {"cycles_per_item": 32.0, "loops": [{"inner": True, "cycles": 4.0}]}}}
    assert not incore_laid_out("k", older) and not incore_laid_out("other", record(16.0))
    assert not incore_laid_out("k", None)
