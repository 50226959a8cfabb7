"""Markers the whole suite shares, and the quick bench suites measured once for every test that needs one."""

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).parents[1] / "scripts"


def _have_cuda_tools() -> bool:
    from perfcast.errors import ToolError
    from perfcast.profiles.sass import find_tool

    try:
        find_tool("nvcc")
        find_tool("cuobjdump")
    except ToolError:
        return False
    return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the tests marked needs_cuda_tools where nvcc or cuobjdump is missing, saying how to get them."""
    marked = [item for item in items if item.get_closest_marker("needs_cuda_tools")]
    if marked and not _have_cuda_tools():
        skip = pytest.mark.skip(reason="needs nvcc (the CUDA toolkit) and cuobjdump (pip install nvidia-cuda-cuobjdump)")
        for item in marked:
            item.add_marker(skip)


# The quick suites run for real once per session (about a minute each on 2 cores): the backend tests check what
# they measured, and the CLI's bench tests give them to the command in place of measuring again, so each
# backend's measuring is exercised once and the CLI's handling of a real suite still is.
@pytest.fixture(scope="session")
def cpu_host():
    """Return this machine's CPU as the native backend's tests detect it."""
    if shutil.which("gcc") is None:
        pytest.skip("the native benchmarks need gcc")
    from perfcast.bench.detect import detect_cpu

    return detect_cpu(probe_bytes=16 * 2**20, repetitions=3)


@pytest.fixture(scope="session")
def cpu_quick_suite(cpu_host):
    """Return the native CPU backend's quick suite, measured for real (its progress checked on the way)."""
    from perfcast.bench.cpu import NativeCpuBackend

    seen = []
    result = NativeCpuBackend(cpu_host, repetitions=3).run(quick=True, progress=lambda label, f: seen.append(f))
    # The declared step count matches the steps taken: k steps report 0, 1/k, ..., (k-1)/k, then done at 1.
    assert seen[-1] == 1.0 and seen[:-1] == pytest.approx([i / (len(seen) - 1) for i in range(len(seen) - 1)])
    return result


@pytest.fixture(scope="session")
def opencl_device() -> None:
    """Skip the test where this machine has no OpenCL device (pyopencl, a platform, a device)."""
    pytest.importorskip("pyopencl")
    from perfcast.bench.backends import BackendUnavailable
    from perfcast.bench.opencl import list_devices

    try:
        if not list_devices():
            pytest.skip("no OpenCL device (make test installs PoCL with apt-get)")
    except BackendUnavailable:
        pytest.skip("no OpenCL platform")


@pytest.fixture(scope="session")
def opencl_backend(opencl_device):
    """Return the OpenCL backend on this machine's first device, or skip where there is none."""
    from perfcast.bench.opencl import OpenClBackend

    return OpenClBackend.open(None, repetitions=3)


@pytest.fixture(scope="session")
def opencl_quick_suite(opencl_backend):
    """Return the OpenCL backend's quick suite, measured for real."""
    return opencl_backend.run(quick=True, progress=lambda label, fraction: None)


@pytest.fixture(scope="session")
def load_script():
    """Return a loader of one of scripts/*.py as a module, by its file's stem: a fresh module at each call."""

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # a script's dataclasses look their module up there
        spec.loader.exec_module(module)
        return module

    return load

