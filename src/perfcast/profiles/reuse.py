"""Reuse distances of a memory trace, and their extrapolation from two profiled sizes to a larger one.

A program profiled at a smaller size than it is timed keeps data in caches that the timed run outgrows. Which
hits it loses depends on each access's reuse distance: the distinct lines touched since the same line was last
touched. A record's fields or a stencil's neighbours are reused at a distance that does not grow with the
problem; a matrix column re-read launch after launch is reused at a distance that grows with the matrix. Two
profiled sizes tell them apart. This is the pattern extrapolation of whole-program locality prediction (Ding &
Zhong, PLDI 2003): the distances of each quantile of the accesses at the two sizes give that quantile's growth,
a power of the problem's size, which carries it on to the timed size.

Distances are counted in lines of the outermost cache over the stream the simulated caches see (every compute
unit's accesses interleaved), by SHARDS's spatial sampling (Waldspurger et al., FAST 2015): only lines whose
hash falls below a threshold are followed, and their distances are scaled up by the sampling rate. A level's
capacity is its size times its instances (`CacheLevel.capacity`): on the interleaved stream of
all units, a distance compares with every unit's private cache together.

Histograms are binned by the logarithm of the distance, STEPS bins per doubling (bin 0: below one line, a line
touched again next; bin k: [2**((k-1)/STEPS), 2**(k/STEPS)) lines); the last entry counts the first touches (no
earlier access: an infinite distance). They count accesses (every access, or the scattered loads of the latency
floor): on a fully associative LRU cache of C lines, the accesses at a distance of C or more miss, one line each.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["COLD", "REUSE_BINS", "ReuseExtrapolation", "ReuseTracker", "beyond", "extrapolate", "extrapolate_levels",
           "extrapolated_metrics", "histogram_from_metrics", "histogram_metrics"]

STEPS = 4  # bins per doubling of the distance
REUSE_BINS = 1 + 48 * STEPS  # distances up to 2**48 lines
COLD = REUSE_BINS  # the index of the first touches in a histogram
MAX_LINES = 1 << 13  # lines followed at once: footprints up to 512 KiB (64 B lines) are measured exactly
MIN_RATIO = 1.5  # two profiled sizes closer than this tell growth from noise too poorly to carry it on
MAX_GROWTH = 3.0  # a distance grows at most as the problem's size cubed (a 3-D problem's volume)
QUANTILES = 256  # equal shares of the reused accesses matched between the two sizes
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class ReuseTracker:
    """LRU stack distances of a stream of lines, sampled (SHARDS), as histograms of accesses and of scattered loads.

    Every line is followed while at most `max_lines` are; past that, the lines of the largest hashes are
    dropped and the threshold falls with them (SHARDS with a fixed size), so a small footprint is measured
    exactly and a large one at the rate `max_lines` / its lines. A distance is scaled by the rate when measured.
    """

    def __init__(self, max_lines: int = MAX_LINES) -> None:
        self.max_lines = max_lines
        self.threshold = 1 << 32  # lines whose hash is below it are followed; rate = threshold / 2**32
        self.last: dict[int, int] = {}  # followed line -> the time of its last access
        self.hashes: list[tuple[int, int]] = []  # a max-heap of the followed lines: (-hash, line)
        self.size = 1 << 12
        self.tree = [0] * (self.size + 1)  # Fenwick tree over times: 1 where a line's last access is
        self.now = 0
        self.latest = -1  # the line followed last
        self.accesses = np.zeros(REUSE_BINS + 1)  # accesses per distance, each followed one standing for 1 / rate
        self.scattered = np.zeros(REUSE_BINS + 1)

    @staticmethod
    def hashed(lines: NDArray[np.uint64]) -> NDArray[np.uint64]:
        """Return each line's 32-bit hash (the same line always the same)."""
        with np.errstate(over="ignore"):
            return (lines.astype(np.uint64) * _GOLDEN) >> np.uint64(32)

    def followed(self, hashes: NDArray[np.uint64]) -> NDArray[np.bool_]:
        """Return which hashes fall below the threshold now (it only falls: a later check may drop more)."""
        return hashes < np.uint64(self.threshold)

    def add(self, lines: Sequence[int], hashes: Sequence[int], scattered: Sequence[bool]) -> None:
        """Account accesses in order: their lines, the lines' hashes and whether each is a scattered load."""
        for line, key, spread in zip(lines, hashes, scattered, strict=True):
            if key >= self.threshold:
                continue
            weight = (1 << 32) / self.threshold
            if line == self.latest:  # the line followed last, touched again: distance 0, the stack unchanged
                self.accesses[0] += weight
                if spread:
                    self.scattered[0] += weight
                continue
            self.latest = line
            previous = self.last.pop(line, None)  # a compaction below must not mark its old time again
            if previous is None:
                slot = COLD
                heapq.heappush(self.hashes, (-key, line))
            else:
                between = self._prefix(self.now) - self._prefix(previous + 1)
                self._add(previous, -1)
                slot = _bin(between * (1 << 32) / self.threshold)
            self.accesses[slot] += weight
            if spread:
                self.scattered[slot] += weight
            if self.now >= self.size:
                self._compact()
            self._add(self.now, 1)
            self.last[line] = self.now
            self.now += 1
            while len(self.last) > self.max_lines:
                dropped_key, dropped = heapq.heappop(self.hashes)
                self.threshold = -dropped_key
                self._add(self.last.pop(dropped), -1)
                if dropped == self.latest:
                    self.latest = -1

    def repeat(self, accesses: int, scattered: int) -> None:
        """Account accesses that touched the line followed last again, one after another (distance 0)."""
        weight = (1 << 32) / self.threshold
        self.accesses[0] += accesses * weight
        self.scattered[0] += scattered * weight

    def _add(self, index: int, value: int) -> None:
        index += 1
        tree, size = self.tree, self.size
        while index <= size:
            tree[index] += value
            index += index & -index

    def _prefix(self, end: int) -> int:
        """Return the marks at times below `end`."""
        total, tree = 0, self.tree
        while end > 0:
            total += tree[end]
            end -= end & -end
        return total

    def _compact(self) -> None:
        """Renumber the live marks 0..n-1 in order, in a tree at least twice as large."""
        order = sorted(self.last, key=self.last.__getitem__)
        self.last = {line: time for time, line in enumerate(order)}
        self.now = len(order)
        self.size = max(1 << 12, 2 * len(order))
        self.tree = [0] * (self.size + 1)
        for time in range(self.now):
            self._add(time, 1)


