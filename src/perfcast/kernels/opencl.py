"""What every OpenCL user in perfcast needs: a device, a context, a profiling queue, and a record of them."""

from __future__ import annotations

import os
import platform
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = ["build_program", "opencl_environment", "profiling_queue"]


def profiling_queue(device: Any = None) -> tuple[Any, Any, Any, Any]:
    """Return (pyopencl, device, context, queue with profiling on) for `device`, or the first device there is."""
    import pyopencl as cl

    if device is None:
        device = cl.get_platforms()[0].get_devices()[0]
    context = cl.Context([device])
    return cl, device, context, cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)


def build_program(cl: Any, context: Any, source: str, options: Sequence[str]) -> Any:
    """Return the built program; the compiler's chatter (warnings, 'N warnings generated.') is kept from the user.

    A build that fails still raises pyopencl's error, whose message holds the build log.
    """
    with warnings.catch_warnings(), _quiet_stderr():
        warnings.simplefilter("ignore", cl.CompilerWarning)
        return cl.Program(context, source).build(options=list(options))


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Send file descriptor 2 to /dev/null for the block: OpenCL compilers write there from C."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def opencl_environment(device: Any, compiler: str) -> dict[str, Any]:
    """Return the platform, device, driver, compiler and host a measurement on `device` was taken with."""
    return {
        "platform": f"{device.platform.name.strip()} {device.platform.version.strip()}",
        "device": device.name.strip(),
        "driver": device.driver_version,
        "compiler": compiler,
        "host": f"{platform.node()} {platform.machine()}",
    }
