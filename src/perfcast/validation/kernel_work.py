"""The work of each corpus kernel: FLOP, FP instructions and bytes per memory level, per configuration.

Counted from each kernel's source and problem size (`corpus.yaml` names both), for every configuration at
once (arrays over the rows of the corpus). Bytes are those *requested* at each level, the traversals N+_l of
the hierarchical roofline (spec §1, §4): `l1` every global load and store the threads issue, `l2` what
leaves a work-group's L1 (its footprint: the tile with its halo, the panels of a GEMM tile), `dram` the
compulsory bytes (each input read once, each output written once), `shared` the bytes the kernel moves
through shared (local) memory. Every count rests on assumptions; each kernel lists them in `caveats`, and
the report prints them beside its scores.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from perfcast.errors import InputError, NotFound
from perfcast.models.boathull import ClassVariables
from perfcast.species.classes import class_variables, power_of_two
from perfcast.species.grammar import parse_species

__all__ = ["SECTOR_BYTES", "WORK", "HullClass", "KernelWork", "kernel_work"]

SECTOR_BYTES = 32  # the unit a GPU's L1 requests from L2 (an NVIDIA sector; AMD's L2 line is 64 or 128 B)
Array = NDArray[np.float64]


@dataclass(frozen=True)
class HullClass:
    """How the boat hull sees a kernel: its species (or derived class variables), complexity f and element size."""

    species: str  # the species text, or a description where the variables are derived
    variables: ClassVariables
    f: float  # ops per operator application
    element_bytes: float
    assume: tuple[str, ...] = ()  # floors the kernel rules out (e.g. "fma": it is written with FMAs)
    conversions: float = 0.0  # int/fp32 conversions per application, priced at each GPU's rate (models.md §2)


@dataclass(frozen=True)
class KernelWork:
    """A kernel's work per configuration (arrays over rows): FLOP, FP instructions by kind, bytes per level."""

    flop: Array
    n_fma: Array
    n_add: Array
    n_mul: Array
    l1: Array  # B requested from global memory by the threads (N+_L1 without shared memory)
    l2: Array  # B that leave the work-groups' L1 (N+_L2)
    dram: Array  # compulsory B (N+_DRAM)
    shared: Array  # B through shared / local memory
    group_threads: Array  # work-items per work-group (fills warps / wavefronts)
    hull: HullClass
    caveats: tuple[str, ...]

    def active_threads(self, row: int, warp_size: int) -> float:
        """Return the mean active threads per warp instruction of configuration `row` on warps of `warp_size`."""
        threads = float(self.group_threads[row])
        return threads / math.ceil(threads / warp_size)

    def hits(self, row: int) -> dict[str, float]:
        """Return the bytes that hit in L1, L2 and DRAM for configuration `row` (spec §4's N_l)."""
        l1, l2, dram = (float(a[row]) for a in (self.l1, self.l2, self.dram))
        l2 = max(l2, dram)
        l1 = max(l1, l2)
        return {"L1": l1 - l2, "L2": l2 - dram, "DRAM": dram}


def _column(configs: NDArray[np.int64], parameters: tuple[str, ...], name: str, default: int) -> Array:
    """Return one parameter's values over the rows as floats, `default` where the space does not tune it."""
    if name in parameters:
        return configs[:, parameters.index(name)].astype(np.float64)
    return np.full(len(configs), float(default))


def _full(configs: NDArray[np.int64], value: float) -> Array:
    """Return `value` for every row."""
    return np.full(len(configs), float(value))


