"""The benchmark backends, one registry: name -> opener of the backend and of the description it starts from."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from perfcast.errors import BackendUnavailable

if TYPE_CHECKING:
    from perfcast.bench.suite import BaseDescription, BenchBackend

__all__ = ["BACKENDS", "BackendUnavailable", "open_backend"]

Opened = tuple["BenchBackend", "BaseDescription"]


def _open_cpu(device_id: str | None, repetitions: int) -> Opened:
    """Return the native C/OpenMP backend on this machine's CPU, and this CPU's detected description."""
    from perfcast.bench.cpu import NativeCpuBackend
    from perfcast.bench.detect import detect_cpu
    from perfcast.bench.suite import BaseDescription
    from perfcast.kernels.native import NativeBuildError

    if device_id not in (None, "host"):
        raise BackendUnavailable("the cpu backend measures this machine's CPU: leave --device out")
    try:
        base = detect_cpu(probe_bytes=64 * 2**20, repetitions=3)
        backend = NativeCpuBackend(base, repetitions)
        backend._libraries()  # compile now, so a missing compiler is reported before any timing
    except NativeBuildError as error:
        raise BackendUnavailable(str(error)) from None
    return backend, BaseDescription.of(base)


def _open_opencl(device_id: str | None, repetitions: int) -> Opened:
    """Return the pyopencl backend on an OpenCL device, and the description its runtime reports."""
    from perfcast.bench.opencl import OpenClBackend

    backend = OpenClBackend.open(device_id, repetitions)
    return backend, backend.base_device()


def _open_cuda(device_id: str | None, repetitions: int) -> Opened:
    """Return the CuPy backend on a CUDA GPU, and its catalog description (or what the runtime reports)."""
    from perfcast.bench.cuda import CudaBackend

    backend = CudaBackend.open(device_id, repetitions)
    return backend, backend.base_device()


# The registry: the CLI's --backend choices and the tests' parametrisation come from it.
BACKENDS: dict[str, tuple[str, Callable[[str | None, int], Opened]]] = {
    "cpu": ("native C with OpenMP, this machine's CPU", _open_cpu),
    "opencl": ("pyopencl on an OpenCL device (PoCL on CPUs)", _open_opencl),
    "cuda": ("CuPy on an NVIDIA GPU", _open_cuda),
}


def open_backend(name: str, device_id: str | None, repetitions: int) -> Opened:
    """Return the backend called `name` on device `device_id`, and the description its profile is built on.

    The description holds the full Device where one exists (this CPU, a catalog GPU) and always the
    structure the runtime reports.
    """
    if name not in BACKENDS:
        raise BackendUnavailable(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    return BACKENDS[name][1](device_id, repetitions)
