"""The OpenCL backend (pyopencl): the suite on any OpenCL device, CPUs through PoCL included.

Kernel times come from OpenCL profiling events, so host-side launch costs
do not count; each measurement enqueues the kernel `passes` times and
takes the span from the first start to the last end.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.bench.accelerator import (
    PER_ITEM,
    PeakShape,
    SetWalk,
    SuiteShape,
    chain_defines,
    choose_peak_shapes,
    first_touch_rate,
    host_link_bytes,
    launch_latency,
    peak_run,
    random_working_set_doublings,
    random_working_sets,
    read_runs,
    run_accelerator_suite,
    set_walk_lines,
    suite_elements,
    upload_run,
)
from perfcast.bench.suite import BaseDescription, Progress, Sample, SuiteResult, calibrated_rate
from perfcast.devices.schema import Provenance, device_slug
from perfcast.errors import BackendUnavailable
from perfcast.kernels.opencl import build_program, profiling_queue

SYSFS_CPU0 = Path("/sys/devices/system/cpu/cpu0")  # where a CPU device's caches are described

__all__ = ["OpenClBackend", "OpenClProbe", "list_devices", "peak_shapes"]

SOURCE = Path(__file__).parent / "kernels" / "bench.cl"
LANES_PER_ITEM = 8 * 16  # the compute kernels' default shape in bench.cl: 8 chains of 16-wide vectors
NATIVE_WIDTH_TYPE = {"fp32": "float", "int32": "int", "fp64": "double"}  # the device query's name per precision
READ_WIDTHS = (4, 8, 16)  # the mem_read_vN kernels of bench.cl
ITEM_READ_WIDTHS = (8, 16)  # its mem_read_cN kernels


def peak_shapes(native_width: int) -> list[tuple[int, int]]:
    """Return the (vector width, chains) shapes tried for the compute kernels, from the device's native width.

    Eight independent native vectors per work-item (as one chain each, or as four chains twice as wide)
    cover the latency of a pipelined FMA on CPUs; 16-wide vectors by 4 and 8 chains (bench.cl's default)
    suit GPUs' large register files, and on PoCL 3.1 an AVX2 core's fp64 ran fastest 16 wide by 8
    (72 GFLOP/s against 63 for 8 wide by 4). The widths stay OpenCL vector sizes (1, 2, 4, 8, 16).
    """
    width = native_width if native_width in (1, 2, 4, 8, 16) else 1
    shapes = [(width, 8)] + ([(2 * width, 4)] if width < 16 else []) + [(16, 4), (16, 8)]
    return list(dict.fromkeys(shapes))


def _import_opencl() -> Any:
    try:
        import pyopencl as cl
    except ImportError as error:
        raise BackendUnavailable(
            "the opencl backend needs pyopencl (pip install pyopencl) and an OpenCL runtime "
            "(e.g. apt-get install pocl-opencl-icd for CPUs)"
        ) from error
    return cl


def list_devices() -> list[tuple[str, Any]]:
    """Return ('PLATFORM:DEVICE', device) for every OpenCL device on this machine."""
    cl = _import_opencl()
    try:
        platforms = cl.get_platforms()
    except cl.Error as error:
        raise BackendUnavailable(f"no OpenCL platform: {error}") from None
    return [(f"{p}:{d}", device) for p, platform in enumerate(platforms) for d, device in enumerate(platform.get_devices())]


@dataclass
class OpenClBackend:
    """Runs the suite on one OpenCL device."""

    device: Any
    repetitions: int = 5
    name: str = "opencl"

    @classmethod
    def open(cls, selector: str | None, repetitions: int) -> OpenClBackend:
        """Return the backend on the device `selector` names ('P:D' indices or a part of its name), else the first."""
        devices = list_devices()
        if not devices:
            raise BackendUnavailable("no OpenCL device found (for CPUs: apt-get install pocl-opencl-icd)")
        if selector is None:
            return cls(devices[0][1], repetitions)
        for key, device in devices:
            if selector == key or selector.lower() in device.name.lower():
                return cls(device, repetitions)
        known = ", ".join(f"{key} ({device.name})" for key, device in devices)
        raise BackendUnavailable(f"no OpenCL device {selector!r}; found: {known}")

    @property
    def is_cpu(self) -> bool:
        """Return True when the OpenCL device is a CPU (PoCL)."""
        cl = _import_opencl()
        return bool(self.device.type & cl.device_type.CPU)

    @property
    def cpu_rates(self) -> bool:
        """Return True on PoCL's CPU device: its scalar-issue and atomics kernels (§3.3, §3.4) measure what they say.

        PoCL leaves a kernel whose inner loop carries values scalar; another CPU platform (Intel's) vectorises
        across work-items whatever the kernel's loops, and its "scalar" rate would be a vector one.
        """
        return self.is_cpu and "portable computing language" in self.device.platform.name.lower()

    @property
    def has_fp64(self) -> bool:
        """Return True when the device computes in double precision."""
        return bool(self.device.double_fp_config)

    def base_device(self) -> BaseDescription:
        """Return the structure of this device, from the OpenCL device query (or this CPU's detection)."""
        if self.is_cpu:
            from perfcast.bench.detect import detect_cpu

            # PoCL runs on as many cores as it reports compute units (POCL_MAX_PTHREAD_COUNT lowers it).
            return BaseDescription.of(detect_cpu(probe_bytes=64 * 2**20, repetitions=3,
                                                 cores=self.device.max_compute_units))
        d = self.device
        today = _dt.date.today().isoformat()
        queried = Provenance.measured(f"OpenCL device query ({d.platform.name}, driver {d.driver_version})",
                                      today).fields()
        warp = 64 if "amd" in d.vendor.lower() or "advanced micro" in d.vendor.lower() else 32
        memory: list[dict[str, Any]] = [
            {"level": "shared", "size": {"value": d.local_mem_size, **queried}, "scope": "per_unit"},
            {"level": "DRAM", "size": {"value": d.global_mem_size, **queried}},
        ]
        if d.global_mem_cache_size:
            memory.insert(1, {"level": "L2", "size": {"value": d.global_mem_cache_size, **queried}})
        return BaseDescription({
            "name": device_slug(d.name, "opencl"),
            "full_name": d.name.strip(),
            "kind": "gpu",
            "vendor": d.vendor.strip(),
            "provenance": queried,
            "compute_units": d.max_compute_units,
            "threads": d.max_compute_units * d.max_work_group_size,
            "warp_size": warp,
            "clock": {"boost": {"value": d.max_clock_frequency * 1e6, **queried}},
            "memory": memory,
            # OpenCL reports neither: say that they are estimates, and how they were made.
            "notes": (f"Estimated, not reported by OpenCL: warp size {warp} (64 on AMD, else 32); threads "
                      f"{d.max_compute_units * d.max_work_group_size} = compute units x max work-group size."),
        })

    def _build(self, cl: Any, context: Any, *defines: str) -> Any:
        """Return bench.cl built for this device with `defines` (-D options)."""
        options = ["-cl-mad-enable", f"-DPER_ITEM={PER_ITEM}", *chain_defines(), *defines,
                   *(["-DCPU_RATES"] if self.cpu_rates else [])]
        options += ["-DUSE_FP64"] if self.has_fp64 else []
        try:
            return build_program(cl, context, SOURCE.read_text(), options)
        except cl.RuntimeError as error:
            raise BackendUnavailable(f"the OpenCL benchmarks did not build on {self.device.name}: {error}") from None

    def _choose_peak_shapes(self, runtime: _OpenClRuntime, shape: SuiteShape) -> tuple[SuiteShape, list[str]]:
        """Try each precision's compute-kernel shapes, from its native vector width, briefly; keep the fastest."""
        candidates, context = {}, {}
        for precision, type_name in NATIVE_WIDTH_TYPE.items():
            if precision == "fp64" and not self.has_fp64:
                continue
            native = int(getattr(self.device, f"native_vector_width_{type_name}", 1) or 1)
            candidates[precision] = [PeakShape(chains, width) for width, chains in peak_shapes(native)]
            context[precision] = f"native width {native}"

        def build(candidate: PeakShape) -> Any:
            program = runtime.programs.get(candidate)
            if program is None:
                program = self._build(runtime.cl, runtime.context, f"-DPEAK_WIDTH={candidate.width}",
                                      f"-DPEAK_CHAINS={candidate.chains}")
                runtime.programs[candidate] = program
            return {kernel.function_name: kernel for kernel in program.all_kernels()}

        return choose_peak_shapes(runtime, shape, candidates, build, context)

    def _prepared(self, quick: bool) -> tuple[_OpenClRuntime, SuiteShape, list[str]]:
        """Return the built runtime, the suite's sizes on this device, and notes on the shapes chosen."""
        _import_opencl()
        cl, _, context, queue = profiling_queue(self.device)
        program = self._build(cl, context)
        kernels = {k.function_name: k for k in program.all_kernels()}
        runtime = _OpenClRuntime(cl, context, queue, kernels,
                                 1 << (min(256, self.device.max_work_group_size).bit_length() - 1),
                                 units=self.device.max_compute_units,
                                 largest_group=kernels["empty"].get_work_group_info(
                                     cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device))
        cache = self.device.global_mem_cache_size or 2**20
        dram_bytes = int(max((4 if quick else 8) * cache, 64 * 2**20))
        if not self.is_cpu:
            dram_bytes = int(min(max(dram_bytes, 512 * 2**20), self.device.global_mem_size // 8))
        shape = SuiteShape(
            dram_bytes=dram_bytes,
            smallest_sweep=16 * 2**10,
            sweep_points=8 if quick else 14,
            # Enough work-items that one launch lasts a millisecond or more: launch costs must not count.
            compute_items=self.device.max_compute_units * runtime.group * (4 if self.is_cpu else 16),
            lanes_per_item=LANES_PER_ITEM,
            chain=256,
            stride=16,  # one useful float per 64-byte line
            mix_steps=(1, 4, 16, 64) if quick else (1, 2, 4, 8, 16, 32, 64, 128, 256),
            cache_levels=() if self.is_cpu else (("L2", float(cache)),),
            has_fp64=self.has_fp64,
            read_widths=READ_WIDTHS,
            item_read_widths=ITEM_READ_WIDTHS,
            upload_bytes=host_link_bytes(self.device.max_mem_alloc_size),
            random_levels=host_random_levels() if self.is_cpu else (),
            random_sizes=host_random_levels(doublings=True) if self.is_cpu else (),
            set_walk=host_set_walk() if self.is_cpu else None,
            cpu_rates=self.cpu_rates,
        )
        shape, notes = self._choose_peak_shapes(runtime, shape)
        return runtime, shape, notes

    def run(self, quick: bool, progress: Progress) -> SuiteResult:
        """Return the OpenCL suite: memory sweep, DRAM kernels, strided/random, peaks, local memory, host link, sweep."""
        runtime, shape, notes = self._prepared(quick)
        platform = self.device.platform
        tool = f"perfcast bench (opencl backend, {platform.name.strip()} {platform.version.strip()})"
        # A CPU device's caches read a line before a store writes part of it; a GPU's keep byte masks.
        suite = SuiteResult(backend="opencl", tool=tool, repetitions=3 if quick else self.repetitions,
                            write_allocate=self.is_cpu)
        run_accelerator_suite(runtime, shape, suite, progress, 0.004 if quick else 0.02)
        suite.notes[:0] = [f"OpenCL on {self.device.name.strip()}.", *notes]
        if self.is_cpu:
            suite.notes.append("The host link of a CPU device is a memory copy.")
        return suite

    def probe(self) -> OpenClProbe:
        """Return single figures of the suite, measured one at a time (for the peers run side by side)."""
        runtime, shape, _ = self._prepared(quick=False)
        return OpenClProbe(runtime, shape, self.repetitions)


def host_random_levels(cpu_dir: Path = SYSFS_CPU0, doublings: bool = False) -> list[tuple[str, int]]:
    """Return the random-load working sets of this host's caches (a CPU device's), from sysfs; none without it.

    `doublings`: the larger sets past each level's own, up to half the level (`random_working_set_doublings`).
    """
    from perfcast.bench.detect import read_caches

    caches = [(f"L{cache.level}", float(cache.size)) for cache in read_caches(cpu_dir) if cache.level in (1, 2, 3)]
    return random_working_set_doublings(caches) if doublings else random_working_sets(caches)


def host_set_walk(cpu_dir: Path = SYSFS_CPU0) -> SetWalk | None:
    """Return the set walk of this host's caches (a CPU device's), from sysfs; None where sysfs lacks L1's ways."""
    from perfcast.bench.detect import read_caches

    return set_walk_lines([(f"L{cache.level}", float(cache.size), cache.ways, cache.line)
                           for cache in read_caches(cpu_dir) if cache.level in (1, 2, 3)])


@dataclass
class OpenClProbe:
    """The OpenCL suite's kernels one figure at a time: the same kernels, sizes and timing as `perfcast bench`."""

    runtime: _OpenClRuntime
    shape: SuiteShape
    repetitions: int

    def _rate(self, run: Callable[[int], float], work: float) -> float:
        return calibrated_rate(run, work, self.repetitions, 0.02).value

    def peak(self, precision: str, kind: str = "fma") -> float:
        """Return the measured peak in op/s (a multiply-add counts 2)."""
        results = self.runtime.buffer(np.zeros(self.shape.compute_items, np.float64))
        return self._rate(*peak_run(self.runtime, self.shape, precision, kind, results))

    def _arrays(self) -> tuple[Any, Any, int]:
        n = suite_elements(self.shape, self.runtime.group)
        return self.runtime.buffer(np.ones(n, np.float32)), self.runtime.buffer(np.zeros(n, np.float32)), n

    def read_bandwidth(self) -> float:
        """Return the best global-memory read bandwidth in B/s far past the caches, over the suite's load widths."""
        a, sink, n = self._arrays()
        return max(self._rate(run, 4 * n) for run in read_runs(self.runtime, self.shape, n, a, sink).values())

    def upload_bandwidth(self) -> float:
        """Return the host-to-device copy bandwidth in B/s."""
        return self._rate(*upload_run(self.runtime, self.shape))

    def first_touches(self) -> Sample | None:
        """Return the 4 KiB pages a kernel's stores touch first per second (page/s), or None where they cost nothing."""
        return first_touch_rate(self.runtime, max(3, self.repetitions))

    def launch_rate(self) -> float:
        """Return 1 / the median kernel launch latency (launches/s), latency as clpeak counts it."""
        sample = launch_latency(self.runtime, 25)
        if sample is None:
            raise RuntimeError("the OpenCL runtime reports no time between queueing and starting a kernel")
        return 1.0 / sample.value


@dataclass
class _OpenClRuntime:
    """Launching and timing bench.cl kernels with OpenCL profiling events."""

    cl: Any
    context: Any
    queue: Any
    kernels: dict[str, Any]
    group: int
    programs: dict[PeakShape, Any] = field(default_factory=dict)  # bench.cl built per compute-kernel shape
    units: int = 1  # compute units: a launch for the latency has one work-group on each
    largest_group: int = 1  # the empty kernel's largest work-group: the latency launch's groups are that size

    def buffer(self, host: np.ndarray) -> Any:
        flags = self.cl.mem_flags.READ_WRITE | self.cl.mem_flags.COPY_HOST_PTR
        return self.cl.Buffer(self.context, flags, hostbuf=host)

    def fresh_buffer(self, nbytes: int) -> Any:
        return self.cl.Buffer(self.context, self.cl.mem_flags.READ_WRITE, size=nbytes)

    def _span(self, launch: Callable[[], Any], passes: int) -> float:
        events = [launch() for _ in range(passes)]
        events[-1].wait()
        return (events[-1].profile.end - events[0].profile.start) * 1e-9

    def timed(self, name: str, items: int, *args: Any) -> Callable[[int], float]:
        kernel = self.kernels[name]

        def run(passes: int) -> float:
            kernel.set_args(*args)  # set at each run: the same kernel object serves several measurements
            return self._span(lambda: self.cl.enqueue_nd_range_kernel(self.queue, kernel, (items,), (self.group,)), passes)

        return run

    def timed_local(self, items: int, k: int, sink: Any) -> Callable[[int], float]:
        return self.timed("local_ldst", items, np.int32(k), np.int32(self.group - 1), sink,
                          self.cl.LocalMemory(4 * self.group))

    def timed_upload(self, target: Any, host: np.ndarray) -> Callable[[int], float]:
        return lambda passes: self._span(lambda: self.cl.enqueue_copy(self.queue, target, host, is_blocking=False), passes)

    def launch_durations(self, sink: Any, groups: int, launches: int) -> list[float]:
        # The device's own time of each launch (its events' start to end), as a program campaign's launch log reads
        # a program's launches; the queue finished after each, as a program that waits for its results does.
        kernel = self.kernels["no_work"]
        kernel.set_args(sink)
        durations = []
        for _ in range(launches):
            event = self.cl.enqueue_nd_range_kernel(self.queue, kernel, (groups * self.group,), (self.group,))
            event.wait()
            durations.append((event.profile.end - event.profile.start) * 1e-9)
        return durations

    def launch_latencies(self, sink: Any, launches: int) -> list[float]:
        # As clpeak counts it: from the command's queued time to its start, the queue finished after each
        # launch, over one work-group of the largest size per compute unit. PoCL 3.1 on a Zen 4 VM started a
        # one-item launch later (median 15-31 us over four sets of 200) than one of a 256-item group per unit
        # (18-21 us; clpeak 21), and that later (median 25.1 us over 8 alternating rounds of 2000) than one of a
        # 4096-item group per unit, clpeak's launch (20.6 us; clpeak itself 23.3).
        kernel = self.kernels["empty"]
        kernel.set_args(sink)
        group = self.largest_group
        latencies = []
        for _ in range(launches):
            event = self.cl.enqueue_nd_range_kernel(self.queue, kernel, (group * self.units,), (group,))
            self.queue.finish()
            latencies.append((event.profile.start - event.profile.queued) * 1e-9)
        return latencies
