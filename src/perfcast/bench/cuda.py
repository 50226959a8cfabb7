"""The CUDA backend (CuPy): the suite on an NVIDIA GPU, kernels in CUDA C (kernels/bench.cu) compiled by NVRTC.

Times come from CUDA events around `passes` back-to-back launches, so host
launch costs overlap the GPU's work and do not count.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.bench.accelerator import (
    PER_ITEM,
    PeakShape,
    SuiteShape,
    chain_defines,
    choose_peak_shapes,
    host_link_bytes,
    run_accelerator_suite,
)
from perfcast.bench.suite import BaseDescription, Progress, SuiteResult
from perfcast.devices.catalog import catalog
from perfcast.devices.schema import Device, Provenance, device_slug
from perfcast.errors import BackendUnavailable

__all__ = ["CudaBackend", "catalog_match", "kernel_defines", "thread_block"]

SOURCE = Path(__file__).parent / "kernels" / "bench.cu"
# Independent values per thread tried for the compute kernels. A 4-cycle FMA (Volta to Hopper) needs 4
# independent instructions in flight per SM sub-partition; with every SM full of warps any count covers that,
# but registers per thread (fp64 takes two), the compiler's scheduling and fp64 units shared by fewer warps
# decide which is fastest, and no device query tells it: each is measured briefly and the fastest kept.
CHAIN_CANDIDATES = (4, 8, 16)
WIDE_ACCESSES = (2, 4)  # floats per access of bench.cu's mem_*_vN kernels (float2, float4), tried beside one
WARPS_PER_BLOCK = 8  # blocks of 8 warps: several blocks per SM, and a power of two (local_ldst masks by it)


def kernel_defines(chains: int = CHAIN_CANDIDATES[1]) -> tuple[str, ...]:
    """Return the -D options bench.cu is compiled with (NVRTC at run time, nvcc in the tests) for `chains`."""
    return (f"-DPER_ITEM={PER_ITEM}", f"-DCHAINS={chains}", *chain_defines())


def thread_block(warp_size: int, max_block: int, max_per_sm: int) -> int:
    """Return the threads per block: WARPS_PER_BLOCK warps, fewer where the GPU's limits ask, so blocks fill an SM.

    A power of two, a whole number of warps, at most the block limit, and a
    divisor of the SM's thread limit where one exists (1536 threads hold six
    blocks of 256), so that full occupancy leaves no thread slot idle.
    """
    if warp_size < 1 or max_block < warp_size:
        raise BackendUnavailable(f"unusable CUDA limits: warp {warp_size}, at most {max_block} threads per block")
    block = 1 << (min(WARPS_PER_BLOCK * warp_size, max_block).bit_length() - 1)
    while block > warp_size and max_per_sm % block:
        block //= 2
    return max(block, warp_size)


def _import_cupy() -> Any:
    try:
        import cupy
    except ImportError as error:
        raise BackendUnavailable("the cuda backend needs CuPy (pip install 'perfcast[cuda12]' or 'perfcast[cuda13]') "
                                 "and an NVIDIA GPU") from error
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

    def base_device(self) -> BaseDescription:
        """Return the catalog entry of this GPU where there is one, else its structure from the CUDA query."""
        props = self._properties()
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        found = catalog_match(name, props["totalGlobalMem"])
        if found is not None:
            return BaseDescription.of(found)
        today = _dt.date.today().isoformat()
        queried = Provenance.measured("CUDA device query (CuPy)", today).fields()
        return BaseDescription({
            "name": device_slug(name, "cuda"),
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
        })

    def run(self, quick: bool, progress: Progress) -> SuiteResult:
        """Return the CUDA suite: memory sweep, DRAM kernels, strided/random, peaks, shared memory, host link, sweep."""
        cupy = _import_cupy()
        with cupy.cuda.Device(self.index):
            props = self._properties()
            modules: dict[int, Any] = {}

            def module(chains: int) -> Any:
                if chains not in modules:
                    try:
                        modules[chains] = cupy.RawModule(code=SOURCE.read_text(),
                                                         options=("-std=c++14", *kernel_defines(chains)))
                        modules[chains].get_function("empty")  # NVRTC compiles here, so a failure is caught now
                    except cupy.cuda.compiler.CompileException as error:
                        raise BackendUnavailable(f"bench.cu did not compile with {chains} chains: {error}") from None
                return modules[chains]

            block = thread_block(props["warpSize"], props["maxThreadsPerBlock"], props["maxThreadsPerMultiProcessor"])
            runtime = _CudaRuntime(cupy, block, _Functions(module(CHAIN_CANDIDATES[1])))
            shape = SuiteShape(
                dram_bytes=int(min(max(8 * props["l2CacheSize"], 1 << 30), props["totalGlobalMem"] // 8)),
                smallest_sweep=256 * 2**10,
                sweep_points=10 if quick else 18,
                compute_items=props["multiProcessorCount"] * props["maxThreadsPerMultiProcessor"] * 4,
                lanes_per_item=CHAIN_CANDIDATES[1],
                chain=512,
                stride=8,  # one useful float per 32-byte sector
                mix_steps=(1, 4, 16, 64, 256) if quick else (1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
                cache_levels=(("L2", float(props["l2CacheSize"])),),
                has_fp64=True,
                upload_bytes=host_link_bytes(props["totalGlobalMem"]),
                l2_read_items=props["multiProcessorCount"] * props["maxThreadsPerMultiProcessor"],
                read_widths=WIDE_ACCESSES,
                stream_widths=WIDE_ACCESSES,
            )

            def build(candidate: PeakShape) -> dict[str, Any]:
                return _Functions(module(candidate.chains))

            shapes = [PeakShape(chains) for chains in CHAIN_CANDIDATES]
            shape, notes = choose_peak_shapes(runtime, shape, {p: shapes for p in ("fp32", "int32", "fp64")}, build)
            version = cupy.cuda.runtime.runtimeGetVersion()
            tool = (f"perfcast bench (cuda backend, CuPy {cupy.__version__}, "
                    f"CUDA runtime {version // 1000}.{version % 1000 // 10})")
            suite = SuiteResult(backend="cuda", tool=tool, repetitions=3 if quick else self.repetitions)
            run_accelerator_suite(runtime, shape, suite, progress, 0.004 if quick else 0.02)
        suite.notes[:0] = [f"CUDA on GPU {self.index}; blocks of {block} threads ({props['warpSize']}-thread warps, "
                           f"{props['maxThreadsPerMultiProcessor']} threads per SM); host link as pinned host-to-device "
                           "copies.", *notes]
        return suite


class _Functions(dict[str, Any]):
    """A module's kernels by name, fetched from the module when first asked for."""

    def __init__(self, module: Any) -> None:
        super().__init__()
        self.module = module

    def __missing__(self, name: str) -> Any:
        self[name] = self.module.get_function(name)
        return self[name]


