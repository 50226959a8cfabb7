"""The bytes that move: a kernel's memory accesses (traced under Oclgrind) simulated through a device's caches.

The trace comes from perfcast's Oclgrind plugin (`oclgrind_trace.cpp`, built by `trace_plugin.py`). Format
`PCTRACE1`, little-endian: the 8-byte magic, then chunks, each opening with two uint32 (kind, length):

* kind 1, a launch: length = bytes of the kernel's name; nine uint64 (global size x y z, local size x y z,
  global offset x y z); the name.
* kind 2, a work-group's accesses: uint64 group index (dispatch order), uint64 n; n records of 24 bytes:
  uint64 address, uint32 size, uint32 lane (local linear index; 0xffffffff: the group as a whole),
  uint32 ordinal (the work-item's accesses counted from 0), uint16 region (barriers passed), uint8 space
  (1 global, 2 constant, 3 local), uint8 flags (1 store, 2 atomic, 4 indirect: a global load whose address
  depends on a value loaded from memory, or read by a builtin such as vload2; traces before this flag have none,
  under the same magic).
* kind 3, the launch's end: uint64 work-groups run, recorded, and left out past the size cap.
* kind 4, a global buffer placed (at its allocation, or at its first access): uint64 base address, uint64 size.
* kind 5, before a launch's end: uint64 pages stored first, uint64 pages loaded first. Over every work-group
  (recorded or not), the 4 KiB pages of global buffers the launch touched before anyone else did: not written
  by the host (a write, fill, copy, a map for writing, data given at creation) nor touched by a launch before.
  The operating system maps such a page on its first access (docs/models.md, §3.7). Traces written before
  this chunk existed have none: their launches' first touches are unknown.

The simulation (pycachesim, the cache simulator of the kerncraft authors) replays each launch as the device
would issue it: work-groups dealt round-robin to the compute units in waves, one private cache chain per unit
(shared levels shared), each unit's accesses in warp (GPU) or vector (CPU) order, the units advancing a warp
instruction at a time in turn. Where only windows of work-groups were recorded, each window's first wave
warms the caches (dirty lines written back, then the counts reset) and the counted groups are scaled to the
launch's. Every figure it returns is in bytes, but one: on a CPU, the *scattered* loads apart (counts). On a
CPU each page of the hierarchy's `page_bytes` is placed at a frame of its own (`_placed`), as an operating
system places pages, since its caches index by physical address; streams and first fetches keep the virtual
addresses.

A CPU's prefetchers hide the latency of loads that continue a stream; a load that does not (a gather through an
index array, a walk down a matrix column) waits for its line. Each load on a CPU is called scattered where its
line is neither one of the SCATTER_WINDOW accesses before it on its core nor next to one of theirs (a stream
prefetcher's trigger), and the simulation counts, per level, the scattered loads that level served (the loads
that reached it less those it passed on): the input of the quantitative model's latency floor (docs/models.md).
Of them it also counts, per level, those in the L1 set of the SET_WALK_RUN scattered loads before them in their
work-group's issue order (a walk down a column of rows one L1 set span apart, `set_walk_*`), and the loads in a
known buffer with the sum of log2 of its size (`gather_loads_*`, `gather_log2_*`: the geometric mean size of what
a level's scattered loads gather from, at which the floor reads that level's random-load rate).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.errors import InputError
from perfcast.models.caches import CacheHierarchy
from perfcast.profiles.profile import KernelProfile, ProfileSet
from perfcast.profiles.reuse import REUSE_BINS, ReuseTracker, histogram_metrics

__all__ = ["FIRST_TOUCH_METRICS", "INDIRECT_METRIC", "LaunchTrace", "LaunchTraffic", "LevelTraffic", "RECORD",
           "SCATTER_WINDOW", "SET_WALK_PREFIX", "SET_WALK_RUN", "SPAN_LOADS_PREFIX", "SPAN_LOG2_PREFIX",
           "SPAN_WINDOW", "TRACE_MAGIC", "TraceError", "apply_traffic", "cap_first_fetches", "first_fetches",
           "first_touched_pages", "gather_spans_by_level", "indirect_share", "read_trace", "recent_spans",
           "scattered_by_level", "scattered_loads", "set_walk_by_level", "set_walk_loads", "set_walks_shared_out",
           "simulate_launch", "simulate_trace", "traffic_metrics"]

TRACE_MAGIC = b"PCTRACE1"
SET_WALK_PREFIX = "set_walk_"  # profile metrics per level: scattered loads walking one L1 set (set_walk_loads)
# Profile metrics per level: scattered loads in a known buffer, and the sum of log2 of its size (B) over them.
SPAN_LOADS_PREFIX, SPAN_LOG2_PREFIX = "gather_loads_", "gather_log2_"
_SIMULATED_SPARSE = (SET_WALK_PREFIX, SPAN_LOADS_PREFIX, SPAN_LOG2_PREFIX)  # written only where above zero
RECORD = np.dtype([("address", "<u8"), ("size", "<u4"), ("lane", "<u4"), ("ordinal", "<u4"), ("region", "<u2"),
                   ("space", "u1"), ("flags", "u1")])
GROUP_LEVEL = 0xFFFFFFFF
SPACE_GLOBAL, SPACE_CONSTANT, SPACE_LOCAL = 1, 2, 3
FLAG_STORE, FLAG_ATOMIC, FLAG_INDIRECT = 1, 2, 4
INDIRECT_METRIC = "indirect_scattered"  # profile metric: of the scattered loads (every level), those FLAG_INDIRECT
_KERNEL, _GROUP, _END, _BUFFER, _PAGES = 1, 2, 3, 4, 5
_LOCAL_BASE = 1 << 56  # where a CPU's local memory is placed, per core, far from any buffer
SCATTER_WINDOW = 32  # accesses before a load, on its core, whose lines (or their neighbours) make it a stream's
FIRST_TOUCH_METRICS = ("first_store_pages", "first_load_pages")  # a launch's pages touched first (docs/metrics.md)


class TraceError(InputError):
    """A memory trace that cannot be read: not a trace, cut short inside a chunk, or inconsistent."""


@dataclass
class LaunchTrace:
    """One kernel launch's recorded accesses: sizes, work-groups run and recorded, records per group index."""

    kernel: str
    global_size: tuple[int, int, int]
    local_size: tuple[int, int, int]
    offset: tuple[int, int, int]
    groups: dict[int, np.ndarray] = field(default_factory=dict)
    groups_run: int = 0
    groups_dropped: int = 0
    complete: bool = False
    buffers: dict[int, int] = field(default_factory=dict)  # base address -> size (B) of the global buffers then
    # 4 KiB pages of global memory this launch touched first, by a store and by a load (count, every work-group);
    # None in a trace written without the count.
    first_store_pages: int | None = None
    first_load_pages: int | None = None

    @property
    def group_size(self) -> int:
        """Return the work-items of one work-group."""
        x, y, z = self.local_size
        return x * y * z

    @property
    def accesses(self) -> int:
        """Return the recorded accesses."""
        return sum(len(records) for records in self.groups.values())


