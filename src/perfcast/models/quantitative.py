"""The quantitative GPU roofline with black-box profiling (Konstantinidis & Cotronis 2017): spec §3.

Pure functions. A kernel is described by nine profiler counts (`KernelCounts`,
spec symbols M_*), a device by six micro-benchmarked rates (`DeviceRates`,
T_* and B_mem). `kernel_parameters` derives K_type, W_comp, W_traf, E_mix
and the instruction densities; `predict` adds the device and returns every
intermediate of the bound, so that a prediction can be explained. Units: op,
instructions, B, op/s, instructions/s, B/s, s.

No NaN comes out: a kernel without DRAM traffic is compute bound and one
without compute work is memory bound (both stated in `reason`); counts that
make D_other negative, no instructions at all, or neither work nor traffic
raise ValueError naming the counts.

perfcast's addition for CPUs (docs/models.md, §3.1): a *latency floor*. The
§3 bound prices every load at a throughput; a load no prefetcher foresees (a
gather, a column walk) waits for its line instead. Given the scattered loads
each level served (the traffic simulation's count) and the device's measured
rate of random loads found in that level, the time cannot be below
Σ_l loads_l / rate_l; where that floor is above the §3 time, it is the
prediction, bound "latency". A level's rate is read at the size of what its
loads gather from where the device measured the level over several working
sets (`random_rate_at`), and its loads that walk one L1 set take the device's
set-walk rate of the level.

Integer divisions (§3.2): §3 counts one as any integer instruction, while a
CPU's divider takes several cycles for each and no vector unit has one. A
division that finds a work-item's index holds back every load and operation
that uses the index, so its time adds to the rest: given the kernel's
divisions and the device's measured rate of them, the time is the other bounds'
plus divisions / rate, bound "division" where that part is the larger.

An issue floor for code left scalar (§3.3): §3's rates are SIMD peaks, reached
only by code whose compiler spread work-items (or a loop) over vector lanes.
Where the compiler's own report says a kernel's loops stayed scalar, every one
of its instructions passes through the core's issue ports one lane at a time:
the time cannot be below instructions / the device's measured rate of scalar
instructions, bound "issue" where that floor decides.

Atomics (§3.4): a CPU runs an atomic read-modify-write as a locked
instruction, which waits for the core's earlier stores and holds back its later
loads: its time adds, last (to the issue floor too), atomics / the device's
measured rate of them, bound "atomic" where that part is the larger.

First touches (§3.7): an operating system maps a page of a buffer no one has
written before on its first access (a fault: a fresh frame, zeroed), and the
access waits for it. A launch that touches such pages pays them once, beside
everything else it does: pages / the device's measured rate of first touches,
added last, bound "first-touch" where that part is the larger.

Launches (§3.8): the runtime spends time of its own on each launch and on
starting each work-group on a core, however little the work-items do (PoCL on
a CPU: about a microsecond a launch and 9 ns a work-group on two cores). Both
are measured with an empty kernel: 1 / the launches' rate + the launch's
work-groups past the first / the work-groups' rate, added last, bound "launch"
where that part is the larger.

T_ldst on a CPU (§3.6): a GPU's load/store unit serves global and shared
accesses alike, but a CPU's OpenCL runtime keeps local memory in ordinary
memory, reached through the barrier regions it compiles lane by lane, while a
global access rides the vector the compiler gave the kernel. `cpu_ldst_rate`
prices each at its own rate and returns the one T_ldst that costs the kernel's
accesses the same time. An elementary-function call in a kernel the compiler
vectorised runs as a vector library routine for `lanes` work-items at once:
`vector_call_cost` shares the measured scalar call's instructions among them.

Barriers on a CPU (§3.9): the runtime runs each region between barriers as a
loop over the work-items, and saves and restores each work-item's live values
at each barrier. Local accesses take the measured rate of independent ones (the
shared level's figure is one chain's), and each crossing costs 1 / the
crossings' rate plus its further live values / their rate, added last, bound
"barrier" where that part is the larger.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from perfcast.models.numbers import non_negative, positive

__all__ = [
    "ELEMENTARY_COST",
    "SECTOR_BYTES",
    "DeviceRates",
    "AtomicCost",
    "BarrierCost",
    "CountedCost",
    "DivisionCost",
    "InCoreFloor",
    "IssueFloor",
    "KernelCounts",
    "KernelParameters",
    "LatencyFloor",
    "LaunchCost",
    "MaskedAccessFloor",
    "QuantitativePrediction",
    "atomic_cost",
    "barrier_cost",
    "core_time",
    "first_touch_cost",
    "cpu_ldst_rate",
    "division_cost",
    "incore_floor",
    "issue_floor",
    "kernel_parameters",
    "latency_floor",
    "launch_cost",
    "masked_access_floor",
    "masked_move_costs",
    "predict",
    "predict_counts",
    "vector_call_cost",
]

SECTOR_BYTES = 32  # one DRAM transaction / sector, in B
# Instructions a counting profiler (Oclgrind) gives one elementary-function call (exp, log, sin, ...), the value
# `perfcast classify` uses too; a device's measured rate of such calls replaces it where the device has one.
ELEMENTARY_COST = 8
KernelType = Literal["fp32", "fp64", "int"]
Bound = Literal["compute", "memory", "latency", "issue", "in-core", "masked", "division", "atomic", "first-touch",
                "launch", "barrier"]


@dataclass(frozen=True)
class KernelCounts:
    """The profiler counts of one kernel (all launches summed), in the spec's symbols.

    fma32/fma64: FMA instructions (M_fma32, M_fma64); fp32/fp64/int: thread-level instructions of each kind
    (M_fp32, M_fp64, M_int, FMA included once); ldst: thread-level load/store instructions (M_ldst);
    inst_warp: warp-level instructions (M_inst); dram_read/dram_write: 32-byte DRAM transactions (M_rd, M_wr).
    """

    fma32: float
    fma64: float
    ldst: float
    inst_warp: float
    fp32: float
    fp64: float
    int: float
    dram_read: float
    dram_write: float

    def __post_init__(self) -> None:
        for name, symbol in _SYMBOLS.items():
            non_negative(symbol, getattr(self, name))
        if self.fma32 > self.fp32:
            raise ValueError(f"M_fma32 ({self.fma32:g}) exceeds M_fp32 ({self.fp32:g}): FMAs are fp32 instructions")
        if self.fma64 > self.fp64:
            raise ValueError(f"M_fma64 ({self.fma64:g}) exceeds M_fp64 ({self.fp64:g}): FMAs are fp64 instructions")


_SYMBOLS = {
    "fma32": "M_fma32", "fma64": "M_fma64", "ldst": "M_ldst", "inst_warp": "M_inst", "fp32": "M_fp32",
    "fp64": "M_fp64", "int": "M_int", "dram_read": "M_rd", "dram_write": "M_wr",
}


@dataclass(frozen=True)
class DeviceRates:
    """The target device's micro-benchmarked rates: T_SP, T_DP, T_int, T_add, T_ldst and B_mem.

    T_SP, T_DP and T_int are op/s (a multiply-add is 2 ops), T_add integer add instructions/s, T_ldst
    local/shared-memory load-store instructions/s, B_mem B/s. T_DP is None on a device without double
    precision; predicting an fp64 kernel there is an error.
    """

    t_sp: float
    t_dp: float | None
    t_int: float
    t_add: float
    t_ldst: float
    b_mem: float

    def __post_init__(self) -> None:
        for name in ("t_sp", "t_dp", "t_int", "t_add", "t_ldst", "b_mem"):
            if name == "t_dp" and self.t_dp is None:
                continue
            positive(name, getattr(self, name))


@dataclass(frozen=True)
class KernelParameters:
    """What §3 derives from the counts alone: kernel type, work (op), traffic (B), mix efficiency, densities."""

    k_type: KernelType
    w_comp: float  # op
    w_traf: float  # B
    e_mix: float
    i_total: float  # thread-level instructions
    i_ops: float
    d_ops: float
    d_ldst: float
    d_other: float


def kernel_parameters(counts: KernelCounts, rates: DeviceRates | None = None) -> KernelParameters:
    """Return K_type, W_comp (op), W_traf (B), E_mix and the densities D_ops, D_ldst, D_other of a kernel.

    `rates`: the target's, where a kernel has work in both precisions: K_type is then the precision whose work
    takes longer at its own peak (docs/models.md §3), not fp64 for any fp64 instruction at all. Without them,
    or on a device without T_DP, the spec's rule.
    """
    fp64_first = counts.fp64 > 0
    if fp64_first and counts.fp32 > 0 and rates is not None and rates.t_dp:
        fp64_first = (counts.fp64 + counts.fma64) / rates.t_dp >= (counts.fp32 + counts.fma32) / rates.t_sp
    if fp64_first:
        k_type: KernelType = "fp64"
        w_comp, i_ops = counts.fp64 + counts.fma64, counts.fp64
        e_mix = (counts.fp64 + counts.fma64) / (2 * counts.fp64)
    elif counts.fp32 > 0:
        k_type = "fp32"
        w_comp, i_ops = counts.fp32 + counts.fma32, counts.fp32
        e_mix = (counts.fp32 + counts.fma32) / (2 * counts.fp32)
    else:
        k_type, w_comp, i_ops, e_mix = "int", counts.int, counts.int, 0.5
    w_traf = SECTOR_BYTES * (counts.dram_read + counts.dram_write)
    if w_comp == 0 and w_traf == 0:
        raise ValueError("the kernel has neither compute work (M_fp64, M_fp32 and M_int are 0) nor DRAM traffic "
                         "(M_rd and M_wr are 0): nothing to predict")
    i_total = 32 * counts.inst_warp
    if i_total == 0:
        raise ValueError("M_inst (warp-level instructions executed) is 0: the counts are not a kernel's")
    d_ops, d_ldst = i_ops / i_total, counts.ldst / i_total
    d_other = 1 - d_ops - d_ldst
    if d_other < -1e-9:
        symbol = {"fp64": "M_fp64", "fp32": "M_fp32", "int": "M_int"}[k_type]
        raise ValueError(
            f"inconsistent counts: {symbol} ({i_ops:g}) + M_ldst ({counts.ldst:g}) exceed 32 x M_inst "
            f"({i_total:g} thread instructions), so D_other = {d_other:.4g} < 0; were M_inst and the "
            "thread-level counts taken from the same launches?"
        )
    return KernelParameters(k_type, w_comp, w_traf, e_mix, i_total, i_ops, d_ops, d_ldst, max(0.0, d_other))


@dataclass(frozen=True)
class LatencyFloor:
    """Scattered loads per level (count), the device's random-load rate of each (load/s), and their time (s).

    `per_level`: loads / rate of each level with both; `unpriced`: levels that served scattered loads but have
    no measured rate (left out of the floor, which is then a lower bound of it). `in_set`: of each level's loads,
    those that walk one L1 set with the scattered loads before them, priced at `set_rates` (the device's
    set-walk rate of the level, load/s) where it has one. `spans`: per level, the size (B) its loads gather from,
    where the level's rate was read at it.
    """

    loads: dict[str, float]
    rates: dict[str, float]
    per_level: dict[str, float]
    unpriced: tuple[str, ...]
    in_set: dict[str, float] = field(default_factory=dict)
    set_rates: dict[str, float] = field(default_factory=dict)
    # Per level, the size (B) of what its scattered loads gather from, where `rates` was read at it (random_rate_at)
    spans: dict[str, float] = field(default_factory=dict)

    @property
    def time(self) -> float:
        """Return the floor (s): the scattered loads' latency, level by level, one after the other."""
        return sum(self.per_level.values())

    def explain(self) -> str:
        """Return the floor in words: the loads and rate of each level, and the levels without a rate."""
        parts = []
        for level in self.per_level:
            if self.loads[level] <= 0:
                continue
            walked = self.in_set.get(level, 0.0)
            where = (f"{level} (gathering from {self.spans[level] / 2**20:.3g} MiB)" if level in self.spans
                     else level)
            if walked > 0 and level in self.set_rates:
                parts.append(f"{self.loads[level] - walked:.3g} at {where} / {self.rates[level]:.3g} load/s + "
                             f"{walked:.3g} in one L1 set / {self.set_rates[level]:.3g} load/s")
            else:
                parts.append(f"{self.loads[level]:.3g} at {where} / {self.rates[level]:.3g} load/s")
        text = "; ".join(parts) or "no scattered loads past L1"
        if self.unpriced:
            text += f" ({', '.join(self.unpriced)}: no measured rate, left out)"
        return text


