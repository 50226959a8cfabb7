"""Detection of this machine: parsing recorded /proc and sysfs contents, and a real detection run."""

import datetime as dt
from pathlib import Path

import pytest

from perfcast.bench.detect import (
    CacheInfo,
    datapath_bits,
    describe_cpu,
    detect_cpu,
    parse_cpuinfo,
    read_caches,
    simd_width_bits,
)
from perfcast.bench.memory_probe import BandwidthSample
from perfcast.devices.catalog import device_to_yaml, parse_device_text

DATA = Path(__file__).parent.parent / "data" / "cpuinfo"
PROBE = BandwidthSample(median=30e9, spread=0.05, repetitions=5, threads=2, array_bytes=2**28)


def test_parse_x86_cpuinfo():
    info = parse_cpuinfo((DATA / "amd-epyc-2core-kvm.txt").read_text())
    assert info.model_name == "AMD EPYC"
    assert info.vendor == "AMD"
    assert info.logical_cpus == 2
    assert info.physical_cores == 2
    assert {"avx512f", "fma", "avx2"} <= info.flags
    assert info.clock_hz == pytest.approx(2596.122e6)


def test_parse_arm_cpuinfo_without_model_or_clock():
    info = parse_cpuinfo((DATA / "arm-neoverse-4core.txt").read_text())
    assert info.logical_cpus == 4
    assert info.vendor == "Arm"
    assert info.clock_hz is None
    assert simd_width_bits(info.flags) == 128


@pytest.mark.parametrize(
    ("flags", "bits"),
    [({"avx512f", "avx2"}, 512), ({"avx", "sse2"}, 256), ({"sse2"}, 128), ({"asimd"}, 128), (set(), 64)],
)
def test_simd_width(flags, bits):
    assert simd_width_bits(frozenset(flags)) == bits


def make_sysfs(root: Path) -> Path:
    cpu0 = root / "cpu0"
    for index, (level, kind, size, shared) in enumerate(
        [(1, "Data", "48K", "0"), (1, "Instruction", "32K", "0"), (2, "Unified", "1024K", "0"), (3, "Unified", "32768K", "0-1")]
    ):
        folder = cpu0 / "cache" / f"index{index}"
        folder.mkdir(parents=True)
        for name, value in (("level", level), ("type", kind), ("size", size), ("shared_cpu_list", shared)):
            (folder / name).write_text(f"{value}\n")
    return cpu0


def test_read_caches_skips_instruction_cache(tmp_path):
    caches = read_caches(make_sysfs(tmp_path))
    assert caches == (
        CacheInfo(1, 48 * 1024, 1, "Data"),
        CacheInfo(2, 1024 * 1024, 1, "Unified"),
        CacheInfo(3, 32 * 2**20, 2, "Unified"),
    )


def test_read_caches_takes_ways_and_line_where_sysfs_gives_them(tmp_path):
    cpu0 = make_sysfs(tmp_path)
    for index, (ways, line) in {0: ("12", "64"), 2: ("16", "64"), 3: ("0", "64")}.items():
        (cpu0 / "cache" / f"index{index}" / "ways_of_associativity").write_text(f"{ways}\n")
        (cpu0 / "cache" / f"index{index}" / "coherency_line_size").write_text(f"{line}\n")
    l1, l2, l3 = read_caches(cpu0)
    assert (l1.ways, l1.line) == (12, 64) and (l2.ways, l2.line) == (16, 64)
    assert l3.ways is None and l3.line == 64  # 0 ways: fully associative, said as unknown
    info = parse_cpuinfo((DATA / "amd-epyc-2core-kvm.txt").read_text())
    device = describe_cpu(type(info)(**{**info.__dict__, "caches": (l1, l2, l3)}), PROBE, today=dt.date(2026, 11, 26))
    assert (device.memory_level("L1").ways, device.memory_level("L1").line) == (12, 64)
    assert device.memory_level("L3").ways is None
    # The simulation then has the machine's sets: 48 KiB / (12 x 64 B) = 64, not the 96 of 8 assumed ways.
    from perfcast.devices.cache_view import cache_hierarchy

    first = cache_hierarchy(device).levels[0]
    assert (first.ways, first.sets) == (12, 64) and not any("ways" in a for a in first.assumed)


def test_describe_cpu_estimates_peaks_with_their_method(tmp_path):
    info = parse_cpuinfo((DATA / "amd-epyc-2core-kvm.txt").read_text())
    info = type(info)(**{**info.__dict__, "caches": read_caches(make_sysfs(tmp_path))})
    device = describe_cpu(info, PROBE, today=dt.date(2026, 11, 22))
    # 2 cores x 2.596122 GHz x 16 fp32 lanes x 2 FMA pipes x 2 ops
    fma = device.peak["fp32"]["fma"]
    assert fma.value == pytest.approx(2 * 2.596122e9 * 16 * 4)
    assert fma.provenance.source == "estimated" and "16 lanes" in fma.provenance.method
    assert device.peak_compute("fp64") == pytest.approx(fma.value / 2)
    assert device.simd_width_bits == 512
    assert device.memory_level("L1").scope == "per_core"
    assert device.memory_level("L3").scope == "device"
    assert device.memory_level("L3").size.value == 32 * 2**20
    dram = device.memory_level("DRAM").bandwidth
    assert dram.value == 30e9 and dram.provenance.source == "measured" and dram.provenance.repetitions == 5
    assert parse_device_text(device_to_yaml(device)) == device


