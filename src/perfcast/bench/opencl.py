"""The OpenCL backend (pyopencl): the suite on any OpenCL device, CPUs through PoCL included.

Kernel times come from OpenCL profiling events, so host-side launch costs
do not count; each measurement enqueues the kernel `passes` times and
takes the span from the first start to the last end.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.bench.backends import BackendUnavailable
from perfcast.bench.suite import MixPoint, Progress, Sample, SuiteResult, SweepPoint, calibrated_rate

__all__ = ["OpenClBackend", "list_devices"]

SOURCE = Path(__file__).parent / "kernels" / "bench.cl"
CHAINS = 8 * 16  # independent lanes per work-item in the compute kernels: 8 chains of 16-wide vectors (bench.cl)
PER_ITEM = 16  # elements per work-item in the reading kernels (bench.cl)


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
        cl = _import_opencl()
        return bool(self.device.type & cl.device_type.CPU)

    @property
    def has_fp64(self) -> bool:
        return bool(self.device.double_fp_config)

    def base_device(self) -> dict[str, Any]:
        """Return the structure of this device as a device-file mapping, from the OpenCL device query."""
        if self.is_cpu:
            from perfcast.devices.detect import detect_cpu

            return detect_cpu(probe_bytes=64 * 2**20, repetitions=3).model_dump(mode="json")
        d = self.device
        today = _dt.date.today().isoformat()
        queried = {"source": "measured", "tool": f"OpenCL device query ({d.platform.name}, driver {d.driver_version})",
                   "date": today}
        slug = "".join(ch if ch.isalnum() else "-" for ch in d.name.lower()).strip("-")
        warp = 64 if "amd" in d.vendor.lower() or "advanced micro" in d.vendor.lower() else 32
        memory: list[dict[str, Any]] = [
            {"level": "shared", "size": {"value": d.local_mem_size, **queried}, "scope": "per_unit"},
            {"level": "DRAM", "size": {"value": d.global_mem_size, **queried}},
        ]
        if d.global_mem_cache_size:
            memory.insert(1, {"level": "L2", "size": {"value": d.global_mem_cache_size, **queried}})
        return {
            "name": f"opencl-{slug}"[:60].strip("-"),
            "full_name": d.name.strip(),
            "kind": "gpu",
            "vendor": d.vendor.strip(),
            "provenance": queried,
            "compute_units": d.max_compute_units,
            "threads": d.max_compute_units * d.max_work_group_size,
            "warp_size": warp,
            "clock": {"boost": {"value": d.max_clock_frequency * 1e6, **queried}},
            "memory": memory,
        }

    def run(self, quick: bool, progress: Progress) -> SuiteResult:
        """Return the OpenCL suite: memory sweep, DRAM kernels, strided/random, peaks, local memory, host link, sweep."""
        cl = _import_opencl()
        context = cl.Context([self.device])
        queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
        options = ["-cl-mad-enable"] + (["-DUSE_FP64"] if self.has_fp64 else [])
        try:
            program = cl.Program(context, SOURCE.read_text()).build(options=options)
        except cl.RuntimeError as error:
            raise BackendUnavailable(f"the OpenCL benchmarks did not build on {self.device.name}: {error}") from None
        kernel = {k.function_name: k for k in program.all_kernels()}
        reps = 3 if quick else self.repetitions
        min_seconds = 0.004 if quick else 0.02
        units = self.device.max_compute_units
        group = 1 << (min(256, self.device.max_work_group_size).bit_length() - 1)
        tool = f"perfcast bench (opencl backend, {self.device.platform.name.strip()} {self.device.platform.version.strip()})"
        suite = SuiteResult(backend="opencl", tool=tool, repetitions=reps)
        mf = cl.mem_flags

        def timed(name: str, size: int, local: int | None, *args: Any) -> Any:
            chosen = kernel[name]
            chosen.set_args(*args)

            def run(passes: int) -> float:
                events = [
                    cl.enqueue_nd_range_kernel(queue, chosen, (size,), (local,) if local else None)
                    for _ in range(passes)
                ]
                events[-1].wait()
                return (events[-1].profile.end - events[0].profile.start) * 1e-9

            return run

        # Past every cache: 8x the last-level cache the runtime reports (at least 64 MiB, 512 MiB on GPUs).
        cache = self.device.global_mem_cache_size or 2**20
        dram_bytes = int(max((4 if quick else 8) * cache, 64 * 2**20))
        if not self.is_cpu:
            dram_bytes = int(min(max(dram_bytes, 512 * 2**20), self.device.global_mem_size // 8))
        chunk = group * PER_ITEM
        n = max(chunk, (dram_bytes // 4 // 3) // chunk * chunk)
        a, b, c = (cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.full(n, v, np.float32))
                   for v in (1.0, 2.0, 0.5))
        sink = cl.Buffer(context, mf.READ_WRITE, size=4 * n)
        mix_steps = (1, 4, 16, 64) if quick else (1, 2, 4, 8, 16, 32, 64, 128, 256)
        sizes = np.unique(np.geomspace(16 * 2**10, dram_bytes, 8 if quick else 14).astype(np.int64))
        steps = len(sizes) + 4 + 3 + 6 + 1 + len(mix_steps)
        done = 0

        def tick(label: str) -> None:
            nonlocal done
            progress(label, min(done / steps, 0.99))
            done += 1

        for size in sizes:
            tick(f"memory sweep {size / 2**20:.3g} MiB")
            m = int(min(n, max(group, int(size) // 12 // group * group)))
            rate = calibrated_rate(timed("mem_triad", m, group, a, b, c, np.float32(3)), 12 * m, reps, min_seconds)
            suite.sweep.append(SweepPoint("triad", 12 * m, rate))
        stream = {
            "read": ("mem_read", n // PER_ITEM, (a, sink), 4 * n),
            "write": ("mem_write", n, (a, np.float32(1)), 4 * n),
            "copy": ("mem_copy", n, (c, a), 8 * n),
            "triad": ("mem_triad", n, (a, b, c, np.float32(3)), 12 * n),
        }
        for label, (name, items, args, moved) in stream.items():
            tick(f"global memory {label}")
            suite.dram[label] = calibrated_rate(timed(name, items, group, *args), moved, reps, min_seconds)
        tick("strided reads")
        stride = 16  # one useful float per 64-byte line
        strided_items = max(group, n // stride // PER_ITEM // group * group)
        suite.bandwidth_ceilings["strided"] = calibrated_rate(
            timed("mem_strided", strided_items, group, a, np.int32(stride), sink),
            4 * strided_items * PER_ITEM, reps, min_seconds,
        )
        tick("random reads")
        index = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR,
                          hostbuf=np.random.default_rng(0).permutation(n).astype(np.int32))
        suite.bandwidth_ceilings["uncoalesced"] = calibrated_rate(
            timed("mem_random", n // PER_ITEM, group, a, index, sink), 4 * n, reps, min_seconds,
        )
        tick("host to device copy")
        host = np.ones(n, np.float32)

        def upload(passes: int) -> float:
            events = [cl.enqueue_copy(queue, a, host, is_blocking=False) for _ in range(passes)]
            events[-1].wait()
            return (events[-1].profile.end - events[0].profile.start) * 1e-9

        suite.host_link = calibrated_rate(upload, 4 * n, reps, min_seconds)
        # Enough work-items that one launch lasts a millisecond or more: launch costs must not count.
        items = units * group * (4 if self.is_cpu else 16)
        k = 256
        compute = [("fp32", "fma", "peak_f32_fma", np.float32, 2), ("fp32", "add_mul", "peak_f32_add", np.float32, 1),
                   ("int32", "fma", "peak_i32_fma", np.uint32, 2), ("int32", "add_mul", "peak_i32_add", np.uint32, 2)]
        if self.has_fp64:
            compute += [("fp64", "fma", "peak_f64_fma", np.float64, 2), ("fp64", "add_mul", "peak_f64_add", np.float64, 1)]
        results = cl.Buffer(context, mf.READ_WRITE, size=8 * items)
        for precision, kind, name, dtype, ops in compute:
            tick(f"peak {precision} {kind}")
            x, y = (dtype(1), dtype(3)) if dtype == np.uint32 else (dtype(0.999), dtype(1e-3))
            suite.compute[(precision, kind)] = calibrated_rate(
                timed(name, items, group, np.int32(k), x, y, results), items * CHAINS * k * ops, reps, min_seconds,
            )
        tick("local memory")
        k_local = 1024
        suite.levels["shared"] = calibrated_rate(
            timed("local_ldst", items, group, np.int32(k_local), np.int32(group - 1), results,
                  cl.LocalMemory(4 * group)),
            items * 2 * k_local * 4, reps, min_seconds,
        )
        for k_mix in mix_steps:
            tick(f"intensity sweep k={k_mix}")
            rate = calibrated_rate(
                timed("mix_f32", n, group, a, np.int32(k_mix), np.float32(0.999), np.float32(1e-3)),
                8 * n, reps, min_seconds,
            )
            suite.mix.append(MixPoint(2 * k_mix / 8, Sample(rate.value * 2 * k_mix / 8, rate.spread, reps)))
        progress("done", 1.0)
        suite.notes.append(
            f"OpenCL on {self.device.name.strip()}: work-groups of {group}; global-memory kernels over "
            f"{12 * n / 2**20:.0f} MiB of float arrays; local memory as 4-byte loads + stores per second x 4 B."
        )
        if self.is_cpu:
            suite.notes.append("The host link of a CPU device is a memory copy.")
        return suite