def random_rate_at(curve: Mapping[float, float], working_set: float) -> float:
    """Return the random-load rate (load/s) at `working_set` (B), log-log between a level's measured sets.

    `curve`: working set (B) -> loads/s measured over it. Outside the measured sets the nearest one's rate: a
    buffer larger than the largest set is gathered from at that set's rate (the level's slowest measured).
    """
    if not curve:
        raise ValueError("no measured random-load rates to read a working set's from")
    for size, rate in curve.items():
        positive(f"working set {size!r}", size)
        positive(f"random-load rate over {size:g} B", rate)
    positive("working set", working_set)
    sizes = sorted(curve)
    if working_set <= sizes[0]:
        return curve[sizes[0]]
    if working_set >= sizes[-1]:
        return curve[sizes[-1]]
    upper = next(i for i, size in enumerate(sizes) if size >= working_set)
    low, high = sizes[upper - 1], sizes[upper]
    share = math.log(working_set / low) / math.log(high / low)
    return math.exp(math.log(curve[low]) + share * (math.log(curve[high]) - math.log(curve[low])))


def latency_floor(scattered: dict[str, float], rates: dict[str, float], first_level: str = "L1",
                  in_set: Mapping[str, float] | None = None, set_rates: Mapping[str, float] | None = None,
                  curves: Mapping[str, Mapping[float, float]] | None = None,
                  spans: Mapping[str, float] | None = None) -> LatencyFloor:
    """Return the latency floor (s) of scattered loads per level (count) at the random-load rates (load/s) given.

    Loads served by `first_level` cost no more than any load, which §3 prices already: they are left out.
    `in_set`: of each level's scattered loads, those walking one L1 set (the simulation's set_walk count; at
    most the level's loads), priced at `set_rates` (load/s, a set walk's) where the level has one, else as
    the rest. `curves` (level -> working set B -> load/s) and `spans` (level -> the size, B, of what its scattered
    loads gather from): where a level has both, the rest of its loads take the curve's rate at that size
    (`random_rate_at`) in place of `rates`.
    """
    in_set, set_rates, curves, spans = in_set or {}, set_rates or {}, curves or {}, spans or {}
    for level, count in scattered.items():
        non_negative(f"scattered loads at {level}", count)
    for level, count in in_set.items():
        non_negative(f"scattered loads in one L1 set at {level}", count)
    for level, rate in (*rates.items(), *set_rates.items()):
        positive(f"random-load rate of {level}", rate)
    beyond = {level: count for level, count in scattered.items() if level != first_level}
    read_at = {level: float(size) for level, size in spans.items() if level in beyond and curves.get(level)}
    rates = {**rates, **{level: random_rate_at(curves[level], size) for level, size in read_at.items()}}
    walked = {level: min(count, in_set[level]) for level, count in beyond.items()
              if in_set.get(level, 0.0) > 0 and level in set_rates}
    per_level = {level: (count - walked.get(level, 0.0)) / rates[level]
                 + (walked[level] / set_rates[level] if level in walked else 0.0)
                 for level, count in beyond.items() if level in rates}
    unpriced = tuple(level for level, count in beyond.items() if level not in rates and count > 0)
    return LatencyFloor(dict(beyond), {k: v for k, v in rates.items() if k in beyond}, per_level, unpriced,
                        {k: v for k, v in walked.items() if k in per_level},
                        {k: v for k, v in set_rates.items() if k in walked and k in per_level},
                        {k: v for k, v in read_at.items() if k in per_level})


