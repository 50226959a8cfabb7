"""The shipped catalog: every required device present, valid, and consistent with its own spec figures."""

import pytest

from perfcast.devices.catalog import catalog, device_to_yaml, get_device, parse_device_text
from perfcast.devices.roofline_view import NO_FMA, NO_SIMD, SINGLE_THREAD, device_roofline
from perfcast.devices.schema import Precision

REQUIRED = {
    "gtx470", "gts250", "core2-q8300", "core-i7-930", "v100", "a100-40gb", "a100-80gb",
    "h100-pcie", "h100-sxm5", "h200", "r9-nano",
    # the GPUs of the KernelTuner measurements perfcast scores against
    "a100-pcie-40gb", "rtx-a4000", "rtx-a6000", "mi250x-gcd", "w6600", "w7800", "rtx-2080-ti",
    "rtx-3060-laptop", "rtx-3090", "titan-rtx",
    # the devices people choose between today (perfcast choose)
    "b200", "gh200", "l40s", "l4", "rtx-4090", "rtx-5090", "mi300x", "mi210", "rx-7900-xtx", "max-1550",
    "epyc-9654", "epyc-9755", "xeon-8480p", "xeon-6980p", "grace", "graviton4", "m3-max",
}

# Lanes that issue two FMAs a clock count twice in the peak: RDNA 3's dual issue (AMD counts it in its figure).
DUAL_ISSUE = {"w7800": 2, "rx-7900-xtx": 2}


def test_required_devices_present():
    assert REQUIRED <= set(catalog())


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_every_figure_has_provenance_and_round_trips(name):
    device = catalog()[name]
    for kinds in device.peak.values():
        for figure in kinds.values():
            assert figure.provenance.source in {"spec", "measured", "estimated"}
    assert parse_device_text(device_to_yaml(device)) == device


# Vector pipes per core that each retire one full-width fp32 FMA a clock (Nehalem and Core 2: one add pipe and
# one multiply pipe, each counted as half an FMA, so 1). Zen 4 runs AVX-512 on its two 256-bit pipes (its
# simd_width_bits is 256).
FMA_PIPES = {"epyc-9654": 2, "epyc-9755": 2, "xeon-8480p": 2, "xeon-6980p": 2, "grace": 4, "graviton4": 4}
# Cores of two kinds at two clocks: (cores, FMA pipes, clock Hz) per kind; the file's boost is the fast cores'.
HYBRID = {"m3-max": [(12, 4, 4.05e9), (4, 2, 2.75e9)]}


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_peak_matches_units_times_clock(name):
    """The fp32 peak is lanes x 2 ops x clock (x 2 where lanes dual-issue); a CPU's: cores x SIMD lanes x 2 ops x
    FMA pipes x base clock (x 2 for the old add + multiply pair), within 1 %."""
    device = catalog()[name]
    clock = device.clock.peak.value
    if device.kind == "gpu":
        expected = device.processing_elements * 2 * clock * DUAL_ISSUE.get(name, 1)
    elif name in HYBRID:
        assert sum(cores for cores, _, _ in HYBRID[name]) == device.compute_units
        assert HYBRID[name][0][2] == clock
        expected = sum(cores * device.simd_lanes("fp32") * 2 * pipes * hz for cores, pipes, hz in HYBRID[name])
    else:
        expected = device.compute_units * device.simd_lanes("fp32") * 2 * FMA_PIPES.get(name, 1) * device.clock.base.value
    assert device.peak_compute("fp32") == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_every_device_has_a_power_figure_or_says_why(name):
    """choose needs a TDP for energy; where a vendor publishes none, the file's notes say so."""
    device = catalog()[name]
    assert device.tdp is not None or "TDP" in (device.notes or "")


def test_prices_are_dated_and_kinded():
    priced = [d for d in catalog().values() if d.prices]
    assert len(priced) >= 5
    for device in priced:
        for price in device.prices:
            assert price.reference and price.date.year >= 2000
            assert price.per == ("hour" if price.kind == "rental" else "unit")


@pytest.mark.parametrize(
    ("name", "fp32", "dram", "ridge"),
    [
        ("gtx470", 1088.64e9, 133.92e9, 8.129),
        ("gts250", 470.016e9, 70.4e9, 6.676),
        ("v100", 15.67e12, 900e9, 17.41),
        ("h100-sxm5", 66.91e12, 3.35e12, 19.97),
        ("core-i7-930", 89.6e9, 25.6e9, 3.5),
    ],
)
def test_headline_figures(name, fp32, dram, ridge):
    device = catalog()[name]
    roof = device_roofline(device, "fp32")
    assert roof.peak == fp32
    assert roof.bandwidth == dram
    assert roof.ridge == pytest.approx(ridge, rel=1e-3)


def test_fp64_never_above_fp32():
    for device in catalog().values():
        if Precision.FP64 in device.peak:
            assert device.peak_compute("fp64") <= device.peak_compute("fp32")


def test_gts250_has_no_double_precision():
    with pytest.raises(LookupError, match="no fp64 peak"):
        catalog()["gts250"].peak_compute("fp64")


