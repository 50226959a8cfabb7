"""Every registered benchmark backend opens here or says why it cannot; none crashes; unknown names are refused."""

import pytest

from perfcast.bench.backends import BACKENDS, BackendUnavailable, open_backend


@pytest.mark.parametrize("name", list(BACKENDS))
def test_every_backend_opens_or_says_why(name):
    about, opener = BACKENDS[name]
    assert about and callable(opener)
    try:
        backend, base = open_backend(name, None, 1)
    except BackendUnavailable as error:
        assert str(error)  # e.g. no CUDA GPU on this machine
        return
    assert hasattr(backend, "run")
    assert base is not None


def test_unknown_backend_lists_the_registered_ones():
    with pytest.raises(BackendUnavailable, match="choose one of cpu, opencl, cuda"):
        open_backend("vulkan", None, 1)