@dataclass(frozen=True)
class CountedCost:
    """Operations a kernel makes that one unit serialises (count), the device's rate of them (per s), their time (s).

    §3.2's integer divisions (a divider's) and §3.4's atomics (a locked instruction): `noun` and `unit` name them
    ('integer divisions', 'div/s').
    """

    count: float
    rate: float
    noun: str
    unit: str

    @property
    def time(self) -> float:
        """Return the operations' time (s): every one at the device's measured rate of them."""
        return self.count / self.rate

    def explain(self) -> str:
        """Return the cost in words: the count and the rate."""
        return f"{self.count:.3g} {self.noun} / {self.rate:.3g} {self.unit}"


DivisionCost = CountedCost  # §3.2's, by the name predict's signature reads best with
AtomicCost = CountedCost  # §3.4's


def division_cost(divisions: float, rate: float) -> CountedCost:
    """Return the time (s) of `divisions` integer divisions and remainders at `rate` div/s (§3.2)."""
    non_negative("integer divisions", divisions)
    positive("integer division rate", rate)
    return CountedCost(divisions, rate, "integer divisions", "div/s")


def atomic_cost(atomics: float, rate: float) -> CountedCost:
    """Return the time (s) of `atomics` atomic read-modify-writes at `rate` atomic/s (§3.4)."""
    non_negative("atomics", atomics)
    positive("atomic rate", rate)
    return CountedCost(atomics, rate, "atomics", "atomic/s")


