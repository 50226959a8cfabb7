"""Scoring predictions against measurements (spec §6): per kernel and model, then per model over the suite.

Each kernel of a campaign is predicted by every model that applies: the roofline (a lower bound on time),
the boat hull (a range) and the quantitative roofline (a point). A kernel left out of a model's mean is
listed with the reason.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from perfcast.bench.suite import moved_bytes
from perfcast.campaign.profile_size import profile_outgrows
from perfcast.campaign.program_species import KernelSpecies, bind_group, work_groups
from perfcast.devices.cache_view import cache_hierarchy
from perfcast.devices.hull_view import elementary_ops, hull_inputs
from perfcast.devices.quantitative_view import QuantitativeInputs, quantitative_inputs
from perfcast.devices.schema import Device
from perfcast.kernels.campaign import CampaignKernel
from perfcast.models.boathull import CpuFigures, GpuFigures, priced_complexity
from perfcast.models.quantitative import (
    ELEMENTARY_COST,
    AtomicCost,
    BarrierCost,
    CountedCost,
    DivisionCost,
    IssueFloor,
    LatencyFloor,
    LaunchCost,
    QuantitativePrediction,
    atomic_cost,
    barrier_cost,
    cpu_ldst_rate,
    division_cost,
    first_touch_cost,
    incore_floor,
    issue_floor,
    kernel_parameters,
    latency_floor,
    launch_cost,
    masked_access_floor,
    masked_move_costs,
    predict,
    vector_call_cost,
)
from perfcast.models.roofline import hierarchical_roofline
from perfcast.profiles.profile import KernelProfile
from perfcast.profiles.traffic import (
    FIRST_TOUCH_METRICS,
    first_touched_pages,
    gather_spans_by_level,
    indirect_share,
    scattered_by_level,
    set_walk_by_level,
)
from perfcast.species.application import PrimitivePrediction, predict_primitive
from perfcast.species.classes import class_variables
from perfcast.species.grammar import parse_species

__all__ = ["HULL_LACKS", "KernelScore", "ModelSummary", "Prediction", "compiler_floors", "contains", "counts_fills",
           "compiled_code_terms", "footprint_profile", "group_kernel", "hull_miss", "incore_laid_out",
           "incore_prices_vectors", "kernel_incore_cycles", "kernel_item_cycles", "kernel_traffic",
           "lanes_and_packing", "masked_code", "percentage_error", "predict_profiled", "profile_flop",
           "campaign_launched", "launch_term",
           "scalar_arithmetic", "score_kernel", "score_profiled", "summarise", "without_compiled_out_divisions"]

MODELS = ("roofline", "boat hull", "quantitative")
NARROW = 3.0  # a range at most this wide (upper / lower) says something (issue 26's goal for the boat hull)
INNER_WORK = 0.5  # share of a kernel's instructions its inner loops must carry for their lanes to be the kernel's


@dataclass(frozen=True)
class Prediction:
    """One model's prediction of one kernel's time (s): a point, a range, or a lower bound, with its score."""

    model: str
    kind: str  # "bound", "range" or "point"
    time: float  # the bound, the range's middle, or the point
    lower: float | None = None
    upper: float | None = None
    ape: float | None = None
    contained: bool | None = None  # ranges: inside [lower (1 - s), upper (1 + s)]
    efficiency: float | None = None  # bounds: t_bound / t_meas
    violation: bool | None = None  # bounds: beaten by more than the spread
    detail: str = ""
    bound: str = ""  # points (quantitative): the term that decided the time (compute, memory, latency, ...)
    terms: tuple[str, str] = ("", "")  # ranges (boat hull): the terms of the lower and the upper end (c0, m0, c1, ...)


@dataclass(frozen=True)
class KernelScore:
    """A kernel's measurement and the prediction of each model (or why a model was left out)."""

    kernel: str
    measured: float  # s, median
    spread: float  # sigma / t
    predictions: dict[str, Prediction] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)


def percentage_error(predicted: float, measured: float) -> float:
    """Return the absolute percentage error |predicted - measured| / measured (a fraction; spec §6)."""
    return abs(predicted - measured) / measured


def contains(lower: float, upper: float, measured: float, spread: float) -> bool:
    """Return True when a range (s) contains a measurement (s) of relative spread s: lower(1 - s) <= t <= upper(1 + s)."""
    return lower * (1 - spread) <= measured <= upper * (1 + spread)


def counts_fills(device: Device) -> bool:
    """Return True where the device's DRAM figure counts a CPU's write-allocate reads (perfcast bench's figures)."""
    dram = device.memory_level("DRAM").bandwidth
    return device.kind == "cpu" and dram is not None and dram.provenance.counts == "moved"


def footprint_profile(profile: KernelProfile, read: float, written: float, device: Device) -> KernelProfile:
    """Return `profile` with its DRAM bytes the compulsory footprint (B), the fills added where the device counts them."""
    filled = written if counts_fills(device) else 0.0
    return profile.with_metrics(
        f"DRAM sectors = compulsory footprint {read:.4g} B read + {written:.4g} B written"
        + (f" + {filled:.4g} B of write-allocate reads" if filled else ""), "footprint",
        dram_read=(read + filled) / 32, dram_write=written / 32, dram_bytes=read + filled + written)


def kernel_traffic(kernel: CampaignKernel, n: int, profile: KernelProfile | None) -> tuple[dict[str, float], str]:
    """Return the bytes per level (B) the roofline charges a kernel, and where they come from.

    The profile's simulated bytes where it has them (the bytes that move through the measured device's
    caches), else the kernel's own count (every access at L1, the compulsory footprint at DRAM).
    """
    if profile is not None and profile.bytes_from and profile.bytes_from.startswith("simulated"):
        found = profile.level_bytes()
        if "DRAM" in found:
            return found, profile.bytes_from
    return dict(kernel.traffic(n)), "the kernel's count"


def _roofline(kernel: CampaignKernel, n: int, device: Device, measured: float, spread: float,
              profile: KernelProfile | None = None) -> Prediction:
    peak = device.peak_compute(kernel.precision)
    bandwidths = device.level_bandwidths()
    counted, source = kernel_traffic(kernel, n, profile)
    traffic = {level: q for level, q in counted.items() if level in bandwidths}
    missing = sorted(set(counted) - set(traffic))
    bound = hierarchical_roofline(kernel.work(n), traffic, peak, bandwidths)
    time = float(bound.time)
    efficiency = time / measured
    detail = (f"bound by {bound.binding}; bytes {source}"
              + (f"; no bandwidth for {', '.join(missing)}" if missing else ""))
    return Prediction("roofline", "bound", time, efficiency=efficiency, violation=efficiency > 1 + spread,
                      ape=percentage_error(time, measured), detail=detail)