def test_zen4_runs_avx512_on_256_bit_units_and_is_estimated_so(tmp_path):
    """Zen 4 (family 25) takes AVX-512 at half rate, Zen 5 (family 26, the fixture above) at full width."""
    info = parse_cpuinfo((DATA / "amd-epyc-zen4-2core-kvm.txt").read_text())
    assert info.vendor == "AMD" and info.family == 25 and "avx512f" in info.flags
    assert datapath_bits(info) == (256, " (Zen 4 runs 512-bit vectors on 256-bit units)")
    device = describe_cpu(info, PROBE, loaded_clock=None, today=dt.date(2026, 11, 23))
    clock = info.clock_hz
    fma = device.peak["fp32"]["fma"]
    assert fma.value == pytest.approx(2 * clock * 8 * 4)  # 8 fp32 lanes of 256 bit, 2 pipes, 2 ops
    assert "Zen 4 runs 512-bit vectors on 256-bit units" in fma.provenance.method
    assert device.simd_width_bits == 512  # the registers stay 512-bit: the register blocks are sized by them
    zen5 = parse_cpuinfo((DATA / "amd-epyc-2core-kvm.txt").read_text())
    assert zen5.family == 26 and datapath_bits(zen5) == (512, "")
    assert parse_cpuinfo((DATA / "arm-neoverse-4core.txt").read_text()).family is None


def test_detect_cpu_keeps_the_family_its_estimate_needs(tmp_path):
    """detect_cpu re-reads the clock and caches from sysfs: the family must survive, or Zen 4 is estimated at 2x."""
    from perfcast.bench.detect import detect_cpu

    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text((DATA / "amd-epyc-zen4-2core-kvm.txt").read_text())
    device = detect_cpu(root=tmp_path, probe_clock=False, probe_bytes=8 * 2**20, repetitions=1)
    clock = parse_cpuinfo((DATA / "amd-epyc-zen4-2core-kvm.txt").read_text()).clock_hz
    fma = device.peak["fp32"]["fma"]
    assert fma.value == pytest.approx(2 * clock * 8 * 4)
    assert "Zen 4 runs 512-bit vectors on 256-bit units" in fma.provenance.method


def test_describe_cpu_without_fma_has_add_mul_only():
    info = parse_cpuinfo((DATA / "amd-epyc-2core-kvm.txt").read_text())
    info = type(info)(**{**info.__dict__, "flags": frozenset({"sse2"})})
    device = describe_cpu(info, PROBE)
    assert set(device.peak["fp32"]) == {"add_mul"}
    assert device.peak_compute("fp32") == pytest.approx(2 * 2.596122e9 * 4 * 2)


def test_describe_cpu_needs_a_clock():
    info = parse_cpuinfo((DATA / "arm-neoverse-4core.txt").read_text())
    with pytest.raises(ValueError, match="clock is unknown"):
        describe_cpu(info, PROBE)


def test_detect_this_machine():
    device = detect_cpu(probe_bytes=16 * 2**20, repetitions=3)
    assert device.kind == "cpu"
    assert device.compute_units >= 1
    assert device.peak_compute("fp32") > 1e9
    assert 1e8 < device.dram_bandwidth < 1e13
    assert device.memory_level("DRAM").bandwidth.provenance.tool.startswith("perfcast devices detect")
    assert parse_device_text(device_to_yaml(device)) == device


def test_detection_confined_to_one_core():
    """What PoCL with POCL_MAX_PTHREAD_COUNT=1 runs on: one core's estimates, probes and name."""
    whole = detect_cpu(probe_bytes=16 * 2**20, repetitions=3, probe_clock=False)
    if whole.compute_units < 2:
        pytest.skip("a one-core machine has nothing to confine")
    one = detect_cpu(probe_bytes=16 * 2**20, repetitions=3, probe_clock=False, cores=1)
    assert one.compute_units == one.threads == 1
    assert one.name == f"{whole.name}-1-core" and f"(1 of {whole.compute_units} cores" in one.full_name
    assert one.peak_compute("fp32") == pytest.approx(whole.peak_compute("fp32") / whole.compute_units)
    assert "1 threads" in one.memory_level("DRAM").bandwidth.provenance.tool
    assert detect_cpu(probe_bytes=16 * 2**20, repetitions=3, probe_clock=False, cores=64).name == whole.name


def test_loaded_clock_drives_the_peaks():
    from perfcast.bench.clock_probe import ClockSample

    info = parse_cpuinfo((DATA / "amd-epyc-2core-kvm.txt").read_text())
    clock = ClockSample(median=4.2e9, spread=0.01, repetitions=5, threads=2)
    device = describe_cpu(info, PROBE, loaded_clock=clock)
    assert device.clock.base.value == pytest.approx(2596.122e6)
    assert device.clock.boost.value == 4.2e9
    assert device.clock.boost.provenance.tool.endswith("dependent-add chain on 2 threads")
    fma = device.peak["fp32"]["fma"]
    assert fma.value == pytest.approx(2 * 4.2e9 * 16 * 4)
    assert "under load (measured)" in fma.provenance.method
