"""Cross-device projection (spec §4) of profiled kernels: from a profile and two devices, or from two campaign archives.

A kernel is projected in its dominant precision (the one with more FLOP, int32 for a kernel of integer
instructions only, or the campaign's), with the source's and the target's figures as `devices.projection_view`
takes them, and its FLOP scaled on the target by the SASS comparison of its special functions when one is given.
Projecting one campaign archive onto another scores the projection against the target's own measurement as §6
scores a range (contained within the spread) and its middle (APE).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from perfcast.campaign.archive import Archive
from perfcast.campaign.score import (
    Prediction,
    compiled_code_terms,
    contains,
    percentage_error,
    predict_profiled,
    profile_flop,
    profile_precision,
    without_compiled_out_divisions,
)
from perfcast.devices.catalog import parse_device_text
from perfcast.devices.projection_view import ProjectionCapabilities, four_byte_dram, projection_capabilities
from perfcast.devices.quantitative_view import quantitative_inputs
from perfcast.devices.schema import Device, Precision
from perfcast.errors import InputError
from perfcast.models.projection import Projection, project
from perfcast.models.quantitative import core_time
from perfcast.plots.projection import IntervalRow
from perfcast.profiles.profile import KernelProfile, ProfileError, ProfileSet, profile_from_text
from perfcast.profiles.projection_input import INT32_KINDS, projected_kernel

__all__ = ["CORE_RATES", "ArchiveProjection", "ArchiveRun", "CompiledCode", "KernelProjection", "core_times", "distinct_target",
           "dominant_precision", "issue_note", "kernel_base_name", "project_archive", "project_profiles", "same_size_timings"]


_PROJECTED = (Precision.FP32, Precision.FP64, Precision.INT32)  # the precisions a profile counts arithmetic in


@dataclass(frozen=True)
class KernelProjection:
    """One kernel projected from a source device onto a target, with what the projection read and assumed."""

    kernel: str
    source: ProjectionCapabilities
    target: ProjectionCapabilities
    projection: Projection
    flop_ratio: float
    notes: tuple[str, ...]
    measured: float | None = None  # s on the target, when an archive of it is given
    spread: float = 0.0  # the target measurement's sigma / t

    @property
    def precision(self) -> str:
        """Return the precision projected in ('fp32', 'fp64', 'int32')."""
        return self.source.precision.value

    @property
    def work(self) -> str:
        """Return what the kernel's operations are counted as: FLOP, or OP for an int32 kernel's instructions."""
        return "OP" if self.source.precision is Precision.INT32 else "FLOP"

    def interval_row(self) -> IntervalRow:
        """Return the kernel's bar on the interval chart: projected times (s) and the target's measurement."""
        fast, slow = self.projection.time_range
        return IntervalRow(self.kernel, self.target.device.name, fast, slow, self.projection.time, self.measured)

    def scored(self) -> Prediction | None:
        """Return the projection as a §6 range prediction scored against the target's measurement, if known."""
        if self.measured is None:
            return None
        fast, slow = self.projection.time_range
        contained = contains(fast, slow, self.measured, self.spread)
        levels = ", ".join(f"{level} {value / 1e9:.4g} G{self.work}/s"
                           for level, value in self.projection.per_level.items())
        detail = (f"{self.precision}; levels {levels}"
                  + "; middle = arithmetic mean of the levels' interval (at the FP issue share taken), "
                  f"time = {self.work}_t / middle")
        return Prediction("projection", "range", self.projection.time, fast, slow,
                          percentage_error(self.projection.time, self.measured), contained, detail=detail)


def kernel_base_name(name: str) -> str:
    """Return a kernel's bare name from a profiler's or a disassembler's: '_Z5triadPfS_' or 'void triad(float*)' -> 'triad'."""
    mangled = re.match(r"_Z(?:N\d*)?(\d+)(\w+)", name)
    if mangled:
        return mangled.group(2)[: int(mangled.group(1))]
    name = name.split("(")[0].split("<")[0].strip()
    return name.split()[-1] if name else name


