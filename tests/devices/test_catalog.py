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
}

# Lanes that issue two FMAs a clock count twice in the peak: RDNA 3's dual issue (AMD counts it in its figure).
DUAL_ISSUE = {"w7800": 2}


def test_required_devices_present():
    assert REQUIRED <= set(catalog())


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_every_figure_has_provenance_and_round_trips(name):
    device = catalog()[name]
    for kinds in device.peak.values():
        for figure in kinds.values():
            assert figure.provenance.source in {"spec", "measured", "estimated"}
    assert parse_device_text(device_to_yaml(device)) == device


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_peak_matches_units_times_clock(name):
    """The fp32 FMA/add-mul peak is lanes x 2 ops x clock (x 2 where lanes dual-issue; CPUs: x SIMD lanes x 2
    pipes), within 1 %."""
    device = catalog()[name]
    clock = device.clock.peak.value
    if device.kind == "gpu":
        expected = device.processing_elements * 2 * clock * DUAL_ISSUE.get(name, 1)
    else:
        base = device.clock.base.value
        expected = device.compute_units * device.simd_lanes("fp32") * 2 * base
    assert device.peak_compute("fp32") == pytest.approx(expected, rel=0.01)


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