def first_touch_cost(pages: float, rate: float) -> CountedCost:
    """Return the time (s) of `pages` 4 KiB pages touched first at `rate` page/s (§3.7)."""
    non_negative("first-touched pages", pages)
    positive("first-touch rate", rate)
    return CountedCost(pages, rate, "first-touched pages", "page/s")


@dataclass(frozen=True)
class BarrierCost:
    """A CPU runtime's time (s) of a kernel's barrier crossings and of the values it keeps live across them (§3.9)."""

    crossings: float  # every work-item's crossings
    rate: float  # crossings per s, one value live across each
    values: float = 0.0  # the further values live across them, summed over the crossings (beyond the rate's one)
    value_rate: float | None = None  # such values saved and restored per s; None: not measured (not priced)
    noun: str = "barrier crossings"

    @property
    def time(self) -> float:
        """Return the crossings' time (s), and their live values' where both are known."""
        values = self.values / self.value_rate if self.value_rate is not None else 0.0
        return self.crossings / self.rate + values

    def explain(self) -> str:
        """Return the cost in words: the crossings, the values and the rates."""
        text = f"{self.crossings:.3g} barrier crossings / {self.rate:.3g} crossing/s"
        if self.values and self.value_rate is not None:
            text += f" + {self.values:.3g} further values kept across them / {self.value_rate:.3g} value/s"
        return text


def barrier_cost(crossings: float, rate: float, values: float = 0.0, value_rate: float | None = None) -> BarrierCost:
    """Return the time (s) of `crossings` barrier crossings at `rate` crossing/s, `values` at `value_rate` (§3.9)."""
    non_negative("barrier crossings", crossings)
    positive("barrier crossing rate", rate)
    non_negative("values kept across barriers", values)
    if value_rate is not None:
        positive("rate of values kept across barriers", value_rate)
    return BarrierCost(crossings, rate, values, value_rate)


@dataclass(frozen=True)
class LaunchCost:
    """The runtime's own time (s) of one launch: its first work-group, then each further one (§3.8).

    `groups`: the launch's work-groups, or None where the program let the runtime choose them (then the launch
    is priced as one work-group, a lower bound).
    """

    groups: int | None
    launch_rate: float  # empty one-group launches per s
    group_rate: float | None  # empty work-groups per s past the first, every core; None: not measured
    noun: str = "launch"

    @property
    def time(self) -> float:
        """Return the launch's time (s): 1 / the launch rate, plus the work-groups past the first at their rate."""
        extra = 0.0 if self.groups is None or self.group_rate is None else (self.groups - 1) / self.group_rate
        return 1.0 / self.launch_rate + extra

    def explain(self) -> str:
        """Return the cost in words: the launch, the work-groups and the rates."""
        if self.groups is None:
            return (f"1 launch / {self.launch_rate:.3g} launch/s; its work-groups the runtime chose, priced as "
                    "one")
        if self.group_rate is None:
            return f"1 launch / {self.launch_rate:.3g} launch/s; {self.groups} work-groups, no rate of them measured"
        return (f"1 launch / {self.launch_rate:.3g} launch/s + {self.groups - 1} more work-groups / "
                f"{self.group_rate:.3g} group/s")


