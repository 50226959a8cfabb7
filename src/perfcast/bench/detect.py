"""Detection of this machine's CPU: model, cores, SIMD width and caches, with estimated peaks.

Parsing is kept apart from reading so that it can be tested on recorded
/proc/cpuinfo and sysfs contents from other machines.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from perfcast.bench.clock_probe import ClockSample, measure_clock
from perfcast.bench.memory_probe import BandwidthSample, measure_copy_bandwidth
from perfcast.devices.schema import Device, Figure, Provenance, device_slug
from perfcast.kernels.native import NativeBuildError

__all__ = [
    "CacheInfo",
    "CpuInfo",
    "describe_cpu",
    "detect_cpu",
    "parse_cpuinfo",
    "read_caches",
    "simd_width_bits",
]

DETECT_TOOL = "perfcast devices detect"


@dataclass(frozen=True)
class CacheInfo:
    """One data or unified cache: level, size of one instance in bytes, how many logical CPUs share it."""

    level: int
    size: int
    shared_by: int
    kind: str = "Unified"
    ways: int | None = None  # ways of associativity, where sysfs says (0 there: fully associative, kept as None)
    line: int | None = None  # B, coherency line size


@dataclass(frozen=True)
class CpuInfo:
    """What the operating system says about the CPU."""

    model_name: str
    vendor: str
    logical_cpus: int
    physical_cores: int
    flags: frozenset[str]
    clock_hz: float | None
    caches: tuple[CacheInfo, ...] = field(default=())
    family: int | None = None  # x86 'cpu family' (25 = AMD Zen 3 / Zen 4); None elsewhere


_SIZE = re.compile(r"^\s*(\d+)\s*([KMG]?)B?\s*$", re.IGNORECASE)


def _cache_size(text: str) -> int:
    """Return a sysfs cache size ('48K', '32768K', '1M') in bytes."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"cannot read cache size {text!r}")
    return int(match[1]) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[match[2].upper()]


def _cpu_list_count(text: str) -> int:
    """Return how many CPUs a sysfs cpu list ('0-3,8-11') names."""
    total = 0
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        total += int(hi or lo) - int(lo) + 1
    return total


def parse_cpuinfo(text: str) -> CpuInfo:
    """Return the CPU description found in the text of /proc/cpuinfo (x86 or Arm)."""
    blocks = [block for block in text.strip().split("\n\n") if block.strip()]
    if not blocks:
        raise ValueError("empty /proc/cpuinfo")
    records = []
    for block in blocks:
        record: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                record[key.strip().lower()] = value.strip()
        records.append(record)
    processors = [r for r in records if "processor" in r and r["processor"].isdigit()]
    logical = len(processors) or 1
    first = processors[0] if processors else records[0]
    model = first.get("model name") or first.get("cpu model") or next(
        (r["hardware"] for r in records if "hardware" in r), None
    )
    vendor = first.get("vendor_id") or first.get("cpu implementer") or "unknown"
    flags = frozenset((first.get("flags") or first.get("features") or "").split())
    cores = {(r.get("physical id", "0"), r["core id"]) for r in processors if "core id" in r}
    mhz = first.get("cpu mhz")
    return CpuInfo(
        model_name=model or platform.processor() or "unknown CPU",
        vendor={"GenuineIntel": "Intel", "AuthenticAMD": "AMD", "0x41": "Arm"}.get(vendor, vendor),
        logical_cpus=logical,
        physical_cores=len(cores) or logical,
        flags=flags,
        clock_hz=float(mhz) * 1e6 if mhz else None,
        family=int(first["cpu family"]) if first.get("cpu family", "").isdigit() else None,
    )


