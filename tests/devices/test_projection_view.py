"""The §4 figures of a device, each marked with how it was obtained; the catalog's published measured maxima."""

from pathlib import Path

import pytest

from perfcast.devices.catalog import DeviceFileError, get_device, load_device_file, parse_device_text
from perfcast.devices.projection_view import projection_capabilities
from perfcast.devices.schema import Maxima
from perfcast.errors import NotFound

POCL_PROFILE = Path(__file__).parents[2] / "docs" / "validation" / "bench-opencl-pocl-profile.yaml"

# The method's authors' measured maxima (fp64 HPL, GB/s per level from STREAM-like kernels): issue 11.
PUBLISHED = {
    "v100": (6890, 846, 2460, 13963),
    "a100-40gb": (9476, 1375, 4710, 19492),
    "a100-80gb": (9476, 1678, 4710, 19492),
    "h100-pcie": (24979, 1907, 7758, 25330),
}


@pytest.mark.parametrize("name", PUBLISHED)
def test_the_catalog_carries_the_published_maxima(name):
    fp64, dram, l2, l1 = PUBLISHED[name]
    device = get_device(name)
    figures = device.maxima.figures()
    assert figures["compute.fp64.fma"].value == fp64 * 1e9
    assert {level: figures[f"bandwidth.{level}"].value for level in ("DRAM", "L2", "L1")} == {
        "DRAM": dram * 1e9, "L2": l2 * 1e9, "L1": l1 * 1e9}
    for figure in figures.values():
        assert figure.provenance.source == "measured" and "Van Lanker" in figure.provenance.reference
    c = projection_capabilities(device, "fp64")
    assert c.figures["fma"].how == "measured" and c.figures["fma"].value == fp64 * 1e9
    assert c.figures["DRAM"].how == "measured" and "STREAM" in c.figures["DRAM"].detail


def test_v100_fp32_is_its_peak_at_the_efficiency_of_its_own_hpl_run():
    c = projection_capabilities(get_device("v100"), "fp32")
    assert c.figures["fma"].how == "scaled"
    assert c.figures["fma"].value == pytest.approx(15.67e12 * 6890 / 7834)
    assert "this device's measured / peak fp64 fma" in c.figures["fma"].detail
    assert c.figures["shared"].how == "peak" and "upper bound" in c.figures["shared"].detail


def test_a_target_without_maxima_takes_the_source_efficiency():
    """Max_t = Peak_t Max_s / Peak_s, figure by figure."""
    source = get_device("a100-40gb")
    target = get_device("h200").model_copy(update={"maxima": Maxima()})  # the catalog's carries a lent H200's since
    c = projection_capabilities(target, "fp64", source)
    assert c.figures["DRAM"].how == "scaled"
    assert c.figures["DRAM"].value == pytest.approx(4.8e12 * 1375 / 1555)
    assert c.figures["L2"].value == pytest.approx(10.14e12 * 4710e9 / 7.219e12)  # peaks as the catalog rounds them
    assert "a100-40gb's measured / peak" in c.figures["DRAM"].detail
    assert c.figures["fma"].value == pytest.approx(33.45e12 * 9476e9 / 9.746e12)
    alone = projection_capabilities(target, "fp64")
    assert {f.how for f in alone.figures.values()} == {"peak"}


def test_same_device_as_source_and_target_reads_the_same_figures():
    device = get_device("h100-pcie")
    assert projection_capabilities(device, "fp32", device).maxima() == projection_capabilities(device).maxima()


def test_a_measured_profile_gives_its_measurements():
    device = load_device_file(POCL_PROFILE)
    c = projection_capabilities(device, "fp32")
    assert c.figures["fma"].how == c.figures["DRAM"].how == c.figures["shared"].how == "measured"
    assert c.figures["DRAM"].value == device.dram_bandwidth
    assert c.figures["L1"].how == "peak"  # the OpenCL suite does not measure L1: the detection's estimate


def test_missing_figures():
    with pytest.raises(NotFound, match="gts250 has no fp64 fma or add_mul rate"):
        projection_capabilities(get_device("gts250"), "fp64")
    no_add_mul = get_device("v100").model_copy(update={"peak": {
        k: {kind: f for kind, f in v.items() if kind.value != "add_mul"} for k, v in get_device("v100").peak.items()}})
    c = projection_capabilities(no_add_mul, "fp32")
    assert c.figures["add_mul"].value == pytest.approx(c.figures["fma"].value / 2)
    assert c.figures["add_mul"].detail.startswith("half the FMA rate")


TOY = """
name: toy
full_name: Toy GPU
kind: gpu
vendor: Nobody
provenance: {source: spec, reference: toy datasheet}
compute_units: 2
threads: 2048
warp_size: 32
compute_capability: '8.0'
clock: {boost: 1 GHz}
peak:
  fp64: {fma: 1 TFLOP/s}
memory:
  - {level: DRAM, bandwidth: 100 GB/s}
maxima:
  compute: {fp64: {fma: MAXIMUM}}
"""