def launch_cost(groups: int | None, launch_rate: float, group_rate: float | None = None) -> LaunchCost:
    """Return the runtime's time (s) of a launch of `groups` work-groups at the measured rates (§3.8)."""
    if groups is not None and groups < 1:
        raise ValueError(f"a launch has at least one work-group, not {groups}")
    positive("launch rate", launch_rate)
    if group_rate is not None:
        positive("work-group rate", group_rate)
    return LaunchCost(groups, launch_rate, group_rate)


@dataclass(frozen=True)
class IssueFloor:
    """A scalar kernel's instructions (count) at the device's scalar rate (inst/s), its library calls' time (s), the sum (s).

    `calls` elementary-function calls (exp, log, sin) take `calls_time` at the device's measured rate of them;
    they are not in `instructions`.
    """

    instructions: float
    rate: float
    calls: float = 0.0
    calls_time: float = 0.0

    @property
    def time(self) -> float:
        """Return the floor (s): every instruction through the cores' issue ports one lane at a time, and the calls."""
        return self.instructions / self.rate + self.calls_time

    def explain(self) -> str:
        """Return the floor in words: the instructions and the rate, and the calls' time."""
        text = f"{self.instructions:.3g} instructions left scalar / {self.rate:.3g} inst/s"
        if self.calls:
            text += f" + {self.calls:.3g} elementary calls, {self.calls_time:.3g} s at the device's rate"
        return text


def issue_floor(instructions: float, rate: float, calls: float = 0.0, calls_time: float = 0.0) -> IssueFloor:
    """Return the issue floor (s): `instructions` executed scalar at `rate` inst/s, plus `calls` taking `calls_time` s (§3.3)."""
    non_negative("scalar instructions", instructions)
    positive("scalar instruction rate", rate)
    non_negative("elementary calls", calls)
    non_negative("elementary calls' time", calls_time)
    return IssueFloor(instructions, rate, calls, calls_time)


@dataclass(frozen=True)
class InCoreFloor:
    """A scalar kernel's inner loops: their cycles (every work-item's, summed) on `cores` cores at `clock` Hz (§3.5).

    The cycles are llvm-mca's for each inner loop of the compiled code times the loop's iterations (Oclgrind's),
    with the work-items whose chains the compiler put in flight together overlapped (perfcast.profiles.incore);
    `laid_out`: for the work-items' code laid out straight, the work-item loop around the inner loops included.
    """

    cycles: float
    cores: int
    clock: float
    laid_out: bool = False
    whole: bool = False  # the cycles are the work-items' whole compiled code (one loop over them, gcc's)

    @property
    def time(self) -> float:
        """Return the floor (s): the cycles spread over the cores at their clock."""
        return self.cycles / (self.cores * self.clock)

    def explain(self) -> str:
        """Return the floor in words: cycles, cores and clock."""
        what = ("of the work-items' whole compiled code" if self.whole else
                "of the work-items' code laid out, inner loops included" if self.laid_out else "of inner loops")
        return f"{self.cycles:.3g} cycles {what} / ({self.cores} cores x {self.clock / 1e9:.3g} GHz)"


def incore_floor(cycles: float, cores: int, clock: float, laid_out: bool = False,
                 whole: bool = False) -> InCoreFloor:
    """Return the in-core floor (s): `cycles` of a kernel's inner loops on `cores` cores at `clock` Hz (§3.5).

    `laid_out`: the cycles are the work-items' code laid out straight (perfcast.profiles.incore.laid_out_cycles);
    `whole`: they are the work-items' whole compiled code (`predict`'s `compiled`).
    """
    non_negative("in-core cycles", cycles)
    positive("cores", cores)
    positive("clock", clock)
    return InCoreFloor(cycles, cores, clock, laid_out, whole)


@dataclass(frozen=True)
class MaskedAccessFloor:
    """A kernel's global loads and stores through masked moves (4-byte elements) at their measured costs (s each) (§3.6).

    Masked moves cost the core more than the bytes they move, wherever the bytes come from, so the floor prices
    every element the kernel's global accesses load or store, from any level. The costs are the whole device's
    (its cores together), per element: `load_time` a masked load's, `store_time` a masked store's.
    """

    loads: float
    stores: float
    load_time: float
    store_time: float

    @property
    def time(self) -> float:
        """Return the floor (s): every masked load and store at its cost."""
        return self.loads * self.load_time + self.stores * self.store_time

    def explain(self) -> str:
        """Return the floor in words: the loads and stores and what each costs."""
        return (f"{self.loads:.3g} loads x {self.load_time * 1e12:.3g} ps + {self.stores:.3g} stores x "
                f"{self.store_time * 1e12:.3g} ps of 4-byte elements through masked moves, the guarded triad's and "
                "copy's costs, from any level")


