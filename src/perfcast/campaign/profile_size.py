"""Whether a program's smaller profiled problem stood for its timed one in the caches.

A program profiled at a smaller size (`--profile-cmd`) has its counts scaled to the timed NDRange, and its bytes
per level with them. That holds while both sizes sit at the same place in the cache hierarchy. Where the
profiled launch's data fit in a cache level and the timed launch's do not, the hits the simulation found in that
level may be misses at the timed size. Gaussian elimination profiled at n = 96 keeps a launch's data (17 kB) in
L1 and L2, which serve it 12.7 MB of hits once scaled; timed at n = 1536, a launch touches 4.4 MB, past both. The
scaled bytes then say the kernel runs from L1, and the prediction is too fast. Nothing here changes a
prediction: it names the levels outgrown, so a report can explain a miss and a run can ask for a larger profile
command.

Sizes are the distinct bytes, in whole lines, of global and constant memory one launch touches: the
simulation's `touched_bytes`. The profiled launch's value is compared with the timed launch's, estimated in
proportion to the work-items, since data grow with the work-items even where the work grows faster. Kernels
that gather from the same buffers at both profiled sizes keep their profiled size. Capacity is a level's size
times its instances: one launch spreads over every core's private cache.

A level outgrown matters where the profiled simulation found hits there: the bytes that reached the level less
those it passed on (for the first level, the global bytes requested less those that reached the second; local
memory, which lives in a CPU's L1 at any size, is left out). A group is named where those hits, scaled, come to
at least the timed launch's touched bytes. A launch re-reading its own data counts, and so does one that finds
what the launch before it left in the cache. A stream from DRAM has no hits to lose. Groups that outgrow the
first level alone are not named: what a kernel re-reads in L1 is mostly its neighbours' data, at a distance
that does not grow with the problem. The check names a risk, not a miss. On the 17 programs of
docs/validation/programs/, six of the nine groups it names besides lud's were predicted too fast on each of
three runs, as lost hits would make them. lud's 201 groups were named too, yet came within about 10 %.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from perfcast.models.caches import CacheLevel
from perfcast.units import Dimension, format_quantity

__all__ = ["PROFILED", "TIMED", "OutgrownCaches", "level_hits", "outgrown_caches", "profile_outgrows"]

PROFILED, TIMED = "touched_bytes_profiled", "touched_bytes"  # the profile's metrics (B a launch)


@dataclass(frozen=True)
class OutgrownCaches:
    """The cache levels a launch's data fit in at the profiled size and outgrow at the timed one (B a launch)."""

    profiled_bytes: float
    timed_bytes: float
    levels: tuple[tuple[str, float], ...]  # (level, capacity B over every instance), innermost first
    hits: float  # B the outgrown levels served as hits in the profiled simulation, scaled to the timed launch

    def describe(self) -> str:
        """Return one sentence for a report: the sizes, the levels outgrown and the hits they served."""
        names = ", ".join(f"{name} ({format_quantity(size, Dimension.BYTES)})" for name, size in self.levels)
        return (f"bytes per level from a smaller problem: its launch touched "
                f"{format_quantity(self.profiled_bytes, Dimension.BYTES)}, which fits in {names}, where the "
                f"simulation found {format_quantity(self.hits, Dimension.BYTES)} of hits (scaled); the timed launch "
                f"touches about {format_quantity(self.timed_bytes, Dimension.BYTES)}, which does not fit, so those "
                f"hits may be misses at the timed size (profile a problem that outgrows {self.levels[-1][0]} too)")


def outgrown_caches(profiled_bytes: float, timed_bytes: float, levels: Sequence[CacheLevel],
                    hits: Mapping[str, float]) -> OutgrownCaches | None:
    """Return the levels whose capacity (B, all instances) holds `profiled_bytes` and not `timed_bytes`.

    `hits`: B each level served as hits in the profiled simulation (scaled). None where no level past the first
    is outgrown, or where the outgrown levels' hits come to less than `timed_bytes`.
    """
    if not profiled_bytes > 0 or not timed_bytes > profiled_bytes:
        return None
    outgrown = tuple((level.name, float(level.capacity)) for level in levels
                     if profiled_bytes <= level.capacity < timed_bytes)
    if not levels or all(name == levels[0].name for name, _ in outgrown):
        return None
    served = sum(hits.get(name, 0.0) for name, _ in outgrown)
    return OutgrownCaches(profiled_bytes, timed_bytes, outgrown, served) if served >= timed_bytes else None


def level_hits(metrics: Mapping[str, float], levels: Sequence[CacheLevel]) -> dict[str, float]:
    """Return the B each cache level served as hits: what reached it less what it passed on (global only at L1)."""
    reached = [metrics.get(f"{level.name.lower()}_bytes", 0.0) for level in levels] + [metrics.get("dram_bytes", 0.0)]
    if levels:
        reached[0] = metrics.get("global_load_bytes", 0.0) + metrics.get("global_store_bytes", 0.0)
    return {level.name: max(0.0, reached[i] - reached[i + 1]) for i, level in enumerate(levels)}


def profile_outgrows(metrics: Mapping[str, float], levels: Sequence[CacheLevel]) -> OutgrownCaches | None:
    """Return the levels a scaled profile's launch outgrows with hits lost (metrics PROFILED, TIMED, per level), or None."""
    if not metrics.get(PROFILED) or not metrics.get(TIMED):
        return None
    return outgrown_caches(metrics[PROFILED], metrics[TIMED], levels, level_hits(metrics, levels))