def compiler_floors(name: str, element_bytes: float, figures: CpuFigures | GpuFigures,
                    vectorisation: Mapping[str, Any] | None, work_groups: int | None = None
                    ) -> tuple[tuple[str, ...], float | None, str]:
    """Return the CPU floors the compiler's report rules out, the SIMD lanes it used (lanes), and the words that say so.

    `name` is the kernel the report names, `element_bytes` its element size (B). Threads as many as the hull's
    N_threads rule out the single-thread floors (c2, c3), unless the launch has fewer work-groups than that
    (`work_groups`; PoCL runs one work-group per thread, so fewer groups leave threads idle); the lanes the
    compiler gave the kernel's loops set its no-SIMD floor to (L / lanes)·c0 (`predict_cpu`). No report, or a
    GPU: nothing.
    """
    if not vectorisation or not isinstance(figures, CpuFigures):
        return (), None, ""
    lanes = vectorisation.get("lanes", {}).get(name)
    threads = vectorisation.get("threads")
    busy = work_groups is None or work_groups >= figures.n_threads
    assume = ("multithreaded",) if threads and threads >= figures.n_threads and busy else ()
    words = []
    if threads:
        if assume:
            words.append(f"{threads} threads, so no single-thread floor")
        elif not busy:
            words.append(f"{threads} threads, but {work_groups} work-group{'s' if work_groups != 1 else ''} "
                         f"for the hull's {figures.n_threads}")
        else:
            words.append(f"{threads} threads of the {figures.n_threads} the hull counts")
    if lanes is not None:
        full = int(figures.lanes(element_bytes))
        words.append(f"{lanes} of {full} SIMD lanes" if lanes > 1 else f"left scalar ({full} SIMD lanes)")
    if not words:
        return assume, lanes, ""
    return assume, lanes, f"; floors by the compiler ({vectorisation.get('tool')}): {', '.join(words)}"


def _hull(kernel: CampaignKernel, n: int, device: Device, measured: float, spread: float,
          vectorisation: Mapping[str, Any] | None = None) -> Prediction:
    figures = hull_inputs(device, kernel.precision, kernel.element_bytes).figures
    assume, lanes, evidence = compiler_floors(kernel.name, kernel.element_bytes, figures, vectorisation)
    f, priced = kernel.f, ""
    if kernel.elementary_calls:
        # f counts each call at ELEMENTARY_OPS; a device with a measured rate of calls prices them itself.
        cost = elementary_ops(device, kernel.precision)
        f = priced_complexity(f, kernel.elementary_calls, cost.extra)
        priced = f"; f = {f:.4g}: {kernel.elementary_calls:g} elementary calls at {cost.source}"
    result = predict_primitive(kernel.species, figures, f, bind=kernel.bind(n), element_bytes=kernel.element_bytes,
                               assume=assume, vector_lanes=lanes)
    lower, upper = float(result.prediction.lower[0]), float(result.prediction.upper[0])
    detail = (f"{result.variables.name}; middle = {'geometric' if _geometric(lower, upper) else 'arithmetic'} mean; "
              f"lower bound by {result.prediction.lower_term[0]}, upper by {result.prediction.upper_term[0]}"
              f"{priced}{evidence}")
    return _hull_range(result, measured, spread, detail)


def _geometric(lower: float, upper: float) -> bool:
    """Return whether a range's middle is its geometric mean (a range wider than 2x), else its arithmetic one."""
    return upper > 2 * lower


def _hull_range(result: PrimitivePrediction, measured: float, spread: float, detail: str) -> Prediction:
    """Return the boat hull's range (s) of a `predict_primitive` result, scored against `measured`, with its terms."""
    lower, upper = float(result.prediction.lower[0]), float(result.prediction.upper[0])
    middle = math.sqrt(lower * upper) if _geometric(lower, upper) else (lower + upper) / 2
    return Prediction("boat hull", "range", middle, lower, upper, percentage_error(middle, measured),
                      contains(lower, upper, measured, spread), detail=detail,
                      terms=(str(result.prediction.lower_term[0]), str(result.prediction.upper_term[0])))


def scalar_issue_floor(profile: KernelProfile, inputs: QuantitativeInputs) -> IssueFloor | None:
    """Return the issue floor (§3.3, s) of a profile's kernel run scalar on a device with a scalar rate, or None.

    The instructions are a counting profiler's (Oclgrind: every lane of every instruction, phis aside), less its
    elementary-function calls where the device measured its rate of them: those take calls / rate beside. A
    profile that counts warps (ncu, nvprof: a GPU's) records no calls and is not a scalar CPU's: None. (The
    profile's `inst_alu`, the instructions a core's pipes issue, is not read: docs/models.md §3.3 says why.)
    """
    if inputs.scalar_instructions is None or "elementary_fp32" not in profile.metrics or "inst_warp" not in profile.metrics:
        return None
    instructions, calls, calls_time = 32 * profile.metrics["inst_warp"], 0.0, 0.0
    for precision, rate in inputs.elementary_rates.items():
        counted = profile.elementary_calls(precision)
        instructions -= ELEMENTARY_COST * counted
        calls, calls_time = calls + counted, calls_time + counted / rate
    return issue_floor(max(0.0, instructions), inputs.scalar_instructions, calls, calls_time)


def cpu_terms(profile: KernelProfile, inputs: QuantitativeInputs, lanes: int | None = None
              ) -> tuple[LatencyFloor | None, DivisionCost | None, IssueFloor | None, AtomicCost | None, dict[str, str]]:
    """Return a kernel's latency floor (§3.1), divisions' time (§3.2), issue floor (§3.3) and atomics' time (§3.4) (s).

    The latency floor needs scattered loads simulated through this device's caches (another device's caches
    serve other levels) and the device's random-load rates; the divisions the profile's count of them and the
    device's measured rate; the issue floor the compiler's report that the kernel ran scalar (`lanes` 1: the
    widest vector its compiler gave a loop of it) and the device's measured rate of scalar instructions; the
    atomics the profile's count and the device's rate. What is left out comes keyed by the term ("latency
    floor", "integer divisions", "issue floor", "atomics").
    """
    left_out = {}
    floor = None
    scattered = scattered_by_level(profile.metrics)
    origin = profile.bytes_from or ""
    elsewhere = origin.startswith("simulated for ") and origin.removeprefix("simulated for ") != inputs.device.name
    if scattered and inputs.random_loads:
        if elsewhere:
            left_out["latency floor"] = f"no latency floor: the scattered loads were {origin}, not {inputs.device.name}"
        else:
            floor = latency_floor(scattered, inputs.random_loads, in_set=set_walk_by_level(profile.metrics),
                                  set_rates=inputs.set_walk_loads, curves=inputs.random_curves,
                                  spans=gather_spans_by_level(profile.metrics))
    divided = profile.metrics.get("div_int", 0.0)
    divisions = division_cost(divided, inputs.int_divisions) if divided and inputs.int_divisions else None
    if divided and inputs.int_divisions is None:
        left_out["integer divisions"] = f"{divided:.3g} integer divisions, no measured rate of them (not priced)"
    issue = None
    floor_if_scalar = scalar_issue_floor(profile, inputs)
    if floor_if_scalar is not None:
        if lanes is None:
            left_out["issue floor"] = ("no issue floor: no compiler's report says whether the kernel ran scalar "
                                       "(a campaign reads one)")
        elif lanes == 1:
            issue = floor_if_scalar
    counted = profile.metrics.get("atomics", 0.0)
    atomics = atomic_cost(counted, inputs.atomics) if counted and inputs.atomics else None
    if counted and inputs.atomics is None:
        left_out["atomics"] = f"{counted:.3g} atomics, no measured rate of them (not priced)"
    return floor, divisions, issue, atomics, left_out


