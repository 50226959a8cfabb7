"""What every OpenCL user in perfcast needs: a device, a context, a profiling queue, and a record of them."""

from __future__ import annotations

import platform
from typing import Any

__all__ = ["opencl_environment", "profiling_queue"]


def profiling_queue(device: Any = None) -> tuple[Any, Any, Any, Any]:
    """Return (pyopencl, device, context, queue with profiling on) for `device`, or the first device there is."""
    import pyopencl as cl

    if device is None:
        device = cl.get_platforms()[0].get_devices()[0]
    context = cl.Context([device])
    return cl, device, context, cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)


def opencl_environment(device: Any, compiler: str) -> dict[str, Any]:
    """Return the platform, device, driver, compiler and host a measurement on `device` was taken with."""
    return {
        "platform": f"{device.platform.name.strip()} {device.platform.version.strip()}",
        "device": device.name.strip(),
        "driver": device.driver_version,
        "compiler": compiler,
        "host": f"{platform.node()} {platform.machine()}",
    }
