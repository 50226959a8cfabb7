"""Running the VaR kernel through OpenCL: one build per parameter set, timed with profiling events."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from perfcast.kernels.opencl import build_program, profiling_queue
from perfcast.kernels.varmc.model import Market, Portfolio

__all__ = ["SOURCE", "VarmcConfig", "VarmcOpenCl"]

SOURCE = Path(__file__).with_name("varmc.cl")
VWIDTHS = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class VarmcConfig:
    """The four tuning parameters of the kernel (spec §5.1)."""

    posbs: int
    simbs: int
    vwidth: int
    wgsize: int

    @property
    def sims_per_group(self) -> int:
        """Return the simulations one work-group computes: simbs x vwidth x wgsize."""
        return self.simbs * self.vwidth * self.wgsize

    def options(self) -> list[str]:
        """Return the OpenCL build options (-D macros) of this configuration."""
        return [f"-DPOSBS={self.posbs}", f"-DSIMBS={self.simbs}", f"-DVWIDTH={self.vwidth}", f"-DWGSIZE={self.wgsize}"]


@dataclass
class VarmcOpenCl:
    """The kernel on one OpenCL device, with the portfolio and market already on it."""

    portfolio: Portfolio
    market: Market
    device: Any = None
    _programs: dict[tuple[str, ...], Any] = field(default_factory=dict, repr=False)
    _outputs: dict[int, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.cl, self.device, self.context, self.queue = profiling_queue(self.device)
        cl = self.cl
        self.source = SOURCE.read_text()
        self.source_hash = hashlib.sha256(self.source.encode()).hexdigest()
        flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
        self.types = cl.Buffer(self.context, flags, hostbuf=np.ascontiguousarray(self.portfolio.types, np.int32))
        self.amounts = cl.Buffer(self.context, flags, hostbuf=np.ascontiguousarray(self.portfolio.amounts, np.float32))
        self.maturities = cl.Buffer(self.context, flags, hostbuf=np.ascontiguousarray(self.portfolio.maturities, np.float32))
        self.packed = cl.Buffer(self.context, flags, hostbuf=self.market.packed())

    def invalid(self, config: VarmcConfig, nsim: int) -> str | None:
        """Return why `config` cannot run `nsim` simulations on this device, or None."""
        if config.vwidth not in VWIDTHS:
            return f"vwidth {config.vwidth} is not one of {VWIDTHS}"
        if min(config.posbs, config.simbs, config.wgsize) < 1:
            return "every parameter must be positive"
        if config.wgsize > self.device.max_work_group_size:
            return f"wgsize {config.wgsize} exceeds the device's {self.device.max_work_group_size}"
        if 12 * config.posbs > self.device.local_mem_size:
            return (f"posbs {config.posbs} needs {12 * config.posbs} B of local memory; "
                    f"the device has {self.device.local_mem_size}")
        if nsim % config.sims_per_group:
            return f"nsim {nsim} is not a multiple of simbs*vwidth*wgsize = {config.sims_per_group}"
        return None

    def program(self, config: VarmcConfig) -> Any:
        """Return the kernel built for `config`, from the cache of builds per (device, source, options)."""
        options = tuple(config.options()) + ("-cl-mad-enable",)
        key = (self.device.name, self.source_hash, *options)
        if key not in self._programs:
            program = build_program(self.cl, self.context, self.source, options)
            self._programs[key] = self.cl.Kernel(program, "varmc")
        return self._programs[key]

    def run(
        self, config: VarmcConfig, nsim: int, seed: int = 1, *, read: bool = True
    ) -> tuple[NDArray[np.float32] | None, float]:
        """Return the simulated portfolio values (None unless `read`) and the kernel time in s."""
        reason = self.invalid(config, nsim)
        if reason:
            raise ValueError(reason)
        kernel = self.program(config)
        if nsim not in self._outputs:
            self._outputs[nsim] = self.cl.Buffer(self.context, self.cl.mem_flags.WRITE_ONLY, size=4 * nsim)
        values = self._outputs[nsim]
        kernel.set_args(self.types, self.amounts, self.maturities, np.int32(self.portfolio.size), self.packed,
                        np.uint64(seed), values)
        event = self.cl.enqueue_nd_range_kernel(self.queue, kernel, (nsim // (config.simbs * config.vwidth),),
                                                (config.wgsize,))
        event.wait()
        seconds = (event.profile.end - event.profile.start) * 1e-9
        if not read:  # timing only: the tuner does not copy results back after every run
            return None, seconds
        out = np.empty(nsim, np.float32)
        self.cl.enqueue_copy(self.queue, out, values).wait()
        return out, seconds