def dominant_precision(profile: KernelProfile) -> Precision:
    """Return the precision in which the kernel executes more FMA/ADD/MUL FLOP (fp32 on a tie; int32 with no FLOP).

    A kernel with no FP arithmetic and integer instructions is an integer kernel (a hash, a histogram, a graph
    walk): §4 projects it by its integer instructions at the devices' int32 rates.
    """
    flop, precision = profile_flop(profile)
    m = profile.metrics
    # Any FP work at all (a division, a compare, fp16) keeps a kernel an FP one: only integer work makes it int32.
    floating = any(value for name, value in m.items()
                   if name in ("fp16", "fp32", "fp64") or name.endswith(("_fp16", "_bf16", "_fp32", "_fp64")))
    integer = m.get("int", 0.0) + sum(m.get(name, 0.0) for name in INT32_KINDS)
    if flop == 0 and not floating and integer > 0:
        return Precision.INT32
    return Precision(precision)


# The core rates `perfcast bench` measures on a CPU (`QuantitativeInputs` attribute -> words), every one of which
# the core-bound ceiling needs on both devices: a term left unpriced on one side would skew the ratio.
CORE_RATES = {"random_loads": "random-load rates", "int_divisions": "integer-division rate",
              "scalar_instructions": "scalar-instruction rate", "atomics": "atomic rate"}


# §3.9's rates (`QuantitativeInputs` attributes), priced by the core-bound ceiling where both devices measured them.
REGION_RATES = ("local_loads", "barriers", "barrier_values")


@dataclass(frozen=True)
class CompiledCode:
    """What a CPU campaign recorded of the code its device ran: the compiler's report and the in-core reading."""

    vectorisation: Mapping[str, Any] | None = None  # the campaign's `vectorisation` (lanes per kernel)
    incore: Mapping[str, Any] | None = None  # the campaign's `incore` record (§3.5)
    work_items: Mapping[str, float | None] | None = None  # the timed work-items per kernel


def core_times(profile: KernelProfile, source: Device, target: Device,
               code: CompiledCode | None = None) -> tuple[tuple[float, float] | None, str]:
    """Return the kernel's core-bound time (s) on a CPU source and a CPU target, or None, and a note.

    Each is the quantitative model's time with unlimited bandwidth (`core_time`, §3 with §3.1–§3.7) at that
    device's own measured rates, the kernel's counts, lanes and in-core cycles the source's on both (§4 keeps
    the kernel's counts and bytes; its scattered loads, simulated through the source's caches, are taken as the
    target's too). None, with the reason (empty between devices that are not both CPUs: §4 as written, as on
    GPUs): without the compiler's report of the kernel's lanes (a campaign's `vectorisation`), since §3 then
    prices a vectorised kernel's accesses lane by lane; where a device lacks one of the core rates the bench
    measures on CPUs (`CORE_RATES`); or where the model fails on either device.
    """
    if source.kind != "cpu" or target.kind != "cpu":
        return None, ""
    code = code or CompiledCode()
    simulated = (profile.bytes_from or "").startswith("simulated for ")
    try:
        precision = profile_precision(profile)
        lanes, cycles, vectors, packed, whole = compiled_code_terms(profile.name, code.vectorisation, code.incore,
                                                                    (code.work_items or {}).get(profile.name),
                                                                    precision)
        profile = without_compiled_out_divisions(profile, profile.name, code.incore, precision)[0]
        if lanes is None:
            return None, ("no core-bound ceiling: no compiler's report of the kernel's lanes (a campaign archive "
                          "of the source gives one)")
        times = []
        both = [quantitative_inputs(device) for device in (source, target)]
        # Set-walk rates and random-load rates by working set (§3.1) price a level's loads on both devices or on
        # neither: one side's alone would skew the ratio.
        walked = set(both[0].set_walk_loads) & set(both[1].set_walk_loads)
        curved = set(both[0].random_curves) & set(both[1].random_curves)
        both = [replace(inputs, set_walk_loads={k: v for k, v in inputs.set_walk_loads.items() if k in walked},
                        random_curves={k: v for k, v in inputs.random_curves.items() if k in curved})
                for inputs in both]
        # §3.9's figures likewise: each priced on both devices or on neither.
        kept = {name for name in REGION_RATES if all(getattr(inputs, name) is not None for inputs in both)}
        both = [replace(inputs, local_loads=inputs.local_loads if "local_loads" in kept else None,
                        barriers=inputs.barriers if "barriers" in kept else None,
                        barrier_values=inputs.barrier_values if "barrier_values" in kept else None)
                for inputs in both]
        for device, inputs in zip((source, target), both, strict=True):
            missing = [words for name, words in CORE_RATES.items() if not getattr(inputs, name)]
            if missing:
                return None, (f"no core-bound ceiling: {device.name} has no measured {', '.join(missing)} "
                              "(a device profile older than the bench's CPU rates?)")
            there = replace(profile, bytes_from=f"simulated for {device.name}") if simulated else profile
            times.append(core_time(predict_profiled(there, inputs, lanes, cycles, vectors, packed,
                                                    compiled_cycles=whole)[0]))
    except (ValueError, LookupError, TypeError) as error:
        return None, f"no core-bound ceiling: {error}"
    note = (f"core-bound ceiling (§4, CPUs): {times[0]:.3g} s on {source.name}, {times[1]:.3g} s on {target.name} "
            "(the quantitative model with unlimited bandwidth)")
    return (times[0], times[1]), note