def test_cpu_ceilings():
    roof = device_roofline(catalog()["core-i7-930"], "fp32")
    ceilings = {c.name: c.value for c in roof.compute_ceilings}
    assert NO_FMA not in ceilings  # Nehalem has no FMA: its peak already is add + multiply
    assert ceilings[NO_SIMD] == pytest.approx(89.6e9 / 4)
    assert ceilings[SINGLE_THREAD] == pytest.approx(89.6e9 / 4)


def test_gpu_no_fma_ceiling_uses_add_mul_peak():
    roof = device_roofline(catalog()["a100-40gb"], "fp32")
    assert {c.name: c.value for c in roof.compute_ceilings} == {NO_FMA: 9.746e12}


def test_rdna3_peak_counts_dual_issue_and_the_ceiling_drops_it():
    roof = device_roofline(catalog()["w7800"], "fp32")
    assert roof.peak == 45.2e12
    assert {c.name: c.value for c in roof.compute_ceilings}["no dual issue"] == pytest.approx(roof.peak / 2, rel=0.01)


def test_tensor_peak_only_on_request():
    device = catalog()["h100-sxm5"]
    assert device_roofline(device, "fp16", tensor=True).peak == 989.4e12
    with pytest.raises(LookupError, match="only a tensor peak"):
        device_roofline(device, "fp16")


def test_lookup_by_name_full_name_and_path(tmp_path):
    assert get_device("GTX470".lower()).name == "gtx470"
    assert get_device("NVIDIA GeForce GTX 470").name == "gtx470"
    path = tmp_path / "mine.yaml"
    path.write_text(device_to_yaml(catalog()["v100"]))
    assert get_device(str(path)) == catalog()["v100"]
    with pytest.raises(LookupError, match="no device 'gtx480'"):
        get_device("gtx480")


def test_every_catalog_file_dates_its_sources():
    """A vendor figure changes with the document's revision: the file's default provenance says when it was read."""
    for device in catalog().values():
        assert device.provenance.date is not None, device.name


def test_nvidia_issue_share_is_lanes_per_sm_over_four_schedulers_of_a_warp():
    """Volta and later: four schedulers per SM, each issuing one 32-thread instruction per clock."""
    checked = 0
    for device in catalog().values():
        if device.vendor == "NVIDIA" and device.compute_capability and float(device.compute_capability) >= 7.0:
            assert device.fp32_issue_share is not None, device.name
            lanes = device.processing_elements / device.compute_units
            assert device.fp32_issue_share.value == pytest.approx(lanes / (4 * 32)), device.name
            checked += 1
    assert checked >= 15


def test_issue_share_follows_whether_the_fp32_peak_counts_dual_issue():
    assert get_device("w7800").fp32_issue_share.value == 1.0  # the peak counts RDNA 3's dual issue
    assert get_device("w6600").fp32_issue_share.value == 0.5
    assert get_device("rtx-3090").fp32_issue_share.value == 1.0
    assert get_device("a100-pcie-40gb").fp32_issue_share.value == 0.5
    assert all(d.fp32_issue_share is None for d in catalog().values() if d.kind == "cpu")


def test_conversion_rates_are_units_times_their_per_clock_rate_times_the_boost_clock():
    """NVIDIA: 16 conversions a clock per SM (CUDA guide, CC 7.x-9.0); AMD: 64 lanes a clock per CU (full rate)."""
    from perfcast.validation.corpus import read_corpus

    corpus_gpus = {name for kernel in read_corpus().kernels.values() for name in kernel.devices}
    devices = catalog()
    assert corpus_gpus <= {name for name, d in devices.items() if d.conversions is not None}
    for device in devices.values():
        if device.conversions is None:
            continue
        per_clock = 16 if device.vendor == "NVIDIA" else 64
        expected = device.compute_units * per_clock * device.clock.peak.value
        assert device.conversions.value == pytest.approx(expected, rel=2e-3), device.name


def test_rates_other_than_flop_are_written_with_their_unit():
    """devices show --yaml writes every rate (conversions, measured loads, launches) as a quantity, not a bare float."""
    import yaml

    text = device_to_yaml(get_device("a100-pcie-40gb"))
    written = yaml.safe_load(text)["conversions"]["value"]
    assert isinstance(written, str) and written.endswith("FLOP/s") and written.startswith("2.436 T")
    assert parse_device_text(text).conversions == get_device("a100-pcie-40gb").conversions


def test_ceilings_named_like_fields_keep_their_own_dimension():
    from perfcast.devices.schema import Figure

    v100 = get_device("v100")
    bandwidth = Figure.measured(5e11, "a user's STREAM run", "2026-11-29")
    compute = Figure.measured(1e13, "a user's FMA run", "2026-11-29")
    named = v100.model_copy(update={"bandwidth_ceilings": {"launches": bandwidth, "size": bandwidth},
                                    "compute_ceilings": {"bandwidth": compute}})
    text = device_to_yaml(named)
    assert "GB/s" in text.split("bandwidth_ceilings:")[1].split("compute_ceilings:")[0]
    assert parse_device_text(text) == named


def test_every_committed_device_profile_round_trips():
    from pathlib import Path

    root = Path(__file__).parent.parent.parent / "docs" / "validation"
    profiles = sorted(root.rglob("device*.yaml"))[:40]
    assert profiles
    for path in profiles:
        device = parse_device_text(path.read_text(), str(path))
        assert parse_device_text(device_to_yaml(device)) == device, path
