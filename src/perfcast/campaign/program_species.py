"""The species a user gives a program's kernel, so that the boat hull can be scored on programs too.

A program's kernels are known by their profiles, which say what each launch counted but not which algorithmic
species it is; `perfcast classify` reads C loop nests, not OpenCL kernels. The user names it:
`--species 'KERNEL=SPECIES[; f=F][; s=B]'`, e.g. `--species 'hotspot=YxX|neighb(3x3) -> YxX|element; f=15'`. KERNEL
may also name one group of a kernel as the report lists it (`sgemmNN[64x64/16x4]`), whose species then wins
over the kernel's: a kernel whose problem size is not its NDRange needs one per size.

The species' size symbols are bound per group of launches (one kernel at one NDRange): `N` to its work-items,
`X`, `Y`, `Z` to its global size in dimensions 0, 1, 2. Dimension 0 varies fastest (a row-major array's
columns) and a species lists sizes slowest first, so a row-major array of rows × columns launched one
work-item per element is `YxX`. `f` (operations per application of the element operator) defaults to the
profile's FLOP in its dominant precision over the species' w·m applications, and the element size `s` to that
precision's (4 B for fp32 or integer work, 8 B for fp64): give it where the arrays hold other elements (1 B
for a histogram's input bytes, 16 B for a `float4`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perfcast.errors import InputError
from perfcast.species.grammar import parse_species

__all__ = ["SIZE_SYMBOLS", "KernelSpecies", "bind_group", "group_sizes", "parse_program_species", "work_groups"]

SIZE_SYMBOLS = ("N", "X", "Y", "Z")  # bound per group: work-items, then the global size per dimension


@dataclass(frozen=True)
class KernelSpecies:
    """A program kernel's species as the user gave it, its f (ops per element) and element size (B), None: profile's."""

    species: str
    f: float | None = None
    element_bytes: float | None = None

    def text(self) -> str:
        """Return the declaration as written on the command line, after 'KERNEL=' (numbers to their last digit)."""
        options = [f"f={self.f!r}"] * (self.f is not None) + [f"s={self.element_bytes!r}"] * (
            self.element_bytes is not None)
        return "; ".join([self.species, *options])

    def same_as(self, other: KernelSpecies) -> bool:
        """Return whether two declarations say the same (spacing and chunk/tile spelling aside)."""
        return (self.f, self.element_bytes) == (other.f, other.element_bytes) and \
            str(parse_species(self.species)) == str(parse_species(other.species))


def _parse_one(item: str, origin: str) -> tuple[str, KernelSpecies]:
    """Return (kernel, species) from one 'KERNEL=SPECIES[; f=F][; s=B]' declaration; errors name `origin`."""
    name, sep, rest = item.partition("=")
    name = name.strip()
    if not sep or not name or not rest.strip():
        raise InputError(f"{origin} {item!r}: write KERNEL=SPECIES, e.g. 'hotspot=YxX|neighb(3x3) -> YxX|element; "
                         "f=15' (sizes N, X, Y, Z are bound per NDRange)")
    text, *options = rest.split(";")
    given: dict[str, float] = {}
    for option in (o for o in options if o.strip()):
        key, sep, value = (part.strip() for part in option.partition("="))
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if key not in ("f", "s") or not sep or key in given or not math.isfinite(number) or number < 0 \
                or (key == "s" and number == 0):
            raise InputError(f"{origin} {item!r}: after the species give f=F (operations per element, >= 0) and "
                             "s=B (bytes per element, > 0), each at most once, separated by ';'")
        given[key] = number
    try:
        species = parse_species(text.strip())
    except InputError as error:  # a malformed species: the grammar's own message, under where it came from
        raise InputError(f"{origin} {item!r}: {error}") from None
    unknown = sorted(species.symbols - set(SIZE_SYMBOLS))
    if unknown:
        raise InputError(f"{origin} {item!r}: size symbol(s) {', '.join(unknown)} cannot be bound; a program's "
                         f"sizes are {', '.join(SIZE_SYMBOLS)} (work-items, global size per dimension)")
    return name, KernelSpecies(text.strip(), given.get("f"), given.get("s"))


def parse_program_species(items: Sequence[str] | Mapping[str, Any], origin: str = "--species"
                          ) -> dict[str, KernelSpecies]:
    """Return the species of each named kernel, from command-line declarations or a manifest's 'species'.

    `origin` names where they come from in error messages (the option, or an archive's manifest).
    """
    if isinstance(items, Mapping):
        found = {}
        for name, text in items.items():
            if not isinstance(text, str):
                raise InputError(f"{origin}: the species of {name!r} must be a text 'SPECIES[; f=F][; s=B]', not "
                                 f"{text!r}")
            found[name] = _parse_one(f"{name}={text}", origin)[1]
        return found
    declared: dict[str, KernelSpecies] = {}
    for item in items:
        name, species = _parse_one(item, origin)
        if name in declared and not declared[name].same_as(species):
            raise InputError(f"{origin}: kernel {name!r} is given two species ({declared[name].text()!r} and "
                             f"{species.text()!r})")
        declared.setdefault(name, species)
    return declared


def group_sizes(record: Mapping[str, Any]) -> dict[str, int]:
    """Return the size symbols of one group of launches: N (work-items), X, Y, Z (its global size)."""
    global_size = [int(v) for v in record.get("global_size") or []]
    work_items = int(record.get("work_items") or (math.prod(global_size) if global_size else 0))
    if work_items < 1:
        raise InputError("the group records no work-items, so the species' sizes cannot be bound")
    sizes = {"N": work_items}
    sizes.update({symbol: value for symbol, value in zip(SIZE_SYMBOLS[1:], global_size)})
    return sizes


def work_groups(record: Mapping[str, Any]) -> int | None:
    """Return the work-groups of one group of launches (global / local per dimension), None without a local size."""
    global_size = [int(v) for v in record.get("global_size") or []]
    local_size = [int(v) for v in record.get("local_size") or []]
    if not global_size or len(local_size) != len(global_size) or min(local_size) < 1:
        return None  # NULL local size: the platform chose it, and the log does not say what it chose
    return math.prod(-(-whole // part) for whole, part in zip(global_size, local_size))


def bind_group(species: KernelSpecies, record: Mapping[str, Any]) -> dict[str, int]:
    """Return the sizes to bind `species` with for one group; refuse a symbol the group's NDRange lacks."""
    sizes = group_sizes(record)
    missing = sorted(parse_species(species.species).symbols - set(sizes))
    if missing:
        dimensions = len(sizes) - 1
        raise InputError(f"the species uses {', '.join(missing)}, but this group's NDRange has {dimensions} "
                         f"dimension{'s' if dimensions != 1 else ''} ({', '.join(sorted(sizes))} are bound)")
    return sizes