@pytest.mark.parametrize(("maximum", "message"), [
    ("{value: 900 GFLOP/s, source: spec, reference: x}", "maxima are measured figures"),
    ("{value: 2 TFLOP/s, source: measured, tool: HPL, date: 2026-01-01}", "exceeds the peak"),
    ("{value: 900 GFLOP/s, source: measured, tool: HPL}", "needs date"),
])
def test_maxima_are_measured_and_below_the_peaks(maximum, message):
    with pytest.raises(DeviceFileError, match=message):
        parse_device_text(TOY.replace("MAXIMUM", maximum))


def test_a_published_measurement_is_dated_by_its_reference():
    device = parse_device_text(TOY.replace("MAXIMUM", "{value: 900 GFLOP/s, source: measured, tool: HPL, "
                                                      "reference: 'Someone et al. 2024'}"))
    figure = device.maxima.compute[next(iter(device.maxima.compute))]
    assert next(iter(figure.values())).provenance.describe() == "HPL, Someone et al. 2024"
    assert device.sm_architecture == "sm_80"
    with pytest.raises(NotFound, match="no compute_capability"):
        _ = get_device("core-i7-930").sm_architecture


def test_the_issue_share_reaches_the_fp32_maxima_only():
    assert projection_capabilities(get_device("rtx-3090"), "fp32").maxima().fp_issue_share == 1.0
    assert projection_capabilities(get_device("rtx-3090"), "fp64").maxima().fp_issue_share is None
    assert projection_capabilities(get_device("titan-rtx"), "fp32").maxima().fp_issue_share == 0.5


def test_an_l2_slower_than_dram_is_charged_to_l1():
    # The H200's first bench (2026-11-26) timed its L2 sweep's launches: 0.42 TB/s beside 3.44 TB/s of DRAM.
    device = load_device_file(Path(__file__).parents[2] / "docs" / "validation" / "gpu-h200" / "bench-h200.yaml")
    assert next(level for level in device.memory if level.level == "L2").bandwidth.value < device.dram_bandwidth
    c = projection_capabilities(device, "fp32")
    assert c.figures["L2"].value == c.figures["L1"].value
    assert "L2 charged to L1" in c.figures["L2"].detail and "below DRAM" in c.figures["L2"].detail
    # A measured L2 above DRAM (the H100's read plateau, 7.9 TB/s) is taken as it is.
    import zipfile

    archive = Path(__file__).parents[2] / "docs" / "validation" / "gpu-h100" / "campaign-h100.zip"
    h100 = parse_device_text(zipfile.ZipFile(archive).read("device.yaml").decode(), "h100")
    l2 = projection_capabilities(h100, "fp32").figures["L2"]
    assert l2.how == "measured" and 7e12 < l2.value < 9e12


def test_dram_is_read_at_4_byte_accesses_only_where_both_devices_measured_them():
    """Two GPU profiles that measured 4-byte DRAM accesses below their widest are projected at those rates; a profile
    against a catalog device (whose DRAM maximum is a wide STREAM-like figure) at each device's DRAM figure."""
    from perfcast.devices.projection_view import four_byte_dram
    from perfcast.devices.schema import SCALAR_ACCESSES, Device

    def profile(name: str, wide: float, scalar: float) -> Device:
        data = get_device(name).model_dump(mode="json", exclude_none=True)
        for level in data["memory"]:
            if level["level"] == "DRAM":
                level["bandwidth"] = {"value": wide, "source": "measured", "tool": "test", "date": "2026-11-27"}
        data["bandwidth_ceilings"] = {SCALAR_ACCESSES: {"value": scalar, "source": "measured", "tool": "test",
                                                        "date": "2026-11-27"}}
        return Device.from_mapping(data)

    h100, h200 = profile("h100-sxm5", 3.054e12, 2.767e12), profile("h200", 4.333e12, 3.44e12)
    assert four_byte_dram(h100, h200) and not four_byte_dram(h100, get_device("h200"))
    paired = projection_capabilities(h200, "fp32", h100, four_byte=True).figures["DRAM"]
    assert paired.value == pytest.approx(3.44e12) and paired.how == "measured"
    assert projection_capabilities(h100, four_byte=True).figures["DRAM"].value == pytest.approx(2.767e12)
    assert projection_capabilities(h200, "fp32", h100).figures["DRAM"].value == pytest.approx(4.333e12)
    catalog = projection_capabilities(get_device("h200"), "fp32", h100, four_byte=four_byte_dram(h100, get_device("h200")))
    assert catalog.figures["DRAM"].value == pytest.approx(4.333e12)  # the catalog's measured maximum, wide
