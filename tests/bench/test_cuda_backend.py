"""The CUDA backend without a GPU: its CUDA C compiles with nvcc, it matches GPUs to the catalog,
and it says clearly why it cannot run. The suite itself runs where a GPU is lent (see docs/validation)."""

import shutil
import subprocess

import pytest

from perfcast.bench.backends import BackendUnavailable, open_backend
from perfcast.bench.cuda import SOURCE, catalog_match, kernel_defines


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])  # CUDA 13 dropped sm_70
def test_cuda_kernels_compile(tmp_path, arch):
    result = subprocess.run(
        ["nvcc", f"-arch={arch}", *kernel_defines(), "-c", str(SOURCE), "-o", str(tmp_path / "bench.o")],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "bench.o").stat().st_size > 1000


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_kernels_refuse_to_compile_without_perfcasts_defines(tmp_path):
    """The shapes are set in one place, Python: bench.cu has no defaults of its own that could drift from it."""
    result = subprocess.run(["nvcc", "-arch=sm_90", "-c", str(SOURCE), "-o", str(tmp_path / "bench.o")],
                            capture_output=True, text=True)
    assert result.returncode != 0 and "kernel_defines" in result.stderr
    without = [d for d in kernel_defines() if not d.startswith("-DELEMENTARY_CHAINS=")]
    assert len(without) == len(kernel_defines()) - 1
    result = subprocess.run(["nvcc", "-arch=sm_90", *without, "-c", str(SOURCE), "-o", str(tmp_path / "bench.o")],
                            capture_output=True, text=True)
    assert result.returncode != 0 and "ELEMENTARY_CHAINS" in result.stderr


@pytest.mark.parametrize(
    ("name", "memory", "expected"),
    [
        ("NVIDIA H100 80GB HBM3", 80 * 2**30, "h100-sxm5"),
        ("NVIDIA H100 PCIe", 80 * 2**30, "h100-pcie"),
        ("NVIDIA H200", 141e9, "h200"),
        ("NVIDIA A100-SXM4-40GB", 40 * 2**30, "a100-40gb"),
        ("NVIDIA A100-SXM4-80GB", 80 * 2**30, "a100-80gb"),
        ("Tesla V100-SXM2-16GB", 16 * 2**30, "v100"),
        ("NVIDIA GeForce RTX 4090", 24 * 2**30, None),
    ],
)
def test_catalog_match(name, memory, expected):
    found = catalog_match(name, memory)
    assert (found.name if found else None) == expected


def test_without_cupy_or_gpu_the_reason_is_given():
    try:
        import cupy  # noqa: F401
        if cupy.cuda.runtime.getDeviceCount() > 0:
            pytest.skip("a CUDA GPU is present")
    except Exception:
        pass
    with pytest.raises(BackendUnavailable, match="CuPy|CUDA GPU"):
        open_backend("cuda", None, 1)
