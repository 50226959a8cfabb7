"""The CUDA backend (CuPy): the suite on an NVIDIA GPU, kernels in CUDA C (kernels/bench.cu) compiled by NVRTC.

Times come from CUDA events around `passes` back-to-back launches, so host
launch costs overlap the GPU's work and do not count.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.bench.backends import BackendUnavailable
from perfcast.bench.suite import MixPoint, Progress, Sample, SuiteResult, SweepPoint, calibrated_rate
from perfcast.devices.catalog import catalog
from perfcast.devices.schema import Device

__all__ = ["CudaBackend", "catalog_match"]

SOURCE = Path(__file__).parent / "kernels" / "bench.cu"
CHAINS = 8
PER_ITEM = 16
BLOCK = 256


def _import_cupy() -> Any:
    try:
        import cupy
    except ImportError as error:
        raise BackendUnavailable("the cuda backend needs CuPy (pip install cupy-cuda12x) and an NVIDIA GPU") from error
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            raise BackendUnavailable("CuPy finds no CUDA GPU on this machine")
    except cupy.cuda.runtime.CUDARuntimeError as error:
        raise BackendUnavailable(f"no usable CUDA GPU: {error}") from None
    return cupy


def catalog_match(gpu_name: str, memory_bytes: float) -> Device | None:
    """Return the catalog GPU a CUDA device name (e.g. 'NVIDIA H100 80GB HBM3') denotes, if there is one."""
    model = re.search(r"\b([A-Z]{1,2}\d{2,3})\b", gpu_name.upper())
    if model is None:
        return None
    candidates = [d for d in catalog().values() if d.kind == "gpu" and model[1] in d.full_name.upper().split()]
    if "PCIE" in gpu_name.upper():
        candidates = [d for d in candidates if "PCIE" in d.full_name.upper()] or candidates
    elif len(candidates) > 1:
        candidates = [d for d in candidates if "PCIE" not in d.full_name.upper()] or candidates

    def size_gap(device: Device) -> float:
        size = device.memory_level("DRAM").size
        return abs((size.value if size else 0) - memory_bytes)

    return min(candidates, key=size_gap) if candidates else None


@dataclass
class CudaBackend:
    """Runs the suite on one CUDA GPU."""

    index: int
    repetitions: int = 5
    name: str = "cuda"

    @classmethod
    def open(cls, selector: str | None, repetitions: int) -> CudaBackend:
        """Return the backend on GPU `selector` (an index; default 0)."""
        cupy = _import_cupy()
        index = int(selector) if selector not in (None, "") else 0
        if not 0 <= index < cupy.cuda.runtime.getDeviceCount():
            raise BackendUnavailable(f"no CUDA GPU {index}; this machine has {cupy.cuda.runtime.getDeviceCount()}")
        return cls(index, repetitions)

    def _properties(self) -> dict[str, Any]:
        cupy = _import_cupy()
        return cupy.cuda.runtime.getDeviceProperties(self.index)

    def base_device(self) -> Device | dict[str, Any]:
        """Return the catalog entry of this GPU where there is one, else its structure from the CUDA query."""
        props = self._properties()
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        found = catalog_match(name, props["totalGlobalMem"])
        if found is not None:
            return found
        today = _dt.date.today().isoformat()
        queried = {"source": "measured", "tool": "CUDA device query (CuPy)", "date": today}
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        return {
            "name": f"cuda-{slug}"[:60].strip("-"),
            "full_name": name,
            "kind": "gpu",
            "vendor": "NVIDIA",
            "architecture": f"compute capability {props['major']}.{props['minor']}",
            "provenance": queried,
            "compute_units": props["multiProcessorCount"],
            "threads": props["multiProcessorCount"] * props["maxThreadsPerMultiProcessor"],
            "warp_size": props["warpSize"],
            "clock": {"boost": {"value": props["clockRate"] * 1e3, **queried}},
            "memory": [
                {"level": "shared", "size": {"value": props["sharedMemPerMultiprocessor"], **queried}, "scope": "per_unit"},
                {"level": "L2", "size": {"value": props["l2CacheSize"], **queried}},
                {"level": "DRAM", "size": {"value": props["totalGlobalMem"], **queried}},
            ],
        }

    def run(self, quick: bool, progress: Progress) -> SuiteResult:
        """Return the CUDA suite: memory sweep, DRAM kernels, strided/random, peaks, shared memory, host link, sweep."""
        cupy = _import_cupy()
        with cupy.cuda.Device(self.index):
            return self._run(cupy, quick, progress)

    def _run(self, cupy: Any, quick: bool, progress: Progress) -> SuiteResult:
        props = self._properties()
        module = cupy.RawModule(code=SOURCE.read_text(), options=("-std=c++14",))
        reps = 3 if quick else self.repetitions
        min_seconds = 0.004 if quick else 0.02
        runtime = cupy.cuda.runtime.runtimeGetVersion()
        tool = f"perfcast bench (cuda backend, CuPy {cupy.__version__}, CUDA runtime {runtime // 1000}.{runtime % 1000 // 10})"
        suite = SuiteResult(backend="cuda", tool=tool, repetitions=reps)

        def timed(name: str, items: int, *args: Any, shared: int = 0) -> Any:
            kernel = module.get_function(name)
            grid = (max(1, items // BLOCK),)

            def run(passes: int) -> float:
                start, end = cupy.cuda.Event(), cupy.cuda.Event()
                start.record()
                for _ in range(passes):
                    kernel(grid, (BLOCK,), args, shared_mem=shared)
                end.record()
                end.synchronize()
                return cupy.cuda.get_elapsed_time(start, end) * 1e-3

            return run

        dram_bytes = int(min(max(8 * props["l2CacheSize"], 1 << 30), props["totalGlobalMem"] // 8))
        chunk = BLOCK * PER_ITEM
        n = (dram_bytes // 4 // 3) // chunk * chunk
        a, b, c = (cupy.full(n, v, dtype=cupy.float32) for v in (1.0, 2.0, 0.5))
        sink = cupy.zeros(n, dtype=cupy.float32)
        mix_steps = (1, 4, 16, 64, 256) if quick else (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
        sizes = np.unique(np.geomspace(256 * 2**10, dram_bytes, 10 if quick else 18).astype(np.int64))
        steps = len(sizes) + 4 + 3 + 6 + 1 + len(mix_steps)
        done = 0

        def tick(label: str) -> None:
            nonlocal done
            progress(label, min(done / steps, 0.99))
            done += 1

        for size in sizes:
            tick(f"memory sweep {size / 2**20:.3g} MiB")
            m = int(min(n, max(BLOCK, int(size) // 12 // BLOCK * BLOCK)))
            rate = calibrated_rate(timed("mem_triad", m, a, b, c, np.float32(3)), 12 * m, reps, min_seconds)
            suite.sweep.append(SweepPoint("triad", 12 * m, rate))
        stream = {
            "read": ("mem_read", n // PER_ITEM, (a, sink), 4 * n),
            "write": ("mem_write", n, (a, np.float32(1)), 4 * n),
            "copy": ("mem_copy", n, (c, a), 8 * n),
            "triad": ("mem_triad", n, (a, b, c, np.float32(3)), 12 * n),
        }
        for label, (name, items, args, moved) in stream.items():
            tick(f"global memory {label}")
            suite.dram[label] = calibrated_rate(timed(name, items, *args), moved, reps, min_seconds)
        l2 = [p for p in suite.sweep if 2 * 2**20 < p.working_set <= props["l2CacheSize"] / 2]
        if l2:
            values = [p.bandwidth.value for p in l2]
            suite.levels["L2"] = Sample(float(np.median(values)), max(p.bandwidth.spread for p in l2), reps)
        tick("strided reads")
        stride = 8  # one useful float per 32-byte sector
        strided_items = max(BLOCK, n // stride // PER_ITEM // BLOCK * BLOCK)
        suite.bandwidth_ceilings["strided"] = calibrated_rate(
            timed("mem_strided", strided_items, a, np.int32(stride), sink), 4 * strided_items * PER_ITEM, reps, min_seconds
        )
        tick("random reads")
        index = cupy.asarray(np.random.default_rng(0).permutation(n).astype(np.int32))
        suite.bandwidth_ceilings["uncoalesced"] = calibrated_rate(
            timed("mem_random", n // PER_ITEM, a, index, sink), 4 * n, reps, min_seconds
        )
        tick("host to device copy")
        host = cupy.cuda.alloc_pinned_memory(4 * n)
        staged = np.frombuffer(host, dtype=np.float32, count=n)
        staged[:] = 1.0

        def upload(passes: int) -> float:
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            for _ in range(passes):
                a.set(staged)
            end.record()
            end.synchronize()
            return cupy.cuda.get_elapsed_time(start, end) * 1e-3

        suite.host_link = calibrated_rate(upload, 4 * n, reps, min_seconds)
        items = props["multiProcessorCount"] * props["maxThreadsPerMultiProcessor"] * 4
        k = 512
        results = cupy.zeros(items, dtype=cupy.float64)
        compute = [
            ("fp32", "fma", "peak_f32_fma", np.float32, 2), ("fp32", "add_mul", "peak_f32_add", np.float32, 1),
            ("fp64", "fma", "peak_f64_fma", np.float64, 2), ("fp64", "add_mul", "peak_f64_add", np.float64, 1),
            ("int32", "fma", "peak_i32_fma", np.uint32, 2), ("int32", "add_mul", "peak_i32_add", np.uint32, 2),
        ]
        for precision, kind, name, dtype, ops in compute:
            tick(f"peak {precision} {kind}")
            x, y = (dtype(1), dtype(3)) if dtype == np.uint32 else (dtype(0.999), dtype(1e-3))
            out = results.view(cupy.dtype(dtype))
            suite.compute[(precision, kind)] = calibrated_rate(
                timed(name, items, np.int32(k), x, y, out), items * CHAINS * k * ops, reps, min_seconds
            )
        tick("shared memory")
        k_local = 1024
        suite.levels["shared"] = calibrated_rate(
            timed("local_ldst", items, np.int32(k_local), np.int32(BLOCK - 1), results.view(cupy.float32),
                  shared=4 * BLOCK),
            items * 2 * k_local * 4, reps, min_seconds,
        )
        for k_mix in mix_steps:
            tick(f"intensity sweep k={k_mix}")
            rate = calibrated_rate(
                timed("mix_f32", n, a, np.int32(k_mix), np.float32(0.999), np.float32(1e-3)), 8 * n, reps, min_seconds
            )
            suite.mix.append(MixPoint(2 * k_mix / 8, Sample(rate.value * 2 * k_mix / 8, rate.spread, reps)))
        progress("done", 1.0)
        suite.notes.append(
            f"CUDA on GPU {self.index}: blocks of {BLOCK}; global-memory kernels over {12 * n / 2**30:.2f} GiB of float "
            "arrays; host link as pinned host-to-device copies; shared memory as 4-byte loads + stores per second x 4 B."
        )
        return suite
