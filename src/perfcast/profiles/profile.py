"""Kernel profiles: per kernel, the metrics a profiler counted (all launches summed), with where they come from.

A profile file is YAML with `format: perfcast-profile` and a `version`; readers of other versions refuse it
with a message rather than guess.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perfcast.errors import InputError, NotFound
from perfcast.models.quantitative import ELEMENTARY_COST, KernelCounts
from perfcast.output_files import write_text_atomic
from perfcast.profiles.metrics import METRICS

__all__ = [
    "LEVEL_METRICS",
    "PROFILE_FORMAT",
    "PROFILE_VERSION",
    "KernelProfile",
    "ProfileError",
    "ProfileSet",
    "ProfileSource",
    "load_profile",
    "profile_from_text",
    "scaling_differences",
]

# The metric holding each memory level's bytes (what crosses into the level from above; ncu's, or simulated).
LEVEL_METRICS = {"L1": "l1_bytes", "L2": "l2_bytes", "L3": "l3_bytes", "DRAM": "dram_bytes"}
PROFILE_FORMAT = "perfcast-profile"
PROFILE_VERSION = 1


class ProfileError(InputError):
    """A profile or profiler output that cannot be used: missing metric, unknown unit, negative count, bad file."""


@dataclass(frozen=True)
class ProfileSource:
    """Where a profile comes from: tool and version, device, date, and the command that was profiled."""

    tool: str
    version: str | None = None
    device: str | None = None
    date: str | None = None
    command: str | None = None
    raw: str | None = None  # the file holding the tool's own output

    def describe(self) -> str:
        """Return the source in one line."""
        parts = [self.tool + (f" {self.version}" if self.version else "")]
        parts += [f"on {self.device}" if self.device else "", self.date or "",
                  f"command: {self.command}" if self.command else ""]
        return ", ".join(part for part in parts if part)


@dataclass(frozen=True)
class KernelProfile:
    """One kernel's metrics (canonical names, base units: inst, sector, B), launches, summed duration (s)."""

    name: str
    launches: int
    metrics: Mapping[str, float]
    duration: float | None = None  # s, all launches
    work_items: int | None = None  # per launch, where the profiler knows it
    notes: tuple[str, ...] = ()
    # Where the bytes per level (l1_bytes ... dram_bytes, dram_read/write) come from: "footprint" (the bytes the
    # kernel touches, no cache), "simulated for DEVICE", "measured" (a hardware profiler); None: the reader's own
    bytes_from: str | None = None

    def __post_init__(self) -> None:
        if self.launches < 1:
            raise ProfileError(f"kernel {self.name!r}: {self.launches} launches")
        for metric, value in self.metrics.items():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                raise ProfileError(f"kernel {self.name!r}, metric {metric}: {value!r} is not a finite number")
            if value < 0:
                raise ProfileError(f"kernel {self.name!r}, metric {metric}: negative count {value:g}")
        if self.duration is not None and not (math.isfinite(self.duration) and self.duration > 0):
            raise ProfileError(f"kernel {self.name!r}: duration {self.duration!r} s is not a positive number")

    def counts(self, elementary_cost: Mapping[str, float] | None = None) -> KernelCounts:
        """Return the §3 counts of this kernel, or raise ProfileError naming the kernel and every missing metric.

        `elementary_cost` (instructions per call, by precision: a device's own, see `elementary_calls`) replaces
        the ELEMENTARY_COST instructions a counting profiler (Oclgrind) gave each elementary-function call; a
        profiler that counts machine instructions (ncu, nvprof) records no calls, and nothing changes.
        """
        missing = [f"{spec.name} ({spec.symbol}; nvprof {spec.nvprof}, ncu {spec.ncu[0][0]})"
                   for spec in METRICS if spec.name not in self.metrics]
        if missing:
            raise ProfileError(f"kernel {self.name!r} lacks the metric(s) the quantitative model needs: "
                               + "; ".join(missing))
        m = dict(self.metrics)
        for precision, cost in (elementary_cost or {}).items():
            extra = self.elementary_calls(precision) * (cost - ELEMENTARY_COST)
            if extra:
                m[precision] += extra
                m["inst_warp"] += extra / 32
        try:
            return KernelCounts(m["fma_fp32"], m["fma_fp64"], m["ldst"], m["inst_warp"], m["fp32"], m["fp64"],
                                m["int"], m["dram_read"], m["dram_write"])
        except ValueError as error:
            raise ProfileError(f"kernel {self.name!r}: {error}") from None

    def elementary_calls(self, precision: str) -> float:
        """Return the elementary-function calls (one per lane) a counting profiler saw in `precision` (fp32/fp64)."""
        return self.metrics.get(f"elementary_{precision}", 0.0)

    def scaled(self, factor: float, work_items: int | None = None) -> KernelProfile:
        """Return this profile with every count (and the duration) multiplied by `factor` (e.g. work-item ratio)."""
        if not (math.isfinite(factor) and factor > 0):
            raise ProfileError(f"scaling factor {factor!r} must be positive")
        note = f"counts scaled by {factor:g} from {self.work_items or 'the profiled'} work-items"
        return replace(self, metrics={k: v * factor for k, v in self.metrics.items()},
                       duration=None if self.duration is None else self.duration * factor,
                       work_items=work_items, notes=(*self.notes, note))

    def level_bytes(self) -> dict[str, float]:
        """Return the bytes per memory level the profile holds (B): L1, L2, L3, DRAM, where present.

        DRAM falls back to the §3 sectors (32 B each) where the profile has no byte count for it.
        """
        m = self.metrics
        found = {level: m[name] for level, name in LEVEL_METRICS.items() if name in m}
        if "DRAM" not in found and "dram_read" in m and "dram_write" in m:
            found["DRAM"] = 32 * (m["dram_read"] + m["dram_write"])
        return found

    def with_metrics(self, note: str, bytes_from: str | None = None, **values: float) -> KernelProfile:
        """Return this profile with some metrics replaced, a note saying why, and where its bytes now come from."""
        return replace(self, metrics={**self.metrics, **values}, notes=(*self.notes, note),
                       bytes_from=bytes_from or self.bytes_from)

    def to_mapping(self) -> dict[str, Any]:
        """Return the kernel as a profile file writes it."""
        data: dict[str, Any] = {"name": self.name, "launches": self.launches}
        if self.duration is not None:
            data["duration_s"] = self.duration
        if self.work_items is not None:
            data["work_items"] = self.work_items
        data["metrics"] = {k: float(v) for k, v in sorted(self.metrics.items())}
        if self.bytes_from is not None:
            data["bytes_from"] = self.bytes_from
        if self.notes:
            data["notes"] = list(self.notes)
        return data