def masked_move_costs(triad_seconds: float, copy_seconds: float) -> tuple[float, float]:
    """Return a masked load's and a masked store's cost (s per element) from the guarded triad's and copy's (s per element).

    The triad loads twice and stores once an element, the copy loads and stores once: a load costs the difference,
    a store the rest of the copy's. Kept within [0, triad / 2] so that the triad's own cost is always rebuilt.
    """
    positive("guarded triad time per element", triad_seconds)
    positive("guarded copy time per element", copy_seconds)
    load = min(max(triad_seconds - copy_seconds, 0.0), triad_seconds / 2)
    return load, triad_seconds - 2 * load


def masked_access_floor(loads: float, stores: float, load_time: float, store_time: float) -> MaskedAccessFloor:
    """Return the masked-access floor (s): `loads` and `stores` (4-byte elements) at their costs (s each) (§3.6)."""
    non_negative("masked loads", loads)
    non_negative("masked stores", stores)
    non_negative("masked load cost", load_time)
    non_negative("masked store cost", store_time)
    return MaskedAccessFloor(loads, stores, load_time, store_time)


def cpu_ldst_rate(ldst: float, local_ldst: float, lanes: int, simd_lanes: int, l1_accesses: float,
                  local_rate: float | None) -> float:
    """Return a CPU kernel's T_ldst (instructions/s): global accesses at L1 in its vectors, local ones at `local_rate`.

    `ldst`, `local_ldst`: the kernel's load/store instructions, all and those to local memory, counted per
    work-item (a scalar profiler's count); `lanes`: the widest vector its compiler gave it (1: scalar), at most
    `simd_lanes`, the lanes of the device's SIMD width for the kernel's element size; `l1_accesses`: element
    accesses/s the L1 serves at that width (its bandwidth / the element size), so a work-item's global access
    runs at l1_accesses x lanes / simd_lanes; `local_rate`: local-memory instructions/s as measured, None where
    none was (a C build keeps the OpenCL twin's local tiles in its own arrays: they are global accesses). The
    result is the harmonic mix, weighted by the counts: ldst / T_ldst = global / T_global + local / T_local
    (docs/models.md §3.6).
    """
    non_negative("load/store instructions", ldst)
    non_negative("local load/store instructions", local_ldst)
    positive("lanes", lanes)
    positive("SIMD lanes", simd_lanes)
    positive("L1 accesses/s", l1_accesses)
    if local_rate is not None:
        positive("local-memory instructions/s", local_rate)
    global_rate = l1_accesses * min(lanes, simd_lanes) / simd_lanes
    if ldst == 0 or local_rate is None:
        return global_rate
    local = min(local_ldst, ldst)
    return ldst / ((ldst - local) / global_rate + local / local_rate)


def vector_call_cost(cost: float, lanes: int, simd_lanes: int) -> float:
    """Return a work-item's instructions for an elementary call (`cost` scalar) in a kernel vectorised `lanes` wide.

    A vector routine (PoCL's SLEEF, a vector libm) serves min(lanes, simd_lanes) work-items a call with about the
    scalar routine's instructions, so each work-item's share is cost / that (docs/models.md §3.6).
    """
    non_negative("instructions per call", cost)
    positive("lanes", lanes)
    positive("SIMD lanes", simd_lanes)
    return cost / min(lanes, simd_lanes)