def first_touch_term(profile: KernelProfile, inputs: QuantitativeInputs) -> tuple[CountedCost | None, str | None]:
    """Return a kernel's first-touched pages' time (§3.7, s), or None with what left it out (None: nothing to price).

    The pages a launch touched first, by a store or a load (the memory trace counts both; a load first maps the
    shared zero page, and a later store faults again), at the device's measured rate of first-touched pages.
    """
    pages = first_touched_pages(profile.metrics)
    if pages is None or pages <= 0:
        return None, None
    if inputs.first_touches is None:
        return None, f"{pages:.3g} pages touched first, no measured rate of first touches (not priced)"
    return first_touch_cost(pages, inputs.first_touches), None


def launch_term(inputs: QuantitativeInputs, launched: bool, work_groups: int | None
                ) -> tuple[LaunchCost | None, str | None]:
    """Return a launch's runtime cost (§3.8, s), or None with what left it out (None: nothing to price).

    `launched`: the prediction is of one timed launch (a campaign's), whose `work_groups` are known or None (the
    program let the runtime choose them). A CPU without the bench's empty launches leaves it out, said; a GPU
    (whose hardware starts its blocks while others run) silently.
    """
    if not launched:
        return None, None
    if inputs.launches is None:
        return None, ("the runtime's launch and work-groups, no measured rate of empty launches (not priced)"
                      if inputs.device.kind == "cpu" else None)
    return launch_cost(work_groups, inputs.launches, inputs.work_groups), None


def barrier_term(profile: KernelProfile, inputs: QuantitativeInputs) -> tuple[BarrierCost | None, str | None]:
    """Return a kernel's barrier crossings' time (§3.9, s), or None with what left it out (None: nothing to price).

    Every work-item's crossings of a work-group barrier, as the profile counts them, at the device's measured rate
    of them, and the values live across them (`barrier_values`, counted from the kernel's IR) beyond the one that
    rate carries, at the device's rate of such values where it measured one. A CPU without the crossings' rate
    leaves them out, said; a GPU (whose warps wait at a barrier in hardware, its cost hidden by the other warps)
    and a C build's device (no local memory measured: its code has no barriers) silently.
    """
    crossings = profile.metrics.get("barriers", 0.0)
    # A CPU device profile without local memory measured is a C build's, whose code keeps the OpenCL twin's local
    # tiles in its own arrays and crosses no barrier (as §3.6 prices its local accesses as global ones).
    if crossings <= 0 or (inputs.device.kind == "cpu" and inputs.local_rate is None):
        return None, None
    if inputs.barriers is None:
        return None, (f"{crossings:.3g} barrier crossings, no measured rate of them (not priced)"
                      if inputs.device.kind == "cpu" else None)
    values = profile.metrics.get("barrier_values")
    if values is None or inputs.barrier_values is None:
        return barrier_cost(crossings, inputs.barriers), (
            "the values kept live across barriers: " + ("not counted (no IR of the kernel)" if values is None
                                                         else "no measured rate of them") + " (not priced)")
    # The bench's crossing carries one live value: the kernel's others are priced at the values' rate.
    return barrier_cost(crossings, inputs.barriers, max(0.0, values - crossings), inputs.barrier_values), None


def campaign_launched(manifest: Mapping[str, Any]) -> bool:
    """Return whether a campaign's kernels ran as a runtime's launches (§3.8): every backend's but the C one's."""
    return manifest.get("backend") != "cpu"