def _bin(distance: float) -> int:
    """Return the histogram bin of a distance in lines: 0 below one line, else 1 + floor(STEPS log2(distance))."""
    if distance < 1:
        return 0
    return min(REUSE_BINS - 1, 1 + int(math.floor(STEPS * math.log2(distance))))


def _metric_name(prefix: str, index: int) -> str:
    """Return the profile metric that holds bin `index` of a histogram (reuse_K, reuse_cold, ...): one spelling."""
    return f"{prefix}_{'cold' if index == COLD else index}"


def histogram_metrics(accesses: NDArray[np.float64], scattered: NDArray[np.float64]) -> dict[str, float]:
    """Return a launch's histograms as profile metrics (reuse_K, reuse_cold, reuse_scattered_K...), zeros left out."""
    found = {}
    for prefix, values in (("reuse", accesses), ("reuse_scattered", scattered)):
        for index, value in enumerate(values):
            if value > 0:
                found[_metric_name(prefix, index)] = float(value)
    return found


def histogram_from_metrics(metrics: Mapping[str, float], prefix: str = "reuse") -> NDArray[np.float64] | None:
    """Return the histogram a profile's metrics hold under `prefix` ("reuse" or "reuse_scattered"), or None."""
    found = np.zeros(REUSE_BINS + 1)
    seen = False
    for index in range(REUSE_BINS + 1):
        value = metrics.get(_metric_name(prefix, index))
        if value is not None:
            found[index] = value
            seen = True
    return found if seen else None


def _edges() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return the bins' lower and upper distances (lines): bin 0 spans [0, 1), bin k [2**((k-1)/STEPS), 2**(k/STEPS))."""
    k = np.arange(1, REUSE_BINS)
    return np.concatenate([[0.0], 2.0 ** ((k - 1) / STEPS)]), np.concatenate([[1.0], 2.0 ** (k / STEPS)])


_LOW, _HIGH = _edges()  # the same for every histogram: computed once


