"""The §3 rates of a device: catalog GPUs (estimated int and shared-memory figures), measured CPU profiles."""

import pytest

from perfcast.devices.catalog import catalog, get_device
from perfcast.devices.quantitative_view import quantitative_inputs
from perfcast.devices.schema import Device
from perfcast.errors import NotFound


def test_v100_rates_and_sources():
    info = quantitative_inputs(get_device("v100"))
    r = info.rates
    assert (r.t_sp, r.t_dp, r.b_mem) == (15.67e12, 7.834e12, 900e9)
    assert r.t_int == 15.67e12  # 80 SMs x 64 IMAD x 2 ops x 1530 MHz
    assert r.t_add == 7.834e12
    assert r.t_ldst == pytest.approx(15.67e12 / 4)  # shared 128 B/clock/SM over 4-byte accesses
    assert "estimated" in info.sources["T_int"] and "IMAD" in info.sources["T_int"]
    assert info.sources["T_ldst"].startswith("3.917 Tinst/s = shared 15.67 TB/s / 4 B")


@pytest.mark.parametrize("name", [n for n, d in catalog().items() if d.kind == "gpu"])
def test_every_catalog_gpu_has_the_rates(name):
    rates = quantitative_inputs(get_device(name)).rates
    assert rates.t_int > 0 and rates.t_add > 0 and rates.t_ldst > 0


def test_gpu_without_fp64_has_no_t_dp():
    info = quantitative_inputs(get_device("gts250"))
    assert info.rates.t_dp is None and info.sources["T_DP"].startswith("none")


def test_catalog_cpu_without_integer_peaks_says_how_to_get_them():
    with pytest.raises(NotFound, match=r"core-i7-930 has no int32 fma peak.*perfcast bench"):
        quantitative_inputs(get_device("core-i7-930"))


def test_a_measured_rate_of_elementary_calls_prices_them(tmp_path):
    """(T_SP / 2) / calls per second: instructions of the peak's precision one call takes."""
    v100 = get_device("v100")
    assert quantitative_inputs(v100).elementary_cost == {}
    assert quantitative_inputs(v100).sources["elementary fp32"].startswith("8 instructions per call")
    data = v100.model_dump(mode="json", exclude_none=True)
    data["elementary"] = {"fp32": {"value": 15.67e12 / 2 / 40, "source": "measured", "tool": "test",
                                   "date": "2026-11-23"}}
    info = quantitative_inputs(Device.from_mapping(data))
    assert info.elementary_cost == {"fp32": pytest.approx(40.0)}
    assert "40 instructions per call = fp32 FMA peak / 2 / 195.9 Gcall/s (measured" in info.sources["elementary fp32"]
    assert info.sources["elementary fp64"].startswith("8 instructions per call")


def test_b_mem_is_the_rate_of_4_byte_accesses_where_the_bench_measured_it_apart():
    """A GPU profile whose DRAM figure is a float4 triad's and whose 4-byte triad is a ceiling below it: §3 reads the
    4-byte rate (the profiles' kernels do not say their access widths); without the ceiling, the DRAM figure."""
    from perfcast.devices.schema import SCALAR_ACCESSES

    h100 = get_device("h100-sxm5")
    data = h100.model_dump(mode="json", exclude_none=True)
    for level in data["memory"]:
        if level["level"] == "DRAM":
            level["bandwidth"] = {"value": 3.054e12, "source": "measured", "tool": "test", "date": "2026-11-27"}
    data["bandwidth_ceilings"] = {SCALAR_ACCESSES: {"value": 2.766e12, "source": "measured", "tool": "test",
                                                    "date": "2026-11-27"}}
    info = quantitative_inputs(Device.from_mapping(data))
    assert info.rates.b_mem == pytest.approx(2.766e12)
    assert "the rate of 4-byte accesses (the DRAM figure, 3.054 TB/s, is a wider access's)" in info.sources["B_mem"]
    del data["bandwidth_ceilings"]
    assert quantitative_inputs(Device.from_mapping(data)).rates.b_mem == pytest.approx(3.054e12)
