"""The native synthetic primitives compute what they claim (checked against numpy), and builds fail clearly."""

import shutil

import numpy as np
import pytest

from perfcast.kernels.native import NativeBuildError, VectorIsa, build_library
from perfcast.kernels.primitives import elementwise, load_primitives, neighbourhood, reduction, reference_chain

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="the native kernels need gcc")

A, B, W = np.float32(0.999), np.float32(0.001), np.float32(0.04)


@pytest.fixture(scope="module")
def library():
    return load_primitives()


@pytest.mark.parametrize("f", [1, 2, 8, 64])
def test_elementwise(library, f):
    prim = elementwise(library, 1000)  # not a multiple of the block: exercises the tail
    prim.run(f)
    x = np.random.default_rng(1).random(1000, dtype=np.float32)
    expected = x + B if f == 1 else reference_chain(x, f // 2)
    np.testing.assert_allclose(prim.result(), expected, rtol=1e-5)
    assert prim.species == "1000|element -> 1000|element"


@pytest.mark.parametrize("f", [1, 3, 33])
def test_reduction(library, f):
    prim = reduction(library, 5000)
    prim.run(f)
    x = np.random.default_rng(2).random(5000, dtype=np.float32)
    expected = reference_chain(x, (f - 1) // 2).astype(np.float64).sum()
    assert prim.result() == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize(("size", "f"), [(3, 2), (5, 4), (5, 10)])
def test_neighbourhood(library, size, f):
    rows, cols = 37, 150
    prim = neighbourhood(library, rows, cols, size)
    prim.run(f)
    padded = np.random.default_rng(3).random((rows + size - 1) * (cols + size - 1), dtype=np.float32)
    image = reference_chain(padded, (f - 2) // 2).reshape(rows + size - 1, cols + size - 1)
    expected = np.zeros((rows, cols), dtype=np.float64)
    for dr in range(size):
        for dc in range(size):
            expected += W * image[dr : dr + rows, dc : dc + cols]
    np.testing.assert_allclose(prim.result().reshape(rows, cols), expected, rtol=1e-4)
    assert prim.species == f"{rows}x{cols}|neighb({size}x{size}) -> {rows}x{cols}|element"


def test_unsupported_complexities(library):
    with pytest.raises(ValueError, match="even f"):
        elementwise(library, 10).run(3)
    with pytest.raises(ValueError, match="odd f"):
        reduction(library, 10).run(2)
    with pytest.raises(ValueError, match="odd"):
        neighbourhood(library, 8, 8, 4)


def test_build_is_cached(library):
    again = load_primitives()
    assert again.path == library.path
    assert "-march=native" in library.command and "-fopenmp" in library.command


def test_compile_error_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFCAST_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "broken.c"
    source.write_text("int f( { return 0; }\n")
    with pytest.raises(NativeBuildError, match="compiling broken.c failed"):
        build_library(source)


def test_missing_compiler(tmp_path):
    source = tmp_path / "ok.c"
    source.write_text("int f(void) { return 0; }\n")
    with pytest.raises(NativeBuildError, match="no C compiler"):
        build_library(source, compiler="no-such-cc")


@pytest.mark.parametrize(("isa", "lanes"), [(VectorIsa("AVX-512", 64, 32), 256), (VectorIsa("AVX2", 32, 16), 96),
                                             (VectorIsa("NEON", 16, 32), 96)])
def test_primitive_blocks_are_capped_where_gcc_stops_unrolling(tmp_path, isa, lanes):
    """A block of at most LANES_MAX floats, which gcc unrolls into registers: the reduction's FMAs take no operand
    from memory on AVX-512 (with the whole 384-float register block they did: 3 FMAs, 2 from memory)."""
    import re
    import subprocess

    from perfcast.kernels.primitives import SOURCE, primitive_flags

    flags = primitive_flags(isa)
    assert f"-DLANES={lanes}" in flags
    if isa.name != "AVX-512" or shutil.which("gcc") is None:
        return
    if subprocess.run(["gcc", "-dumpmachine"], capture_output=True, text=True).stdout.split("-")[0] != "x86_64":
        pytest.skip("the assembly check reads x86 assembly")
    built = subprocess.run(["gcc", "-O3", "-march=x86-64-v4", "-mprefer-vector-width=512", "-fopenmp",
                            f"-DLANES={lanes}", "-S", "-o", str(tmp_path / "p.s"), str(SOURCE)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    body = re.search(r"^reduce_sum\._omp_fn\.\d+:(.*?)\.cfi_endproc", (tmp_path / "p.s").read_text(), re.S | re.M)
    fmas = re.findall(r"^\s*vfmadd\w+\s+(.*)$", body[1], re.M)
    assert len(fmas) >= 16 and not [operands for operands in fmas if "(" in operands]