@dataclass(frozen=True)
class QuantitativePrediction:
    """A §3 prediction with every intermediate: weights, E_instr, T'_op (op/s), O_krn, O_dev (op/B), bound, time (s)."""

    kernel: KernelParameters
    rates: DeviceRates
    t_op: float  # op/s
    w_op: float
    w_ldst: float
    w_other: float
    c_op: float
    c_ldst: float
    c_other: float
    e_instr: float
    t_op_adjusted: float  # T'_op, op/s
    o_krn: float  # op/B; inf without DRAM traffic
    o_dev: float  # op/B
    bound: Bound
    performance: float  # T_pred, op/s
    time: float  # s
    reason: str
    floor: LatencyFloor | None = None  # the latency floor weighed against §3's bound, where one was given
    divisions: DivisionCost | None = None  # the integer divisions' time (§3.2), added, where one was given
    issue: IssueFloor | None = None  # the issue floor of code left scalar (§3.3), where one was given
    atomics: AtomicCost | None = None  # the atomics' time (§3.4), added, where one was given
    incore: InCoreFloor | None = None  # the in-core floor of a scalar kernel's inner loops (§3.5), where one was given
    first_touches: CountedCost | None = None  # the first-touched pages' time (§3.7), added, where one was given
    # The in-core time of the work-items' whole compiled code (§3.5, C kernels), which stood for the core's side
    compiled: InCoreFloor | None = None
    launch: LaunchCost | None = None  # the runtime's time of the launch and its work-groups (§3.8), added
    barriers: BarrierCost | None = None  # a CPU runtime's time of the barrier crossings (§3.9), added
    masked: MaskedAccessFloor | None = None  # the masked loads and stores' floor (§3.6), where one was given

    def explain(self) -> str:
        """Return the prediction in one line: bound, the comparison that decided it, and the efficiencies."""
        o_krn = "inf" if math.isinf(self.o_krn) else f"{self.o_krn:.3g}"
        text = (f"{self.bound} bound ({self.reason}): O_krn {o_krn} vs O_dev {self.o_dev:.3g} op/B; "
                f"E_mix {self.kernel.e_mix:.2f}, E_instr {self.e_instr:.2f}")
        if self.floor is not None:
            text += f"; latency floor {self.floor.time:.3g} s ({self.floor.explain()})"
        if self.issue is not None:
            text += f"; issue floor {self.issue.time:.3g} s ({self.issue.explain()})"
        if self.incore is not None:
            text += f"; in-core floor {self.incore.time:.3g} s ({self.incore.explain()})"
        if self.masked is not None:
            text += f"; masked-access floor {self.masked.time:.3g} s ({self.masked.explain()})"
        if self.compiled is not None:
            text += (f"; the core's side read from the compiled code: {self.compiled.time:.3g} s "
                     f"({self.compiled.explain()}), in place of §3's compute roof "
                     f"({self.kernel.w_comp / self.t_op_adjusted if self.t_op_adjusted > 0 else 0:.3g} s), "
                     "the issue floor and the divisions' time")
        if self.divisions is not None:
            text += f"; division cost {self.divisions.time:.3g} s ({self.divisions.explain()})"
        if self.atomics is not None:
            text += f"; atomic cost {self.atomics.time:.3g} s ({self.atomics.explain()})"
        if self.first_touches is not None:
            text += f"; first-touch cost {self.first_touches.time:.3g} s ({self.first_touches.explain()})"
        if self.launch is not None:
            text += f"; launch cost {self.launch.time:.3g} s ({self.launch.explain()})"
        if self.barriers is not None:
            text += f"; barrier cost {self.barriers.time:.3g} s ({self.barriers.explain()})"
        return text


def _added(cost: CountedCost | LaunchCost | BarrierCost, named: Bound, bound: Bound, time: float,
           reason: str) -> tuple[Bound, float, str]:
    """Return the bound, time (s) and reason once `cost` is added: bound `named` where it is the larger part."""
    if cost.time > time:
        return named, time + cost.time, f"{cost.noun} {cost.time:.3g} s, added to the {bound}-bound {time:.3g} s"
    return bound, time + cost.time, f"{reason}; {cost.noun} add {cost.time:.3g} s"


