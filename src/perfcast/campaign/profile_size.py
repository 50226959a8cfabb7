"""Whether a program's smaller profiled problem stood for its timed one in the caches.

A program profiled at a smaller size (`--profile-cmd`) has its counts scaled to the timed NDRange, and its bytes
per level with them. That holds while both sizes sit at the same place in the cache hierarchy. Where the
profiled launch's data fit in a cache level and the timed launch's do not, the re-reads the simulation found in
that level may miss there at the timed size. Gaussian elimination profiled at n = 96 keeps a launch's data
(17 kB) in L1 and L2; timed at n = 1536, a launch touches 4.4 MB and re-reads it, past both. The scaled bytes then say the
kernel runs from L1, and the prediction is too fast. Nothing here changes a prediction: it names the levels
outgrown, so a report can explain a miss and a run can ask for a larger profile command.

Sizes are the distinct bytes, in whole lines, of global and constant memory one launch touches: the
simulation's `touched_bytes`. The profiled launch's value is compared with the timed launch's, estimated in
proportion to the work-items, since data grow with the work-items even where the work grows faster. Kernels
that gather from the same buffers at both profiled sizes keep their profiled size. Capacity is a level's size
times its instances: one launch spreads over every core's private cache.

Two cases are left out, as capacity does not decide them. A launch that requests fewer than REREADS bytes per
byte it touches streams its data, and a stream misses alike at any size. A launch that outgrows the first
level alone is left out too: what a kernel re-reads there is mostly its neighbours' data within a work-group,
whose distance does not grow with the launch's footprint. The check names a risk, not a miss: on the 17 programs of
docs/validation/programs/ the groups it names were predicted neither better nor worse than the others, taken
over two runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from perfcast.models.caches import CacheLevel
from perfcast.units import Dimension, format_quantity

__all__ = ["PROFILED", "REREADS", "TIMED", "OutgrownCaches", "outgrown_caches", "profile_outgrows"]

PROFILED, TIMED = "touched_bytes_profiled", "touched_bytes"  # the profile's metrics (B a launch)
REREADS = 2.0  # global bytes requested per byte touched from which a launch re-reads its data


@dataclass(frozen=True)
class OutgrownCaches:
    """The cache levels a launch's data fit in at the profiled size and outgrow at the timed one (B a launch)."""

    profiled_bytes: float
    timed_bytes: float
    levels: tuple[tuple[str, float], ...]  # (level, capacity B over every instance), innermost first
    rereads: float  # global bytes requested per byte touched, at the timed size

    def describe(self) -> str:
        """Return one sentence for a report: the sizes and the levels outgrown."""
        names = ", ".join(f"{name} ({format_quantity(size, Dimension.BYTES)})" for name, size in self.levels)
        return (f"bytes per level from a smaller problem: its launch touched "
                f"{format_quantity(self.profiled_bytes, Dimension.BYTES)}, which fits in {names}, and requests "
                f"{self.rereads:.3g} B per byte it touches; the timed launch touches about "
                f"{format_quantity(self.timed_bytes, Dimension.BYTES)}, which does not fit, so the re-reads simulated "
                f"as hits there may miss at the timed size (profile a problem that outgrows {self.levels[-1][0]} too)")


def outgrown_caches(profiled_bytes: float, timed_bytes: float, levels: Sequence[CacheLevel],
                    rereads: float = REREADS) -> OutgrownCaches | None:
    """Return the levels whose capacity (B, all instances) holds `profiled_bytes` and not `timed_bytes`.

    None where no level past the first is one, or where the launch requests fewer than REREADS bytes per byte
    touched (`rereads`).
    """
    if not profiled_bytes > 0 or not timed_bytes > profiled_bytes or rereads < REREADS:
        return None
    outgrown = tuple((level.name, float(level.size * level.instances)) for level in levels
                     if profiled_bytes <= level.size * level.instances < timed_bytes)
    past_first = levels and any(name != levels[0].name for name, _ in outgrown)
    return OutgrownCaches(profiled_bytes, timed_bytes, outgrown, rereads) if past_first else None


def profile_outgrows(metrics: Mapping[str, float], levels: Sequence[CacheLevel]) -> OutgrownCaches | None:
    """Return the levels a scaled profile's launch outgrows (its metrics PROFILED and TIMED, B), or None."""
    if not metrics.get(PROFILED) or not metrics.get(TIMED):
        return None
    requested = metrics.get("global_load_bytes", 0.0) + metrics.get("global_store_bytes", 0.0)
    return outgrown_caches(metrics[PROFILED], metrics[TIMED], levels, requested / metrics[TIMED])