def scaling_differences(small: KernelProfile, large: KernelProfile) -> dict[str, float]:
    """Return, per metric, the relative difference of the per-work-item counts of two profiles of one kernel.

    The basis of profiling at a reduced NDRange: counts that grow with the work-items agree per work-item.
    """
    if not small.work_items or not large.work_items:
        raise ProfileError("both profiles need their work-item counts to compare them per work-item")
    differences = {}
    for metric in sorted(set(small.metrics) & set(large.metrics)):
        a = small.metrics[metric] / (small.work_items * small.launches)
        b = large.metrics[metric] / (large.work_items * large.launches)
        differences[metric] = 0.0 if a == b else abs(a - b) / max(abs(a), abs(b))
    return differences


@dataclass(frozen=True)
class ProfileSet:
    """The kernels of one profiled program, with their source."""

    source: ProfileSource
    kernels: tuple[KernelProfile, ...]
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.kernels:
            raise ProfileError(f"no kernel in the {self.source.tool} output")
        counts = Counter(k.name for k in self.kernels)  # names.count per name was quadratic: 100k kernels, minutes
        twice = sorted(name for name, count in counts.items() if count > 1)
        if twice:
            raise ProfileError(f"kernel(s) listed twice in one profile: {', '.join(twice)}")

    def kernel(self, name: str) -> KernelProfile:
        """Return the kernel called `name`: exact, else by the name before its argument list, else a unique part."""
        for rule in (lambda k: k.name == name, lambda k: k.name.split("(")[0].split()[-1] == name,
                     lambda k: name in k.name):
            found = [k for k in self.kernels if rule(k)]
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                raise NotFound(f"kernel {name!r} matches several: " + "; ".join(k.name for k in found))
        raise NotFound(f"no kernel {name!r} in the profile; it has: " + "; ".join(k.name for k in self.kernels))

    def select(self, names: Iterable[str]) -> list[KernelProfile]:
        """Return the kernels named (every kernel when `names` is empty)."""
        chosen = list(names)
        return [self.kernel(n) for n in chosen] if chosen else list(self.kernels)

    def to_mapping(self) -> dict[str, Any]:
        """Return the profile as its file holds it."""
        source = {k: v for k, v in vars(self.source).items() if v is not None}
        data: dict[str, Any] = {"format": PROFILE_FORMAT, "version": PROFILE_VERSION, "source": source}
        if self.notes:
            data["notes"] = list(self.notes)
        data["kernels"] = [k.to_mapping() for k in self.kernels]
        return data

    def save(self, path: str | Path) -> Path:
        """Write the profile to `path` as YAML, atomically."""
        import yaml

        # libyaml's dumper where PyYAML was built with it: ten times faster on a profile of many kernels.
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        return write_text_atomic(path, yaml.dump(self.to_mapping(), Dumper=dumper, sort_keys=False,
                                                 allow_unicode=True))

    @classmethod
    def from_mapping(cls, data: Any, origin: str = "profile") -> ProfileSet:
        """Return a profile from its file's mapping, refusing other formats and versions."""
        if not isinstance(data, dict) or data.get("format") != PROFILE_FORMAT:
            raise ProfileError(f"{origin}: not a perfcast profile (no 'format: {PROFILE_FORMAT}')")
        if data.get("version") != PROFILE_VERSION:
            raise ProfileError(f"{origin}: profile version {data.get('version')!r}; this perfcast reads version "
                               f"{PROFILE_VERSION}")
        try:
            fields = {str(k): None if v is None else str(v) for k, v in data["source"].items()}
            source = ProfileSource(**fields)  # type: ignore[arg-type]  # a missing or unknown key is a TypeError
            kernels = tuple(
                KernelProfile(str(k["name"]), int(k["launches"]), {str(m): float(v) for m, v in k["metrics"].items()},
                              None if k.get("duration_s") is None else float(k["duration_s"]),
                              None if k.get("work_items") is None else int(k["work_items"]),
                              tuple(str(n) for n in k.get("notes", [])),
                              None if k.get("bytes_from") is None else str(k["bytes_from"]))
                for k in data["kernels"]
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            if isinstance(error, ProfileError):
                raise
            raise ProfileError(f"{origin}: malformed profile ({type(error).__name__}: {error})") from None
        return cls(source, kernels, tuple(str(n) for n in data.get("notes", [])))


def load_profile(path: str | Path) -> ProfileSet:
    """Return the profile saved at `path` (a perfcast profile YAML file)."""
    from perfcast.safe_yaml import MAX_PROFILE_BYTES, load_yaml_file

    return ProfileSet.from_mapping(load_yaml_file(path, MAX_PROFILE_BYTES), str(path))


def profile_from_text(text: str, source: str) -> ProfileSet:
    """Return the perfcast profile in YAML `text` (a campaign archive's member), `source` naming it in errors."""
    from perfcast.safe_yaml import MAX_PROFILE_BYTES, load_yaml_text

    return ProfileSet.from_mapping(load_yaml_text(text, source, MAX_PROFILE_BYTES), source)

