"""Search spaces: named parameters with their values, and constraints that rule configurations out."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from perfcast.errors import InputError

__all__ = ["Config", "SearchSpace"]

Config = dict[str, int]
Constraint = Callable[[Mapping[str, int]], "str | None"]  # returns why a configuration is invalid


@dataclass
class SearchSpace:
    """Parameters (name -> candidate values, in order) and constraints over whole configurations."""

    parameters: dict[str, tuple[int, ...]]
    constraints: Sequence[Constraint] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not self.parameters:
            raise InputError("a search space needs at least one parameter")
        for name, values in self.parameters.items():
            if not values:
                raise InputError(f"parameter {name!r} has no values")
            if len(set(values)) != len(values):
                raise InputError(f"parameter {name!r} lists a value twice")

    def invalid(self, config: Mapping[str, int]) -> str | None:
        """Return why `config` is not in the space, or None."""
        for name in config:
            if name not in self.parameters:
                return f"unknown parameter {name!r}"
        for name, values in self.parameters.items():
            if name not in config:
                return f"missing parameter {name!r}"
            if config[name] not in values:
                return f"{name} = {config[name]!r} is not one of its values {list(values)}"
        for constraint in self.constraints:
            reason = constraint(config)
            if reason:
                return reason
        return None

    def __iter__(self) -> Iterator[Config]:
        names = list(self.parameters)
        for values in itertools.product(*self.parameters.values()):
            config = dict(zip(names, values))
            if self.invalid(config) is None:
                yield config

    def size(self) -> int:
        """Return the number of valid configurations."""
        return sum(1 for _ in self)