def _quantile_distances(histogram: NDArray[np.float64], shares: int = QUANTILES) -> NDArray[np.float64]:
    """Return the distance (lines) at the middle of each of `shares` equal shares of the reused mass.

    Within a bin the mass is spread evenly over the logarithm of the distance (bin 0 evenly over [0, 1)).
    """
    reused = histogram[:COLD]
    total = reused.sum()
    if total <= 0:
        return np.zeros(shares)
    cumulative = np.concatenate([[0.0], np.cumsum(reused)]) / total
    targets = (np.arange(shares) + 0.5) / shares
    low, high = _LOW, _HIGH
    found = np.empty(shares)
    for i, target in enumerate(targets):
        k = int(np.searchsorted(cumulative, target, side="right") - 1)
        k = min(max(k, 0), COLD - 1)
        within = (target - cumulative[k]) / max(cumulative[k + 1] - cumulative[k], 1e-300)
        found[i] = within * high[0] if k == 0 else low[k] * (high[k] / low[k]) ** within
    return found


def _rebinned(distances: NDArray[np.float64], mass: float, cold: float) -> NDArray[np.float64]:
    """Return a histogram of `distances` sharing `mass` evenly, with `cold` first touches."""
    found = np.zeros(REUSE_BINS + 1)
    for distance in distances:
        found[_bin(distance)] += mass / len(distances)
    found[COLD] = cold
    return found


def beyond(histogram: NDArray[np.float64], capacity: float) -> float:
    """Return the share of a histogram's mass at distances of `capacity` lines or more, first touches included."""
    total = histogram.sum()
    if total <= 0:
        return 0.0
    low, high = _LOW, _HIGH
    far = histogram[COLD]
    for k in range(COLD):
        if histogram[k] <= 0 or high[k] <= capacity:
            continue
        if low[k] >= capacity:
            far += histogram[k]
        elif k == 0:
            far += histogram[k] * (high[k] - capacity) / (high[k] - low[k])
        else:  # spread evenly over the logarithm
            far += histogram[k] * math.log(high[k] / capacity) / math.log(high[k] / low[k])
    return float(far / total)