def project_profiles(profiles: ProfileSet, source: Device, targets: list[Device], *,
                     kernels: list[KernelProfile] | None = None, times: dict[str, float] | None = None,
                     precisions: dict[str, Precision] | None = None,
                     flop_ratios: dict[tuple[str, str], float] | None = None,
                     measured: dict[tuple[str, str], tuple[float, float]] | None = None,
                     code: CompiledCode | None = None,
                     ) -> tuple[list[KernelProjection], dict[str, str]]:
    """Return each kernel projected onto each target, and the kernels left out with the reason.

    times: s on the source per kernel (default: the profile's durations); precisions: per kernel (default: the
    dominant one); flop_ratios: FLOP_t / FLOP_s per (kernel base name, target name); measured: (median s,
    spread) per (kernel, target name); code: what the source's campaign recorded of its compiled code, which the
    core-bound ceiling between two CPUs reads (`core_times`).
    """
    times, precisions, flop_ratios, measured = times or {}, precisions or {}, flop_ratios or {}, measured or {}
    oclgrind = profiles.source.tool.lower().startswith("oclgrind")
    results: list[KernelProjection] = []
    left_out: dict[str, str] = {}
    for profile in kernels if kernels is not None else profiles.kernels:
        precision = precisions.get(profile.name) or dominant_precision(profile)
        if precision not in _PROJECTED:
            left_out[profile.name] = (f"a {precision.value} kernel: the projection (§4) scales fp32, fp64 or int32 "
                                      "arithmetic")
            continue
        try:
            kernel, notes = projected_kernel(profile, precision.value, time=times.get(profile.name))
            on_source = projection_capabilities(source, precision)
        except (ProfileError, LookupError) as error:
            left_out[profile.name] = str(error)
            continue
        if oclgrind:
            notes = [n for n in notes if "active-threads" not in n]
            bytes_note = (f"bytes per level {profile.bytes_from} (Oclgrind's trace through that device's caches)"
                          if profile.bytes_from and profile.bytes_from.startswith("simulated")
                          else "L1 bytes are all global loads and stores, DRAM bytes the compulsory footprint")
            notes.append(f"Oclgrind has no warp: the warp-efficiency ceiling is 1; {bytes_note}")
        for target in targets:
            try:
                # Both sides at one access width: 4-byte DRAM accesses where both profiles measured them apart.
                four_byte = four_byte_dram(source, target)
                on_target = projection_capabilities(target, precision, source, four_byte)
                from_source = projection_capabilities(source, precision, four_byte=True) if four_byte else on_source
                ratio = flop_ratios.get((kernel_base_name(profile.name), target.name), 1.0)
                cores, core_note = core_times(profile, source, target, code)
                projection = project(kernel, from_source.maxima(), on_target.maxima(), ratio, core_times=cores)
            except (LookupError, ValueError) as error:
                left_out[f"{profile.name} -> {target.name}"] = str(error)
                continue
            meas, spread = measured.get((profile.name, target.name), (None, 0.0))
            extra = [f"FLOP x {ratio:.4g} on {target.name} (SASS of its special functions)"] if ratio != 1.0 else []
            extra += [core_note] if core_note else []
            assumed = issue_note(projection)
            extra += [assumed] if assumed else []
            if oclgrind and kernel.fp_issue_share is not None and on_source.fp_issue_share and on_target.fp_issue_share:
                extra.append(f"FP issue share {kernel.fp_issue_share:.3g} of Oclgrind's LLVM instructions, not of a "
                             "GPU's machine code")
            results.append(KernelProjection(profile.name, from_source, on_target, projection, ratio,
                                            tuple(notes + extra), meas, spread))
    return results, left_out