def read_trace(path: str | Path) -> Iterator[LaunchTrace]:
    """Yield the launches of a trace file in order; the last is marked incomplete where the file stops early."""
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as error:
        raise TraceError(f"cannot read the trace {path}: {error.strerror or error}") from None
    with handle:
        if handle.read(8) != TRACE_MAGIC:
            raise TraceError(f"{path} is not a perfcast memory trace (no {TRACE_MAGIC.decode()} header)")
        launch: LaunchTrace | None = None
        buffers: dict[int, int] = {}
        while True:
            head = handle.read(8)
            if not head:
                break
            if len(head) < 8:
                raise TraceError(f"{path}: cut short inside a chunk header")
            kind, length = struct.unpack("<II", head)
            if kind == _KERNEL:
                if launch is not None:
                    yield launch  # a launch without its end chunk: the program stopped inside it
                body = _exact(handle, 72 + length, path)
                g0, g1, g2, l0, l1, l2, o0, o1, o2 = struct.unpack("<9Q", body[:72])
                launch = LaunchTrace(body[72:].decode("utf-8", "replace"), (g0, g1, g2), (l0, l1, l2), (o0, o1, o2),
                                     buffers=buffers)
            elif kind == _GROUP:
                index, count = struct.unpack("<QQ", _exact(handle, 16, path))
                if launch is None:
                    raise TraceError(f"{path}: work-group records before any launch")
                records = np.frombuffer(_exact(handle, count * RECORD.itemsize, path), dtype=RECORD)
                launch.groups[index] = records
            elif kind == _END:
                run, recorded, dropped = struct.unpack("<3Q", _exact(handle, 24, path))
                if launch is None:
                    raise TraceError(f"{path}: a launch end without its start")
                if recorded != len(launch.groups):
                    raise TraceError(f"{path}: kernel {launch.kernel!r} says {recorded} work-groups were recorded; "
                                     f"the file holds {len(launch.groups)}")
                launch.groups_run, launch.groups_dropped, launch.complete = run, dropped, True
                yield launch
                launch = None
            elif kind == _PAGES:
                stores, loads = struct.unpack("<QQ", _exact(handle, 16, path))
                if launch is None:
                    raise TraceError(f"{path}: first-touched pages before any launch")
                launch.first_store_pages, launch.first_load_pages = stores, loads
            elif kind == _BUFFER:
                base, size = struct.unpack("<QQ", _exact(handle, 16, path))
                buffers = {b: n for b, n in buffers.items() if not (base <= b < base + max(size, 1))}
                buffers[base] = size
                if launch is not None:
                    launch.buffers = buffers
            else:
                raise TraceError(f"{path}: unknown chunk kind {kind}")
        if launch is not None:
            yield launch


def _exact(handle: Any, size: int, path: Path) -> bytes:
    """Return exactly `size` bytes of `handle`, or raise TraceError."""
    data: bytes = handle.read(size)
    if len(data) != size:
        raise TraceError(f"{path}: cut short ({len(data)} of {size} bytes of a chunk)")
    return data


@dataclass(frozen=True)
class LevelTraffic:
    """The bytes one cache level saw (all its instances, scaled to the launch): loads, stores, hits, misses."""

    name: str
    load_bytes: float
    store_bytes: float
    hit_bytes: float
    miss_bytes: float

    @property
    def bytes(self) -> float:
        """Return the bytes the level served (loads and stores that reached it)."""
        return self.load_bytes + self.store_bytes


@dataclass(frozen=True)
class LaunchTraffic:
    """A launch's simulated traffic per level (B, scaled to every work-group), DRAM and local memory apart."""

    kernel: str
    device: str
    work_items: int
    groups: int
    groups_counted: int
    levels: tuple[LevelTraffic, ...]
    dram_read_bytes: float
    dram_write_bytes: float
    local_load_bytes: float  # shared memory / LDS on a GPU; 0 where local memory is simulated in the caches
    local_store_bytes: float
    accesses: int
    notes: tuple[str, ...] = ()
    # Of dram_read_bytes, the lines read only to be written (a store to a line not yet in any cache, where the
    # caches allocate on a write miss), counted at the line's first touch.
    write_allocate_bytes: float = 0.0
    # CPU only: scattered loads (no stream before them) served by each level, DRAM included (count, scaled).
    scattered_loads: Mapping[str, float] = field(default_factory=dict)
    lanes: int = 0  # work-items per vector (CPU) or warp (GPU) the launch was simulated with
    # Of the scattered loads served by DRAM, the first fetches of lines of buffers that fit in the last cache
    # (scaled), and those buffers' lines: a profile scaled to more work-items over the same buffers caps them.
    scattered_first: float = 0.0
    scattered_first_cap: float = 0.0
    # The distinct bytes of global and constant memory the launch touched, in whole lines of the outermost cache
    # (scaled): what a cache must hold for the launch to find its data there again.
    touched_bytes: float = 0.0
    # 4 KiB pages the launch touched before anyone else (by a store first, by a load first; scaled to the
    # launch a reduced one stands for): None where the trace does not count them.
    first_store_pages: float | None = None
    first_load_pages: float | None = None
    # Reuse distances (perfcast.profiles.reuse): accesses, and scattered loads, per distance bin, first touches last
    # (sampled, scaled to the launch); empty where not followed.
    reuse: tuple[float, ...] = ()
    reuse_scattered: tuple[float, ...] = ()
    # CPU only: of the scattered loads each level served, those in the L1 set of the SET_WALK_RUN scattered loads
    # before them in their work-group's issue order (count, scaled): a walk down a column of rows one L1 set
    # span apart.
    set_walk_loads: Mapping[str, float] = field(default_factory=dict)
    # CPU only: per level, (the scattered loads it served that lie in a known buffer, the sum of log2 of those
    # buffers' sizes in B), scaled: the geometric mean size of what the level's scattered loads gather from.
    gather_spans: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    # CPU only: of the scattered loads (every level), those whose address came from a loaded value (the trace's
    # FLAG_INDIRECT; count, scaled): a gather through an index array waits for its index before its line.
    indirect_loads: float = 0.0

    def level(self, name: str) -> LevelTraffic:
        """Return the level called `name`."""
        for level in self.levels:
            if level.name == name:
                return level
        raise KeyError(name)


