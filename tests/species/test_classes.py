"""Class variables: every reference row by hand, the halo terms, derivation, and size checks."""

import math

import pytest

from perfcast.species.classes import HaloTile, class_variables, halo_accesses
from perfcast.species.grammar import SpeciesBindingError, parse_species

A, B = 64, 32
N = A * B


def variables(text, tile=HaloTile(), **bind):
    return class_variables(parse_species(text).bind(bind or {"A": A, "B": B}), tile)


@pytest.mark.parametrize(
    ("text", "name", "w", "m", "o", "d", "c", "u", "floors"),
    [
        ("AxB|element -> AxB|element", "binarization", N, 1, 16, 2 * N, 2 * N, 0, ("c1",)),
        ("unordered AxB|element -> AxB|element", "xy-mirroring", N, 1, 16, 2 * N, 2 * N, 0, ("c1", "m1")),
        ("AxB|tile(1xB) -> A|element", "x-projection", A, B, 4 * B, N + A, N + A, 0, ("c1", "m1")),
        ("AxB|tile(4x2) -> 16x16|element", "scale down", N // 8, 8, 32, N + N // 8, N + N // 8, 0, ("c1",)),
        ("AxB|tile(8x8) -> AxB|tile(8x8)", "2D-DCT", N // 64, 64, 256, 2 * N, N, N, ("c1",)),
        ("AxB|element -> 128x96|tile(2x3)", "enlarge", N, 6, 32, N + 6 * N, 7 * N, 0, ("c1",)),
        ("AxB|element -> 1|shared", "sum", N, 1, 16, N + 1, N, 1, ("c1",)),
        ("AxB|element -> 256|shared", "histogram", N, 1, 64, N + 256, 256, N, ("c1",)),
        ("AxB|element ^ AxB|element -> AxB|element", "differencing", N, 1, 32, 3 * N, 3 * N, 0, ("c1",)),
    ],
)
def test_reference_rows(text, name, w, m, o, d, c, u, floors):
    v = variables(text)
    assert (v.name, v.origin) == (name, "reference")
    assert (v.w, v.m, v.o, v.d, v.c, v.u, v.floors) == (w, m, o, d, c, u, floors)


def test_2d_convolution_with_halo():
    # 16x16 tile, 7x7 neighbourhood: α = AB·(22·22 − 256)/256 = AB·228/256
    v = variables("1024x1024|neighb(7x7) -> 1024x1024|element")
    n = 1024 * 1024
    assert v.name == "2D convolution" and v.origin == "reference"
    assert (v.w, v.m, v.o, v.d, v.u) == (n, 49, 64, 2 * n, 0)
    assert v.c == 2 * n + n * 228 / 256 == 3_031_040
    assert v.floors == ("c1", "i1")  # each tap reads its neighbour from the staged tile: the GPU's issue floor


def test_a_derived_class_reading_a_neighbourhood_has_the_issue_floor():
    two_inputs = variables("1024x1024|neighb(3x3) ^ 1024x1024|element -> 1024x1024|element")
    assert two_inputs.origin == "derived" and "i1" in two_inputs.floors
    assert "i1" not in variables("1024x1024|element ^ 1024x1024|element -> 1024x1024|element").floors


def test_halo_with_a_custom_tile():
    v = variables("1024x1024|neighb(3x5) -> 1024x1024|element", tile=HaloTile(32, 8))
    # (32+2)(8+4) − 256 = 152 extra per 256 outputs
    assert v.c == 2 * 2**20 + 2**20 * 152 / 256


def test_1d_convolution_reads_k_as_kx1():
    v = variables("1024x1024|neighb(5) -> 1024x1024|element")
    assert v.name == "1D convolution" and v.m == 5
    access = parse_species("1024x1024|neighb(5) -> 1024x1024|element").inputs[0]
    assert halo_accesses(access, HaloTile()) == 2**20 * (20 * 16 - 256) / 256


def test_fast_focus_projections():
    x = variables("1024x1024|tile(1x1024) -> 1024|element")
    y = variables("1024x1024|tile(1024x1) -> 1024|element")
    assert x.name == "x-projection" and "m1" in x.floors
    assert y.name == "scale down" and "m1" not in y.floors
    assert (x.w, x.m, y.w, y.m) == (1024, 1024, 1024, 1024)


def test_maximum_is_a_sum():
    v = variables("262144|element -> 1|shared")
    assert v.name == "sum" and v.w == 262144 and v.u == 1


@pytest.mark.parametrize(
    ("text", "summary"),
    [
        ("AxB|full -> AxB|element", dict(w=N, m=N, d=2 * N, c=2 * N, u=0)),
        ("AxB|element ^ 16|shared -> AxB|element", dict(w=N, m=1, d=2 * N + 16, c=2 * N + 16, u=0)),
        ("unordered AxB|element -> 256|shared", dict(w=N, m=1, d=N + 256, c=N + 256, u=N)),
    ],
)
def test_derived_variables(text, summary):
    v = variables(text)
    assert v.origin == "derived" and v.name.startswith("derived")
    for key, value in summary.items():
        assert getattr(v, key) == value, key
    assert v.o >= 1 and math.log2(v.o).is_integer(), "o is a power of two"


def test_unordered_derived_species_has_the_scatter_floor():
    assert "m1" in variables("unordered AxB|element -> 256|shared").floors


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1024x1024|tile(3x3) -> 1|shared", "does not divide"),
        ("1024x1024|tile(1x1024) -> 512|element", "one element per work unit"),
        ("8x8|neighb(9x9) -> 8x8|element", "exceeds the array"),
        ("8x8|tile(2x2x2) -> 16|element", "more dimensions than the array"),
        ("AxB|element -> AxB|element", "bind the size symbol"),
    ],
)
def test_sizes_that_disagree_are_named(text, message):
    with pytest.raises(SpeciesBindingError, match=message):
        class_variables(parse_species(text))


def test_matrix_product_has_one_work_unit_per_output():
    """Rows of A combined with columns of B: N*M work units, each applying the operator K times."""
    from perfcast.species.classes import class_variables
    from perfcast.species.grammar import parse_species

    bound = parse_species("NxK|tile(1xK) ^ KxM|tile(Kx1) -> NxM|element").bind({"N": 64, "K": 32, "M": 16})
    v = class_variables(bound)
    assert (v.w, v.m) == (64 * 16, 32)
    assert v.d == 64 * 32 + 32 * 16 + 64 * 16
    # Each row and column is read by many work units: staged on chip, its overhead a neighbourhood's 64, not 4m.
    assert v.o == 64
    big = class_variables(parse_species("NxK|tile(1xK) ^ KxM|tile(Kx1) -> NxM|element").bind({"N": 64, "K": 4096,
                                                                                               "M": 16}))
    assert big.o == 64 and big.m == 4096
    # A tile read by its own work unit alone keeps 4m (rounded to a power of two): each application loads.
    own = class_variables(parse_species("64x32|tile(1x32) ^ 64|element -> 64|element"))
    assert own.origin == "derived" and own.w == 64 and own.m == 32 and own.o == 128