def predict_profiled(profile: KernelProfile, inputs: QuantitativeInputs, lanes: int | None = None,
                     incore_cycles: float | None = None, incore_vectors: bool = False, packed: bool = False,
                     masked: bool = False, laid_out: bool = False, compiled_cycles: float | None = None,
                     launched: bool = False, work_groups: int | None = None
                     ) -> tuple[QuantitativePrediction, str, dict[str, str]]:
    """Return the §3 prediction (s) of a profiled kernel on a device with §3.1–§3.9, in words, and what is left out.

    `lanes`: the widest vector the compiler gave one of the kernel's loops, from its own report (1: left scalar);
    None where no report was read. `incore_cycles`: the cycles of the kernel's inner loops at the timed size, from
    the code the device runs (a campaign's `incore`); the in-core floor (§3.5) applies, as the issue floor, to a
    kernel left scalar on a CPU, without local memory, or to any kernel on a CPU where the reading priced its
    vector loops too (`incore_vectors`: gcc's code read with gcov's counts). `packed`: the lanes are a work-item's
    own statements packed into vectors (`packed_lanes`), whose operands, local ones too, are loaded in them.
    `masked`: the compiled code loads or stores with AVX's masked moves (`masked_code`); on a CPU whose bench
    measured the guarded triad, B_mem is then that rate where it is the lower, and where it measured the guarded
    copy too, every global load and store is priced at a masked one's cost from any level (§3.6). `laid_out`: the in-core
    cycles are the work-items' code laid out (`incore_laid_out`), which the explanation says. `compiled_cycles`:
    the cycles of the work-items' whole compiled code at the timed size (`kernel_item_cycles`, gcc's code): on a
    CPU they stand for the core's side of §3 (`predict`'s `compiled`). `launched`: the profile is of one timed
    launch of `work_groups` work-groups (None: the runtime chose them), whose runtime cost §3.8 adds where the
    device measured empty launches (`launch_term`).
    """
    floor, divisions, issue, atomics, left_out = cpu_terms(profile, inputs, lanes)
    touches, unpriced = first_touch_term(profile, inputs)
    if unpriced:
        left_out["first touches"] = unpriced
    launch, unpriced = launch_term(inputs, launched, work_groups)
    if unpriced:
        left_out["launch"] = unpriced
    crossings, unpriced = barrier_term(profile, inputs)
    if unpriced:
        left_out["barriers"] = unpriced
    incore = None
    # A kernel that uses local memory has barriers (taken so: its profile counts local loads and stores), which
    # PoCL turns into one loop over the work-items per region: its compiled loops are not its source's loops.
    # The C suite's code is its source's, with the vector loops counted: the reading holds for every kernel.
    # A packed kernel's scalar chains are still the reading's: it skips the loops whose arithmetic is mostly packed.
    barriers = profile.metrics.get("local_ldst", 0.0) > 0
    read = incore_vectors or ((lanes == 1 or packed) and not barriers)
    if incore_cycles is not None and read and inputs.device.kind == "cpu":
        incore = incore_floor(incore_cycles, inputs.device.compute_units, inputs.device.clock.peak.value, laid_out)
    compiled = None
    if compiled_cycles is not None and inputs.device.kind == "cpu":
        compiled = incore_floor(compiled_cycles, inputs.device.compute_units, inputs.device.clock.peak.value,
                                whole=True)
    rates, ldst_words, narrow_words, costs = inputs.rates, "", "", dict(inputs.elementary_cost)
    if lanes is not None and lanes >= 1 and inputs.device.kind == "cpu" and inputs.simd_bits:
        # §3.6: a work-item's share of the vectors its compiler made, in the kernel's element size.
        element = 8 if profile.metrics.get("fp64", 0.0) > 0 else 4
        narrow = _narrow_elements(profile, lanes, inputs.simd_bits)
        if narrow is not None:
            # An integer kernel on 1- or 2-byte elements: each vector instruction does 4 / element times the work of
            # one on 4-byte lanes, which the device's integer rates count (Rodinia streamcluster's byte memset).
            element = narrow
            rates = replace(rates, t_int=rates.t_int * 4 / element, t_add=rates.t_add * 4 / element)
            narrow_words = (f"; integer rates x{4 // element} (§3.6: {lanes} lanes of {element}-byte elements a "
                            "vector, by the compiler's report and the kernel's accesses)")
        simd = max(1, inputs.simd_bits // (8 * element))
        if lanes > 1 and not packed:  # the vector routine's instructions serve its lanes
            # (packed statements of one work-item call the scalar routine: the packing says nothing of calls)
            costs = {p: vector_call_cost(c, lanes, simd) for p, c in costs.items()}
        if inputs.l1_bandwidth:
            accesses = inputs.l1_bandwidth / element
            ldst = profile.metrics.get("ldst", 0.0)
            local = min(profile.metrics.get("local_ldst", 0.0), ldst)
            # The bench's local rate is of accesses PoCL makes lane by lane, one work-item at a time; a work-item
            # whose statements the compiler packed loads their local operands in the same vectors as global ones.
            # The throughput of independent local accesses (§3.9) where measured: the shared level's figure is of
            # one chain, each add waiting for the last, so it is a latency.
            local_rate = None if packed or inputs.local_rate is None else (inputs.local_loads or inputs.local_rate)
            access_lanes = _packed_access_lanes(profile, lanes, element) if packed else lanes
            t_ldst = cpu_ldst_rate(ldst, local, access_lanes, simd, accesses, local_rate)
            rates = replace(rates, t_ldst=t_ldst)
            ldst_words = (f"; T_ldst {t_ldst:.3g} inst/s (§3.6: "
                          + ("a work-item's statements packed into vectors by the compiler, its local and global "
                             if packed else "global ")
                          + f"accesses at L1 in {min(access_lanes, simd)} of {simd} lanes"
                          + (f", {local / ldst:.0%} local at the "
                             + ("independent local accesses' rate (§3.9)" if inputs.local_loads else "local-memory rate")
                             if local and local_rate is not None else "") + ")")
    masked_floor = None
    if masked and inputs.device.kind == "cpu" and inputs.guarded_dram:
        if inputs.guarded_dram < rates.b_mem:
            # The masked moves bound a streaming kernel in the cores below the DRAM figure, as they bind the guarded
            # triad the bench measures (docs/models.md §3.6).
            rates = replace(rates, b_mem=inputs.guarded_dram)
            ldst_words += (f"; B_mem {inputs.guarded_dram / 1e9:.3g} GB/s, the guarded triad's (§3.6: the compiled "
                           "code masks its loads and stores)")
        # And from any level: the moves cost the core, not the memory, so elements a cache serves cost them too,
        # each load and store at its cost from the guarded triad and copy (the bench counts their write-allocate
        # fills where the device's figures do). Without the copy the two costs are not told apart: B_mem only.
        if inputs.guarded_copy:
            fills = counts_fills(inputs.device)
            load_time, store_time = masked_move_costs(moved_bytes("triad", 1, 4, fills) / inputs.guarded_dram,
                                                      moved_bytes("copy", 1, 4, fills) / inputs.guarded_copy)
            masked_floor = masked_access_floor(profile.metrics.get("global_load_bytes", 0.0) / 4,
                                               profile.metrics.get("global_store_bytes", 0.0) / 4,
                                               load_time, store_time)
    shared = {p for p, c in costs.items() if c != inputs.elementary_cost[p]}
    p = predict(kernel_parameters(profile.counts(costs or None), rates), rates, floor, divisions, issue, atomics, incore,
                touches, compiled, launch, crossings, masked_floor)
    share = indirect_share(profile.metrics) if floor is not None else None
    # Counted, not priced apart: on 17 programs, pricing the others at the bench's loads at computed addresses made
    # hotspot3D right and SHOC's reduction and md wrong (docs/models.md §3.1).
    indirect_words = ("" if share is None else f"; {share:.0%} of the scattered loads take their address from a "
                      "loaded value, every one priced as the bench's gather")
    detail = p.explain() + ldst_words + indirect_words + narrow_words + "".join(
        f"; {profile.elementary_calls(precision):.3g} {precision} elementary calls at {cost:.3g} instructions each "
        f"(the device's measured rate{', shared by the lanes (§3.6)' if precision in shared else ''})"
        for precision, cost in costs.items()
        if profile.elementary_calls(precision)) + "".join(f"; {note}" for note in left_out.values())
    return p, detail, left_out


def _global_and_local_bytes(metrics: Mapping[str, float]) -> float:
    """Return the bytes a profile's global and local loads and stores move (B)."""
    return sum(metrics.get(f"{space}_{kind}_bytes", 0.0) for space in ("global", "local") for kind in ("load", "store"))


def _narrow_elements(profile: KernelProfile, lanes: int, simd_bits: int) -> int | None:
    """Return the element size (B) of an integer kernel vectorised on elements narrower than 4 B, else None.

    Both must say so: the compiler's lanes above what 4-byte elements fill of the SIMD width (an fp32 loop may
    take two registers a vector as well), and the kernel's global and local accesses under 4 B each on average.
    No floating-point work: a float is 4 bytes whatever it loads. The size is the larger of the two readings.
    """
    m = profile.metrics
    if m.get("fp32", 0.0) > 0 or m.get("fp64", 0.0) > 0 or lanes * 32 <= simd_bits:
        return None
    accesses = m.get("global_ldst", 0.0) + m.get("local_ldst", 0.0)
    moved = _global_and_local_bytes(m)
    if accesses <= 0 or moved <= 0 or moved / accesses >= 3:
        return None
    return 1 if max(moved / accesses, simd_bits / 8 / lanes) < 1.5 else 2


def _packed_access_lanes(profile: KernelProfile, lanes: int, element: int) -> int:
    """Return the lanes a packed kernel's loads and stores gain: `lanes` where the profile counts element accesses.

    A profiler counts a float4 load of the kernel's own as one access of 16 B, already the vector the compiler
    loads: only accesses of one element (global and local bytes over the load/store count) gain the lanes.
    """
    m = profile.metrics
    # The accesses that move those bytes: global and local ones (`ldst` counts private and constant ones too, in
    # profiles without `global_ldst`).
    accesses = m["global_ldst"] + m.get("local_ldst", 0.0) if "global_ldst" in m else m.get("ldst", 0.0)
    moved = _global_and_local_bytes(m)
    per_access = max(moved / accesses, element) if accesses > 0 and moved > 0 else element
    return max(1, min(lanes, round(lanes * element / per_access)))


def kernel_lanes(name: str, vectorisation: Mapping[str, Any] | None,
                 incore: Mapping[str, Any] | None = None, precision: str | None = None) -> int | None:
    """Return the lanes of kernel `name`: the compiler's report's (a campaign's `vectorisation`), or None.

    Where the run read the code (`incore`; `precision`: the group's builds), the reading can overrule the report
    either way (`lanes_and_packing`). A kernel whose work runs in inner loops of scalar arithmetic takes 1
    (`scalar_arithmetic`). A kernel the report leaves scalar (1: a work-item loop of it stayed scalar) may still
    run its work-item's own statements in vectors (LLVM's SLP vectoriser packs sixteen products of SHOC's sgemmNN
    into two FMAs): those are then its lanes (`packed_lanes`).
    """
    return lanes_and_packing(name, vectorisation, incore, precision)[0]


def lanes_and_packing(name: str, vectorisation: Mapping[str, Any] | None, incore: Mapping[str, Any] | None,
                      precision: str | None = None) -> tuple[int | None, bool]:
    """Return `kernel_lanes` and whether they are those of its packed statements (taken from `packed_lanes`).

    The report's widest vector can belong to a loop that does little of the work: PoCL vectorises reduce_sum's
    first region (one load a work-item) 8 wide and leaves its reduction's regions scalar ("the cost-model
    indicates that vectorization is not beneficial", a remark without a source line). Where the run read the
    code, found inner loops the work runs in, and its arithmetic, weighted by how often each instruction runs,
    works on one element an instruction (`scalar_arithmetic`), the work runs scalar: 1.
    """
    lanes = (vectorisation or {}).get("lanes", {}).get(name)
    if lanes is None:
        return None, False
    if int(lanes) > 1 and scalar_arithmetic(name, incore, precision):
        return 1, False
    packed = packed_lanes(name, incore, precision) if int(lanes) == 1 else None
    return (packed, True) if packed else (int(lanes), False)


def scalar_arithmetic(name: str, incore: Mapping[str, Any] | None, precision: str | None = None) -> bool:
    """Return whether the code read for kernel `name` runs most of its work in inner loops of scalar arithmetic.

    The reading's floating-point arithmetic works on one element an instruction (`fp_lanes`, `compiled_fp_lanes`
    over the loops it matched, below 2), and its inner loops carry at least half of the kernel's instructions: their
    compiled instructions an iteration x iterations a work-item, over Oclgrind's instructions a work-item
    (`INNER_WORK`; machine against IR instructions, near enough for a majority). The matched loops need not be
    where the work runs: backprop's bpnn_adjust_weights_ocl has no inner loop and its reading matched a rarely run
    region, not its 4-wide one; SHOC stencil2d's inner loop holds a fifth of its work. False there, as where the
    code was not read or does no floating-point arithmetic.
    """
    entry = incore_entry(name, incore, precision) or {}
    compiled, per_item = entry.get("fp_lanes"), float(entry.get("instructions_per_item") or 0.0)
    if compiled is None or float(compiled) >= 2 or per_item <= 0:
        return False
    inner = sum(float(loop["instructions"]) * float(loop.get("executions_per_item") or 0.0)
                / (int(loop.get("unroll") or 1) * int(loop.get("copies") or 1))
                for loop in entry.get("loops") or () if loop.get("inner"))
    return inner >= INNER_WORK * per_item


def incore_laid_out(name: str, incore: Mapping[str, Any] | None, precision: str | None = None) -> bool:
    """Return whether the in-core reading of kernel `name` laid out a work-item's code (a loop's `item_cycles`).

    False where the code was not read, was read before readings laid it out, or no inner loop was laid out.
    """
    entry = incore_entry(name, incore, precision) or {}
    return any(loop.get("inner") and loop.get("item_cycles") is not None for loop in entry.get("loops") or ())


def without_compiled_out_divisions(profile: KernelProfile, name: str, incore: Mapping[str, Any] | None,
                                   precision: str | None = None) -> tuple[KernelProfile, str | None]:
    """Return a profile without the integer divisions the code the device ran has no divide for, and a note.

    Oclgrind counts the divisions of its own build, which keeps loops rolled: a division by a loop's powers of two
    (Rodinia's backprop and srad reductions) divides by a variable there, and by a constant in PoCL's build, which
    unrolls the loop and makes each a shift. Where the reading of kernel `name` (`incore`) found no integer divide
    instruction in its compiled code, the profile's divisions are not the divider's (§3.2): none is priced. The
    profile unchanged and None where it counts none, the code was not read, or the code divides.
    """
    divided = profile.metrics.get("div_int", 0.0)
    divides = (incore_entry(name, incore, precision) or {}).get("divides")
    if not divided or divides is None or int(divides) > 0:
        return profile, None
    note = (f"integer divisions not priced: the compiled code has no divide instruction for the profile's "
            f"{divided:.3g} (their divisors are constants there, §3.2)")
    return replace(profile, metrics={**profile.metrics, "div_int": 0.0}, notes=(*profile.notes, note)), note


def masked_code(name: str, incore: Mapping[str, Any] | None, precision: str | None = None) -> bool:
    """Return whether the code read for kernel `name` loads or stores with AVX's masked moves (`masked_memory`).

    False where the code was not read, or was read before readings recorded it.
    """
    return bool((incore_entry(name, incore, precision) or {}).get("masked"))


def packed_lanes(name: str, incore: Mapping[str, Any] | None, precision: str | None = None) -> int | None:
    """Return the elements the compiled floating-point arithmetic of kernel `name` works on an instruction, if over 1.

    `incore`: a campaign's reading of the code the device ran (of its builds of `precision` where it has one),
    whose `fp_lanes` (`compiled_fp_lanes`: weighted by how often each instruction runs) is rounded down; None
    where it was not read, or is below 2. Rounded down, not to the nearest: SHOC md's float4 positions subtract in
    one packed instruction among scalar ones (1.75 elements an instruction), and its time is in the scalar chain.
    """
    compiled = (incore_entry(name, incore, precision) or {}).get("fp_lanes")
    return int(float(compiled)) if compiled is not None and float(compiled) >= 2 else None


def incore_entry(name: str, incore: Mapping[str, Any] | None, precision: str | None = None
                 ) -> Mapping[str, Any] | None:
    """Return the reading of kernel `name` in a campaign's `incore` record: its builds of `precision` first.

    A kernel built in single and in double precision has a reading of each where each precision's builds agree
    (`incore["precisions"]`, `PoclReading`); otherwise the kernel's one reading (its builds agreeing as a whole),
    or None.
    """
    split = ((incore or {}).get("precisions") or {}).get(name) or {}
    if precision is not None and precision in split:
        return split[precision]
    return ((incore or {}).get("kernels") or {}).get(name)


def profile_precision(profile: KernelProfile) -> str:
    """Return "fp64" where a profile counts more double- than single-precision instructions, else "fp32"."""
    return "fp64" if profile.metrics.get("fp64", 0.0) > profile.metrics.get("fp32", 0.0) else "fp32"


def kernel_incore_cycles(name: str, incore: Mapping[str, Any] | None, work_items: float | None,
                         instructions: float | None = None, precision: str | None = None) -> float | None:
    """Return kernel `name`'s in-core cycles at its timed size, or None.

    `incore`: a campaign's record of the code the device ran (`perfcast.campaign.incore_evidence`). The suite's
    work a work-item is the timed one's: cycles a work-item x `work_items`. A program's launch was read at
    another size: given the timed group's `instructions` (its profile's, carried to the timed size as declared),
    its cycles are that many instructions at the read launch's cycles an instruction. `precision`: the group's
    (`profile_precision`), which picks the reading of its builds (`incore_entry`).
    """
    entry = incore_entry(name, incore, precision)
    if entry is None or not work_items:
        return None
    if instructions is None:
        return float(entry["cycles_per_item"]) * float(work_items)
    per_item = float(entry.get("instructions_per_item") or 0.0)
    return float(entry["cycles_per_item"]) / per_item * instructions if per_item > 0 else None


def kernel_item_cycles(name: str, incore: Mapping[str, Any] | None, work_items: float | None,
                       precision: str | None = None) -> float | None:
    """Return the cycles of kernel `name`'s whole compiled code at its timed size (gcc's reading, §3.5), or None.

    Only a reading of gcc's code with gcov's counts (`incore_prices_vectors`) prices the loop over the work-items:
    its `item_cycles` a work-item x `work_items`; None where the reading found more than that loop (inner loops),
    less (a loop that runs some of the work-items) or a call.
    """
    entry = incore_entry(name, incore, precision)
    if not incore_prices_vectors(incore) or entry is None or not work_items or entry.get("item_cycles") is None:
        return None
    return float(entry["item_cycles"]) * float(work_items)


def incore_prices_vectors(incore: Mapping[str, Any] | None) -> bool:
    """Return whether a campaign's `incore` record priced vectorised loops too (gcc's code with gcov's counts)."""
    return bool((incore or {}).get("vector_loops"))


def compiled_code_terms(name: str, vectorisation: Mapping[str, Any] | None, incore: Mapping[str, Any] | None,
                        work_items: float | None, precision: str | None = None
                        ) -> tuple[int | None, float | None, bool, bool, float | None]:
    """Return what a suite campaign's record of its compiled code gives `predict_profiled` for kernel `name`.

    (lanes, in-core cycles at the timed size or None, whether the reading priced vector loops, whether the lanes
    are packed statements', the whole compiled code's cycles at the timed size or None): `lanes_and_packing`,
    `kernel_incore_cycles`, `incore_prices_vectors`, `kernel_item_cycles`; `precision` (`profile_precision`)
    picks the reading of that precision's builds where the record splits them.
    """
    lanes, packed = lanes_and_packing(name, vectorisation, incore, precision)
    return (lanes, kernel_incore_cycles(name, incore, work_items, precision=precision), incore_prices_vectors(incore),
            packed, kernel_item_cycles(name, incore, work_items, precision))


def _quantitative(profile: KernelProfile, device: Device, measured: float, lanes: int | None = None,
                  incore_cycles: float | None = None, incore_vectors: bool = False, packed: bool = False,
                  masked: bool = False, laid_out: bool = False, compiled_cycles: float | None = None,
                  groups: int | None = None, launched: bool = True) -> Prediction:
    p, detail, _ = predict_profiled(profile, quantitative_inputs(device), lanes, incore_cycles, incore_vectors,
                                    packed, masked, laid_out, compiled_cycles, launched, groups)
    return Prediction("quantitative", "point", p.time, ape=percentage_error(p.time, measured), detail=detail,
                      bound=p.bound)


def profile_flop(profile: KernelProfile) -> tuple[float, str]:
    """Return a profile's FLOP (FMA as two) in its dominant precision, and that precision (fp32 on a tie)."""
    m = profile.metrics

    def flop(precision: str) -> float:
        return 2 * m.get(f"fma_{precision}", 0.0) + m.get(f"add_{precision}", 0.0) + m.get(f"mul_{precision}", 0.0)

    precision = "fp64" if flop("fp64") > flop("fp32") else "fp32"
    return flop(precision), precision


def _profiled_roofline(profile: KernelProfile, device: Device, measured: float, spread: float) -> Prediction:
    work, precision = profile_flop(profile)
    bandwidths = device.level_bandwidths()
    counted = profile.level_bytes()
    traffic = {level: q for level, q in counted.items() if level in bandwidths}
    if not traffic and work <= 0:
        raise ValueError("the profile counts neither FLOP nor bytes at a level the device has a bandwidth for")
    missing = sorted(set(counted) - set(traffic))
    bound = hierarchical_roofline(work, traffic, device.peak_compute(precision), bandwidths)
    time = float(bound.time)
    efficiency = time / measured
    detail = (f"bound by {bound.binding}; {work:.4g} {precision} FLOP; bytes "
              f"{profile.bytes_from or 'global bytes, no cache'}"
              + (f"; no bandwidth for {', '.join(missing)}" if missing else ""))
    return Prediction("roofline", "bound", time, efficiency=efficiency, violation=efficiency > 1 + spread,
                      ape=percentage_error(time, measured), detail=detail)


def _profiled_hull(declared: KernelSpecies, record: dict[str, Any], profile: KernelProfile | None, device: Device,
                   measured: float, spread: float, kernel: str,
                   vectorisation: Mapping[str, Any] | None = None) -> Prediction:
    """Return the boat hull range of a program's kernel from the species the user gave it (sizes bound per group).

    `kernel` is the name the compiler's report (`vectorisation`) knows the kernel by.
    """
    sizes = bind_group(declared, record)
    precision = profile_flop(profile)[1] if profile is not None else "fp32"
    f, f_from = declared.f, "given" + ("; fp32 assumed: no profile" if profile is None else "")
    variables = class_variables(parse_species(declared.species).bind(sizes))
    applications = variables.w * variables.m
    if f is None:
        if profile is None:
            raise ValueError("no f given with the species and no profile to count it from")
        # f is ops per operator application: the profile's FLOP over the species' w·m applications.
        f = profile_flop(profile)[0] / applications
        f_from = f"the profile's {precision} FLOP over w·m = {applications:.4g} applications"
    calls = profile.elementary_calls(precision) / applications if profile is not None and applications else 0.0
    if calls:
        # A given f counts each call at ELEMENTARY_OPS (as `perfcast classify` and the suite do); the profile's
        # FLOP leaves calls out. Either way the device's measured rate of calls prices them, as the suite's hull.
        cost = elementary_ops(device, precision)
        f = priced_complexity(f, calls, cost.extra) if declared.f is not None else f + calls * cost.ops
        f_from += f"; {calls:.4g} elementary calls per application (profiled) at {cost.source}"
    element_bytes = declared.element_bytes or (8 if precision == "fp64" else 4)
    figures = hull_inputs(device, precision, element_bytes).figures
    assume, lanes, evidence = compiler_floors(kernel, element_bytes, figures, vectorisation, work_groups(record))
    result = predict_primitive(declared.species, figures, f, bind=sizes, element_bytes=element_bytes,
                               assume=assume, vector_lanes=lanes)
    given_size = " (given)" if declared.element_bytes else ""
    detail = (f"{result.species} (given; {', '.join(f'{k}={v}' for k, v in sizes.items())}), f = {f:.4g} ({f_from}), "
              f"{element_bytes:g} B elements{given_size}; lower bound by {result.prediction.lower_term[0]}, upper by "
              f"{result.prediction.upper_term[0]}{evidence}")
    return _hull_range(result, measured, spread, detail)


def group_kernel(name: str, record: Mapping[str, Any]) -> str:
    """Return the kernel a timed group of a program is of: its record's `kernel`, else the name before "[g/l]"."""
    # A group is named KERNEL[global/local] (and " (BUILD)" where one name had two builds); the record says which.
    return record.get("kernel") or name.partition("[")[0]


def score_profiled(name: str, record: dict[str, Any], device: Device, profile: KernelProfile | None,
                   species: KernelSpecies | None = None, vectorisation: Mapping[str, Any] | None = None,
                   incore: Mapping[str, Any] | None = None) -> KernelScore:
    """Return the predictions of a kernel known only by its profile (a program's launches), scored.

    The roofline and the quantitative model read the profile; the boat hull needs the kernel's species, which a
    profile does not give: `species`, where the user named it (`--species`). `vectorisation`: the compiler's
    report the run recorded (lanes per kernel name), which rules out CPU floors of the hull (`compiler_floors`).
    `incore`: the run's reading of the code the device ran (§3.5), carried to the group as its instructions are
    (`kernel_incore_cycles`).
    """
    measured, spread = record["median_s"], record["spread"]
    kernel = group_kernel(name, record)
    score = KernelScore(name, measured, spread)
    if measured <= 0:  # a coarse timer's zero: no time to set a prediction against
        for model in MODELS:
            score.left_out[model] = "timed at 0 s (below the timer's resolution): nothing to score against"
        return score
    counted = None
    if profile is not None and device.kind == "cpu":  # a GPU's launches map no host page
        profile, counted = with_timed_faults(profile, record)
    precision = profile_precision(profile) if profile is not None else None
    if profile is not None:
        profile, undivided = without_compiled_out_divisions(profile, kernel, incore, precision)
        counted = "; ".join(note for note in (counted, undivided) if note) or None
    cycles = (kernel_incore_cycles(kernel, incore, record.get("work_items"), 32 * profile.metrics["inst_warp"],
                                   precision)
              if profile is not None and "inst_warp" in profile.metrics else None)
    if profile is None:
        for model in ("roofline", "quantitative"):
            score.left_out[model] = "no profile of this kernel in the archive"
    else:
        def quantitative() -> Prediction:
            lanes, packed = lanes_and_packing(kernel, vectorisation, incore, precision)  # a bad record: the model left out
            return _quantitative(profile, device, measured, lanes, cycles, incore_prices_vectors(incore), packed,
                                 masked_code(kernel, incore, precision), incore_laid_out(kernel, incore, precision),
                                 groups=work_groups(record))

        for model, step in (("roofline", lambda: _profiled_roofline(profile, device, measured, spread)),
                            ("quantitative", quantitative)):
            try:
                score.predictions[model] = step()
            except (ValueError, LookupError) as error:
                score.left_out[model] = str(error)
        _explain_profile_size(score, profile, device)
        quantitative_prediction = score.predictions.get("quantitative")
        if counted and quantitative_prediction is not None:
            # A reader who sees the pages priced, or the trace's pages dropped for no faults, sees why.
            score.predictions["quantitative"] = replace(quantitative_prediction,
                                                        detail=f"{quantitative_prediction.detail}; {counted}")
    if species is None:
        score.left_out["boat hull"] = ("no species: a program's kernel is known by its profile only (give one with "
                                       "--species KERNEL=SPECIES)")
        return score
    try:
        score.predictions["boat hull"] = _profiled_hull(species, record, profile, device, measured, spread, kernel,
                                                        vectorisation)
    except (ValueError, LookupError) as error:
        score.left_out["boat hull"] = str(error)
    return score


def with_timed_faults(profile: KernelProfile, record: Mapping[str, Any]) -> tuple[KernelProfile, str | None]:
    """Return a group's profile with its first-touched pages taken from the timed run's page faults, and a note.

    The trace counts the pages of buffers the program never wrote; whether the operating system still has to map
    them depends on the host's allocator (a buffer carved from memory the process used and freed is mapped
    already). The launch log counts the faults the launches made: where it did, they are the pages (§3.7). The
    note says so where either count is above 0 (None where the record has no faults, or both are 0).
    """
    faults = record.get("faults")
    if faults is None:
        return profile, None
    traced = first_touched_pages(profile.metrics)
    said = f"pages touched first: the {faults:.4g} page faults of the timed run's median launch (the launch log)"
    if traced is not None:
        said += f", where the trace found {traced:.4g} pages no one wrote"
    metrics = {**profile.metrics, FIRST_TOUCH_METRICS[0]: float(faults), FIRST_TOUCH_METRICS[1]: 0.0}
    return replace(profile, metrics=metrics, notes=(*profile.notes, said)), said if faults or traced else None


def _explain_profile_size(score: KernelScore, profile: KernelProfile, device: Device) -> None:
    """Add to the byte-reading predictions why a profile scaled from a smaller problem may miss (profile_size)."""
    try:
        levels = cache_hierarchy(device).levels
    except ValueError:  # InputError too: a device without cache sizes, whose bytes were not simulated either
        return
    outgrown = profile_outgrows(profile.metrics, levels)
    if outgrown is None:
        return
    for model in ("roofline", "quantitative"):
        if model in score.predictions:
            prediction = score.predictions[model]
            score.predictions[model] = replace(prediction, detail=f"{prediction.detail}; {outgrown.describe()}")


def score_kernel(kernel: CampaignKernel, record: dict[str, Any], device: Device,
                 profile: KernelProfile | None, vectorisation: Mapping[str, Any] | None = None,
                 incore: Mapping[str, Any] | None = None, launched: bool = True) -> KernelScore:
    """Return every model's prediction of one timed kernel, scored against its measurement.

    `vectorisation`: the compiler's report the run recorded (lanes per kernel, threads), which rules out CPU
    floors of the boat hull (`compiler_floors`). `incore`: the run's in-core record of the code the device ran,
    the in-core floor (§3.5) of a kernel left scalar, or of any kernel where the record priced vector loops.
    `launched`: the kernel ran as a runtime's launch of work-groups (OpenCL, CUDA), whose cost §3.8 adds where
    the device measured it; the C backend's kernels are loops in one call (`campaign_launched`).
    """
    measured, spread, n = record["median_s"], record["spread"], record["n"]
    score = KernelScore(kernel.name, measured, spread)

    def quantitative() -> Prediction | None:
        if profile is None:
            return None
        # A bad record: the model left out.
        precision = profile_precision(profile)
        lanes, cycles, vectors, packed, whole = compiled_code_terms(kernel.name, vectorisation, incore,
                                                                    record.get("work_items"), precision)
        divided, undivided = without_compiled_out_divisions(profile, kernel.name, incore, precision)
        launch = kernel.launch(n)
        groups = work_groups({"global_size": launch.global_size, "local_size": launch.local_size})
        prediction = _quantitative(divided, device, measured, lanes, cycles, vectors, packed,
                                   masked_code(kernel.name, incore, precision),
                                   incore_laid_out(kernel.name, incore, precision), whole, groups, launched)
        return replace(prediction, detail=f"{prediction.detail}; {undivided}") if undivided else prediction

    steps = {
        "roofline": lambda: _roofline(kernel, n, device, measured, spread, profile),
        "boat hull": lambda: _hull(kernel, n, device, measured, spread, vectorisation),
        "quantitative": quantitative,
    }
    for model, step in steps.items():
        try:
            prediction = step()
        except (ValueError, LookupError) as error:  # InputError and NotFound are both
            score.left_out[model] = str(error)
            continue
        if prediction is None:
            score.left_out[model] = "no profile of this kernel in the archive"
        else:
            score.predictions[model] = prediction
    return score


# What the quantitative model prices that the boat hull's few figures do not, by the term that bound the time.
HULL_LACKS = {
    "division": "integer divisions at the divider's measured rate (§3.2)",
    "in-core": "the chains its inner loops carry from one iteration to the next (§3.5, llvm-mca's cycles)",
    "latency": "the latency of the loads no prefetcher foresees (§3.1)",
    "masked": "its loads and stores through masked moves, at the guarded triad's and copy's costs from any level "
              "(§3.6)",
    "issue": "its instructions, left scalar, issued one at a time (§3.3): the hull prices the species' operations, "
             "not the compiler's instructions",
    "atomic": "its locked atomics (§3.4)",
    "first-touch": "the pages it touches first, each mapped by the operating system on that access (§3.7)",
    "launch": "the runtime's own time of the launch and of starting each work-group (§3.8)",
    "barrier": "the runtime's time of each work-item's barrier crossings, a work-item loop ended and begun (§3.9)",
    "compute": "its instruction mix: loads, stores and integer work beside the arithmetic (E_mix, E_instr, T_ldst; "
               "§3, §3.6), where the hull takes the peak of the arithmetic alone",
    "memory": "the bytes its caches move beyond the species' compulsory ones (the simulated traffic)",
}
TERMS = {"c0": "c0, the compute peak", "m0": "m0, the memory bandwidth"}  # the floors (c1 ...) go by their symbol


def hull_miss(score: KernelScore) -> str | None:
    """Return why a kernel lies outside its boat hull range, by the figure the hull lacks or sets too low; None if in.

    Above the range: the quantitative model's binding term names what the hull does not price (HULL_LACKS).
    Below it: the lower end's term, a figure (peak or bandwidth) the kernel beat or a species that counts too much.
    """
    hull = score.predictions.get("boat hull")
    if hull is None or hull.contained is not False or hull.lower is None or hull.upper is None:
        return None
    quantitative = score.predictions.get("quantitative")
    lower_term, upper_term = hull.terms
    if score.measured > hull.upper:
        text = f"{score.measured / hull.upper:.3g}x the hull's upper end ({TERMS.get(upper_term, upper_term or '?')})"
        if quantitative is None or not quantitative.bound:
            return f"{text}; no quantitative prediction to say what the hull lacks"
        agreement = f"APE {quantitative.ape:.0%}" if quantitative.ape is not None else "unscored"
        lacks = HULL_LACKS.get(quantitative.bound, f"what binds it ({quantitative.bound})")
        return f"{text}; the quantitative model ({agreement}) is {quantitative.bound} bound: it prices {lacks}"
    return (f"{hull.lower / score.measured:.3g}x faster than the hull's lower end ({TERMS.get(lower_term, lower_term)})"
            f": the kernel beat that figure, or the species counts more work than it does")


@dataclass(frozen=True)
class ModelSummary:
    """A model over the suite: n, MAPE, median APE, worst kernel, containment or violations, kernels left out."""

    model: str
    n: int
    mape: float | None
    median_ape: float | None
    worst: tuple[str, float] | None
    contained: tuple[int, int] | None  # ranges: (inside, n)
    violations: tuple[str, ...]  # bounds beaten by more than the spread
    left_out: dict[str, str]
    median_width: float | None = None  # ranges: the median of upper / lower
    narrow_contained: int | None = None  # ranges: inside and at most NARROW wide


def summarise(scores: list[KernelScore], model: str) -> ModelSummary:
    """Return the summary of `model` over the scored kernels."""
    predictions = [(s.kernel, s.predictions[model]) for s in scores if model in s.predictions]
    apes = [(name, p.ape) for name, p in predictions if p.ape is not None]
    values = [ape for _, ape in apes]
    ranges = [p for _, p in predictions if p.kind == "range"]
    widths = [_width(p) for p in ranges]
    return ModelSummary(
        model, len(predictions),
        statistics.fmean(values) if values else None,
        statistics.median(values) if values else None,
        max(apes, key=lambda item: item[1]) if apes else None,
        (sum(1 for p in ranges if p.contained), len(ranges)) if ranges else None,
        tuple(name for name, p in predictions if p.violation),
        {s.kernel: s.left_out[model] for s in scores if model in s.left_out},
        statistics.median(widths) if widths else None,
        sum(1 for p, width in zip(ranges, widths) if p.contained and width <= NARROW) if ranges else None,
    )


def _width(prediction: Prediction) -> float:
    """Return a range's upper / lower end (inf for a lower end of 0)."""
    low, high = prediction.lower or 0.0, prediction.upper or 0.0
    return high / low if low > 0 else math.inf