def predict(kernel: KernelParameters, rates: DeviceRates, floor: LatencyFloor | None = None,
            divisions: DivisionCost | None = None, issue: IssueFloor | None = None,
            atomics: AtomicCost | None = None, incore: InCoreFloor | None = None,
            first_touches: CountedCost | None = None,
            compiled: InCoreFloor | None = None, launch: LaunchCost | None = None,
            barriers: BarrierCost | None = None, masked: MaskedAccessFloor | None = None) -> QuantitativePrediction:
    """Return the §3 bound and time (s) of a kernel on a device, with every intermediate; §3.1–§3.9 may raise it.

    `compiled`: the in-core time of the work-items' whole compiled code (§3.5, C kernels). It stands for the core's
    side: the time is the larger of it and the memory's side (§3's memory-bound time, the latency floor), and §3's
    compute roof, the divisions' time and the issue, in-core and masked-access floors, estimates of the same cycles
    from counts of the profiled build's instructions, are left out; atomics and first touches are added as ever.
    """
    t_op = {"fp32": rates.t_sp, "fp64": rates.t_dp, "int": rates.t_int}[kernel.k_type]
    if t_op is None:
        raise ValueError("an fp64 kernel (M_fp64 > 0) on a device without double precision (no T_DP)")
    w_op = rates.t_sp / t_op
    w_ldst = (rates.t_sp / 2) / rates.t_ldst
    w_other = (rates.t_sp / 2) / rates.t_add
    c_op, c_ldst, c_other = kernel.d_ops * w_op, kernel.d_ldst * w_ldst, kernel.d_other * w_other
    if c_op + c_ldst + c_other == 0:
        # Only possible without compute instructions: then the work is 0 and the kernel is memory bound anyway.
        e_instr = 0.0
    else:
        e_instr = c_op / (c_op + c_ldst + c_other)
    t_adjusted = kernel.e_mix * e_instr * t_op
    if kernel.w_comp > 0 and not t_adjusted > 0:
        raise ValueError(f"the adjusted compute roof underflows to {t_adjusted!r} op/s: counts this small "
                         f"(W_comp = {kernel.w_comp!r}) are not a kernel's")
    o_dev = t_adjusted / rates.b_mem
    bound: Bound
    if kernel.w_traf == 0:
        o_krn, bound, reason = math.inf, "compute", "no DRAM traffic"
        performance, time = t_adjusted, kernel.w_comp / t_adjusted
    elif kernel.w_comp == 0:
        o_krn, bound, reason = 0.0, "memory", "no compute instructions"
        performance, time = 0.0, kernel.w_traf / rates.b_mem
    else:
        o_krn = kernel.w_comp / kernel.w_traf
        if o_krn > o_dev:
            bound, reason, performance = "compute", "O_krn > O_dev", t_adjusted
            time = kernel.w_comp / performance
        else:
            bound, reason, performance = "memory", "O_krn <= O_dev", o_krn * rates.b_mem
            time = kernel.w_traf / rates.b_mem  # = W_comp / (O_krn B_mem), without the rounding of the detour
    if compiled is not None:
        bound, time, side = "memory", kernel.w_traf / rates.b_mem, "§3's memory-bound time"
        if floor is not None and floor.time > time:
            bound, time, side = "latency", floor.time, "the scattered loads' latency floor"
        if compiled.time >= time:
            reason = f"the compiled code's in-core time is above the memory's side, {side} {time:.3g} s"
            bound, time = "in-core", compiled.time
        else:
            reason = f"{side} is above the compiled code's in-core time {compiled.time:.3g} s"
        performance = kernel.w_comp / time if time > 0 else 0.0
        divisions = issue = incore = masked = None
    elif floor is not None and floor.time > time:
        reason = f"the scattered loads' latency floor is above §3's {bound}-bound {time:.3g} s"
        bound, time = "latency", floor.time
        performance = kernel.w_comp / time
    if divisions is not None and divisions.time > 0:
        # Added, not weighed: the loads and operations that use a divided index wait for it (docs/models.md §3.2).
        bound, time, reason = _added(divisions, "division", bound, time, reason)
        performance = kernel.w_comp / time
    # The issue floor is weighed against the divisions' sum too: it counts every instruction, a division as one,
    # and a scalar core issues the others while its divider works (docs/models.md §3.3). The in-core floor is the
    # same kind of floor, from the loops' dependencies and ports rather than their instruction count (§3.5).
    # The masked-access floor too: the masked moves' cost is the core's, whatever level serves them (§3.6).
    floors: tuple[tuple[Bound, IssueFloor | InCoreFloor | MaskedAccessFloor | None, str], ...] = (
        ("issue", issue, "the scalar instructions' issue floor"), ("in-core", incore, "the inner loops' in-core floor"),
        ("masked", masked, "the masked loads and stores' floor"))
    for named, raised, words in floors:
        if raised is not None and raised.time > time:
            reason = f"{words} is above the {bound}-bound {time:.3g} s"
            bound, time = named, raised.time
            performance = kernel.w_comp / time
    if atomics is not None and atomics.time > 0:
        # Added last, to the issue floor too: a locked instruction is a fence, and nothing after it overlaps it
        # (docs/models.md §3.4).
        bound, time, reason = _added(atomics, "atomic", bound, time, reason)
        performance = kernel.w_comp / time
    if first_touches is not None and first_touches.time > 0:
        # Added: the access that finds no page waits for the operating system, whatever else bounds the launch
        # (docs/models.md §3.7).
        bound, time, reason = _added(first_touches, "first-touch", bound, time, reason)
        performance = kernel.w_comp / time
    if launch is not None:
        # Added: the runtime starts the launch and each work-group before and between the work-items' code, on the
        # same cores (docs/models.md §3.8).
        bound, time, reason = _added(launch, "launch", bound, time, reason)
        performance = kernel.w_comp / time
    if barriers is not None and barriers.time > 0:
        # Added: a CPU runtime ends the work-item loop at each barrier and starts the next region's, saving and
        # restoring each work-item's live values, on the cores that run the work-items (docs/models.md §3.9).
        bound, time, reason = _added(barriers, "barrier", bound, time, reason)
        performance = kernel.w_comp / time
    return QuantitativePrediction(kernel, rates, t_op, w_op, w_ldst, w_other, c_op, c_ldst, c_other, e_instr,
                                  t_adjusted, o_krn, o_dev, bound, performance, time, reason, floor, divisions,
                                  issue, atomics, incore, first_touches, compiled, launch, barriers, masked)


def core_time(prediction: QuantitativePrediction) -> float:
    """Return the time (s) a prediction gives its kernel with unlimited memory bandwidth: its core-bound part.

    §3 with the kernel's DRAM traffic set aside: W_comp / T'_op (or the compiled code's in-core time where the
    prediction took it, §3.5), then the same floors and added costs (§3.1–§3.9) the prediction carries. It is at
    most the prediction's time, and equal to it wherever §3's own comparison found the kernel compute bound
    (O_krn > O_dev, or no DRAM traffic) or the compiled code's in-core time decided. Cross-device projection
    between CPUs takes it as a kernel-specific ceiling (docs/models.md, §4, a core-bound ceiling between two CPUs).
    """
    if prediction.kernel.w_comp == 0:
        raise ValueError("the kernel has no compute work: no core-bound time")
    return predict(replace(prediction.kernel, w_traf=0.0), prediction.rates, prediction.floor, prediction.divisions,
                   prediction.issue, prediction.atomics, prediction.incore, prediction.first_touches,
                   prediction.compiled, prediction.launch, prediction.barriers, prediction.masked).time


def predict_counts(counts: KernelCounts, rates: DeviceRates) -> QuantitativePrediction:
    """Return the §3 prediction (time in s) of a kernel given by its counts on a device given by its rates."""
    return predict(kernel_parameters(counts, rates), rates)
