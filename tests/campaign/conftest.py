"""The campaign tests' shared program: a multi-kernel OpenCL C program of ours, built with the launch log."""

import shutil
from pathlib import Path

import pytest

from perfcast.errors import ToolError

PROGRAM = Path(__file__).parents[1] / "data" / "programs" / "multi_kernel.c"


@pytest.fixture(scope="session")
def multi_kernel() -> Path:
    """Return the test program compiled (cached), or skip where there is no OpenCL device, loader or gcc."""
    from perfcast.bench.opencl import list_devices
    from perfcast.campaign.launch_log import build_launch_logger
    from perfcast.kernels.native import build_executable

    try:
        devices = list_devices()
    except Exception:  # noqa: BLE001 - any failure means no OpenCL here
        devices = []
    if shutil.which("gcc") is None or not devices:
        pytest.skip("no OpenCL device or gcc (make system)")
    try:
        build_launch_logger()
    except ToolError as error:
        pytest.skip(str(error))
    path, _, _ = build_executable(PROGRAM, ("-O2", "-Wl,--no-as-needed", "-lOpenCL", "-lpthread"))
    return path
