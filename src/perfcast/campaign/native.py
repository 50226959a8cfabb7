"""The campaign on this machine's cores: the suite's C (suite.c, OpenMP) compiled with gcc, timed in C.

The same algorithms as the OpenCL and CUDA suites, one call a launch. There is no black-box profiler for the
compiled C: the campaign profiles each kernel's OpenCL twin under Oclgrind (same algorithm, arguments and work
per work-item) and says so in the archive.
"""

from __future__ import annotations

import ctypes
import os
import platform
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfcast.errors import BackendUnavailable, InputError
from perfcast.kernels.campaign import C_SOURCE, TILE, CampaignKernel
from perfcast.kernels.native import DEFAULT_FLAGS, NativeBuildError, NativeLibrary, build_library

__all__ = ["NativeTimer", "openmp_threads"]

# OpenCL and CUDA have no errno: without this flag C's sqrtf must set it, which keeps gcc from vectorising any
# loop holding one (the n-body kernel ran scalar). Results are unchanged; exp, log and sin stay libm calls.
C_FLAGS = ("-fno-math-errno",)
# numpy scalar types of the suite's arguments -> the ctypes they are passed as.
_SCALARS: dict[type, Any] = {np.int32: ctypes.c_int32, np.float32: ctypes.c_float, np.float64: ctypes.c_double}


def c_arguments(values: list[Any]) -> list[Any]:
    """Return launch arguments as ctypes: arrays as pointers to their data, numpy scalars as their C type."""
    converted = []
    for value in values:
        if isinstance(value, np.ndarray):
            if not value.flags.c_contiguous:
                raise InputError("a campaign array must be contiguous to be passed to C")
            converted.append(ctypes.c_void_p(value.ctypes.data))
        elif type(value) in _SCALARS:
            converted.append(_SCALARS[type(value)](value))
        else:  # a Python number would go in as the wrong width: the suite's scalars are numpy's
            raise InputError(f"campaign argument {value!r} is not a numpy int32, float32 or float64")
    return converted


@dataclass
class NativeTimer:
    """Times the suite's C kernels on every OpenMP thread of this machine."""

    library: NativeLibrary
    # gcc's vectorisation report of the timed build and the parsed suite.c, made once: the vectorisation record
    # and the in-core reading both read it.
    _report: tuple[str, Any] | None = field(default=None, init=False, repr=False)

    @classmethod
    def open(cls, selector: str | None) -> NativeTimer:
        """Return the timer with suite.c compiled (OMP_NUM_THREADS picks the threads; there is no --device)."""
        if selector is not None:
            raise InputError(f"--device {selector!r}: the cpu backend runs on this machine's cores; set "
                             "OMP_NUM_THREADS to use fewer of them")
        try:
            library = build_library(C_SOURCE, (*DEFAULT_FLAGS, *C_FLAGS, f"-DTILE={TILE}"))
        except NativeBuildError as error:
            raise BackendUnavailable(f"the campaign suite did not compile for this CPU: {error}") from None
        return cls(library)

    def supports(self, kernel: CampaignKernel) -> str | None:
        """Return why `kernel` cannot run here, or None (C has every precision)."""
        return None

    def time(self, kernel: CampaignKernel, n: int, repetitions: int) -> dict[str, Any]:
        """Return the kernel's checked result and the times (s) of `repetitions` calls after a warm-up."""
        from perfcast.bench.cpu import on_page

        # On pages, as OpenCL's buffers are: numpy's own placement changes a kernel's cache lines run to run.
        arrays = {name: on_page(array) for name, array in kernel.arrays(n, np.random.default_rng(0)).items()}
        inputs = {name: array.copy() for name, array in arrays.items()}
        function = getattr(self.library.handle, kernel.name)
        function.restype = ctypes.c_double
        arguments = c_arguments(kernel.ordered_arguments(n, arrays))

        def once() -> float:
            return float(function(*arguments))

        once()
        problem = kernel.check(n, inputs, {name: array.copy() for name, array in arrays.items()})
        once()  # warm-up
        times = [once() for _ in range(repetitions)]
        return {"times_s": times, "check": problem, "work_items": kernel.launch(n).items}

    def _flags(self) -> tuple[tuple[str, ...], str]:
        """Return the timed build's flags (without the compiler, source and output) and its compiler."""
        return tuple(self.library.command[1:-3]), self.library.command[0]

    def _vector_report(self) -> tuple[str, Any]:
        """Return gcc's vectorisation report of the timed build and suite.c parsed, made on the first call only."""
        if self._report is None:
            from perfcast.campaign.vector_evidence import run_gcc_report
            from perfcast.species.c_source import parse_c_file

            flags, compiler = self._flags()
            self._report = (run_gcc_report(C_SOURCE, flags, compiler), parse_c_file(C_SOURCE, {"TILE": TILE}))
        return self._report

    def vectorisation(self, kernels: list[CampaignKernel], sizes: dict[str, int]) -> dict[str, Any] | None:
        """Return the SIMD lanes gcc gave each kernel's loops (its own report) and the OpenMP threads they ran on."""
        from perfcast.campaign.vector_evidence import gcc_item_vector_bytes, gcc_vector_bytes

        report, source = self._vector_report()
        widest, items = gcc_vector_bytes(report, source), gcc_item_vector_bytes(report, source)
        lanes = {k.name: max(1, widest.get(k.name, 0) // k.element_bytes) for k in kernels if k.name in widest}
        # The hull's no-SIMD floor takes any loop's vector; the traffic's order only a loop over work-items'.
        item_lanes = {k.name: max(1, items.get(k.name, 0) // k.element_bytes) for k in kernels if k.name in items}
        return {"tool": f"{self.library.compiler} -fopt-info-vec-optimized", "lanes": lanes, "item_lanes": item_lanes,
                "threads": openmp_threads(), "raw": report}

    def incore(self, kernels: list[CampaignKernel], sizes: dict[str, int]) -> dict[str, Any] | None:
        """Return the in-core record of the code gcc compiled for each kernel (§3.5, C kernels: gcov's counts)."""
        from perfcast.campaign.incore_evidence import run_gcc_incore
        from perfcast.campaign.vector_evidence import gcc_vector_bytes

        flags, compiler = self._flags()
        widest = gcc_vector_bytes(*self._vector_report())
        named = {k.name: sizes[k.name] for k in kernels}
        items = {k.name: k.launch(sizes[k.name]).items for k in kernels}
        return run_gcc_incore(C_SOURCE, flags, compiler, named, items, widest)

    def environment(self) -> dict[str, Any]:
        """Return the CPU, the threads and the compiler the times were taken with."""
        threads = openmp_threads()
        return {"device": f"{_cpu_name()} ({threads} OpenMP threads)", "platform": f"C with OpenMP, {platform.system()}",
                "compiler": f"{self.library.compiler}: {' '.join(self.library.command[1:-3])}"}


def openmp_threads() -> int:
    """Return the OpenMP threads the suite runs on: OMP_NUM_THREADS, else the CPUs this process may use."""
    text = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    return int(text) if text.isdigit() and int(text) > 0 else len(os.sched_getaffinity(0))


def _cpu_name() -> str:
    """Return the CPU's model name from /proc/cpuinfo, or what Python knows of it."""
    from perfcast.bench.detect import parse_cpuinfo

    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            return parse_cpuinfo(handle.read()).model_name
    except (OSError, ValueError, KeyError):
        return platform.processor() or platform.machine()
