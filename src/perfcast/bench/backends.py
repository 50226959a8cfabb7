"""Choosing a benchmark backend and the device description it starts from."""

from __future__ import annotations

from typing import Any

from perfcast.bench.suite import BenchBackend
from perfcast.devices.schema import Device

__all__ = ["BACKENDS", "BackendUnavailable", "open_backend"]

BACKENDS = ("cpu", "opencl", "cuda")


class BackendUnavailable(RuntimeError):
    """A backend that cannot run here (no compiler, no OpenCL platform, no CUDA GPU), with the reason."""


def open_backend(name: str, device_id: str | None, repetitions: int) -> tuple[BenchBackend, Device | dict[str, Any]]:
    """Return the backend called `name` on device `device_id`, and the description its profile is built on.

    The description is a Device where one exists (this CPU, a catalog GPU),
    else the device-file mapping of what the runtime reports.
    """
    if name == "cpu":
        from perfcast.bench.cpu import NativeCpuBackend
        from perfcast.devices.detect import detect_cpu
        from perfcast.kernels.native import NativeBuildError

        if device_id not in (None, "host"):
            raise BackendUnavailable("the cpu backend measures this machine's CPU: leave --device out")
        try:
            base = detect_cpu(probe_bytes=64 * 2**20, repetitions=3)
            backend = NativeCpuBackend(base, repetitions)
            backend._libraries()  # compile now, so a missing compiler is reported before any timing
        except NativeBuildError as error:
            raise BackendUnavailable(str(error)) from None
        return backend, base
    if name == "opencl":
        from perfcast.bench.opencl import OpenClBackend

        backend = OpenClBackend.open(device_id, repetitions)
        return backend, backend.base_device()
    if name == "cuda":
        from perfcast.bench.cuda import CudaBackend

        backend = CudaBackend.open(device_id, repetitions)
        return backend, backend.base_device()
    raise BackendUnavailable(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
