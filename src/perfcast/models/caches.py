"""A device's cache hierarchy as the traffic simulation needs it: per level its size, line, ways and write policy.

Pure data with its checks; `perfcast.devices.cache_view` builds one from a catalog device, and
`perfcast.profiles.traffic` simulates a kernel's accesses through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["CacheHierarchy", "CacheLevel"]

WritePolicy = Literal["back", "through"]


@dataclass(frozen=True)
class CacheLevel:
    """One cache level: name, size of one instance (B), line (B), ways, instances, write policy, assumptions.

    `instances` is how many copies the device has (one per core or SM for a private level, 1 for a shared
    one). `write`: "back" keeps stores and writes dirty lines on eviction (CPU caches, GPU L2); "through"
    sends every store on to the next level (GPU L1). `allocate`: a store miss fetches the line first (CPU
    caches: the write-allocate read) or not (GPU caches, which keep byte masks). `assumed` names the fields
    that are perfcast's assumption rather than the catalog's figure.
    """

    name: str
    size: int
    line: int
    ways: int
    instances: int = 1
    write: WritePolicy = "back"
    allocate: bool = True
    assumed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.line < 1 or self.line & (self.line - 1):
            raise ValueError(f"{self.name}: line {self.line} B is not a power of two")
        if self.ways < 1 or self.instances < 1:
            raise ValueError(f"{self.name}: ways ({self.ways}) and instances ({self.instances}) must be at least 1")
        if self.size < self.line * self.ways or self.size % (self.line * self.ways):
            raise ValueError(f"{self.name}: {self.size} B is not a whole number of sets of {self.ways} ways x "
                             f"{self.line} B lines")
        if self.write not in ("back", "through"):
            raise ValueError(f"{self.name}: write policy {self.write!r} is neither 'back' nor 'through'")
        if self.write == "through" and self.allocate:
            raise ValueError(f"{self.name}: a write-through cache cannot allocate on a store miss")

    @property
    def sets(self) -> int:
        """Return the number of sets of one instance."""
        return self.size // (self.line * self.ways)

    @property
    def capacity(self) -> int:
        """Return the bytes the level holds over all its instances (B): a launch spreads over every copy."""
        return self.size * self.instances


@dataclass(frozen=True)
class CacheHierarchy:
    """The caches of a device from the core outward, and how its work-items reach them.

    `lanes`: work-items that issue one memory instruction together (a warp or wavefront on a GPU, the SIMD
    lanes of one vector on a CPU). `interleave_warps`: True where a compute unit runs its work-group's warps
    side by side, instruction by instruction (GPU); False where it runs one vector of work-items through the
    kernel (up to the next barrier) before the next (a CPU OpenCL runtime's work-group loop).
    `local_in_cache`: True where local memory is ordinary memory behind L1 (CPU), False where it is a separate
    scratchpad (GPU shared memory / LDS), whose bytes are counted apart. `coalesce`: a warp's accesses of one
    instruction reach L1 as the distinct lines they touch (GPU), rather than one by one (CPU).
    `hashed_sets`: set indices are a hash of the address (GPU caches spread strided accesses this way), not
    its plain bits. `page_bytes`: a CPU's caches index by physical address, and the operating system places
    each virtual page of this many bytes at a frame of its own choosing: the index bits above the page offset
    are then the frame's, not the buffer's (None: virtual addresses as they are).
    """

    device: str
    levels: tuple[CacheLevel, ...]
    lanes: int
    interleave_warps: bool
    local_in_cache: bool
    coalesce: bool = False
    hashed_sets: bool = False
    page_bytes: int | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.levels:
            raise ValueError(f"{self.device}: a cache hierarchy needs at least one level")
        if self.lanes < 1:
            raise ValueError(f"{self.device}: lanes must be at least 1, not {self.lanes}")
        if self.page_bytes is not None and (self.page_bytes < max(level.line for level in self.levels)
                                            or self.page_bytes & (self.page_bytes - 1)):
            raise ValueError(f"{self.device}: a page of {self.page_bytes} B is not a power of two of at least a "
                             "line")
        names = [level.name for level in self.levels]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.device}: cache level named twice in {names}")
        for inner, outer in zip(self.levels, self.levels[1:], strict=False):
            if outer.line < inner.line:
                raise ValueError(f"{self.device}: {outer.name}'s line ({outer.line} B) is smaller than "
                                 f"{inner.name}'s ({inner.line} B); lines may only grow outward")
            if outer.instances > inner.instances or inner.instances % outer.instances:
                raise ValueError(f"{self.device}: {inner.instances} x {inner.name} cannot share {outer.instances} "
                                 f"x {outer.name} evenly")

    @property
    def cores(self) -> int:
        """Return the number of independent first-level caches: the compute units work-groups are spread over."""
        return self.levels[0].instances