def _order(records: np.ndarray, hierarchy: CacheHierarchy) -> np.ndarray:
    """Return the records of one work-group in the order the device issues them (`hierarchy.lanes` per vector)."""
    lane = records["lane"].astype(np.int64)
    group_level = lane == GROUP_LEVEL
    lane = np.where(group_level, -1, lane)
    block = np.where(group_level, -1, lane // hierarchy.lanes)
    ordinal = records["ordinal"].astype(np.int64)
    region = records["region"].astype(np.int64)
    # np.lexsort sorts by the last key first.
    if hierarchy.interleave_warps:
        keys = (lane, block, ordinal, region)  # every warp's k-th access before any warp's (k+1)-th
    else:
        keys = (lane, ordinal, block, region)  # one vector of work-items through the region, then the next
    return records[np.lexsort(keys)]


class _Machine:
    """The simulated caches of a device: one chain of private levels per compute unit, shared levels once."""

    def __init__(self, hierarchy: CacheHierarchy, reuse: bool = False) -> None:
        from cachesim import Cache, MainMemory

        self.hierarchy = hierarchy
        self.memory = MainMemory()
        cores = hierarchy.cores
        outer_to_inner = list(reversed(hierarchy.levels))
        built: dict[str, list[Any]] = {}  # level name -> its instances, built from memory inward
        for position, level in enumerate(outer_to_inner):
            parent = built[outer_to_inner[position - 1].name] if position else None
            copies = []
            for instance in range(level.instances):
                above = None if parent is None else parent[instance * len(parent) // level.instances]
                copies.append(Cache(level.name, level.sets, level.ways, level.line, "LRU",
                                    write_back=level.write == "back", write_allocate=level.allocate,
                                    load_from=above, store_to=above))
            built[level.name] = copies
        last = built[hierarchy.levels[-1].name]
        for cache in last:
            self.memory.load_to(cache)
            self.memory.store_from(cache)
        self.levels = [built[level.name] for level in hierarchy.levels]
        self.first = [self.levels[0][core * len(self.levels[0]) // cores] for core in range(cores)]
        # Atomics are performed at the second level on a GPU (L2), at L1 on a CPU.
        beyond = self.levels[1] if hierarchy.interleave_warps and len(self.levels) > 1 else self.levels[0]
        self.atomic = [beyond[core * len(beyond) // cores] for core in range(cores)]
        # (load, store) B the kernel asked of L1, counted here: pycachesim's own L1 loads also hold the lines it
        # fetched to write into (write-allocate fills), which are traffic between L1 and L2, not requests.
        self.requested = np.zeros(2)
        self.scattered = [0] * (len(hierarchy.levels) + 1)  # scattered loads served per level, DRAM last
        self.set_walk = [0] * (len(hierarchy.levels) + 1)  # of them, those walking one L1 set (set_walk_loads)
        # Of them, those in a known buffer, and the sum of log2 of their buffers' sizes (B), per level.
        self.span_loads = [0] * (len(hierarchy.levels) + 1)
        self.span_log2 = [0.0] * (len(hierarchy.levels) + 1)
        self.indirect = 0  # scattered loads whose address came from a loaded value (FLAG_INDIRECT)
        # The launch's buffers: addresses -> (buffer sizes B, buffer of each, inside one), set per launch.
        self.buffers: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
        self.fetched: set[int] = set()  # lines scattered loads brought from DRAM, and the order they came in
        self.first_fetches: list[int] = []
        self.outer_line = hierarchy.levels[-1].line
        # The backend of each level on each core's way to memory (a scattered load only touches these).
        self.chains = [[copies[core * len(copies) // cores].backend for copies in self.levels] for core in range(cores)]
        self.line = hierarchy.levels[0].line
        self.unit_bits = max(level.line for level in hierarchy.levels).bit_length() - 1
        # The outermost lines' reuse distances over every unit's accesses in turn, where asked for: following them
        # costs a Python loop per access followed, several times the simulation's own cost on a stream.
        self.reuse = ReuseTracker() if reuse else None

    def stats(self) -> dict[str, np.ndarray]:
        """Return, per level and for DRAM, [load, store, hit, miss] bytes so far, summed over instances.

        Beside them, under "scattered", the scattered loads each level served so far (count, DRAM last) and the
        lines scattered loads have brought from DRAM for the first time (count); under "set_walk", those of the
        scattered loads that walk one L1 set (`set_walk_loads`; count per level, DRAM last); under "span_loads"
        and "span_log2", the scattered loads in a known buffer and the sum of log2 of its size (B); where reuse
        distances are followed, "reuse" and "reuse_scattered": the accesses and scattered loads per distance bin
        so far.
        """
        found = {}
        for position, (level, copies) in enumerate(zip(self.hierarchy.levels, self.levels, strict=True)):
            total = np.zeros(4)
            for cache in copies:
                s = cache.backend
                total += (s.LOAD_byte, s.STORE_byte, s.HIT_byte, s.MISS_byte)
            if position == 0:
                total[:2] = self.requested
            found[level.name] = total
        m = self.memory.stats()
        found["DRAM"] = np.array([m["LOAD_byte"], m["STORE_byte"], 0.0, 0.0])
        found["scattered"] = np.array([*self.scattered, len(self.first_fetches)], dtype=float)
        found["set_walk"] = np.array(self.set_walk, dtype=float)
        found["span_loads"] = np.array(self.span_loads, dtype=float)
        found["span_log2"] = np.array(self.span_log2, dtype=float)
        found["indirect"] = np.array([self.indirect], dtype=float)
        if self.reuse is not None:
            found["reuse"] = self.reuse.accesses.copy()
            found["reuse_scattered"] = self.reuse.scattered.copy()
        return found

    def follow(self, stream: _Stream, start: int, end: int) -> None:
        """Give the reuse tracker the sampled accesses among start..end of a unit's stream, in order."""
        indices, lines, hashes, spread, repeats = stream.sampled
        if self.reuse is None or not len(indices):
            return
        first, last = np.searchsorted(indices, (start, end))
        if first >= last:
            return
        # An access to the line the one before it in this piece touched is at distance 0: counted in bulk.
        again = repeats[first:last].copy()
        again[0] = False
        kept = np.flatnonzero(~again) + first
        self.reuse.add(lines[kept].tolist(), hashes[kept].tolist(), spread[kept].tolist())
        again &= hashes[first:last] < np.uint64(self.reuse.threshold)  # lines dropped meanwhile are not followed
        if again.any():
            self.reuse.repeat(int(again.sum()), int(spread[first:last][again].sum()))

    def count_scattered(self, core: int, address: int, size: int, virtual: int, in_set: bool = False,
                        span: float = -1.0, indirect: bool = False) -> None:
        """Load `address` through `core`'s caches alone, adding it to the level that served it.

        `virtual`: the address before its page was placed (the same without pages), which names the line a
        first fetch from DRAM brought, so that it can be found in its buffer. `in_set`: the load walks one L1 set
        with the scattered loads before it (`set_walk_loads`; counted apart too, per level). `span`: log2 of the size (B) of the
        buffer it gathers from, summed per level with the loads that have one (negative: none known). `indirect`:
        its address came from a loaded value (FLAG_INDIRECT; counted apart, over every level).
        """
        chain = self.chains[core]
        first, last = chain[0], chain[-1]
        beyond = chain[1:]
        before = [backend.LOAD_count for backend in beyond]
        missed = last.MISS_count
        first.iterload((address,), size)
        # Served by the first level that received the load and did not pass it on: the loads a level passes on
        # are the next one's; the last passes on its misses, to DRAM.
        level = 0
        for backend, start in zip(beyond, before, strict=True):
            if backend.LOAD_count == start:
                break
            level += 1
        else:
            if last.MISS_count != missed:
                level = len(chain)
                line = virtual // self.outer_line
                if line not in self.fetched:  # the line's first trip from DRAM in this simulation
                    self.fetched.add(line)
                    self.first_fetches.append(line)
        self.scattered[level] += 1
        self.indirect += indirect
        if in_set:
            self.set_walk[level] += 1
        if span >= 0:
            self.span_log2[level] += span
            self.span_loads[level] += 1

    def write_back(self) -> None:
        """Write every dirty line to the level beyond (inner levels first)."""
        for copies in self.levels:
            for cache in copies:
                cache.backend.force_write_back()


_TURN = 4  # warp instructions (or vectors) a compute unit issues before the next one's turn
_HASH_BITS = 12  # the low bits of a line-unit number that the high bits are folded into


def _frames(pages: np.ndarray, bits: int) -> np.ndarray:
    """Return the physical frame the simulation places each virtual page (a number of `bits` bits) at: a fixed mix.

    An operating system hands out frames in no order a program can see; a mix of every bit of the page number
    stands for that, the same on every run. Each step (a right xor-shift, a multiplication by an odd number,
    both modulo 2**bits) can be undone, so the mix is a bijection: no two pages share a frame.
    """
    mask = np.uint64((1 << bits) - 1)
    z = pages.astype(np.uint64) & mask
    with np.errstate(over="ignore"):
        for shift, odd in ((bits // 2, 0xBF58476D1CE4E5B9), (bits // 2 - 3, 0x94D049BB133111EB)):
            z ^= z >> np.uint64(shift)
            z = (z * np.uint64(odd)) & mask
    return z ^ (z >> np.uint64(bits // 2))


def _placed(addresses: np.ndarray, page_bytes: int) -> np.ndarray:
    """Return byte addresses with their pages of `page_bytes` placed at frames (`_frames`), offsets kept."""
    bits = page_bytes.bit_length() - 1
    shift = np.uint64(bits)
    frames = _frames(addresses >> shift, 63 - bits)  # placed below 2**63, as every traced address is
    return (frames << shift) | (addresses & np.uint64(page_bytes - 1))


def _hashed(addresses: np.ndarray, unit_bits: int) -> np.ndarray:
    """Return addresses with set-index bits scrambled by the bits above them (a bijection that keeps lines whole).

    The outermost line (2**unit_bits B) stays whole, so every level's lines map to whole lines.
    """
    units = addresses >> np.uint64(unit_bits)
    high = units >> np.uint64(_HASH_BITS)
    mixed = (high * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - _HASH_BITS)
    offset = addresses & np.uint64((1 << unit_bits) - 1)
    return ((units ^ mixed) << np.uint64(unit_bits)) | offset


@dataclass(frozen=True)
class _Stream:
    """One work-group's accesses as a compute unit sends them: addresses, flags, sizes (B); local bytes apart."""

    addresses: np.ndarray
    flags: np.ndarray
    sizes: np.ndarray
    local_load: int
    local_store: int
    # Where the stream has a scattered load (CPU only): addresses, flags, sizes and, per access, the virtual
    # address of a scattered load (-1 for the others), whether it walks one L1 set with the scattered loads
    # before it (set_walk_loads) and the log2 of the size (B) of the buffer it gathers from (-1: in none known),
    # as lists, sent access by access a few at a time.
    listed: tuple[list[int], list[int], list[int], list[int], list[bool], list[float]] | None = None
    # The accesses the reuse tracker may follow (perfcast.profiles.reuse): their indices in the stream, outermost
    # lines, the lines' hashes, whether each is a scattered load and whether it touches the line of the one before.
    sampled: tuple[np.ndarray, ...] = (np.zeros(0, dtype=np.int64),) * 5


def scattered_loads(lines: np.ndarray, loads: np.ndarray, window: int = SCATTER_WINDOW) -> np.ndarray:
    """Return which accesses are scattered loads: loads whose line is not within one line of the `window` before.

    `lines`: the line number of each access in issue order; `loads`: which accesses are plain loads. The window
    counts lines, not accesses: the lanes of a vector that touch one line are one access to it, as the
    hardware sees them (16 lanes of a triad read three lines, not 48).
    """
    lines = lines.astype(np.int64)
    new_line = np.ones(len(lines), dtype=bool)
    new_line[1:] = lines[1:] != lines[:-1]  # an access to the line just touched is never scattered
    distinct = lines[new_line]
    near = np.zeros(len(distinct), dtype=bool)
    for back in range(1, min(window, len(distinct) - 1) + 1):
        near[back:] |= np.abs(distinct[back:] - distinct[:-back]) <= 1
    scattered = np.zeros(len(lines), dtype=bool)
    scattered[new_line] = ~near
    return loads & scattered


SET_WALK_RUN = 2  # scattered loads before a load, in its work-group's issue order, that must share its L1 set


SPAN_WINDOW = 4096  # scattered loads a work-group issues in a row whose distinct pages say how wide it gathers
PAGE_BYTES = 4096  # the page the span is counted in where the hierarchy places none


def recent_spans(pages: np.ndarray, window: int = SPAN_WINDOW) -> np.ndarray:
    """Return, per scattered load, the pages (count) a uniform random gather would span to touch as few as its window.

    `pages`: the virtual page of each scattered load, in issue order. They are taken `window` at a time; a block
    of n loads touching D distinct pages is what n loads drawn at random from P pages touch on average,
    D = P (1 - e^(-n/P)), solved for P. A random gather over a buffer reads its buffer's pages back (the bench's
    own loads, spmv's vector); a walk that returns to the pages it just left reads the few it walks (SHOC's
    reduction: each of 16 work-items in turn walks the same 256 pages of a 32 MiB input, grid-sized steps apart).
    A block whose pages are all distinct says only that the span is wide: infinity (the buffer's size decides).
    """
    from scipy.special import lambertw

    spans = np.full(len(pages), np.inf)
    for start in range(0, len(pages), window):
        block = pages[start:start + window]
        n, distinct = len(block), len(np.unique(block))
        if distinct >= n:
            continue
        # r x = 1 - e^(-x) with r = D / n and x = n / P: x = 1/r + W0(-(1/r) e^(-1/r)), the root other than 0.
        r = distinct / n
        x = 1.0 / r + float(lambertw(-(1.0 / r) * np.exp(-1.0 / r), 0).real)
        spans[start:start + n] = n / x if x > 0 else np.inf
    return spans


def set_walk_loads(scattered: np.ndarray, l1_sets: np.ndarray, run: int = SET_WALK_RUN) -> np.ndarray:
    """Return which scattered loads fall in the L1 set of each of the `run` scattered loads before them.

    `scattered`: which accesses are scattered loads, in issue order; `l1_sets`: each access's L1 set index. A walk
    down a matrix column whose rows lie the L1's set span apart (4 KiB for 32 KiB of 8 ways) sends every load to
    one set: each miss takes a way of it, so fewer of them overlap than random loads' (docs/models.md, §3.1).
    A run is asked for, not one match: random gathers land in the set of the load before them once in `sets`
    (1/64 on a 32 KiB L1), in that of the two before once in `sets` squared.
    """
    found = np.zeros(len(scattered), dtype=bool)
    where = np.flatnonzero(scattered)
    if len(where) > run:
        sets = l1_sets[where]
        same = np.ones(len(where) - run, dtype=bool)
        for back in range(1, run + 1):
            same &= sets[run:] == sets[run - back:len(sets) - back]
        found[where[run:]] = same
    return found


def _prepare(records: np.ndarray, core: int, machine: _Machine, hierarchy: CacheHierarchy | None = None) -> _Stream:
    """Return a work-group's records ready to send: ordered, local memory placed or set apart, hashed, coalesced.

    `hierarchy`: the machine's, or the same with the lanes the compiler gave this kernel.
    """
    hierarchy = hierarchy or machine.hierarchy
    records = _order(records, hierarchy)
    slot = np.arange(len(records)) // hierarchy.lanes  # the warp instruction (or vector) each access belongs to
    flags, sizes, addresses = records["flags"], records["size"], records["address"]
    local = records["space"] == SPACE_LOCAL
    local_load = local_store = 0
    if local.any():
        if hierarchy.local_in_cache:
            addresses = np.where(local, addresses + np.uint64(_LOCAL_BASE + (core << 40)), addresses)
        else:
            stored = (flags & FLAG_STORE) != 0
            local_load = int(sizes[local & ~stored].sum())
            local_store = int(sizes[local & stored].sum())
            keep = ~local
            flags, sizes, addresses, slot = flags[keep], sizes[keep], addresses[keep], slot[keep]
    if hierarchy.hashed_sets:
        addresses = _hashed(addresses, machine.unit_bits)
    virtual = addresses
    if hierarchy.page_bytes and len(addresses):
        addresses = _placed(addresses, hierarchy.page_bytes)
    if hierarchy.coalesce and len(addresses):
        # A warp instruction reaches L1 as the lines it touches: an access to the line the previous lane of
        # the same instruction touched is merged into it; every access becomes whole lines.
        line = np.uint64(machine.line)
        starts = addresses // line * line
        span = ((addresses + sizes.astype(np.uint64) + line - np.uint64(1)) // line * line - starts)
        atomic = (flags & FLAG_ATOMIC) != 0
        same = np.zeros(len(starts), dtype=bool)
        same[1:] = (starts[1:] == starts[:-1]) & (slot[1:] == slot[:-1]) & (flags[1:] == flags[:-1]) & ~atomic[1:]
        keep = ~same
        addresses = np.where(atomic, addresses, starts)[keep]
        sizes = np.where(atomic, sizes, span.astype(np.uint32))[keep]
        flags = flags[keep]
    listed = None
    scattered = np.zeros(len(addresses), dtype=bool)
    if not hierarchy.coalesce and len(addresses):
        # Streams are told by their virtual lines, as before pages are placed: a stream that crosses a page goes on.
        scattered = scattered_loads(virtual // np.uint64(machine.line), (flags & (FLAG_STORE | FLAG_ATOMIC)) == 0)
        if scattered.any():
            # Each scattered load with its virtual address (which names its line), every other access with -1.
            named = np.where(scattered, virtual.astype(np.int64), -1)
            first = hierarchy.levels[0]
            walked = set_walk_loads(scattered, (addresses // np.uint64(first.line)) % np.uint64(first.sets))
            spans = np.full(len(addresses), -1.0)
            if machine.buffers is not None:
                sizes_of, owner, inside = machine.buffers(virtual[scattered])
                # The size a level's random-load rate is read at: the buffer's, or less where the loads keep to
                # fewer of its pages than a random gather over it would (`recent_spans`).
                page = hierarchy.page_bytes or PAGE_BYTES
                recent = recent_spans(virtual[scattered] // np.uint64(page)) * page
                gathered = np.minimum(np.asarray(sizes_of[owner], dtype=float), recent)
                spans[scattered] = np.where(inside, np.log2(np.maximum(gathered, 1.0)), -1.0)
            listed = (addresses.tolist(), flags.tolist(), sizes.tolist(), named.tolist(), walked.tolist(),
                      spans.tolist())
    if machine.reuse is None:
        return _Stream(np.ascontiguousarray(addresses), flags, sizes, local_load, local_store, listed)
    lines = addresses >> np.uint64(machine.unit_bits)
    hashes = machine.reuse.hashed(lines)
    indices = np.flatnonzero(machine.reuse.followed(hashes))
    followed = lines[indices]
    repeats = np.zeros(len(indices), dtype=bool)
    repeats[1:] = followed[1:] == followed[:-1]
    sampled = (indices, followed, hashes[indices], scattered[indices], repeats)
    return _Stream(np.ascontiguousarray(addresses), flags, sizes, local_load, local_store, listed, sampled)


def _send(machine: _Machine, core: int, stream: _Stream, start: int, end: int) -> None:
    """Send accesses start..end of a unit's stream to its caches, runs of one kind and size in one call."""
    machine.follow(stream, start, end)
    if stream.listed is not None:
        # Scattered loads go one at a time (the level serving each is counted), and so does the rest of a stream
        # that has them: its runs are too short to be worth cutting.
        addresses, flag_list, size_list, named, walked, spans = stream.listed
        if start < len(addresses):
            _send_each(machine, core, addresses[start:end], flag_list[start:end], size_list[start:end],
                       named[start:end], walked[start:end], spans[start:end])
        return
    flags = stream.flags[start:end]
    sizes = stream.sizes[start:end]
    if not len(flags):
        return
    kind = flags.astype(np.int64) << 32 | sizes.astype(np.int64)
    cuts = (np.flatnonzero(np.diff(kind)) + 1).tolist()
    first, atomic_level = machine.first[core].backend, machine.atomic[core].backend
    for run_start, run_end in zip([0, *cuts], [*cuts, len(kind)], strict=True):
        flag = int(flags[run_start])
        size = int(sizes[run_start])
        chunk = stream.addresses[start + run_start:start + run_end].tolist()
        if flag & FLAG_ATOMIC:
            atomic_level.iterload(chunk, size)
            atomic_level.iterstore(chunk, size)
            if atomic_level is first:
                machine.requested += len(chunk) * size
        elif flag & FLAG_STORE:
            first.iterstore(chunk, size)
            machine.requested[1] += len(chunk) * size
        else:
            first.iterload(chunk, size)
            machine.requested[0] += len(chunk) * size


def _send_each(machine: _Machine, core: int, addresses: list[int], flags: list[int], sizes: list[int],
               named: list[int], walked: list[bool], spans: list[float]) -> None:
    """Send accesses one by one, in order, counting the level that serves each scattered load (named >= 0)."""
    first, atomic_level = machine.first[core].backend, machine.atomic[core].backend
    loaded = stored = 0
    for address, flag, size, virtual, in_set, span in zip(addresses, flags, sizes, named, walked, spans, strict=True):
        if virtual >= 0:
            machine.count_scattered(core, address, size, virtual, in_set, span, bool(flag & FLAG_INDIRECT))
            loaded += size
        elif flag & FLAG_ATOMIC:
            atomic_level.iterload((address,), size)
            atomic_level.iterstore((address,), size)
            if atomic_level is first:
                loaded += size
                stored += size
        elif flag & FLAG_STORE:
            first.iterstore((address,), size)
            stored += size
        else:
            first.iterload((address,), size)
            loaded += size
    machine.requested[0] += loaded
    machine.requested[1] += stored


def _windows(indices: Sequence[int]) -> list[list[int]]:
    """Return the recorded work-group indices split into runs of consecutive indices."""
    runs: list[list[int]] = []
    for index in indices:
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def simulate_launch(launch: LaunchTrace, hierarchy: CacheHierarchy, total_groups: int | None = None,
                    repeated: bool = False, machine: _Machine | None = None, lanes: int | None = None,
                    reuse: bool = False) -> LaunchTraffic:
    """Return the traffic per cache level of one traced launch on the device `hierarchy` describes (B).

    `total_groups`: the traced launch is a sample (a reduced NDRange) of a launch of this many work-groups; its
    first wave warms the caches and the rest is scaled to the whole. `repeated`: the launch is one of many
    identical ones back to back (a timed kernel), whose data stays in a cache it fits in between launches.
    `machine`: caches carried over from the launches before (a program's launches in order): they start as
    those left them, and the lines this launch leaves dirty are written back when a later launch evicts them.
    `lanes`: on a CPU, the work-items per vector the compiler gave this kernel (1: left scalar, so each
    work-item runs through the kernel alone), in place of the hierarchy's widest vector. `reuse`: count the
    reuse distances too (perfcast.profiles.reuse; a `machine` given keeps its own choice).
    """
    carried = machine is not None
    machine = machine if machine is not None else _Machine(hierarchy, reuse)
    if lanes is not None and lanes >= 1 and not hierarchy.interleave_warps:
        hierarchy = replace(hierarchy, lanes=int(lanes))
    cores = hierarchy.cores
    groups_total = total_groups or launch.groups_run or len(launch.groups)
    sampled = len(launch.groups) < groups_total
    counted = np.zeros((len(hierarchy.levels) + 1, 4))
    counted_scattered = np.zeros(len(hierarchy.levels) + 1)  # served per level, DRAM last
    counted_walk = np.zeros(len(hierarchy.levels) + 1)  # of them, those walking one L1 set (set_walk_loads)
    counted_spans = np.zeros((2, len(hierarchy.levels) + 1))  # of them, in a known buffer; sum of log2 its size
    counted_indirect = 0.0  # of them, those whose address came from a loaded value (FLAG_INDIRECT)
    machine.buffers = partial(_buffer_of, launch) if launch.buffers else None
    counted_reuse = np.zeros((2, REUSE_BINS + 1))  # accesses and scattered loads per reuse distance (reuse.py)
    first_lines: list[int] = []  # lines the counted scattered loads were the first to bring from DRAM
    names = [level.name for level in hierarchy.levels] + ["DRAM"]
    local_load = local_store = 0
    groups_counted = 0
    counted_groups: list[int] = []
    placement: list[tuple[int, int, bool]] = []  # (work-group, compute unit, counted)
    notes: list[str] = []
    for window in _windows(sorted(launch.groups)):
        # A sampled window's first wave (at most half of it, where the trace's size cap left less than two
        # waves) only warms the caches; the waves after it are counted.
        warm = min(cores, len(window) // 2) if sampled else 0
        starts = [0, *range(warm, len(window), cores)] if warm else list(range(0, len(window), cores))
        before = None
        for wave_start, wave_end in zip(starts, [*starts[1:], len(window)], strict=True):
            if wave_start >= warm and before is None:
                if warm:
                    machine.write_back()
                before = machine.stats()
            wave = window[wave_start:wave_end]
            counting = wave_start >= warm
            streams = [_prepare(launch.groups[index], core, machine, hierarchy) for core, index in enumerate(wave)]
            placement += [(index, core, counting) for core, index in enumerate(wave)]
            if counting:
                local_load += sum(stream.local_load for stream in streams)
                local_store += sum(stream.local_store for stream in streams)
            # The units take turns, a few warp instructions (or vectors) each.
            step = _TURN * hierarchy.lanes
            longest = max((len(stream.flags) for stream in streams), default=0)
            for offset in range(0, longest, step):
                for core, stream in enumerate(streams):
                    _send(machine, core, stream, offset, offset + step)
            if counting:
                groups_counted += len(wave)
                counted_groups.extend(wave)
        if before is None:
            before = machine.stats()
        if not carried:
            machine.write_back()
        after = machine.stats()
        counted += np.array([after[name] - before[name] for name in names])
        counted_scattered += (after["scattered"] - before["scattered"])[:-1]
        counted_walk += after["set_walk"] - before["set_walk"]
        counted_indirect += float(after["indirect"][0] - before["indirect"][0])
        counted_spans += np.stack([after[key] - before[key] for key in ("span_loads", "span_log2")])
        if machine.reuse is not None:
            counted_reuse += np.stack([after[key] - before[key] for key in ("reuse", "reuse_scattered")])
        first_lines.extend(machine.first_fetches[int(before["scattered"][-1]):])
    if not groups_counted:
        raise TraceError(f"launch of {launch.kernel!r}: no work-group of its trace could be counted "
                           f"({len(launch.groups)} recorded of {groups_total}); its bytes are unknown, not zero")
    scale = groups_total / groups_counted
    if sampled:
        notes.append(f"{groups_counted} of {groups_total} work-groups counted (windows of the launch, each "
                     f"warmed by its first wave), scaled by {scale:.4g}")
    if launch.groups_dropped:
        notes.append(f"{launch.groups_dropped} work-groups past the trace's size cap were not recorded")
    if not launch.complete:
        notes.append("the trace of this launch stops early (the program ended inside it)")
    scaled = counted * scale
    if sampled or repeated:
        notes += _correct_first_touches(launch, hierarchy, placement, counted, scale, scaled, repeated)
    touched = _touched_bytes(launch, counted_groups, hierarchy.levels[-1].line) * scale
    filled = 0.0
    if hierarchy.levels[0].allocate:
        filled = min(_first_touch_stores(launch, counted_groups, hierarchy.levels[-1].line) * scale, scaled[-1][0])
    levels = tuple(LevelTraffic(name, *(float(v) for v in scaled[i])) for i, name in enumerate(names[:-1]))
    gx, gy, gz = launch.global_size
    scattered = ({} if hierarchy.coalesce else
                 {name: float(max(0.0, count) * scale) for name, count in zip(names, counted_scattered, strict=True)})
    walked = ({} if hierarchy.coalesce else
              {name: float(max(0.0, count) * scale) for name, count in zip(names, counted_walk, strict=True)})
    spans = ({} if hierarchy.coalesce else
             {name: (float(loads * scale), float(total * scale))
              for name, loads, total in zip(names, *counted_spans, strict=True) if loads > 0})
    fetched, cap = first_fetches(launch, hierarchy, first_lines) if scattered else (0.0, 0.0)
    fetched *= scale
    if sampled and fetched:
        moved = cap_first_fetches(scattered, fetched, cap, hierarchy.levels[-1].name)
        fetched -= moved
        if moved:
            notes.append(f"scattered loads: {moved:.4g} of the sample's first fetches from DRAM, scaled to the "
                         f"launch, are served by {hierarchy.levels[-1].name} (their buffers fit there and come "
                         f"from DRAM once: {cap:.4g} lines)")
    # The pages are counted over every work-group run: scaled only where the launch stands for a larger one.
    run = launch.groups_run or groups_total
    pages = [None if count is None else count * groups_total / run
             for count in (launch.first_store_pages, launch.first_load_pages)]
    return LaunchTraffic(launch.kernel, hierarchy.device, gx * gy * gz, groups_total, groups_counted, levels,
                         float(scaled[-1][0]), float(scaled[-1][1]), local_load * scale, local_store * scale,
                         launch.accesses, tuple(notes), float(filled), scattered, hierarchy.lanes, fetched, cap,
                         touched, pages[0], pages[1],
                         reuse=tuple(float(v) for v in counted_reuse[0] * scale) if machine.reuse else (),
                         reuse_scattered=tuple(float(v) for v in counted_reuse[1] * scale) if machine.reuse else (),
                         set_walk_loads=walked, gather_spans=spans,
                         indirect_loads=0.0 if hierarchy.coalesce else max(0.0, counted_indirect) * scale)


def first_fetches(launch: LaunchTrace, hierarchy: CacheHierarchy, first_lines: Sequence[int]) -> tuple[float, float]:
    """Return (first fetches, cap lines) of scattered loads from DRAM into buffers that fit in the last cache.

    The cap is those buffers' lines: all the first fetches a launch over them can make (each line once).
    """
    last = hierarchy.levels[-1]
    addresses = np.array(first_lines, dtype=np.uint64) * np.uint64(last.line)
    sizes, owner, inside = _buffer_of(launch, addresses)
    if not inside.any():
        return 0.0, 0.0
    buffers = np.unique(owner[inside])
    fitting = buffers[sizes[buffers] <= last.capacity]
    return float(np.sum(np.isin(owner[inside], fitting))), float(sizes[fitting].sum()) / last.line


def first_touched_pages(metrics: Mapping[str, float]) -> float | None:
    """Return the pages a profile says its launch touched first, by a store or a load (count); None: not counted."""
    if not any(name in metrics for name in FIRST_TOUCH_METRICS):
        return None
    return sum(metrics.get(name, 0.0) for name in FIRST_TOUCH_METRICS)


def indirect_share(metrics: Mapping[str, float]) -> float | None:
    """Return the share of a profile's scattered loads (every level) whose address came from a loaded value.

    None where the profile does not count them (one made before FLAG_INDIRECT, a GPU's) or has no scattered load; a
    trace recorded before the flag simulates to a share of 0.
    """
    indirect = metrics.get(INDIRECT_METRIC)
    total = sum(scattered_by_level(metrics).values())
    if indirect is None or total <= 0:
        return None
    return min(1.0, max(0.0, indirect / total))


def set_walk_by_level(metrics: Mapping[str, float]) -> dict[str, float]:
    """Return, per level, the scattered loads it served that walk one L1 set (count; `set_walk_loads`)."""
    return {name[len(SET_WALK_PREFIX):].upper(): value for name, value in metrics.items()
            if name.startswith(SET_WALK_PREFIX)}


def gather_spans_by_level(metrics: Mapping[str, float]) -> dict[str, float]:
    """Return, per level, the geometric mean size (B) of the buffers its scattered loads gathered from."""
    found = {}
    for name, loads in metrics.items():
        if name.startswith(SPAN_LOADS_PREFIX) and loads > 0:
            level = name[len(SPAN_LOADS_PREFIX):]
            found[level.upper()] = float(2.0 ** (metrics.get(f"{SPAN_LOG2_PREFIX}{level}", 0.0) / loads))
    return found


def set_walks_shared_out(metrics: Mapping[str, float], scattered: Mapping[str, float]) -> dict[str, float]:
    """Return `set_walk_*` metrics for scattered loads moved among levels (`scattered`: level -> count, after).

    Where a profile's scattered loads are shared out anew (carried to a larger size, first fetches capped), its
    loads that walk one L1 set go with them: each level keeps the profile's share of them over all its levels.
    Without set-walk metrics, none.
    """
    walks = set_walk_by_level(metrics)
    if not walks:
        return {}
    before = sum(scattered_by_level(metrics).values())
    share = min(1.0, sum(walks.values()) / before) if before > 0 else 0.0
    return {f"{SET_WALK_PREFIX}{level.lower()}": share * count for level, count in scattered.items()}


def scattered_by_level(metrics: Mapping[str, float]) -> dict[str, float]:
    """Return the scattered loads each level served (count), by level name, from a profile's traffic metrics."""
    prefix = "scattered_"
    return {name[len(prefix):].upper(): value for name, value in metrics.items()
            if name.startswith(prefix) and name not in ("scattered_first", "scattered_first_cap")}


def cap_first_fetches(scattered: dict[str, float], fetched: float, cap: float, last: str) -> float:
    """Move the scaled first fetches beyond `cap` (lines) from DRAM to the last cache `last`; return how many moved.

    A line comes from DRAM once where its buffer fits in the last cache. Scaled by work-groups (a sample) or
    work-items (a smaller profiled launch over the same buffers), the first fetches of a gathered vector would
    come from DRAM again and again: beyond its lines, the last cache serves them.
    """
    excess = min(fetched - cap, scattered.get("DRAM", 0.0))
    if excess <= 0:
        return 0.0
    scattered["DRAM"] -= excess
    scattered[last] = scattered.get(last, 0.0) + excess
    return excess


def _memory_records(launch: LaunchTrace, groups: Sequence[int]) -> np.ndarray:
    """Return these work-groups' accesses to global and constant memory, in order (local memory left out)."""
    chosen = [launch.groups[index] for index in groups if len(launch.groups[index])]
    if not chosen:
        return np.zeros(0, dtype=RECORD)
    records = np.concatenate(chosen)
    return records[records["space"] != SPACE_LOCAL]


def _first_touch_stores(launch: LaunchTrace, groups: Sequence[int], line: int) -> float:
    """Return the bytes of the lines whose first access in these work-groups (in order) is a store."""
    records = _memory_records(launch, groups)
    lines = records["address"] // np.uint64(line)
    _, first = np.unique(lines, return_index=True)
    return float(np.count_nonzero(records["flags"][first] & FLAG_STORE) * line)


def _touched_bytes(launch: LaunchTrace, groups: Sequence[int], line: int) -> float:
    """Return the bytes of the distinct lines (of `line` B) of global and constant memory these work-groups touch."""
    records = _memory_records(launch, groups)
    first = records["address"] // np.uint64(line)
    last = (records["address"] + np.maximum(records["size"], 1).astype(np.uint64) - np.uint64(1)) // np.uint64(line)
    return float(len(np.union1d(first, last)) * line)


def _buffer_of(launch: LaunchTrace, addresses: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (buffer sizes, buffer number of each address, whether it lies in a known buffer)."""
    bases = np.array(sorted(launch.buffers), dtype=np.uint64)
    sizes = np.array([launch.buffers[int(b)] for b in bases], dtype=np.float64)
    where = np.searchsorted(bases, addresses, side="right") - 1
    safe = np.maximum(where, 0)
    inside = (where >= 0) & (addresses < bases[safe] + sizes[safe].astype(np.uint64)) if len(bases) else \
        np.zeros(len(addresses), dtype=bool)
    return sizes, safe, inside


def _correct_first_touches(launch: LaunchTrace, hierarchy: CacheHierarchy, placement: Sequence[tuple[int, int, bool]],
                           counted: np.ndarray, scale: float, scaled: np.ndarray, repeated: bool = False) -> list[str]:
    """Re-estimate a sample's scaled loads at each interface, buffer by buffer; return what changed, in words.

    Scaling the counted work-groups' misses multiplies their first touches of lines, which the whole launch
    may not repeat. So the loads through an interface are split: (a) each global buffer's lines in the whole
    launch, estimated as the lines of it the whole sample touches (warm-up included) times work-groups in the
    launch / work-groups sampled, and capped, where the buffer fits in one instance of the cache above, at
    once per instance (later work-groups find them there); (b) the counted groups' other misses (capacity and
    conflict misses, which recur), scaled as they are. `repeated`: where every buffer the launch touches fits
    in the cache above, a launch repeated back to back finds (a) there, and its write-backs stay too.
    """
    if not launch.buffers or not placement:
        return []
    interfaces = [(hierarchy.levels[row - 1], row) for row in range(1, len(hierarchy.levels) + 1)]
    cores = hierarchy.cores
    notes = []
    counted_groups = sum(1 for _, _, counting in placement if counting)
    every = [launch.groups[index] for index, _, _ in placement if len(launch.groups[index])]
    records = np.concatenate(every) if every else np.zeros(0, dtype=RECORD)
    records = records[records["space"] != SPACE_LOCAL]
    sizes, buffer, inside = _buffer_of(launch, records["address"])
    touched = float(sizes[np.unique(buffer[inside])].sum()) if inside.any() else 0.0
    # The global accesses each cache instance sees, warm-up and counted apart: levels with as many instances
    # share them, so they are gathered once per instance count.
    seen: dict[tuple[int, int, bool], np.ndarray] = {}

    def accesses(instances: int, instance: int, counting: bool) -> np.ndarray:
        key = (instances, instance, counting)
        if key not in seen:
            chosen = [launch.groups[index] for index, core, c in placement
                      if c == counting and core * instances // cores == instance and len(launch.groups[index])]
            picked = np.concatenate(chosen) if chosen else np.zeros(0, dtype=RECORD)
            seen[key] = picked[picked["space"] != SPACE_LOCAL]
        return seen[key]

    for above, row in interfaces:
        unit = np.uint64(above.line)
        first_touches = np.zeros(len(sizes))  # the counted work-groups' first touches of each buffer (B)
        distinct = np.zeros(len(sizes))  # the lines of each buffer the sample touches at all (B)
        for instance in range(above.instances):
            lines = {}
            for counting in (False, True):
                picked = accesses(above.instances, instance, counting)
                # A store fills a line only where the cache allocates on a write miss (an atomic always reads).
                fills = above.allocate | ((picked["flags"] & (FLAG_STORE | FLAG_ATOMIC)) != FLAG_STORE)
                lines[counting] = np.unique(picked["address"][fills] // unit)
            for found, into in ((np.setdiff1d(lines[True], lines[False], assume_unique=True), first_touches),
                                (np.union1d(lines[True], lines[False]), distinct)):
                _, owner, known = _buffer_of(launch, found * unit)
                into += np.bincount(owner[known], minlength=len(sizes)) * float(unit)
        name = hierarchy.levels[row].name if row < len(hierarchy.levels) else "DRAM"
        others = max(0.0, counted[row][0] - first_touches.sum()) * scale
        if repeated and touched <= above.size:
            # Launched again and again (as a timed kernel is), a launch whose buffers all fit in the cache above
            # finds them there: only the misses that recur within a launch cross this interface.
            notes.append(f"{name}: the launch's {touched:.4g} B of buffers fit in {above.name} and stay there "
                         "between repeated launches: its first touches and write-backs are not charged")
            scaled[row][0], scaled[row][1] = others, 0.0
            continue
        # A buffer's lines in the whole launch: those the sample touched, in proportion to the work-groups (the
        # warm-up's included: lines it shares with the counted groups are first touches of the launch too).
        whole = distinct * (scale * counted_groups / len(placement))
        fits = sizes <= above.size
        capped = np.where(fits, np.minimum(whole, above.instances * sizes), whole)
        estimate = float(capped.sum() + others)
        if abs(estimate - scaled[row][0]) > 0.01 * scaled[row][0]:
            notes.append(f"{name} loads: {scaled[row][0]:.4g} B scaled from the sample, {estimate:.4g} B once each "
                         f"buffer's first touches are scaled by the work-groups that touch it and capped, where "
                         f"it fits in {above.name}, at once per {above.name} ({above.instances} of them)")
            scaled[row][0] = estimate
    return notes


def traffic_metrics(traffic: Sequence[LaunchTraffic]) -> dict[str, float]:
    """Return the profile metrics of one kernel's launches: bytes per level and DRAM sectors (32 B)."""
    if not traffic:
        raise InputError("no launch to take traffic from")
    total: dict[str, float] = {}

    def add(name: str, value: float) -> None:
        total[name] = total.get(name, 0.0) + value

    for launch in traffic:
        for level in launch.levels:
            add(f"{level.name.lower()}_bytes", level.bytes)
        # The bytes that move, as perfcast bench counts its bandwidths: the write-allocate fills are reads too
        # (and are said apart, since STREAM-style figures leave them out).
        add("dram_bytes", launch.dram_read_bytes + launch.dram_write_bytes)
        add("dram_read", launch.dram_read_bytes / 32)
        add("dram_write", launch.dram_write_bytes / 32)
        add("dram_write_allocate_bytes", launch.write_allocate_bytes)
        for name, count in launch.scattered_loads.items():
            add(f"scattered_{name.lower()}", count)
        # Only counts above zero: a program's thousand launch groups each carry them (its profile must stay under
        # what perfcast reads); `apply_traffic` drops a profile's older ones first.
        for name, count in launch.set_walk_loads.items():
            if count:
                add(f"{SET_WALK_PREFIX}{name.lower()}", count)
        for name, (loads, log2_sum) in launch.gather_spans.items():
            add(f"{SPAN_LOADS_PREFIX}{name.lower()}", loads)
            add(f"{SPAN_LOG2_PREFIX}{name.lower()}", log2_sum)
        add("touched_bytes", launch.touched_bytes)
        if launch.first_store_pages is not None and launch.first_load_pages is not None:
            add(FIRST_TOUCH_METRICS[0], launch.first_store_pages)
            add(FIRST_TOUCH_METRICS[1], launch.first_load_pages)
        if launch.scattered_loads:
            add(INDIRECT_METRIC, launch.indirect_loads)
            add("scattered_first", launch.scattered_first)
            add("scattered_first_cap", launch.scattered_first_cap)
        if launch.reuse:
            for name, value in histogram_metrics(np.asarray(launch.reuse), np.asarray(launch.reuse_scattered)).items():
                add(name, value)
    return total


def describe_levels(traffic: LaunchTraffic) -> Mapping[str, float]:
    """Return a launch's bytes per level in one mapping, outermost last (for tables)."""
    found = {level.name: level.bytes for level in traffic.levels}
    found["DRAM"] = traffic.dram_read_bytes + traffic.dram_write_bytes
    return found


def simulate_trace(path: str | Path, hierarchy: CacheHierarchy,
                   progress: Callable[[LaunchTrace], None] | None = None,
                   total_groups: Mapping[str, int] | None = None, repeated: bool = False,
                   carry_caches: bool = False, lanes: Mapping[str, int] | None = None, reuse: bool = False
                   ) -> list[LaunchTraffic]:
    """Return the simulated traffic of every launch in a trace file, in order; `progress` hears of each launch.

    `total_groups`: per kernel name, the work-groups of the launch a traced (reduced) launch stands for.
    `repeated`: each launch stands for one of many identical launches back to back (see simulate_launch).
    `carry_caches`: the launches are a program's, in the order it ran them: each starts with the caches the
    one before left (a kernel reading what the previous one wrote finds it where it fits).
    `lanes`: per kernel name, the work-items per vector its compiler used (CPU; see simulate_launch).
    `reuse`: count each launch's reuse distances too (a program campaign's two profiled sizes use them).
    """
    found = []
    machine = _Machine(hierarchy, reuse) if carry_caches else None
    for launch in read_trace(path):
        if progress is not None:
            progress(launch)
        found.append(simulate_launch(launch, hierarchy, (total_groups or {}).get(launch.kernel), repeated, machine,
                                     (lanes or {}).get(launch.kernel), reuse))
    return found


def _kernel_launches(kernel: KernelProfile, traffic: Sequence[LaunchTraffic]) -> list[LaunchTraffic]:
    """Return the launches of `kernel` (by its name, or the name before its argument list)."""
    short = kernel.name.split("(")[0].split()[-1]
    return [launch for launch in traffic if launch.kernel in (kernel.name, short)]


def apply_traffic(profile: ProfileSet, traffic: Sequence[LaunchTraffic], sampling: str) -> ProfileSet:
    """Return `profile` with each kernel's bytes per level and DRAM sectors replaced by the simulated ones.

    The footprint bytes the profiler counted stay beside them (global_load_bytes, global_store_bytes); a
    kernel the trace does not hold keeps its own, with a note.
    """
    kernels = []
    for kernel in profile.kernels:
        launches = _kernel_launches(kernel, traffic)
        if not launches:
            kernels.append(replace(kernel, notes=(*kernel.notes, "no memory trace of this kernel: its bytes are "
                                                  "the profiler's footprint")))
            continue
        device = launches[0].device
        levels = ", ".join(f"{name} {value:.4g} B" for name, value in describe_levels(launches[0]).items())
        note = (f"bytes per level simulated through {device}'s caches ({len(launches)} launch(es), {sampling}; "
                f"first launch: {levels})")
        extra = [n for launch in launches for n in launch.notes]
        # The last simulation's set walks and buffer sizes go: this one writes only the counts it found.
        kept = {k: v for k, v in kernel.metrics.items() if not k.startswith(_SIMULATED_SPARSE)}
        updated = replace(kernel, metrics=kept).with_metrics(note, f"simulated for {device}",
                                                             **traffic_metrics(launches))
        if extra:
            updated = replace(updated, notes=(*updated.notes, *dict.fromkeys(extra)))
        kernels.append(updated)
    return replace(profile, kernels=tuple(kernels))
