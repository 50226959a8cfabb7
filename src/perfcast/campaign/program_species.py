"""The species a user gives a program's kernel, so that the boat hull can be scored on programs too.

A program's kernels are known by their profiles, which say what each launch counted but not which algorithmic
species it is; `perfcast classify` reads C loop nests, not OpenCL kernels. The user names it:
`--species 'KERNEL=SPECIES[; f=F]'`, e.g. `--species 'hotspot=XxY|neighb(3x3) -> XxY|element; f=15'`. KERNEL
may also name one group of a kernel as the report lists it (`sgemmNN[64x64/16x4]`), whose species then wins
over the kernel's: a kernel whose problem size is not its NDRange needs one per size.

The species' size symbols are bound per group of launches (one kernel at one NDRange): `N` to its work-items,
`X`, `Y`, `Z` to its global size in each dimension. `f` (operations per element) defaults to the profile's
FLOP per work-item in its dominant precision, and the element size to that precision's (4 B for fp32 or
integer work, 8 B for fp64).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perfcast.errors import InputError
from perfcast.species.grammar import parse_species

__all__ = ["SIZE_SYMBOLS", "KernelSpecies", "group_sizes", "parse_program_species"]

SIZE_SYMBOLS = ("N", "X", "Y", "Z")  # bound per group: work-items, then the global size per dimension


@dataclass(frozen=True)
class KernelSpecies:
    """A program kernel's species as the user gave it, and its f (ops per element; None: from the profile)."""

    species: str
    f: float | None = None

    def text(self) -> str:
        """Return the declaration as written on the command line, after 'KERNEL='."""
        return self.species if self.f is None else f"{self.species}; f={self.f:g}"


def _parse_one(item: str) -> tuple[str, KernelSpecies]:
    """Return (kernel, species) from one 'KERNEL=SPECIES[; f=F]' declaration."""
    name, sep, rest = item.partition("=")
    name = name.strip()
    if not sep or not name or not rest.strip():
        raise InputError(f"--species {item!r}: write KERNEL=SPECIES, e.g. 'hotspot=XxY|neighb(3x3) -> XxY|element; "
                         "f=15' (sizes N, X, Y, Z are bound per NDRange)")
    text, _, options = rest.partition(";")
    f = None
    if options.strip():
        key, sep, value = options.partition("=")
        try:
            f = float(value)
        except ValueError:
            f = math.nan
        if key.strip() != "f" or not sep or not math.isfinite(f) or f < 0:
            raise InputError(f"--species {item!r}: after ';' give f=F, the operations per element (a number >= 0)")
    species = parse_species(text.strip())  # a malformed species is an InputError naming what is wrong
    unknown = sorted(species.symbols - set(SIZE_SYMBOLS))
    if unknown:
        raise InputError(f"--species {item!r}: size symbol(s) {', '.join(unknown)} cannot be bound; a program's "
                         f"sizes are {', '.join(SIZE_SYMBOLS)} (work-items, global size per dimension)")
    return name, KernelSpecies(text.strip(), f)


def parse_program_species(items: Sequence[str] | Mapping[str, Any]) -> dict[str, KernelSpecies]:
    """Return the species of each named kernel, from command-line declarations or a manifest's 'species'."""
    if isinstance(items, Mapping):
        found = {}
        for name, text in items.items():
            if not isinstance(text, str):
                raise InputError(f"species of {name!r}: a text 'SPECIES[; f=F]', not {text!r}")
            found[name] = _parse_one(f"{name}={text}")[1]
        return found
    declared: dict[str, KernelSpecies] = {}
    for item in items:
        name, species = _parse_one(item)
        if name in declared and declared[name] != species:
            raise InputError(f"--species: kernel {name!r} is given two species ({declared[name].text()!r} and "
                             f"{species.text()!r})")
        declared[name] = species
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
