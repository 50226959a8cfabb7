"""The launch arguments Python builds for each campaign kernel against the parameter lists in suite.cu and suite.cl.

Neither CuPy nor pyopencl checks a raw kernel's arguments against its signature: an int64 where the kernel takes
an int, or a float64 array for a float*, launches and computes garbage. On PoCL the campaign's result checks would
show it; the CUDA suite runs only where a GPU is lent, so its arguments are checked here, from the source text
(and ctypes, for the C suite, checks nothing either).
"""

import re

import numpy as np
import pytest

from perfcast.kernels.campaign import C_SOURCE, CUDA_SOURCE, KERNELS, OPENCL_SOURCE

# C parameter types -> (is a pointer, the numpy dtype of its elements or of the scalar, elements per item).
TYPES = {
    "float": (np.float32, 1), "double": (np.float64, 1), "int": (np.int32, 1), "unsigned int": (np.uint32, 1),
    "uint": (np.uint32, 1), "unsigned char": (np.uint8, 1), "uchar": (np.uint8, 1), "float4": (np.float32, 4),
    "uint32_t": (np.uint32, 1), "uint8_t": (np.uint8, 1),
}
QUALIFIERS = re.compile(r"\b(?:__global|__restrict__|restrict|const)\b")


def signatures(text: str, marker: str) -> dict[str, list[tuple[str, bool]]]:
    """Return each kernel's parameters in `text` as (element type, is a pointer), in order."""
    found = {}
    for match in re.finditer(marker + r"\s+(\w+)\s*\(([^)]*)\)", text, re.MULTILINE):
        parameters = []
        for parameter in match[2].split(","):
            words = QUALIFIERS.sub(" ", parameter).replace("*", " * ").split()
            pointer = "*" in words
            type_ = " ".join(w for w in words[:-1] if w != "*")  # the last word is the parameter's name
            parameters.append((type_, pointer))
        found[match[1]] = parameters
    return found


SOURCES = {"cuda": signatures(CUDA_SOURCE.read_text(), r'extern\s+"C"\s+__global__\s+void'),
           "opencl": signatures(OPENCL_SOURCE.read_text(), r"__kernel\s+void"),
           "c": signatures(C_SOURCE.read_text(), r"^double")}  # each C kernel returns its time


def test_both_suites_define_every_kernel():
    names = {k.name for k in KERNELS}
    assert all(set(found) == names for found in SOURCES.values())


@pytest.mark.parametrize("language", sorted(SOURCES))
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_the_arguments_match_the_kernel_s_parameters(language, kernel):
    n = kernel.sizes[-1]
    arrays = kernel.arrays(n, np.random.default_rng(0))
    arguments = kernel.ordered_arguments(n, arrays)
    parameters = SOURCES[language][kernel.name]
    assert len(arguments) == len(parameters), (kernel.arguments, parameters)
    for name, argument, (type_, pointer) in zip(kernel.arguments, arguments, parameters):
        dtype, per_item = TYPES[type_]
        if pointer:
            assert isinstance(argument, np.ndarray) and name in arrays, f"{name}: the kernel takes a {type_}*"
            assert argument.dtype == dtype, f"{name}: {argument.dtype} for a {type_}*"
            assert argument.size % per_item == 0, f"{name}: {argument.size} elements for a {type_}*"
        else:
            # A numpy scalar of exactly the parameter's type: a Python int or float would go in as 8 bytes.
            assert isinstance(argument, np.generic) and argument.dtype == dtype, f"{name}: {argument!r} for a {type_}"
