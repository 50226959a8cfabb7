"""The campaign on an NVIDIA GPU: the suite's CUDA C compiled by NVRTC through CuPy, timed with CUDA events.

Nsight Compute profiles the suite by running this module as a program (`python -m perfcast.campaign.cuda`).

As a program it launches each named kernel once at the given size: `python -m perfcast.campaign.cuda
triad=16777216,nbody=32768`; ncu, run around it, counts each launch.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfcast.errors import BackendUnavailable
from perfcast.kernels.campaign import CUDA_SOURCE, KERNELS, TILE, CampaignKernel, Launch

__all__ = ["CudaTimer", "main"]


def _module(cupy: Any) -> Any:
    """Return suite.cu as a CuPy module (compiled by NVRTC at its first use)."""
    return cupy.RawModule(code=CUDA_SOURCE.read_text(), options=(f"-DTILE={TILE}",))


def _grid(launch: Launch) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Return CUDA (grid, block) of an NDRange (global sizes are whole multiples of the group)."""
    block = launch.local_size
    grid = tuple(-(-g // b) for g, b in zip(launch.global_size, block))
    return grid, block


@dataclass
class CudaTimer:
    """Times the suite's kernels on one CUDA GPU with CUDA events."""

    cupy: Any
    index: int
    module: Any

    @classmethod
    def open(cls, selector: str | None) -> CudaTimer:
        """Return the timer on GPU `selector` (an index; default 0), the suite compiled."""
        from perfcast.bench.cuda import CudaBackend

        backend = CudaBackend.open(selector, 1)  # says why when there is no CuPy or no GPU
        import cupy

        cupy.cuda.Device(backend.index).use()
        try:
            module = _module(cupy)
            module.compile()
        except Exception as error:  # noqa: BLE001 - CuPy's compile errors have no common base
            raise BackendUnavailable(f"the campaign suite did not compile for CUDA: {error}") from None
        return cls(cupy, backend.index, module)

    def supports(self, kernel: CampaignKernel) -> str | None:
        """Return why `kernel` cannot run here, or None (every NVIDIA GPU CuPy supports has fp64)."""
        return None

    def time(self, kernel: CampaignKernel, n: int, repetitions: int) -> dict[str, Any]:
        """Return the kernel's checked result and the times (s) of `repetitions` launches after a warm-up."""
        cupy = self.cupy
        arrays = kernel.arrays(n, np.random.default_rng(0))
        device_arrays = {name: self.cupy.asarray(array) for name, array in arrays.items()}
        arguments = kernel.ordered_arguments(n, device_arrays)
        function = self.module.get_function(kernel.name)
        launch = kernel.launch(n)
        grid, block = _grid(launch)

        def once() -> float:
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            function(grid, block, tuple(arguments))
            end.record()
            end.synchronize()
            return cupy.cuda.get_elapsed_time(start, end) * 1e-3

        once()
        outputs = {name: cupy.asnumpy(array) for name, array in device_arrays.items()}
        problem = kernel.check(n, arrays, outputs)
        once()  # warm-up
        times = [once() for _ in range(repetitions)]
        return {"times_s": times, "check": problem, "work_items": launch.items}

    def environment(self) -> dict[str, Any]:
        """Return the GPU, driver and CUDA versions the times were taken with."""
        runtime = self.cupy.cuda.runtime
        properties = runtime.getDeviceProperties(self.index)
        name = properties["name"].decode() if isinstance(properties["name"], bytes) else properties["name"]
        return {"device": name, "platform": f"CUDA runtime {runtime.runtimeGetVersion()}, driver "
                f"{runtime.driverGetVersion()}, CuPy {self.cupy.__version__}", "compiler": f"NVRTC -DTILE={TILE}"}


def main(argv: list[str]) -> int:
    """Launch each named kernel once at its size (the program ncu profiles); return the exit status."""
    import cupy

    sizes = {name: int(n) for name, n in (item.split("=") for item in argv[0].split(","))}
    module = _module(cupy)
    for kernel in KERNELS:
        if kernel.name not in sizes:
            continue
        n = sizes[kernel.name]
        arrays = {name: cupy.asarray(a) for name, a in kernel.arrays(n, np.random.default_rng(1)).items()}
        grid, block = _grid(kernel.launch(n))
        module.get_function(kernel.name)(grid, block, tuple(kernel.ordered_arguments(n, arrays)))
        cupy.cuda.Device().synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
