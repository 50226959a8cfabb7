"""The VaR kernel as a tunable (spec §5): the four parameters, their constraints, mpps, a correctness check."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfcast.kernels.opencl import opencl_environment
from perfcast.kernels.varmc.model import Market, Portfolio, mpps, simulate_values
from perfcast.kernels.varmc.opencl import VWIDTHS, VarmcConfig, VarmcOpenCl
from perfcast.tune.space import SearchSpace

__all__ = ["VarmcTunable", "default_space"]

CHECKED_SIMULATIONS = 256  # the first simulations of a run are compared with the numpy reference


def default_space(quick: bool = False) -> dict[str, tuple[int, ...]]:
    """Return the parameter values searched: powers of two (a smaller space for --quick)."""
    if quick:
        return {"posbs": (64, 512), "simbs": (1, 4), "vwidth": (1, 4, 16), "wgsize": (1, 8)}
    return {"posbs": (32, 128, 512, 2048), "simbs": (1, 2, 4, 8), "vwidth": VWIDTHS, "wgsize": (1, 4, 16, 64)}


@dataclass
class VarmcTunable:
    """Monte Carlo VaR on one OpenCL device, tuned for `nsim` simulations of `portfolio`."""

    portfolio: Portfolio
    market: Market
    nsim: int
    parameters: dict[str, tuple[int, ...]] = field(default_factory=default_space)
    device: Any = None
    seed: int = 1
    name: str = "varmc"
    item_parameters: tuple[str, ...] = ("posbs", "simbs", "vwidth")
    group_parameter: str = "wgsize"

    @property
    def group_parameters(self) -> tuple[str, ...]:
        """Return the work-group's parameters (step 2 of the hierarchy): the work-items per work-group."""
        return (self.group_parameter,)

    def __post_init__(self) -> None:
        # Said before any measuring: a target that some configuration's work-groups cannot tile would stop a
        # hierarchical run at its last step, after all the others.
        largest = max(self.parameters["simbs"]) * max(self.parameters["vwidth"]) * max(self.parameters["wgsize"])
        if self.nsim < 1 or self.nsim % largest:
            raise ValueError(f"nsim {self.nsim}: a work-group of this space takes up to simbs*vwidth*wgsize = "
                             f"{largest} simulations; give a multiple of {largest}")
        self.kernel = VarmcOpenCl(self.portfolio, self.market, self.device)
        self.device = self.kernel.device
        self.space = SearchSpace(self.parameters, [self._fits_device])
        self._reference = simulate_values(self.portfolio, self.market, CHECKED_SIMULATIONS, self.seed)

    @staticmethod
    def _config(config: Mapping[str, int]) -> VarmcConfig:
        return VarmcConfig(config["posbs"], config["simbs"], config["vwidth"], config["wgsize"])

    def _fits_device(self, config: Mapping[str, int]) -> str | None:
        c = self._config(config)
        return self.kernel.invalid(c, c.sims_per_group)

    def target(self) -> dict[str, int]:
        """Return the target problem: simulations and positions."""
        return {"nsim": self.nsim, "npos": self.portfolio.size}

    def size_for(self, config: Mapping[str, int], groups: int) -> dict[str, int]:
        """Return the problem size `groups` work-groups of `config` cover."""
        return {"nsim": self._config(config).sims_per_group * groups, "npos": self.portfolio.size}

    def groups_for_target(self, config: Mapping[str, int]) -> int:
        """Return how many work-groups of `config` cover the target (0 if they cannot)."""
        per_group = self._config(config).sims_per_group
        return self.nsim // per_group if self.nsim % per_group == 0 else 0

    def invalid(self, config: Mapping[str, int], size: Mapping[str, int]) -> str | None:
        """Return why `config` cannot run at `size`, or None."""
        return self.kernel.invalid(self._config(config), size["nsim"])

    def run(self, config: Mapping[str, int], size: Mapping[str, int]) -> float:
        """Return one timed kernel run of `config` at `size`, in s."""
        return self.kernel.run(self._config(config), size["nsim"], self.seed, read=False)[1]

    def throughput(self, size: Mapping[str, int], seconds: float) -> float:
        """Return the throughput in mpps (million position-paths per second) of a run of `seconds` s."""
        return mpps(size["nsim"], size["npos"], seconds)

    def check(self, config: Mapping[str, int]) -> str | None:
        """Return why `config` computes a wrong result (against the numpy reference), or None."""
        c = self._config(config)
        nsim = -(-CHECKED_SIMULATIONS // c.sims_per_group) * c.sims_per_group
        values, _ = self.kernel.run(c, nsim, self.seed)
        assert values is not None
        error = np.max(np.abs(values[:CHECKED_SIMULATIONS] - self._reference) / np.abs(self._reference))
        return None if error < 1e-4 else f"values differ from the numpy reference by {error:.2e} (relative)"

    def environment(self) -> dict[str, Any]:
        """Return the platform, device, driver, compiler and host of the measurements."""
        return opencl_environment(self.device, "OpenCL C (runtime build), -cl-mad-enable")
