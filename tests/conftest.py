"""Markers the whole suite shares."""

import pytest


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