def extrapolate(base: NDArray[np.float64], other: NDArray[np.float64], ratio: float, onward: float
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return (the timed size's histogram, each quantile's growth exponent) from two profiled sizes' histograms.

    `base`: the histogram carried on; `other`: the other profiled size's; `ratio`: the other size over the
    base's (not 1); `onward`: the timed size over the base's. Each quantile of the reused accesses grows from one
    size to the other as ratio**e, e clipped to [0, MAX_GROWTH], and goes on growing so: onward**e. The first
    touches keep their share of the base's accesses.
    """
    if not (ratio > 0 and ratio != 1 and onward > 0):
        raise ValueError(f"the two profiled sizes must differ and the timed one be positive (ratio {ratio!r}, "
                         f"onward {onward!r})")
    d_base, d_other = _quantile_distances(base), _quantile_distances(other)
    # A distance below a line is a re-touch of the same line: it stays so at every size.
    both = (d_base >= 1) & (d_other >= 1)
    exponents = np.zeros(len(d_base))
    exponents[both] = np.log(d_other[both] / d_base[both]) / math.log(ratio)
    exponents = np.clip(exponents, 0.0, MAX_GROWTH)
    timed = d_base * onward ** exponents
    return _rebinned(timed, base.sum() - base[COLD], base[COLD]), exponents


@dataclass(frozen=True)
class ReuseExtrapolation:
    """What the timed size's reuse distances change: the shares of accesses missing each level and serving loads."""

    missed: dict[str, float]  # per level: the share of the accesses that miss it, timed less profiled
    shifts: dict[str, float]  # per level and DRAM: the share of the scattered loads it serves, timed less profiled
    growing: float  # share of the reused accesses whose distance grows with the problem (exponent above 0.25)

    def describe(self, changed: Mapping[str, tuple[float, float]] | None = None) -> str:
        """Return one clause for a report; `changed`: the bytes each level reached before and after (B), named."""
        moved = ""
        if changed:
            moved = "; the bytes reaching " + ", ".join(
                f"{name} {before:.3g} -> {after:.3g} B" for name, (before, after) in changed.items())
        return (f"reuse distances carried from the two profiled sizes to the timed one (Ding & Zhong): "
                f"{self.growing:.0%} of the reused accesses are reused at a distance that grows with the problem"
                + moved)


def _as_quantiles_see(histogram: NDArray[np.float64]) -> NDArray[np.float64]:
    """Return a histogram rebinned from its own quantiles, as `extrapolate` sees it before it moves any distance."""
    return _rebinned(_quantile_distances(histogram), histogram.sum() - histogram[COLD], histogram[COLD])


def extrapolate_levels(base: Mapping[str, float], other: Mapping[str, float], ratio: float, onward: float,
                       capacities: Sequence[tuple[str, float]]) -> ReuseExtrapolation | None:
    """Return how a profile's misses per level change at the timed size, from two profiled sizes' reuse histograms.

    `base`, `other`: the metrics (reuse_* histograms) of the profiled size carried on and of the other; `ratio`,
    `onward`: as in `extrapolate`; `capacities`: (level, lines over all its instances), innermost first. None
    where either size has no histogram, or no distance grows.
    """
    h_base, h_other = histogram_from_metrics(base), histogram_from_metrics(other)
    if h_base is None or h_other is None or h_base.sum() <= 0 or h_other.sum() <= 0:
        return None
    if max(ratio, 1 / ratio) < MIN_RATIO:
        return None
    timed, exponents = extrapolate(h_base, h_other, ratio, onward)
    if not exponents.any():
        return None  # no distance grows: the scaled bytes stand
    # Against the base as the quantiles see it, so that their rounding moves nothing by itself.
    seen = _as_quantiles_see(h_base)
    missed = {name: beyond(timed, capacity) - beyond(seen, capacity) for name, capacity in capacities}
    names = [name for name, _ in capacities] + ["DRAM"]
    shifts: dict[str, float] = {}
    s_base, s_other = histogram_from_metrics(base, "reuse_scattered"), histogram_from_metrics(other, "reuse_scattered")
    if s_base is not None and s_other is not None and s_base.sum() > 0 and s_other.sum() > 0:
        s_timed, _ = extrapolate(s_base, s_other, ratio, onward)
        s_base = _as_quantiles_see(s_base)
        for position, name in enumerate(names):
            # The share a level serves: beyond the level before it, less beyond itself.
            outer = [beyond(h, capacities[position - 1][1]) if position else 1.0 for h in (s_base, s_timed)]
            inner = [beyond(h, capacities[position][1]) if position < len(capacities) else 0.0
                     for h in (s_base, s_timed)]
            shifts[name] = (outer[1] - inner[1]) - (outer[0] - inner[0])
    return ReuseExtrapolation(missed, shifts, float((exponents > 0.25).mean()))


def extrapolated_metrics(metrics: Mapping[str, float], found: ReuseExtrapolation, levels: Sequence[tuple[str, int]]
                         ) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """Return the metrics `found` changes, originals beside (unextrapolated_NAME), and each level's bytes before/after.

    `metrics`: the scaled profile's, whose reuse histogram counts the timed launch's accesses; `levels`: (name,
    line B), innermost first. Each access that misses a level at the timed size and hit it at the profiled one
    moves one line of it to the next level (B per level past the first, DRAM reads; fewer where it is the other
    way round, never below none), and the scattered loads are shared out anew among the levels serving them.
    """
    accesses = histogram_from_metrics(metrics)
    total_accesses = float(accesses.sum()) if accesses is not None else 0.0
    changed: dict[str, float] = {}
    moved: dict[str, tuple[float, float]] = {}
    for (name, line), outer in zip(levels, [name for name, _ in levels[1:]] + ["DRAM"], strict=True):
        key = "dram_bytes" if outer == "DRAM" else f"{outer.lower()}_bytes"
        if key not in metrics or name not in found.missed:
            continue
        before = metrics[key]
        after = max(0.0, before + found.missed[name] * total_accesses * line)
        if abs(after - before) <= 1e-9 * max(1.0, before):
            continue
        changed[key] = after
        moved[outer] = (before, after)
        if outer == "DRAM" and "dram_read" in metrics:
            changed["dram_read"] = max(0.0, metrics["dram_read"] + (after - before) / 32)
    counted = {name: f"scattered_{name.lower()}" for name in found.shifts}
    total = sum(metrics.get(key, 0.0) for key in counted.values())
    if total > 0:
        shares = {name: max(0.0, metrics.get(key, 0.0) / total + found.shifts[name]) for name, key in counted.items()}
        norm = sum(shares.values()) or 1.0
        for name, key in counted.items():
            count = total * shares[name] / norm
            if abs(count - metrics.get(key, 0.0)) > 1e-9 * max(1.0, count):
                changed[key] = count
        if any(key in changed for key in counted.values()):
            from perfcast.profiles.traffic import set_walks_shared_out  # traffic imports this module

            shared_out = {name: changed.get(key, metrics.get(key, 0.0)) for name, key in counted.items()}
            changed.update(set_walks_shared_out(metrics, shared_out))
    return {**{f"unextrapolated_{key}": metrics.get(key, 0.0) for key in changed}, **changed}, moved