def read_caches(cpu_dir: Path) -> tuple[CacheInfo, ...]:
    """Return the data and unified caches listed under a sysfs cpu directory (…/cpu0/cache/index*)."""
    caches = []
    for index in sorted((cpu_dir / "cache").glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            if kind == "Instruction":
                continue
            caches.append(
                CacheInfo(
                    level=int((index / "level").read_text()),
                    size=_cache_size((index / "size").read_text()),
                    shared_by=_cpu_list_count((index / "shared_cpu_list").read_text()),
                    kind=kind,
                    ways=_optional_count(index / "ways_of_associativity"),
                    line=_optional_count(index / "coherency_line_size"),
                )
            )
        except (OSError, ValueError):
            continue
    return tuple(caches)


def _optional_count(path: Path) -> int | None:
    """Return the positive integer a sysfs file holds, or None where it is missing, unreadable or not positive."""
    try:
        value = int(path.read_text().strip())
    except (OSError, ValueError):
        return None
    return value if value > 0 else None


def simd_width_bits(flags: frozenset[str]) -> int:
    """Return the widest SIMD register width in bits that the CPU flags advertise (64 if none)."""
    if "avx512f" in flags:
        return 512
    if "avx" in flags or "avx2" in flags:
        return 256
    if flags & {"sse", "sse2", "asimd", "neon", "altivec", "vsx"}:
        return 128
    return 64


def datapath_bits(info: CpuInfo) -> tuple[int, str]:
    """Return the width (bit) of the vector units that execute the widest vectors, and why, if not the registers'.

    AMD's Zen 4 (family 25 with AVX-512) runs 512-bit instructions as two halves on 256-bit units: its FMA
    peak is the AVX2 peak (likwid-bench measured 231 fp32 GFLOP/s on 2 cores, as with 256-bit FMAs), and
    an estimate from the 512-bit registers would be twice the truth. Other CPUs are taken at their
    registers' width.
    """
    width = simd_width_bits(info.flags)
    if info.vendor == "AMD" and info.family == 25 and width > 256:
        return 256, f" (Zen 4 runs {width}-bit vectors on 256-bit units)"
    return width, ""


def _has_fma(flags: frozenset[str]) -> bool:
    """Return whether the flags advertise fused multiply-add (x86 FMA3/FMA4, Armv8 Advanced SIMD)."""
    return bool(flags & {"fma", "fma4", "asimd"})


def _max_clock_hz(cpu_dir: Path) -> float | None:
    """Return the highest clock in Hz cpufreq reports, if it is there."""
    try:
        return int((cpu_dir / "cpufreq" / "cpuinfo_max_freq").read_text()) * 1e3
    except (OSError, ValueError):
        return None


def describe_cpu(
    info: CpuInfo, dram: BandwidthSample, *, loaded_clock: ClockSample | None = None, today: _dt.date | None = None
) -> Device:
    """Return a Device for the CPU in `info`: peaks estimated from cores x clock x SIMD lanes, DRAM from `dram`.

    The clock is the one measured under load where `loaded_clock` is given
    (virtual machines report a nominal clock well below the turbo clock),
    else the operating system's.
    """
    today = today or _dt.date.today()
    if info.clock_hz is None and loaded_clock is None:
        raise ValueError("the CPU clock is unknown (no 'cpu MHz' in /proc/cpuinfo, no cpufreq, no clock probe)")
    width = simd_width_bits(info.flags)
    datapath, datapath_note = datapath_bits(info)
    cores = info.physical_cores
    clock = loaded_clock.median if loaded_clock else info.clock_hz
    assert clock is not None
    clock_words = "GHz under load (measured)" if loaded_clock else "GHz (nominal)"
    fma = _has_fma(info.flags)
    identified = Provenance.measured(f"{DETECT_TOOL} (/proc/cpuinfo, sysfs)", today).fields()
    clocks: dict[str, object] = {}
    if info.clock_hz is not None:
        clocks["base"] = {"value": info.clock_hz, **identified, "note": "as the operating system reports it"}
    if loaded_clock is not None:
        clocks["boost"] = Figure.measured(
            loaded_clock.median, f"{DETECT_TOOL}: dependent-add chain on {loaded_clock.threads} threads", today,
            repetitions=loaded_clock.repetitions, spread=loaded_clock.spread,
        ).fields()
    add_mul_pipes = "2 pipes issuing an add or a multiply" if fma else "1 add pipe + 1 multiply pipe"
    peak: dict[str, dict[str, object]] = {}
    for precision, element_bits in (("fp32", 32), ("fp64", 64)):
        lanes = max(1, datapath // element_bits)
        add_mul = cores * clock * lanes * 2
        method = f"{cores} cores x {clock / 1e9:.4g} {clock_words} x {lanes} lanes ({datapath}-bit SIMD{datapath_note}) x "
        kinds: dict[str, object] = {
            "add_mul": Figure.estimated(add_mul, method + f"2 ops ({add_mul_pipes})").fields()
        }
        if fma:
            kinds["fma"] = Figure.estimated(2 * add_mul, method + "4 ops (2 FMA pipes x 2 ops, assumed)").fields()
        peak[precision] = kinds
    memory: list[dict[str, object]] = []
    simd_bytes = datapath // 8
    # Sustained load bytes per core per clock, typical of current cores: two vector loads from L1,
    # one 64-byte line from L2 and half a line from L3.
    per_clock_bytes = {1: 2 * simd_bytes, 2: 64, 3: 32}
    for cache in sorted(info.caches, key=lambda c: c.level):
        if cache.level not in (1, 2, 3) or any(m["level"] == f"L{cache.level}" for m in memory):
            continue
        level: dict[str, object] = {
            "level": f"L{cache.level}",
            "size": {"value": cache.size, **identified},
            "scope": "per_core" if cache.shared_by <= max(1, info.logical_cpus // cores) else "device",
        }
        # The traffic simulation takes the cache's own geometry (a 48 KiB L1 of 12 ways has 64 sets; assumed 8
        # ways it would have 96, and strided walks would conflict differently).
        if cache.ways and cache.line and cache.size % (cache.ways * cache.line) == 0:
            level["ways"], level["line"] = cache.ways, cache.line
        rate = per_clock_bytes[cache.level]
        level["bandwidth"] = Figure.estimated(
            cores * clock * rate, f"{cores} cores x {clock / 1e9:.4g} {clock_words} x {rate} B/clock (typical load width)"
        ).fields()
        memory.append(level)
    memory.append(
        {
            "level": "DRAM",
            "bandwidth": Figure.measured(
                dram.median,
                f"{DETECT_TOOL}: numpy copy probe, {dram.threads} threads, {dram.array_bytes // 2**20} MiB arrays",
                today, repetitions=dram.repetitions, spread=dram.spread,
            ).fields(),
        }
    )

    return Device.from_mapping(
        {
            "name": device_slug(info.model_name or "cpu", "host"),
            "full_name": f"{info.model_name} ({cores} core{'s' if cores > 1 else ''}, this machine)",
            "kind": "cpu",
            "vendor": info.vendor,
            "architecture": platform.machine() or None,
            "provenance": identified,
            "compute_units": cores,
            "threads": max(info.logical_cpus, cores),
            "simd_width_bits": width,
            "clock": clocks,
            "peak": peak,
            "memory": memory,
            "notes": "Detected by perfcast. Peaks and cache bandwidths are estimates from the ISA flags and the clock "
            "(assumes FMA-capable x86 cores issue two FMAs per clock); DRAM bandwidth is a quick probe.",
        }
    )


def detect_cpu(
    *, probe_bytes: int = 256 * 2**20, repetitions: int = 7, root: Path = Path("/"), probe_clock: bool = True,
    cores: int | None = None,
) -> Device:
    """Return this machine's CPU as a Device: identified from /proc and sysfs, clock and DRAM bandwidth probed.

    The clock probe needs a C compiler; without one the peaks use the clock the operating system reports.
    `cores` confines the description to that many cores (an OpenCL runtime told to use fewer threads, e.g.
    PoCL with POCL_MAX_PTHREAD_COUNT): its estimates, probes, name and count are those of the part it uses.
    """
    cpuinfo = root / "proc" / "cpuinfo"
    try:
        info = parse_cpuinfo(cpuinfo.read_text())
    except OSError:
        count = os.cpu_count() or 1
        info = CpuInfo(platform.processor() or "unknown CPU", "unknown", count, count, frozenset(), None)
    cpu_dir = root / "sys" / "devices" / "system" / "cpu" / "cpu0"
    clock = max(filter(None, [info.clock_hz, _max_clock_hz(cpu_dir)]), default=None)
    info = replace(info, clock_hz=clock, caches=read_caches(cpu_dir))  # the family stays: Zen 4's estimate needs it
    total_cores = info.physical_cores
    confined = cores is not None and 0 < cores < info.physical_cores
    if confined:
        assert cores is not None
        info = replace(info, physical_cores=cores, logical_cpus=cores)
    # The probe needs arrays well past the last-level cache to see DRAM.
    largest_cache = max((cache.size for cache in info.caches), default=0)
    probe_bytes = max(probe_bytes, 4 * largest_cache)
    loaded_clock = None
    if probe_clock:
        try:
            loaded_clock = measure_clock(threads=info.logical_cpus)
        except (NativeBuildError, RuntimeError, OSError):
            loaded_clock = None
    all_threads = measure_copy_bandwidth(probe_bytes, threads=info.logical_cpus, repetitions=repetitions)
    device = describe_cpu(info, all_threads, loaded_clock=loaded_clock)
    if confined:
        device = device.model_copy(update={
            "name": f"{device.name}-{info.physical_cores}-core"[:60],
            "full_name": f"{info.model_name} ({info.physical_cores} of {total_cores} cores, this machine)",
        })
    if info.logical_cpus > 1:
        single = measure_copy_bandwidth(probe_bytes, threads=1, repetitions=repetitions)
        if single.median < all_threads.median:
            return _with_single_thread_ceiling(device, single)
    return device


def _with_single_thread_ceiling(device: Device, single: BandwidthSample) -> Device:
    """Return `device` with a measured single-thread bandwidth ceiling added."""
    figure = Figure.measured(
        single.median, f"{DETECT_TOOL}: numpy copy probe, 1 thread, {single.array_bytes // 2**20} MiB arrays",
        device.provenance.date, repetitions=single.repetitions, spread=single.spread,
    ).fields()
    data = device.model_dump(mode="json")
    data["bandwidth_ceilings"] = {"single thread": figure}
    return Device.from_mapping(data)
