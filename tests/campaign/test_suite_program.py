"""The suite as a program (`campaign run --as-program`): its commands, species, refusals, and a real run."""

import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.campaign.archive import Archive
from perfcast.campaign.program_species import KernelSpecies, parse_program_species
from perfcast.campaign.report import score_archive
from perfcast.campaign.score import score_profiled
from perfcast.campaign.suite_program import DRIVER, suite_as_program, suite_species
from perfcast.cli import app
from perfcast.devices.catalog import load_device_file
from perfcast.devices.hull_view import elementary_ops, hull_inputs
from perfcast.errors import InputError
from perfcast.kernels.campaign import KERNELS, kernel_named
from perfcast.profiles.profile import KernelProfile
from perfcast.species.application import predict_primitive

runner = CliRunner()
ROOT = Path(__file__).parents[2]
DEVICE_PROFILE = ROOT / "docs" / "validation" / "programs" / "xeon-avx512" / "device.yaml"


def test_the_suite_becomes_a_driver_command_and_two_profile_commands(tmp_path):
    options = suite_as_program(tmp_path / "s.zip", quick=True, names=["sgemm_naive", "triad"], repetitions=12)
    triad, sgemm = kernel_named("triad"), kernel_named("sgemm_naive")
    # Timed: each kernel at its quick size, its whole NDRange, 12 launches; in the suite's order.
    assert options.command == (sys.executable, *DRIVER, "0",
                               f"triad={triad.sizes[1]}@full,sgemm_naive={sgemm.sizes[1]}@full", "12")
    # Profiled: one and two work-groups at the size the suite's own profile uses (sgemm's work per item grows
    # with n, so it is profiled at the timed n; the triad's does not, so at its smaller profile size).
    listing = f"triad={triad.profile_size(triad.sizes[1])},sgemm_naive={sgemm.sizes[1]}"
    assert options.profile_commands == tuple((sys.executable, *DRIVER, g, listing) for g in ("1", "2"))
    assert triad.profile_size(triad.sizes[1]) < triad.sizes[1]
    assert options.quick and options.scaling == {} and "--as-program" in options.record


def test_each_kernels_species_is_bound_to_the_run_and_reads_back_as_given():
    sgemm = kernel_named("sgemm_naive")
    assert suite_species(sgemm, 64) == KernelSpecies("64x64|tile(1x64) ^ 64x64|tile(64x1) -> 64x64|element", 2.0, 4.0)
    assert suite_species(kernel_named("histogram256"), 1024).element_bytes == 1  # each kernel's own element size
    every = {k.name: suite_species(k, k.sizes[0]) for k in KERNELS}
    # No size symbol is left to bind per NDRange, and a manifest's text parses back to the same declaration.
    assert parse_program_species({name: s.text() for name, s in every.items()}) == every
    assert all(not any(symbol in s.species.split("|")[0] for symbol in "NKMXYZ") for s in every.values())


def test_full_sizes_unless_quick(tmp_path):
    full = suite_as_program(tmp_path / "s.zip", names=["hash_int"])
    assert f"hash_int={kernel_named('hash_int').sizes[0]}@full" in full.command[4]
    assert full.command[-1] == "10"


@pytest.mark.parametrize("arguments, message", [
    (["--backend", "cuda"], "OpenCL kernels"),
    (["--device", "0:0"], "leave out --device"),
    (["--workers", "2"], "one device"),
    (["--kernel", "nope"], "not a kernel of the suite"),
    (["--", "./app"], "no program after --"),
    (["--profile-cmd", "./app 1"], "leave out --profile-cmd"),
    (["--scaling", "triad=2"], "leave out --profile-cmd, --scaling"),
    (["--timer", "nsys"], "--timer"),
])
def test_what_as_program_cannot_do_is_refused(tmp_path, arguments, message):
    result = runner.invoke(app, ["campaign", "run", "--as-program", "-o", str(tmp_path / "s.zip"), *arguments])
    assert result.exit_code != 0
    assert message in " ".join(result.output.split())


def test_repetitions_below_one_are_refused(tmp_path):
    with pytest.raises(InputError, match="at least one"):
        suite_as_program(tmp_path / "s.zip", repetitions=0)