def _convolution(configs: NDArray[np.int64], parameters: tuple[str, ...], problem: Mapping[str, Any]) -> KernelWork:
    """Return a tiled 2D convolution's work (convolution.cu of the hub): one FMA per filter tap and output."""
    width, height = (int(v) for v in problem["size"])
    fw, fh = (int(v) for v in problem["filter"])
    s = float(problem.get("element_bytes", 4))
    p = {name: _column(configs, parameters, name, default) for name, default in
         (("block_size_x", 16), ("block_size_y", 16), ("tile_size_x", 1), ("tile_size_y", 1), ("use_shmem", 1))}
    outputs = float(width * height)
    taps = float(fw * fh)
    tile_x, tile_y = p["block_size_x"] * p["tile_size_x"], p["block_size_y"] * p["tile_size_y"]
    groups = np.ceil(width / tile_x) * np.ceil(height / tile_y)
    staged = groups * (tile_x + fw - 1) * (tile_y + fh - 1) * s  # each group's input tile with its halo
    written = outputs * s
    dram = _full(configs, ((width + fw - 1) * (height + fh - 1) + outputs) * s)
    shmem = p["use_shmem"] > 0
    # The committed source stages the tile in shared memory whatever use_shmem says. For use_shmem=0 the
    # code that ran is unknown: its global loads are counted at their least, the staged tile (every input
    # the group needs, once), so that the bound stays a bound.
    l1 = staged + written
    l2 = staged + written
    # The filter loops are unrolled: a thread's taps of its tile's outputs overlap where the tile's stride
    # (the block size) is below the filter, and the compiler loads each distinct shared word once.
    rows = np.where(p["block_size_y"] >= fh, p["tile_size_y"] * fh, p["block_size_y"] * (p["tile_size_y"] - 1) + fh)
    cols = np.where(p["block_size_x"] >= fw, p["tile_size_x"] * fw, p["block_size_x"] * (p["tile_size_x"] - 1) + fw)
    per_output = rows * cols / (p["tile_size_x"] * p["tile_size_y"])
    shared = np.where(shmem, staged + outputs * per_output * s, 0.0)
    fma = _full(configs, outputs * taps)
    species = f"{width}x{height}|neighb({fw}x{fh}) -> {width}x{height}|element"
    hull = HullClass(species, class_variables(parse_species(species)), 2.0, s)
    caveats: tuple[str, ...] = (
        "FLOP = 2 per filter tap and output (one FMA); the filter is read from constant memory and not counted.",
        "L2 traffic is each work-group's tile with its halo; DRAM traffic is compulsory (the halo is assumed "
        "to hit in L2 across neighbouring groups).",
        "Shared-memory loads: each distinct word a thread's unrolled taps read, once (taps of neighbouring "
        "outputs of its tile overlap where the block is smaller than the filter).")
    if "use_shmem" in parameters:
        caveats += ("use_shmem=0: the committed source ignores the parameter, yet the times differ; its global "
                    "loads are counted at their least (the staged tile, once) and its shared-memory bytes as none.",)
    return KernelWork(2 * fma, fma, _full(configs, 0), _full(configs, 0), l1, np.maximum(l2, dram), dram, shared,
                      p["block_size_x"] * p["block_size_y"], hull, caveats)


def _dedispersion_shifts(channels: int, samples: int) -> Array:
    """Return the hub's per-channel delays (samples per unit DM), as dedispersion_milo.py computes them."""
    channel_bandwidth, sampling_time, min_freq = 0.1953125, 0.00004096, 1425.0
    max_freq = min_freq + (channels - 1) * channel_bandwidth
    inverse = 1.0 / (min_freq + np.arange(channels, dtype=np.float64) * channel_bandwidth) ** 2
    shifts = 4148.808 * (inverse - 1 / max_freq**2) * samples / (samples * sampling_time)
    shifts[-1] = 0.0
    return np.asarray(shifts, dtype=np.float64)