@dataclass
class _CudaRuntime:
    """Launching and timing bench.cu kernels between CUDA events."""

    cupy: Any
    group: int
    kernels: dict[str, Any]  # bench.cu's kernels by name; the peak shapes chosen replace theirs

    def buffer(self, host: np.ndarray) -> Any:
        return self.cupy.asarray(host)

    def fresh_buffer(self, nbytes: int) -> Any:
        return self.cupy.empty(nbytes // 4, dtype=self.cupy.int32)

    def _span(self, launch: Callable[[], Any], passes: int) -> float:
        start, end = self.cupy.cuda.Event(), self.cupy.cuda.Event()
        start.record()
        for _ in range(passes):
            launch()
        end.record()
        end.synchronize()
        return self.cupy.cuda.get_elapsed_time(start, end) * 1e-3

    def timed(self, name: str, items: int, *args: Any, shared: int = 0) -> Callable[[int], float]:
        kernel = self.kernels[name]
        grid = (max(1, items // self.group),)
        return lambda passes: self._span(lambda: kernel(grid, (self.group,), args, shared_mem=shared), passes)

    def timed_local(self, items: int, k: int, sink: Any) -> Callable[[int], float]:
        return self.timed("local_ldst", items, np.int32(k), np.int32(self.group - 1), sink, shared=4 * self.group)

    def launch_latencies(self, sink: Any, launches: int) -> list[float]:
        # CUDA events cannot see a launch's queued time: this is the span between two events around one empty
        # kernel of one block, the GPU-side cost of a launch.
        kernel = self.kernels["empty"]
        latencies = []
        for _ in range(launches):
            latencies.append(self._span(lambda: kernel((1,), (self.group,), (sink,)), 1))
        return latencies

    def launch_durations(self, sink: Any, groups: int, launches: int) -> list[float]:
        # Events around each launch of `groups` blocks: what the GPU spends on the launch and its blocks.
        kernel = self.kernels["no_work"]
        return [self._span(lambda: kernel((groups,), (self.group,), (sink,)), 1) for _ in range(launches)]

    def timed_upload(self, target: Any, host: np.ndarray) -> Callable[[int], float]:
        pinned = self.cupy.cuda.alloc_pinned_memory(host.nbytes)
        staged = np.frombuffer(pinned, dtype=host.dtype, count=host.size)
        staged[:] = host
        return lambda passes: self._span(lambda: target.set(staged), passes)