def issue_note(projection: Projection) -> str:
    """Return what the projection assumed of the kernel's FP issue share where it had to ('' where it did not)."""
    if projection.fp_issue_share is None or projection.fp_issue_measured:
        return ""
    return (f"FP share of issued instructions unknown: taken as {projection.fp_issue_share:.3g}, the middle of the "
            "range the two GPUs' issue shares leave; the interval spans that range")


@dataclass(frozen=True)
class ArchiveRun:
    """What a campaign archive gives the projection: its device, its profiles, and its correct kernels' timings."""

    archive: Archive
    device: Device
    profiles: ProfileSet | None
    timings: dict[str, tuple[float, float]]  # kernel -> (median s, spread sigma / t)
    precisions: dict[str, Precision]
    sizes: dict[str, int | None]

    @classmethod
    def of(cls, archive: Archive) -> ArchiveRun:
        """Return the projection's view of a campaign archive (kernels skipped or wrong are not timed)."""
        device = parse_device_text(archive.device_yaml, f"{archive.path}:device.yaml")
        profiles = (profile_from_text(archive.profile_yaml, f"{archive.path}:profile.yaml")
                    if archive.profile_yaml else None)
        timings, precisions, sizes = {}, {}, {}
        for name, record in archive.manifest["kernels"].items():
            if "skipped" in record or record.get("check") or "median_s" not in record:
                continue
            timings[name] = (record["median_s"], record.get("spread", 0.0))
            sizes[name] = record.get("n")
            if record.get("precision"):
                precisions[name] = Precision(record["precision"])
        return cls(archive, device, profiles, timings, precisions, sizes)

    def compiled_code(self) -> CompiledCode:
        """Return what the campaign recorded of its compiled code: the compiler's report, in-core reading, work-items."""
        manifest = self.archive.manifest
        return CompiledCode(manifest.get("vectorisation"), manifest.get("incore"),
                            {name: record.get("work_items") for name, record in manifest["kernels"].items()})


def same_size_timings(target: ArchiveRun, source_sizes: dict[str, int | None]
                      ) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[int | None, int | None]]]:
    """Return the target's timings of the kernels it ran at the source's size, and the others' (source, target) sizes.

    With no source sizes (a profile, not an archive) every timing counts.
    """
    same, differing = {}, {}
    for name, timing in target.timings.items():
        if source_sizes and source_sizes.get(name) != target.sizes.get(name):
            differing[name] = (source_sizes.get(name), target.sizes.get(name))
        else:
            same[name] = timing
    return same, differing


def distinct_target(source: Device, target: Device) -> Device:
    """Return `target`, renamed '<name>-target' when it bears the source's name (two runs of one device)."""
    return target.model_copy(update={"name": f"{target.name}-target"}) if target.name == source.name else target


@dataclass(frozen=True)
class ArchiveProjection:
    """One campaign archive's kernels projected onto another's device and scored against its measurements."""

    source: ArchiveRun
    target: ArchiveRun
    target_device: Device  # the target's device, renamed where it bears the source's name
    projections: list[KernelProjection]
    left_out: dict[str, str]


def project_archive(source: ArchiveRun, target: ArchiveRun) -> ArchiveProjection:
    """Project every profiled kernel of `source` onto `target`'s device; score against `target`'s times."""
    if source.profiles is None:
        raise InputError(f"{source.archive.path}: the archive has no kernel profiles to project (run the campaign "
                         "with profiling)")
    target_device = distinct_target(source.device, target.device)
    comparable, differing = same_size_timings(target, source.sizes)
    times, measured, left_out = {}, {}, {}
    chosen = []
    for profile in source.profiles.kernels:
        name = profile.name
        if name not in source.timings:
            left_out[name] = "not timed on the source (skipped, or a wrong result)"
        elif name in differing:
            left_out[name] = "sizes differ: n = {} on the source, {} there".format(*differing[name])
        elif name not in comparable:
            left_out[name] = "not timed on the target (skipped, or a wrong result)"
        else:
            chosen.append(profile)
            times[name] = source.timings[name][0]
            measured[(name, target_device.name)] = comparable[name]
    projections, refused = project_profiles(source.profiles, source.device, [target_device], kernels=chosen,
                                            times=times, precisions=source.precisions, measured=measured,
                                            code=source.compiled_code())
    left_out.update({name.split(" -> ")[0]: why for name, why in refused.items()})
    return ArchiveProjection(source, target, target_device, projections, left_out)