def _dedispersion(configs: NDArray[np.int64], parameters: tuple[str, ...], problem: Mapping[str, Any]) -> KernelWork:
    """Return dedispersion's work (dedispersion.cu of the hub): per output and channel a shifted byte load."""
    samples, dms, channels = int(problem["samples"]), int(problem["dms"]), int(problem["channels"])
    per_channel = samples + int(problem["max_shift"])
    dm_step = 0.02
    bx, by = _column(configs, parameters, "block_size_x", 1), _column(configs, parameters, "block_size_y", 1)
    tx, ty = _column(configs, parameters, "tile_size_x", 1), _column(configs, parameters, "tile_size_y", 1)
    outputs = float(samples * dms)
    pairs = outputs * channels
    delays = _dedispersion_shifts(channels, samples)
    # Each channel's samples are read up to the last DM's delay (the array is padded to max_shift).
    read = float(np.sum(samples + np.floor((dms - 1) * dm_step * delays)))
    if read > channels * per_channel:
        raise InputError(f"dedispersion: the delays reach past max_shift {problem['max_shift']}")
    dram = _full(configs, read + outputs * 4 + channels * 4)
    # Per (output, channel) a thread loads one input byte and the channel's 4-byte delay. Counted as the
    # distinct words a warp reads (as for GEMM): its 32 threads read 32 different bytes, but share the delay
    # of each DM they cover, ceil(32 / block_size_x) of them.
    dms_per_warp = np.minimum(np.ceil(32.0 / bx), by)
    l1 = pairs * (1 + 4 * dms_per_warp / 32) + outputs * 4
    # A work-group covers tile_x samples and tile_y DMs; per channel it reads the samples of its first DM
    # shifted by up to (tile_y - 1) x dm_step x delay more: a contiguous span, fetched in 32-byte sectors.
    tile_x, tile_y = bx * tx, by * ty
    groups = np.ceil(samples / tile_x) * np.ceil(dms / tile_y)
    mean_shift = float(delays.mean())
    span = tile_x + (tile_y - 1) * dm_step * mean_shift
    # A contiguous span of L bytes at an arbitrary offset touches (L + 31) / 32 sectors of 32 B on average.
    sectors = (span + SECTOR_BYTES - 1) / SECTOR_BYTES
    l2 = groups * channels * (sectors * SECTOR_BYTES + 4) + outputs * 4
    w = outputs
    # A neighbourhood's window sits at fixed offsets from its output, so a staged tile's loads take constant
    # offsets and the index maths is amortised (the 64 of §2.2). A sheared column's offset is each DM's own
    # multiple of the channel's delay: every application computes its index and loads, as a tile read by its own
    # work unit does (§2.2's 4m, rounded to a power of two as o always is).
    overhead = power_of_two(4 * channels)
    cls = ClassVariables(w=w, m=channels, o=overhead, d=read + outputs * 4, c=read + outputs * 4, u=0, floors=("c1",),
                         origin="derived",
                         name="derived: each output sums one shifted byte per channel (a sheared neighbourhood)")
    # Summing bytes in fp32 converts each byte once: one conversion per application, at the GPU's own rate.
    hull = HullClass(f"{channels}x{per_channel}|sheared column({channels}) -> {dms}x{samples}|element (derived, "
                     "element size 1 B: c and d in bytes; one byte-to-float conversion an application)", cls, 2.0, 1.0,
                     conversions=1.0)
    caveats = ("FLOP = 2 per output and channel (the delay multiply and the accumulate); the float-to-int "
               "conversion of the shift and the index arithmetic are instructions, not FLOP.",
               "L1 bytes: the distinct words a warp reads per (output, channel), 32 input bytes and one 4-byte "
               "delay per DM the warp covers (a broadcast); DRAM bytes: each channel's samples up to the last DM's "
               "delay, and the outputs.",
               f"L2 bytes: a group's span of samples per channel, from the mean delay ({mean_shift:.1f} samples per "
               "unit DM), in 32-byte sectors.",
               "Boat hull: f = 2 FLOP per (output, channel), plus the byte's conversion to float at each GPU's "
               "conversion rate (the catalog's `conversions`: 16 a clock per SM on NVIDIA, 8 to 16 of the peak's "
               f"ops; full rate on AMD, 2 to 4), and o = 4m = {overhead:g} (a load and its index maths each "
               "application: the shear gives each DM its own offsets). Without the two, the best times lay "
               "3.7-10x above a range of FLOP alone (the roofline's fractions, 0.05-0.27, say the same: neither "
               "FLOP nor bytes bound this kernel). Compiled by nvcc 13 (cuobjdump -sass, channel loop unrolled "
               "8x), a (output, channel) pair is about 10 instructions: 2 loads, FMUL, FADD, 2.6 IADD3, 1.5-2 "
               "IMAD and two conversions, F2I of the shift and I2F of the byte (I2FP on sm_86 and sm_90). The "
               "hull prices the one conversion the species implies (bytes summed in fp32), not the source's "
               "float shift: at the CUDA guide's 16 a clock the two would take 37.6 ms on the H100, above its "
               "best time (28.7 ms), so Hopper converts one of them faster than the guide says; which one is "
               "not known, so the one priced may not be the one that binds there.")
    return KernelWork(_full(configs, 2 * pairs), _full(configs, 0), _full(configs, pairs), _full(configs, pairs),
                      np.maximum(l1, l2), np.maximum(l2, dram), dram, _full(configs, 0), bx * by, hull, caveats)


