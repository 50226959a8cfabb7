"""Algorithmic species: the grammar, and the class variables the boat hull model needs."""

from perfcast.species.classes import HaloTile, class_variables, halo_accesses
from perfcast.species.grammar import (
    Access,
    Pattern,
    Species,
    SpeciesBindingError,
    SpeciesSyntaxError,
    format_species,
    parse_species,
)

__all__ = [
    "Access",
    "HaloTile",
    "Pattern",
    "Species",
    "SpeciesBindingError",
    "SpeciesSyntaxError",
    "class_variables",
    "format_species",
    "halo_accesses",
    "parse_species",
]