def test_a_profiled_hull_prices_elementary_calls_at_the_devices_rate():
    device = load_device_file(DEVICE_PROFILE)
    items = 2**16
    # Three calls and 2 FLOP per element, as the profile counts them (calls apart from the FLOP).
    profile = KernelProfile("k", 1, {"fma_fp32": 1.0 * items, "fp32": 25.0 * items, "elementary_fp32": 3.0 * items,
                                     "ldst": 2.0 * items}, work_items=items)
    record = {"median_s": 1e-2, "spread": 0.01, "global_size": [items], "work_items": items}
    cost = elementary_ops(device, "fp32")
    assert cost.ops > 100  # a CPU's library call: far above the 8 ops a species counts it at

    def hull(species):
        return score_profiled("k", record, device, profile, species).predictions["boat hull"]

    def expected(f):
        found = predict_primitive(f"{items}|element -> {items}|element", hull_inputs(device).figures, f).prediction
        return float(found.lower[0]), float(found.upper[0])

    # f from the profile: its 2 FLOP plus each call at the device's price.
    derived = hull(KernelSpecies("N|element -> N|element"))
    assert (derived.lower, derived.upper) == pytest.approx(expected(2 + 3 * cost.ops))
    assert "3 elementary calls per application (profiled)" in derived.detail
    # A given f counts each call at 8 ops already (classify's count): only the difference is added.
    given = hull(KernelSpecies("N|element -> N|element", 26.0))
    assert (given.lower, given.upper) == pytest.approx(expected(26 + 3 * (cost.ops - 8)))
    # Without calls nothing changes.
    plain = KernelProfile("k", 1, {"fma_fp32": 1.0 * items, "fp32": 1.0 * items, "ldst": 2.0 * items},
                          work_items=items)
    unpriced = score_profiled("k", record, device, plain, KernelSpecies("N|element -> N|element")).predictions
    assert (unpriced["boat hull"].lower, unpriced["boat hull"].upper) == pytest.approx(expected(2.0))


@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind not installed")
def test_the_suite_runs_as_a_program_and_is_scored_with_its_species(opencl_device, tmp_path):
    archive = tmp_path / "suite.zip"
    result = runner.invoke(app, ["campaign", "run", "--as-program", "--quick", "-k", "triad", "-k", "transcendental",
                                 "--device-profile", str(DEVICE_PROFILE), "-o", str(archive)])
    assert result.exit_code == 0, result.output
    read = Archive.read(archive)
    m = read.manifest
    assert m["kind"] == "program" and set(m["kernels"]) == {"triad", "transcendental"}
    assert all(r["launches"] == 10 and r["median_s"] > 0 for r in m["kernels"].values())
    assert m["species"]["triad"].startswith(f"{kernel_named('triad').sizes[1]}|element")
    # Both profile commands ran, so the counts' scaling from one to two work-groups was checked.
    assert len(m["profiling"]["profiled"]) == 2
    scores = {s.kernel: s for s in score_archive(read).scores}
    for score in scores.values():
        assert {"roofline", "quantitative", "boat hull"} <= set(score.predictions), score.left_out
    # The transcendental map's calls are priced at the measured rate in its hull, as in the suite's own report.
    assert "elementary calls per application (profiled)" in scores["transcendental"].predictions["boat hull"].detail


def test_scaled_first_fetches_of_the_same_buffers_are_capped_at_their_lines():
    from perfcast.campaign.program import _capped_first_fetches

    # Profiled at 512 work-items, scaled 64x: 1,000 first fetches from DRAM into buffers of 2,000 lines (both
    # profiled sizes gathered from the same buffers) become 64,000, but the launch can only fetch each line once.
    metrics = {"scattered_l2": 10.0, "scattered_l3": 500.0, "scattered_dram": 1500.0, "scattered_first": 1000.0,
               "scattered_first_cap": 2000.0}
    scaled = KernelProfile("k", 1, metrics, work_items=512).scaled(64.0, work_items=512 * 64)
    capped = _capped_first_fetches(scaled, 64.0)
    m = capped.metrics
    assert m["scattered_dram"] == pytest.approx(1500 * 64 - (64_000 - 2000))
    assert m["scattered_l3"] == pytest.approx(500 * 64 + 62_000) and m["scattered_l2"] == 640
    assert m["scattered_first"] == pytest.approx(2000)
    assert any("served by L3" in note for note in capped.notes)
    assert "set_walk_l3" not in m  # a profile without set-walk counts gets none
    # With them (a fifth of the scattered loads walk one L1 set), the loads moved to L3 take their share along.
    walking = KernelProfile("k", 1, {**metrics, "set_walk_l2": 0.0, "set_walk_l3": 100.0, "set_walk_dram": 302.0},
                            work_items=512).scaled(64.0, work_items=512 * 64)
    w = _capped_first_fetches(walking, 64.0).metrics
    share = 402 / 2010
    assert w["set_walk_l3"] == pytest.approx(share * w["scattered_l3"])
    assert w["set_walk_dram"] == pytest.approx(share * w["scattered_dram"]) and w["set_walk_dram"] <= w["scattered_dram"]
    # Fewer first fetches than lines: nothing moves.
    few = KernelProfile("k", 1, {**metrics, "scattered_first": 10.0}, work_items=512).scaled(64.0)
    assert _capped_first_fetches(few, 64.0).metrics == few.metrics