def _gemm(configs: NDArray[np.int64], parameters: tuple[str, ...], problem: Mapping[str, Any]) -> KernelWork:
    """Return CLBlast Xgemm's work: C = alpha A B + beta C with MWG x NWG tiles per work-group."""
    m, n, k = (float(problem[name]) for name in ("m", "n", "k"))
    s = float(problem.get("element_bytes", 4))
    col = {name: _column(configs, parameters, name, 0) for name in
           ("MWG", "NWG", "MDIMC", "NDIMC", "SA", "SB")}
    mwi, nwi = col["MWG"] / col["MDIMC"], col["NWG"] / col["NDIMC"]
    fma = m * n * k
    dram = _full(configs, (m * k + k * n + 2 * m * n) * s)
    # Per work-group the A panel (MWG x K) and B panel (K x NWG) leave L2; per thread each k needs MWI values
    # of A and NWI of B, from local memory where SA / SB stage them, else from global memory through L1.
    panels = (m * n * k / col["NWG"] + m * n * k / col["MWG"]) * s + 2 * m * n * s
    # Threads of a warp that need the same A (B) value get it in one access (a broadcast): a warp of 32 spans
    # min(MDIMC, 32) m-indices and ceil(32 / MDIMC) n-indices, so its loads move that many distinct words.
    spans_m = np.minimum(col["MDIMC"], 32.0)
    spans_n = np.minimum(np.ceil(32.0 / col["MDIMC"]), col["NDIMC"])
    loads_a, loads_b = m * n * k / nwi * s * spans_m / 32, m * n * k / mwi * s * spans_n / 32
    from_global = np.where(col["SA"] > 0, 0.0, loads_a) + np.where(col["SB"] > 0, 0.0, loads_b)
    staged = np.where(col["SA"] > 0, m * n * k / col["NWG"] * s + loads_a, 0.0) + \
        np.where(col["SB"] > 0, m * n * k / col["MWG"] * s + loads_b, 0.0)
    l1 = np.where(col["SA"] > 0, m * n * k / col["NWG"] * s, 0.0) + np.where(col["SB"] > 0, m * n * k / col["MWG"] * s,
                                                                                0.0) + from_global + 2 * m * n * s
    species = f"{int(m)}x{int(k)}|chunk(1x{int(k)}) ^ {int(k)}x{int(n)}|chunk({int(k)}x1) -> {int(m)}x{int(n)}|element"
    hull = HullClass(species, class_variables(parse_species(species)), 2.0, s)
    caveats = ("FLOP = 2 M N K (the alpha/beta update, 3 M N, is left out: 0.07 % here).",
               "L2 bytes are the A and B panels of each work-group's tile, L1 bytes the per-thread loads where "
               "SA / SB do not stage them in local memory; the vector widths VWM / VWN change instructions, "
               "not bytes.",
               "Per-thread loads count the distinct words each warp reads (threads sharing an A or B value are "
               "served by one broadcast), with warps of 32 threads.",
               "Boat hull: the chunks are combined into more work units than they number (each row of A and column "
               "of B is read by 4096 outputs), so the derived class takes the neighbourhood's overhead o = 64, "
               "staged on chip, not the 4m of a tile read by one work unit: with 4m the overhead was twice the 2m "
               "FLOP and every best time lay 1.4-2.7x below c0.")
    zero = _full(configs, 0)
    return KernelWork(_full(configs, 2 * fma), _full(configs, fma), zero, zero, np.maximum(l1, panels),
                      np.maximum(panels, dram), dram, staged, col["MDIMC"] * col["NDIMC"], hull, caveats)


