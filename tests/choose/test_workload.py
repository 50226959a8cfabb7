"""Each kind of workload read and predicted by its model; devices it cannot predict are left out with the reason."""

import shutil
from pathlib import Path

import pytest

from perfcast.choose import WorkloadOptions, choose, read_workload
from perfcast.choose.choice import load_prices, price_of
from perfcast.choose.workload import HullWorkload, ProfileWorkload, TunedSpaceWorkload, WorkloadError
from perfcast.devices.catalog import catalog
from perfcast.devices.hull_view import hull_inputs
from perfcast.devices.quantitative_view import quantitative_inputs
from perfcast.errors import InputError
from perfcast.models.quantitative import kernel_parameters, predict
from perfcast.profiles import read_profile
from perfcast.species.application import predict_app
from perfcast.species.application_file import load_application

ROOT = Path(__file__).parents[2]
H200_ARCHIVE = ROOT / "docs" / "validation" / "gpu-h200" / "campaign-h200.zip"
NCU = ROOT / "tests" / "data" / "profiles" / "ncu-raw-h200-campaign.csv"
FAST_FOCUS = ROOT / "examples" / "fast-focus.yaml"


def test_profile_is_the_sum_of_its_kernels_quantitative_times():
    workload = read_workload(NCU)
    assert isinstance(workload, ProfileWorkload) and workload.model == "quantitative"
    device = catalog()["a100-40gb"]
    rates = quantitative_inputs(device).rates
    expected = sum(predict(kernel_parameters(k.counts()), rates).time for k in read_profile(NCU).kernels)
    assert workload.predict(device).time == pytest.approx(expected)


def test_a_profile_past_a_device_file_s_size_is_read_once_as_a_profile(tmp_path, monkeypatch):
    """A program's profile runs to megabytes (nw's 1,023 launch groups: 4.8 MB); choose reads it as predict does."""
    from dataclasses import replace

    import perfcast.profiles
    from perfcast.safe_yaml import MAX_FILE_BYTES

    profile = read_profile(NCU)
    # A long command (one scalar: quick to parse) takes the file past the 4 MiB a device file may have.
    big = replace(profile, source=replace(profile.source, command="x" * (MAX_FILE_BYTES + 1)))
    path = big.save(tmp_path / "big.yaml")
    assert path.stat().st_size > MAX_FILE_BYTES

    def not_again(*args, **kwargs):
        raise AssertionError("the profile's YAML was parsed twice")

    monkeypatch.setattr(perfcast.profiles, "read_profile", not_again)
    workload = read_workload(path)
    assert isinstance(workload, ProfileWorkload)
    assert [k.name for k in workload.kernels] == [k.name for k in profile.kernels]


def test_archive_keeps_only_the_chosen_kernels_and_knows_its_measured_time():
    workload = read_workload(H200_ARCHIVE, WorkloadOptions(kernels=("triad", "stencil7")))
    assert [k.name for k in workload.kernels] == ["triad", "stencil7"]
    # The archive ran on a measured profile of the catalog's H200: its time is known under both names.
    assert workload.measured["h200"] == workload.measured["h200-cuda"] == pytest.approx(67.152e-6 + 86.944e-6,
                                                                                        rel=1e-4)


def test_application_is_the_middle_of_the_hull_range():
    workload = read_workload(FAST_FOCUS)
    assert isinstance(workload, HullWorkload) and workload.model == "boat hull"
    device = catalog()["gtx470"]
    application = load_application(FAST_FOCUS)
    total, _ = predict_app(application, hull_inputs(device, application.precision, application.element_size).figures)
    assert workload.predict(device).time == pytest.approx((total.lower + total.upper) / 2)


def test_species_needs_its_sizes_bound():
    workload = read_workload("N|element -> N|element", WorkloadOptions(bind={"N": 1 << 20}, f=2))
    assert workload.kind == "species" and workload.predict(catalog()["h200"]).time > 0
    with pytest.raises(InputError, match="N"):
        read_workload("N|element -> N|element")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc preprocesses the C file")
def test_c_file_becomes_one_step_per_loop_nest(tmp_path):
    source = tmp_path / "axpy.c"
    source.write_text("#define N 100000\nvoid axpy(float a, const float x[N], float y[N]) {\n"
                      "  for (int i = 0; i < N; i++) y[i] = a * x[i] + y[i];\n}\n")
    workload = read_workload(source)
    assert workload.kind == "C file" and [p.name for p in workload.application.primitives] == ["axpy:3"]
    assert workload.predict(catalog()["core-i7-930"]).time > 0


