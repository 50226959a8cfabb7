"""The cache hierarchy of a described device, for the traffic simulation (`perfcast.profiles.traffic`).

A device file gives each level's size and scope, and where known its line, ways and write policy. What it
does not give is assumed from the kind of device, and each assumption is named in the result:

* CPUs: 64-byte lines, 8 ways in L1 and 16 beyond, write-back with allocation (the write-allocate read) at
  every level; work-items reach memory a SIMD vector at a time (fp32 lanes of the widest vector), one vector
  through the kernel before the next; local memory is ordinary memory behind L1; memory in pages of 4 KiB
  placed at frames the simulation scatters, as an operating system does (x86-64's and AArch64's base page;
  Linux gives ordinary buffers these unless transparent huge pages are set to `always`, which this does not
  model): the caches index by physical address, so a buffer's power-of-two strides do not all fall into one
  set of a cache whose sets span more than a page, as they would by the virtual addresses.
* NVIDIA GPUs: a miss fetches 32-byte sectors, at L1 and L2 alike; L1 is write-through with 16 ways assumed,
  L2 write-back with 16 ways, neither fetching a line on a store miss (byte masks); a warp's accesses of
  one instruction reach L1 as the distinct sectors they touch, the warps of a work-group side by side; set
  indices are hashed; shared memory is a scratchpad, counted apart.
* AMD GPUs: 64-byte lines in the first level and 128 bytes beyond, the first level write-through; the rest
  as NVIDIA's, with a wavefront as the warp.
"""

from __future__ import annotations

from perfcast.devices.schema import Device, MemoryLevel
from perfcast.errors import InputError
from perfcast.models.caches import CacheHierarchy, CacheLevel

__all__ = ["cache_hierarchy"]

_CACHE_LEVELS = ("L1", "L2", "L3")
PAGE_BYTES = 4096  # a CPU's base page (x86-64, AArch64 Linux)


def _default_line(device: Device, position: int) -> int:
    """Return the line (B) assumed for the cache at `position` (0 = first level) of `device`."""
    if device.kind == "cpu":
        return 64
    if device.vendor.upper().startswith("NVIDIA"):
        return 32
    return 64 if position == 0 else 128


def _ways_that_fit(size: int, line: int, wanted: int) -> int:
    """Return `wanted` ways, or the nearest count that divides the level into whole sets."""
    for ways in (wanted, 16, 12, 20, 10, 8, 24, 6, 4, 2, 1):
        if size % (line * ways) == 0 and size >= line * ways:
            return ways
    raise InputError(f"a {size} B cache cannot be split into sets of {line} B lines")


def _level(device: Device, memory: MemoryLevel, position: int, line_floor: int) -> CacheLevel:
    """Return one catalog level as a simulated cache, with its assumptions named."""
    assert memory.size is not None
    size = int(memory.size.value)
    assumed: list[str] = []
    line = memory.line
    if line is None:
        line = max(_default_line(device, position), line_floor)
        assumed.append(f"line {line} B")
    wanted = memory.ways or (8 if device.kind == "cpu" and position == 0 else 16)
    ways = _ways_that_fit(size, line, wanted)
    if memory.ways is None or ways != memory.ways:
        assumed.append(f"{ways} ways")
    write = memory.write
    if write is None:
        write = "through" if device.kind == "gpu" and position == 0 else "back"
        assumed.append(f"write-{write}")
    allocate = memory.write_allocate
    if allocate is None:
        allocate = device.kind == "cpu" and write == "back"
        assumed.append("write-allocate" if allocate else "no write-allocate")
    private = memory.scope in ("per_core", "per_unit")
    return CacheLevel(memory.level, size, line, ways, device.compute_units if private else 1, write, allocate,
                      tuple(assumed))


def cache_hierarchy(device: Device) -> CacheHierarchy:
    """Return the caches of `device` (L1 outward) with the schedule its work-items follow; InputError without any."""
    listed: dict[str, MemoryLevel] = {m.level: m for m in device.memory}
    levels: list[CacheLevel] = []
    notes: list[str] = []
    for name in _CACHE_LEVELS:
        memory = listed.get(name)
        if memory is None:
            continue
        if memory.size is None:
            notes.append(f"{name} has no size in the device file and is not simulated")
            continue
        levels.append(_level(device, memory, len(levels), levels[-1].line if levels else 1))
    if not levels:
        raise InputError(f"device {device.name!r} lists no cache sizes (L1, L2, L3): its traffic cannot be "
                         "simulated; add them to its device file")
    if device.kind == "gpu":
        if "shared" in listed and listed["shared"].size is not None and "L1" in listed:
            notes.append("L1 is simulated at its full size: a kernel without shared memory gets the whole "
                         "L1/shared array as L1")
        lanes = device.warp_size or 32
        notes.append("set indices hashed (GPUs spread addresses over sets and L2 slices by a hash they do not "
                     "publish; perfcast folds the high address bits into the low ones)")
        return CacheHierarchy(device.name, tuple(levels), lanes, interleave_warps=True, local_in_cache=False,
                              coalesce=True, hashed_sets=True, notes=tuple(notes))
    lanes = max(1, (device.simd_width_bits or 128) // 32)
    notes.append(f"work-items in vectors of {lanes} (fp32 lanes of {device.simd_width_bits or 128}-bit SIMD)")
    page = PAGE_BYTES if PAGE_BYTES >= max(level.line for level in levels) else None
    if page:
        notes.append(f"pages of {PAGE_BYTES // 1024} KiB at scattered physical frames (the caches index by physical "
                     "address: a power-of-two stride does not pile into one set of a cache larger than a page's sets)")
    else:
        notes.append(f"lines longer than a {PAGE_BYTES // 1024} KiB page: addresses simulated as they are")
    return CacheHierarchy(device.name, tuple(levels), lanes, interleave_warps=False, local_in_cache=True,
                          page_bytes=page, notes=tuple(notes))