def _pnpoly(configs: NDArray[np.int64], parameters: tuple[str, ...], problem: Mapping[str, Any]) -> KernelWork:
    """Return point-in-polygon's work: every point against every edge; only unconditional FLOP are counted."""
    points, vertices = float(problem["points"]), float(problem["vertices"])
    tile = _column(configs, parameters, "tile_size", 1)
    between = _column(configs, parameters, "between_method", 0)
    pairs = points * vertices
    # is_between: methods 2 and 3 subtract twice and multiply; 0 and 1 only compare. The edge's slope
    # (two subtractions and a division) is computed once per edge for a thread's tile of points.
    between_flop = np.where(between >= 2, 3.0, 0.0)
    slope = 3.0 / tile
    flop = pairs * (between_flop + slope)
    n_add = pairs * (np.where(between >= 2, 2.0, 0.0) + 2.0 / tile)
    n_mul = pairs * (np.where(between >= 2, 1.0, 0.0) + 1.0 / tile)
    dram = _full(configs, points * (8 + 4))
    cls = ClassVariables(w=points, m=1, o=16, d=2 * points, c=2 * points, u=0, floors=("c1",), origin="derived",
                         name="derived: each point tested against every edge (element to element)")
    hull = HullClass(f"{int(points)}|element -> {int(points)}|element (derived; 8-byte points, 4-byte flags)", cls,
                     float(vertices * 3), 6.0)
    caveats = ("FLOP counts only the arithmetic every configuration executes: the crossing test's subtraction "
               "and FMA run only where the point lies between the edge's ends (data dependent) and are left out, "
               "so the roofline is a loose bound here; the kernel is bound by compares and branches.",
               "Boat hull f = 3 ops per edge (the crossing test's subtract and FMA, as written), element size 6 B "
               "(the mean of the 8-byte point and the 4-byte flag).")
    zero = _full(configs, 0)
    return KernelWork(flop, zero, n_add, n_mul, dram, dram, dram, zero,
                      _column(configs, parameters, "block_size_x", 256), hull, caveats)


# Parameters that are sizes or counts (a work count divides by them): zero or less is refused.
_SIZES = {"block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "tile_size", "MWG", "NWG", "MDIMC", "NDIMC"}

WORK: dict[str, Callable[[NDArray[np.int64], tuple[str, ...], Mapping[str, Any]], KernelWork]] = {
    "convolution-milo": _convolution,
    "convolution": _convolution,
    "dedispersion-milo": _dedispersion,
    "gemm": _gemm,
    "pnpoly": _pnpoly,
}


def kernel_work(name: str, configs: NDArray[np.int64], parameters: tuple[str, ...],
                problem: Mapping[str, Any]) -> KernelWork:
    """Return the work of corpus kernel `name` for every configuration (FLOP, instructions, B per level)."""
    if name not in WORK:
        raise NotFound(f"perfcast cannot count the work of {name!r} (it counts: {', '.join(WORK)})")
    if (configs[:, [i for i, p in enumerate(parameters) if p in _SIZES]] <= 0).any():
        raise InputError(f"{name}: a size parameter ({', '.join(p for p in parameters if p in _SIZES)}) is zero or "
                         "negative")
    try:
        return WORK[name](configs, parameters, problem)
    except KeyError as error:
        raise InputError(f"{name}: the corpus manifest's problem lacks {error}") from None
