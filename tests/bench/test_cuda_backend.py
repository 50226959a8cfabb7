"""The CUDA backend without a GPU: its CUDA C compiles with nvcc, it matches GPUs to the catalog,
and it says clearly why it cannot run. The suite itself runs where a GPU is lent (see docs/validation)."""

import shutil
import subprocess

import pytest

from perfcast.bench.backends import BackendUnavailable, open_backend
from perfcast.bench.cuda import CHAIN_CANDIDATES, SOURCE, catalog_match, kernel_defines, thread_block


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])  # CUDA 13 dropped sm_70
@pytest.mark.parametrize("chains", CHAIN_CANDIDATES)
def test_cuda_kernels_compile_in_every_shape_tried(tmp_path, arch, chains):
    result = subprocess.run(
        ["nvcc", f"-arch={arch}", *kernel_defines(chains), "-c", str(SOURCE), "-o", str(tmp_path / "bench.o")],
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


@pytest.mark.parametrize(
    ("warp", "max_block", "max_per_sm", "expected"),
    [
        (32, 1024, 2048, 256),  # Volta, Ampere A100, Hopper: 8 blocks of 8 warps fill an SM
        (32, 1024, 1536, 256),  # Ampere GA10x, Ada: 6 blocks
        (32, 1024, 1024, 256),  # Turing
        (32, 128, 2048, 128),  # a block limit below 8 warps
        (64, 1024, 2560, 512),  # 64-thread warps: still 8 warps
        (32, 1024, 1000, 32),  # an SM limit nothing but a warp divides
    ],
)
def test_thread_block_from_the_warp_and_the_sm(warp, max_block, max_per_sm, expected):
    block = thread_block(warp, max_block, max_per_sm)
    assert block == expected
    assert block % warp == 0 and block & (block - 1) == 0 and block <= max_block


def test_thread_block_refuses_limits_that_hold_no_warp():
    with pytest.raises(BackendUnavailable, match="warp 32"):
        thread_block(32, 16, 2048)
