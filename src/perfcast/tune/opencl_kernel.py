"""Your own OpenCL kernel as a Tunable: source, parameters, constraints, problem size and a correctness check.

Parameters reach the kernel as build-time macros (-DNAME=value). The kernel
is rebuilt once per configuration (builds are cached per device, source and
options) and timed with OpenCL profiling events.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfcast.kernels.opencl import build_program, opencl_environment, profiling_queue
from perfcast.tune.space import Constraint, SearchSpace

__all__ = ["OpenClTunable"]

Size = Mapping[str, int]


@dataclass
class OpenClTunable:
    """A user's OpenCL kernel, tunable by every strategy of perfcast.tune.strategies.

    `arguments(context, size)` returns the kernel arguments (buffers, numpy
    scalars) for a problem size; `ndrange(config, size)` the global and local
    sizes; `units_per_group(config)` how many problem units one work-group
    handles (the hierarchical method grows the problem with the groups);
    `work(size)` the units of work that throughput counts. `reference(size)`
    gives the expected content of argument `output` for `check_size`.
    """

    name: str
    source: str
    kernel_name: str
    parameters: dict[str, tuple[int, ...]]
    problem: dict[str, int]
    size_key: str
    item_parameters: Sequence[str]
    group_parameter: str
    arguments: Callable[[Any, Size], list[Any]]
    ndrange: Callable[[Mapping[str, int], Size], tuple[int, int]]
    units_per_group: Callable[[Mapping[str, int]], int]
    work: Callable[[Size], float]
    reference: Callable[[Size], np.ndarray] | None = None
    output: int = 0
    check_size: dict[str, int] | None = None
    constraints: Sequence[Constraint] = ()
    device: Any = None
    rtol: float = 1e-5
    _builds: dict[tuple[str, ...], Any] = field(default_factory=dict, repr=False)
    _arguments: dict[str, list[Any]] = field(default_factory=dict, repr=False)

    @property
    def group_parameters(self) -> tuple[str, ...]:
        """Return the work-group's parameters (step 2 of the hierarchy): the work-items per work-group."""
        return (self.group_parameter,)

    def __post_init__(self) -> None:
        self.cl, self.device, self.context, self.queue = profiling_queue(self.device)
        self._source_hash = hashlib.sha256(self.source.encode()).hexdigest()
        group_limit = self.device.max_work_group_size
        def fits(c: Mapping[str, int]) -> str | None:
            too_big = c[self.group_parameter] > group_limit
            return f"{self.group_parameter}={c[self.group_parameter]} exceeds the device's {group_limit}" if too_big else None

        self.space = SearchSpace(self.parameters, [fits, *self.constraints])

    def target(self) -> dict[str, int]:
        """Return the target problem size."""
        return dict(self.problem)

    def size_for(self, config: Mapping[str, int], groups: int) -> dict[str, int]:
        """Return the problem size `groups` work-groups of `config` cover."""
        return {**self.problem, self.size_key: self.units_per_group(config) * groups}

    def groups_for_target(self, config: Mapping[str, int]) -> int:
        """Return how many work-groups of `config` cover the target (0 if they cannot)."""
        per_group = self.units_per_group(config)
        total = self.problem[self.size_key]
        return total // per_group if per_group and total % per_group == 0 else 0

    def invalid(self, config: Mapping[str, int], size: Mapping[str, int]) -> str | None:
        """Return why `config` cannot run at `size`, or None."""
        per_group = self.units_per_group(config)
        if size[self.size_key] % per_group:
            return f"{self.size_key}={size[self.size_key]} is not a multiple of {per_group}"
        return None

    def _kernel(self, config: Mapping[str, int]) -> Any:
        options = tuple(f"-D{name.upper()}={value}" for name, value in sorted(config.items()))
        key = (self.device.name, self._source_hash, *options)
        if key not in self._builds:
            program = build_program(self.cl, self.context, self.source, options)
            self._builds[key] = self.cl.Kernel(program, self.kernel_name)
        return self._builds[key]

    def _args(self, size: Mapping[str, int]) -> list[Any]:
        key = str(sorted(size.items()))
        if key not in self._arguments:
            self._arguments[key] = self.arguments(self.context, size)
        return self._arguments[key]

    def _launch(self, config: Mapping[str, int], size: Mapping[str, int]) -> float:
        kernel = self._kernel(config)
        kernel.set_args(*self._args(size))
        global_size, local_size = self.ndrange(config, size)
        event = self.cl.enqueue_nd_range_kernel(self.queue, kernel, (global_size,), (local_size,))
        event.wait()
        return (event.profile.end - event.profile.start) * 1e-9

    def run(self, config: Mapping[str, int], size: Mapping[str, int]) -> float:
        """Return one timed run of `config` at `size`, in s."""
        return self._launch(config, size)

    def throughput(self, size: Mapping[str, int], seconds: float) -> float:
        """Return the throughput of a run of `seconds` s at `size` (higher is better)."""
        return self.work(size) / seconds

    def check(self, config: Mapping[str, int]) -> str | None:
        """Return why `config` computes a wrong result, or None."""
        if self.reference is None:
            return None
        size = dict(self.check_size or self.problem)
        per_group = self.units_per_group(config)
        size[self.size_key] = -(-size[self.size_key] // per_group) * per_group
        self._launch(config, size)
        target = self._args(size)[self.output]
        expected = self.reference(size)
        got = np.empty_like(expected)
        self.cl.enqueue_copy(self.queue, got, target).wait()
        if not np.allclose(got, expected, rtol=self.rtol):
            return f"argument {self.output} differs from the reference (max abs error {np.max(np.abs(got - expected)):.3g})"
        return None

    def environment(self) -> dict[str, Any]:
        """Return the platform, device, driver, compiler and host of the measurements."""
        return opencl_environment(self.device, "OpenCL C (runtime build)")
