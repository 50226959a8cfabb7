"""The species grammar: parsing, canonical formatting, round trips and errors that point at the problem."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfcast.species.grammar import (
    Access,
    Pattern,
    Species,
    SpeciesBindingError,
    SpeciesSyntaxError,
    format_species,
    parse_species,
)

EXAMPLES = [
    "1024x1024|element -> 1024x1024|element",
    "1024x1024|neighb(7x7) -> 1024x1024|element",
    "1024x1024|tile(1x1024) -> 1024|element",
    "1024x1024|element -> 256|shared",
    "AxB|element ^ AxB|element -> AxB|element",
    "unordered AxB|element -> AxB|element",
    "K|full -> K|element",
]


@pytest.mark.parametrize("text", EXAMPLES)
def test_examples_round_trip(text):
    species = parse_species(text)
    assert format_species(species) == text
    assert parse_species(format_species(species)) == species


def test_tree_of_a_neighbourhood():
    species = parse_species("1024x1024|neighb(7x7) -> 1024x1024|element")
    assert species == Species(
        inputs=(Access((1024, 1024), Pattern("neighb", (7, 7))),),
        outputs=(Access((1024, 1024), Pattern("element")),),
    )


@pytest.mark.parametrize(
    ("variant", "canonical"),
    [
        ("AxB|element ∧ AxB|element → AxB|element", "AxB|element ^ AxB|element -> AxB|element"),
        ("AxB|element & AxB|element->AxB|element", "AxB|element ^ AxB|element -> AxB|element"),
        ("64x64|neighbourhood(3x3) -> 64x64|element", "64x64|neighb(3x3) -> 64x64|element"),
        ("64x64|neighborhood(3) -> 64x64|element", "64x64|neighb(3) -> 64x64|element"),
        ("64x64|chunk(8x8) -> 8x8|element", "64x64|tile(8x8) -> 8x8|element"),
        ("  64 x 64 | element  ->  1 | shared ", "64x64|element -> 1|shared"),
    ],
)
def test_synonyms_normalise(variant, canonical):
    assert format_species(parse_species(variant)) == canonical


def test_symbols_and_binding():
    species = parse_species("AxB|tile(UxV) -> AxB|tile(UxV)")
    assert species.symbols == {"A", "B", "U", "V"}
    bound = species.bind({"A": 64, "B": 32, "U": 8, "V": 4})
    assert str(bound) == "64x32|tile(8x4) -> 64x32|tile(8x4)"
    with pytest.raises(SpeciesBindingError, match="unbound size symbol.*U, V"):
        species.bind({"A": 64, "B": 32})
    with pytest.raises(SpeciesBindingError, match="positive integer"):
        species.bind({"A": 0, "B": 1, "U": 1, "V": 1})


@pytest.mark.parametrize(
    ("text", "position", "expected"),
    [
        ("1024x1024|elem -> 1|shared", 10, "an access pattern"),
        ("1024x1024 element -> 1|shared", 10, "'|' between the size"),
        ("1024x1024|element 1|shared", 18, "'->'"),
        ("AxB|neighb(3x) -> AxB|element", 13, "a dimension"),
        ("|element -> 1|shared", 0, "an array size"),
        ("AxB|tile(2x2 -> AxB|element", 13, "')' to close"),
        ("AxB|element -> AxB|element extra", 27, "the end of the species"),
        ("0x4|element -> 1|shared", 0, "a positive size"),
        ("axb|element -> 1|shared", 0, "an array size"),
        ("AxB|element ->", 14, "an array size"),
        ("", 0, "an array size"),
    ],
)
def test_errors_point_at_the_position(text, position, expected):
    with pytest.raises(SpeciesSyntaxError) as caught:
        parse_species(text)
    error = caught.value
    assert error.position == position
    assert expected in str(error)
    caret_line = str(error).splitlines()[-1]
    assert caret_line.index("^") - 2 == position


# ---------------------------------------------------------------- property tests

dims = st.one_of(st.integers(1, 4096), st.sampled_from(["A", "B", "K", "N", "M2", "W_1"]))
sizes = st.lists(dims, min_size=1, max_size=3).map(tuple)
patterns = st.one_of(
    st.sampled_from(["element", "shared", "full"]).map(Pattern),
    st.builds(Pattern, st.sampled_from(["neighb", "tile"]), sizes),
)
accesses = st.builds(Access, sizes, patterns)
species_trees = st.builds(
    Species,
    st.lists(accesses, min_size=1, max_size=3).map(tuple),
    st.lists(accesses, min_size=1, max_size=2).map(tuple),
    st.booleans(),
)


@given(species_trees)
def test_format_parse_round_trip(tree):
    assert parse_species(format_species(tree)) == tree


@given(species_trees, st.data())
def test_broken_species_raise_a_positioned_syntax_error(tree, data):
    text = format_species(tree)
    cut = data.draw(st.integers(0, len(text) - 1))
    junk = data.draw(st.sampled_from(["", "|", "->", "(", "x", "?", "  ", "element"]))
    broken = text[:cut] + junk + text[cut + 1 :]
    try:
        parsed = parse_species(broken)
    except SpeciesSyntaxError as error:
        assert 0 <= error.position <= len(broken)
    else:
        assert parse_species(format_species(parsed)) == parsed