def test_tuned_space_projects_the_source_best_and_measures_the_source():
    workload = read_workload("corpus:convolution-milo", WorkloadOptions(source="rtx-a4000"))
    assert isinstance(workload, TunedSpaceWorkload)
    on_source = workload.predict(catalog()["rtx-a4000"])
    assert on_source.is_measurement and on_source.time == workload.measured["rtx-a4000"]
    assert workload.band_scope(catalog()["rtx-a6000"]) == "same vendor"
    assert workload.band_scope(catalog()["w7800"]) == "across vendors"
    with pytest.raises(WorkloadError, match="GPUs only"):
        workload.predict(catalog()["epyc-9654"])


def test_unreadable_workloads_say_what_choose_reads(tmp_path):
    with pytest.raises(WorkloadError, match="not a species"):
        read_workload(tmp_path / "missing.yaml")
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    with pytest.raises(WorkloadError, match="choose reads profiles"):
        read_workload(junk)
    with pytest.raises(WorkloadError, match="--source"):
        read_workload("corpus:convolution-milo")
    with pytest.raises(WorkloadError, match="no corpus kernel"):
        read_workload("corpus:nope", WorkloadOptions(source="a100-pcie-40gb"))


def test_choose_leaves_out_devices_it_cannot_predict_with_the_reason():
    devices = [catalog()[n] for n in ("h200", "core-i7-930", "a100-40gb")]
    choice = choose(NCU, devices)
    assert [r.estimate.device for r in choice.ranked] == ["h200", "a100-40gb"]
    assert "int32 fma peak" in choice.left_out["core-i7-930"]
    with pytest.raises(InputError, match="on any of the devices"):
        choose(NCU, [catalog()["core-i7-930"]])


def test_prices_file_overrides_the_catalog(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text("version: 1\nprices:\n  h200: {kind: rental, usd: 1.5, reference: our contract, date: 2026-11-01}\n"
                    "  epyc-9654:\n    - {kind: street, usd: 5000, reference: reseller, date: 2026-10-01}\n")
    prices = load_prices(path)
    assert price_of(catalog()["h200"], "rental", prices).usd == 1.5
    assert price_of(catalog()["h200"], "rental").usd == 6.35  # the catalog's quote without the file
    assert price_of(catalog()["epyc-9654"], "purchase", prices).usd == 5000  # replaces the catalog's list price
    assert price_of(catalog()["h200"], "purchase", prices) is None
    path.write_text("version: 1\nprices:\n  h200: {kind: rental, usd: -1, reference: x, date: 2026-11-01}\n")
    with pytest.raises(InputError, match="usd"):
        load_prices(path)


def test_a_cpu_profile_with_every_floor_term_ranks_a_measured_cpu():
    # md's profile from a program campaign (Zen 3, PoCL): scattered loads, half of them indirect, and pages
    # touched first; its device profile has random-load rates. Every term the prediction names is one a ranking
    # knows (a term it did not know was a KeyError).
    from perfcast.campaign.archive import Archive
    from perfcast.campaign.projection import ArchiveRun

    run = ArchiveRun.of(Archive.read(ROOT / "docs" / "validation" / "programs" / "zen3-avx2-indirect" / "md" / "md.zip"))
    assert run.profiles is not None
    device = run.device
    workload = ProfileWorkload("md", "md.zip", run.profiles)
    assert any("indirect_scattered" in kernel.metrics for kernel in run.profiles.kernels)
    prediction = workload.predict(device)
    assert prediction.time > 0 and "bound" in prediction.detail


def test_a_kernel_crossing_barriers_on_a_cpu_without_the_rates_says_so():
    """§3.9: a CPU device profile with local memory measured but no barrier rates leaves the crossings unpriced."""
    from perfcast.devices.catalog import load_device_file

    device = load_device_file(ROOT / "docs" / "validation" / "programs" / "zen3-avx2-launches" / "device.yaml")
    workload = read_workload(ROOT / "tests" / "data" / "profiles" / "oclgrind-opencl_program-256.txt")
    prediction = workload.predict(device)
    assert prediction.time > 0 and "barrier crossings, or the values kept across them, unpriced" in prediction.detail
