"""The algorithmic-species notation (spec §2.1): a small recursive-descent parser and its formatter.

    species   := ["unordered "] side ("->" | "→") side
    side      := access (("^" | "∧" | "&") access)*
    access    := size "|" pattern
    size      := dim ("x" dim)*
    dim       := integer | symbol                 symbol: an upper-case letter, then A-Z 0-9 _
    pattern   := "element" | "shared" | "full"
               | ("neighbourhood" | "neighborhood" | "neighb") "(" size ")"
               | ("tile" | "chunk") "(" size ")"

Synonyms are normalised (neighbourhood → neighb, chunk → tile, ∧ and & → ^,
→ → ->), so formatting gives one canonical spelling and parsing it back gives
an equal tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from perfcast.errors import InputError

__all__ = [
    "Access",
    "Pattern",
    "Species",
    "SpeciesBindingError",
    "SpeciesSyntaxError",
    "format_species",
    "parse_species",
]

Dim = int | str
PatternKind = Literal["element", "shared", "full", "neighb", "tile"]


_DIGITS = frozenset("0123456789")


class SpeciesSyntaxError(InputError):
    """A species string that does not follow the grammar; says where and what was expected."""

    def __init__(self, text: str, position: int, expected: str) -> None:
        self.text = text
        self.position = position
        self.expected = expected
        found = repr(text[position]) if position < len(text) else "the end"
        super().__init__(
            f"invalid species at position {position + 1}: expected {expected}, found {found}\n"
            f"  {text}\n  {' ' * position}^"
        )


class SpeciesBindingError(InputError):
    """A species whose symbolic sizes are unbound, or whose sizes disagree with their patterns."""


@dataclass(frozen=True)
class Pattern:
    """How one array is accessed per work unit: element, shared, full, neighb(size) or tile(size)."""

    kind: PatternKind
    size: tuple[Dim, ...] | None = None

    def __str__(self) -> str:
        if self.size is None:
            return self.kind
        return f"{self.kind}({_format_size(self.size)})"


@dataclass(frozen=True)
class Access:
    """One array of a species: its size and its access pattern."""

    size: tuple[Dim, ...]
    pattern: Pattern

    def __str__(self) -> str:
        return f"{_format_size(self.size)}|{self.pattern}"


@dataclass(frozen=True)
class Species:
    """An algorithmic species: input accesses -> output accesses, possibly unordered."""

    inputs: tuple[Access, ...]
    outputs: tuple[Access, ...]
    unordered: bool = False

    def __str__(self) -> str:
        return format_species(self)

    @property
    def symbols(self) -> frozenset[str]:
        """Return the symbolic sizes (A, B, K…) this species uses."""
        found: set[str] = set()
        for access in (*self.inputs, *self.outputs):
            for size in (access.size, access.pattern.size or ()):
                found.update(dim for dim in size if isinstance(dim, str))
        return frozenset(found)

    def bind(self, values: Mapping[str, int]) -> Species:
        """Return this species with every symbol replaced by its value from `values`."""
        missing = sorted(self.symbols - set(values))
        if missing:
            raise SpeciesBindingError(
                f"unbound size symbol(s) {', '.join(missing)} in {self}; bind them, e.g. {missing[0]}=1024"
            )
        for name, value in values.items():
            if not isinstance(value, int) or value < 1:
                raise SpeciesBindingError(f"{name}={value!r}: a size must be a positive integer")

        def size(dims: tuple[Dim, ...] | None) -> tuple[Dim, ...] | None:
            return None if dims is None else tuple(values[d] if isinstance(d, str) else d for d in dims)

        def access(a: Access) -> Access:
            return Access(size(a.size), Pattern(a.pattern.kind, size(a.pattern.size)))  # type: ignore[arg-type]

        return Species(tuple(map(access, self.inputs)), tuple(map(access, self.outputs)), self.unordered)


def _format_size(size: tuple[Dim, ...]) -> str:
    return "x".join(str(dim) for dim in size)


def format_species(species: Species) -> str:
    """Return the canonical text of `species` (ASCII spelling)."""
    prefix = "unordered " if species.unordered else ""
    inputs = " ^ ".join(str(a) for a in species.inputs)
    outputs = " ^ ".join(str(a) for a in species.outputs)
    return f"{prefix}{inputs} -> {outputs}"


_SIMPLE_PATTERNS = ("element", "shared", "full")
_SIZED_PATTERNS = {"neighbourhood": "neighb", "neighborhood": "neighb", "neighb": "neighb", "tile": "tile", "chunk": "tile"}
_JOINERS = ("^", "∧", "&")
_ARROWS = ("->", "→")


class _Parser:
    """Recursive descent over the raw text, so that errors point at a character position."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, expected: str) -> SpeciesSyntaxError:
        return SpeciesSyntaxError(self.text, self.pos, expected)

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def accept(self, *tokens: str) -> str | None:
        self.skip_space()
        for token in tokens:
            if self.text.startswith(token, self.pos):
                self.pos += len(token)
                return token
        return None

    def expect(self, token: str, what: str) -> None:
        if self.accept(token) is None:
            raise self.error(what)

    def word(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isalpha():
            self.pos += 1
        return self.text[start : self.pos]

    def species(self) -> Species:
        self.skip_space()
        unordered = False
        start = self.pos
        if self.word() == "unordered" and self.pos < len(self.text) and self.text[self.pos].isspace():
            unordered = True
        else:
            self.pos = start
        inputs = self.side()
        if self.accept(*_ARROWS) is None:
            raise self.error("'->' or another input joined by '^'")
        outputs = self.side()
        self.skip_space()
        if self.pos != len(self.text):
            raise self.error("the end of the species or another output joined by '^'")
        return Species(tuple(inputs), tuple(outputs), unordered)

    def side(self) -> list[Access]:
        accesses = [self.access()]
        while self.accept(*_JOINERS) is not None:
            accesses.append(self.access())
        return accesses

    def access(self) -> Access:
        size = self.size("an array size such as 1024x1024 or AxB")
        self.expect("|", "'|' between the size and the access pattern")
        return Access(size, self.pattern())

    def size(self, what: str) -> tuple[Dim, ...]:
        dims = [self.dim(what)]
        while True:
            save = self.pos
            self.skip_space()
            if self.pos < len(self.text) and self.text[self.pos] == "x":
                self.pos += 1
                dims.append(self.dim("a dimension (integer or upper-case symbol) after 'x'"))
            else:
                self.pos = save
                return tuple(dims)

    def dim(self, what: str) -> Dim:
        self.skip_space()
        start = self.pos
        text = self.text
        if self.pos < len(text) and text[self.pos] in _DIGITS:
            while self.pos < len(text) and text[self.pos] in _DIGITS:  # not isdigit(): '²' is a digit to it
                self.pos += 1
            if self.pos - start > 30:  # int() refuses 4300 digits; sizes past 2^63 are refused as overflows below
                self.pos = start
                raise self.error("a size of at most 30 digits")
            value = int(text[start : self.pos])
            if value < 1:
                self.pos = start
                raise self.error("a positive size")
            return value
        if self.pos < len(text) and "A" <= text[self.pos] <= "Z":
            self.pos += 1
            while self.pos < len(text) and (text[self.pos].isupper() or text[self.pos].isdigit() or text[self.pos] == "_"):
                self.pos += 1
            return text[start : self.pos]
        raise self.error(what)

    def pattern(self) -> Pattern:
        self.skip_space()
        start = self.pos
        name = self.word()
        if name in _SIMPLE_PATTERNS:
            return Pattern(name)  # type: ignore[arg-type]
        if name in _SIZED_PATTERNS:
            self.expect("(", f"'(' after {name!r}")
            size = self.size(f"the {name} size, e.g. 3x3")
            self.expect(")", "'x' or ')' to close the pattern size")
            return Pattern(_SIZED_PATTERNS[name], size)  # type: ignore[arg-type]
        self.pos = start
        raise self.error("an access pattern: element, shared, full, neighb(NxM) or tile(UxV)")


def parse_species(text: str) -> Species:
    """Return the Species tree of `text`, or raise SpeciesSyntaxError pointing at the offending position."""
    if not isinstance(text, str):
        raise TypeError(f"a species is a string, not {type(text).__name__}")
    return _Parser(text).species()
