"""`perfcast campaign run`: measure the device, time every kernel of the suite, profile each, keep it all.

Steps, each saved as soon as it is done (an interrupted run resumes at the first missing one):
1. the device's measured profile (`perfcast bench` on the same backend), unless one is given;
2. each kernel timed for real with device events: one checked launch, one warm-up, then `repetitions` timed
   launches (median and spread kept);
3. each kernel profiled: OpenCL kernels under Oclgrind at two reduced NDRanges (1 and 2 work-groups), the
   counts checked to agree per work-item and scaled to the run's NDRange; then traced at the run's size (a
   sample of its work-groups) and its bytes per level simulated through the measured device's caches
   (docs/traffic.md), or, where that cannot be done, its compulsory footprint (Oclgrind has no cache);
4. on PoCL's CPU device, the inner loops of the code it compiled, with their cycles (llvm-mca) and iterations
   (Oclgrind's block counts): docs/models.md §3.5.
Between 2 and 3 the compiler's report of what it vectorised (gcc's, PoCL's) is read, and the device measured
again.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from perfcast import __version__
from perfcast.campaign.archive import ARCHIVE_FORMAT, ARCHIVE_VERSION, ArchiveError, WorkingFolder
from perfcast.errors import BackendUnavailable, InputError, NotFound, ToolError
from perfcast.kernels.campaign import KERNELS, OPENCL_SOURCE, TILE, CampaignKernel, kernel_named, opencl_options
from perfcast.profiles.metrics import METRICS
from perfcast.profiles.profile import KernelProfile, ProfileSet, load_profile, scaling_differences
from perfcast.profiles.traffic import (
    FIRST_TOUCH_METRICS,
    INDIRECT_METRIC,
    SET_WALK_PREFIX,
    SPAN_LOADS_PREFIX,
    SPAN_LOG2_PREFIX,
)

if TYPE_CHECKING:
    from perfcast.devices.schema import Device

__all__ = ["CAMPAIGN_BACKENDS", "SCALING_TOLERANCE", "CampaignOptions", "manifest_base", "measure_device", "run_campaign",
           "runtime_variables"]

Progress = Callable[[str, float], None]
SCALING_TOLERANCE = 0.01  # per-work-item counts at two reduced NDRanges must agree this closely
TRAFFIC_ACCESSES = 4e6  # memory accesses traced per kernel for the traffic simulation (10-25 s of Oclgrind on 2 cores)
# A quick run (`--quick`: the demo, the tests) traces a quarter of that: on the 2-core Zen 3 guest its trace took
# 107 of the campaign's 150 s, 310 of 356 s at 4e6 (docs/traffic.md); a sample still spans two waves at least.
TRAFFIC_ACCESSES_QUICK = 1e6
TRAFFIC_METRICS = ("l1_bytes", "l2_bytes", "l3_bytes", "dram_bytes", "dram_read", "dram_write",
                   "dram_write_allocate_bytes", "scattered_l1", "scattered_l2", "scattered_l3", "scattered_dram",
                   INDIRECT_METRIC,
                   *(f"{prefix}{level}" for prefix in (SET_WALK_PREFIX, SPAN_LOADS_PREFIX, SPAN_LOG2_PREFIX)
                     for level in ("l1", "l2", "l3", "dram")))
# The §3 counts whose scaling is checked; the DRAM ones are replaced by the simulation or the footprint anyway.
MODEL_METRICS = tuple(spec.name for spec in METRICS if not spec.name.startswith("dram"))


@dataclass(frozen=True)
class CampaignOptions:
    """What `campaign run` was asked to do."""

    backend: str
    output: Path
    device: str | None = None
    quick: bool = False
    kernels: tuple[str, ...] = ()
    repetitions: int = 10
    device_profile: Path | None = None  # a measured profile to use instead of measuring now
    fresh: bool = False
    command: str = ""
    device_runs: int = 2  # runs of perfcast bench, the first before the kernels are timed, the rest after
    fanout: Mapping[str, Any] | None = None  # a campaign run on several workers: its id, this worker, how many


@dataclass
class _OpenClTimer:
    """Times the suite's kernels on one OpenCL device with profiling events."""

    cl: Any
    device: Any
    context: Any
    queue: Any
    program: Any

    @classmethod
    def open(cls, selector: str | None) -> _OpenClTimer:
        from perfcast.bench.opencl import OpenClBackend
        from perfcast.kernels.opencl import build_program, profiling_queue

        device = OpenClBackend.open(selector, 1).device
        cl, device, context, queue = profiling_queue(device)
        try:
            program = build_program(cl, context, OPENCL_SOURCE.read_text(), opencl_options(bool(device.double_fp_config)))
        except cl.RuntimeError as error:
            raise BackendUnavailable(f"the campaign suite did not build on {device.name}: {error}") from None
        return cls(cl, device, context, queue, program)

    def supports(self, kernel: CampaignKernel) -> str | None:
        """Return why `kernel` cannot run on this device, or None."""
        if kernel.precision == "fp64" and not self.device.double_fp_config:
            return "the device has no double precision"
        return None

    def time(self, kernel: CampaignKernel, n: int, repetitions: int) -> dict[str, Any]:
        """Return the kernel's checked result and the times (s) of `repetitions` launches after a warm-up."""
        cl = self.cl
        arrays = kernel.arrays(n, np.random.default_rng(0))
        inputs = {name: array.copy() for name, array in arrays.items()}
        flags = cl.mem_flags
        buffers = {name: cl.Buffer(self.context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=array)
                   for name, array in arrays.items()}
        handle = cl.Kernel(self.program, kernel.name)
        handle.set_args(*kernel.ordered_arguments(n, buffers))
        launch = kernel.launch(n)

        def once() -> float:
            event = cl.enqueue_nd_range_kernel(self.queue, handle, launch.global_size, launch.local_size)
            event.wait()
            return (event.profile.end - event.profile.start) * 1e-9

        once()
        outputs = {name: np.empty_like(array) for name, array in arrays.items()}
        for name, buffer in buffers.items():
            cl.enqueue_copy(self.queue, outputs[name], buffer)
        self.queue.finish()
        problem = kernel.check(n, inputs, outputs)
        once()  # warm-up
        times = [once() for _ in range(repetitions)]
        return {"times_s": times, "check": problem, "work_items": launch.items}

    def vectorisation(self, kernels: list[CampaignKernel], sizes: dict[str, int]) -> dict[str, Any] | None:
        """Return the SIMD lanes PoCL gave each kernel's work-group loop (its vectoriser's remarks), or None.

        None on a platform other than PoCL, whose compiler says nothing of the kind.
        """
        from perfcast.campaign.vector_evidence import pocl_tool, pocl_vector_lanes, run_pocl_report

        where = self._pocl_indices()
        if where is None:
            return None
        remarks = run_pocl_report({k.name: sizes[k.name] for k in kernels}, *where)
        return {"tool": pocl_tool(self.device.platform.version),
                "lanes": pocl_vector_lanes(remarks, [k.name for k in kernels]),
                "threads": int(self.device.max_compute_units), "raw": remarks}

    def incore(self, kernels: list[CampaignKernel], sizes: dict[str, int]) -> dict[str, Any] | None:
        """Return the in-core record of the code PoCL compiled for each kernel (§3.5), or None off PoCL's CPU device."""
        from perfcast.campaign.incore_evidence import run_pocl_incore

        where = self._pocl_indices()
        if where is None or not self.device.type & self.cl.device_type.CPU:
            return None
        return run_pocl_incore({k.name: sizes[k.name] for k in kernels}, *where, self.device.name)

    def _pocl_indices(self) -> tuple[int, int] | None:
        """Return the (platform, device) indices of the timed device where PoCL runs it, else None.

        A child process given them (PYOPENCL_CTX) reaches the same device to read what PoCL compiled.
        """
        if "portable computing language" not in self.device.platform.name.lower():
            return None
        return next(((p, d) for p, found in enumerate(self.cl.get_platforms())
                     for d, device in enumerate(found.get_devices()) if device == self.device), None)

    def environment(self) -> dict[str, Any]:
        """Return the platform, device and driver the times were taken with."""
        from perfcast.kernels.opencl import opencl_environment

        return opencl_environment(self.device, f"OpenCL -DTILE={TILE}")


def _open_opencl(selector: str | None) -> _OpenClTimer:
    return _OpenClTimer.open(selector)


def _open_cuda(selector: str | None) -> Any:
    from perfcast.campaign.cuda import CudaTimer

    return CudaTimer.open(selector)


def _open_cpu(selector: str | None) -> Any:
    from perfcast.campaign.native import NativeTimer

    return NativeTimer.open(selector)


# The registry of campaign backends: the CLI's --backend choices come from it.
CAMPAIGN_BACKENDS: dict[str, tuple[str, Callable[[str | None], Any]]] = {
    "opencl": ("the suite's OpenCL C on an OpenCL device (PoCL on CPUs), profiled with Oclgrind", _open_opencl),
    "cuda": ("the suite's CUDA C through CuPy, profiled with ncu", _open_cuda),
    "cpu": ("the suite's C with OpenMP on this machine's cores, its OpenCL twin profiled with Oclgrind", _open_cpu),
}


def _selected(names: Sequence[str]) -> list[CampaignKernel]:
    """Return the kernels named (all when none), in suite order."""
    if not names:
        return list(KERNELS)
    wanted = {kernel_named(name).name for name in names}
    return [kernel for kernel in KERNELS if kernel.name in wanted]


# Environment variables that change what a run measures: PoCL's threads and devices, the OpenCL loader and
# platform choice, CUDA's visible devices, OpenMP threads.
RUNTIME_VARIABLES = ("POCL_", "OCL_ICD_", "PYOPENCL_", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "OMP_")


def runtime_variables() -> dict[str, str]:
    """Return the environment variables of this process that change what a campaign measures."""
    return {name: value for name, value in sorted(os.environ.items()) if name.startswith(RUNTIME_VARIABLES)}


def manifest_base(command: str) -> dict[str, Any]:
    """Return what every campaign manifest starts with: format, version, when, how, where, and empty steps."""
    return {
        "format": ARCHIVE_FORMAT, "version": ARCHIVE_VERSION, "perfcast": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"), "command": command,
        "host": {"machine": platform.machine(), "python": sys.version.split()[0], "platform": platform.platform()},
        "variables": runtime_variables(),
        "device": None, "environment": None, "kernels": {}, "profiling": None, "notes": [],
    }


def _fresh_manifest(options: CampaignOptions) -> dict[str, Any]:
    manifest = {**manifest_base(options.command), "backend": options.backend, "device_selector": options.device,
                "quick": options.quick, "repetitions": options.repetitions, "options": _run_options(options)}
    if options.fanout is not None:
        manifest["fanout"] = dict(options.fanout)
    return manifest


def _run_options(options: CampaignOptions) -> dict[str, Any]:
    """Return the options that shape what a run measures, as its manifest keeps them (resumes must match)."""
    return {"backend": options.backend, "device": options.device, "quick": options.quick,
            "repetitions": options.repetitions, "kernels": sorted(set(options.kernels)),
            "device_profile": str(Path(options.device_profile).resolve()) if options.device_profile else None,
            "device_runs": options.device_runs}


def _resume_differences(manifest: dict[str, Any], options: CampaignOptions) -> list[str]:
    """Return each option a resumed run gives otherwise than the run it resumes (`-r 30` over `-r 10`, ...)."""
    recorded = manifest.get("options") or {"backend": manifest.get("backend"), "quick": manifest.get("quick"),
                                            "device": manifest.get("device_selector"),
                                            "repetitions": manifest.get("repetitions")}
    now = _run_options(options)
    return [f"{name}: {recorded[name]!r} then, {now[name]!r} now" for name in now
            if name in recorded and recorded[name] != now[name]]


def measure_device(options: CampaignOptions, folder: WorkingFolder, progress: Progress, start: float = 0.0,
                   share: float = 0.3) -> str:
    """Save the device's measured profile into the folder; return its name.

    The bench reports its progress from `start` over `share` of the campaign's (fractions).
    """
    from perfcast.devices.catalog import load_device_file, save_device

    target = folder.file("device.yaml")
    if options.device_profile is not None:
        device = load_device_file(options.device_profile)
        shutil.copyfile(options.device_profile, target)
        return device.name
    device = _bench(options, _within(progress, "bench", start, share))
    save_device(device, target)
    shutil.copyfile(target, folder.file("device-run-1.yaml"))
    return device.name


def _within(progress: Progress, prefix: str, start: float, share: float) -> Progress:
    """Return a progress callback for a stage that spans `share` of the run from `start` (fractions)."""
    return lambda step, done: progress(f"{prefix}: {step}", start + share * done)


def _bench(options: CampaignOptions, progress: Progress) -> Device:
    """Return the device's profile measured now by `perfcast bench` on the campaign's backend."""
    from perfcast.bench.backends import open_backend
    from perfcast.bench.suite import measured_device

    backend, base = open_backend(options.backend, options.device, 5)
    return measured_device(base, backend.run(options.quick, progress))


def measure_device_again(options: CampaignOptions, folder: WorkingFolder, manifest: dict[str, Any],
                         progress: Progress, start: float = 0.55, share: float = 0.15) -> None:
    """Measure the device until it has `device_runs` runs; device.yaml becomes the best of them, figure by figure.

    The runs report their progress from `start` over `share` of the campaign's (fractions).
    """
    from perfcast.bench.suite import best_of_runs
    from perfcast.devices.catalog import load_device_file, save_device

    if not folder.file("device-run-1.yaml").exists():  # an archive begun before the device was measured twice
        shutil.copyfile(folder.path / "device.yaml", folder.file("device-run-1.yaml"))
    while manifest.get("device_runs", 1) < options.device_runs:
        run = manifest.get("device_runs", 1) + 1
        each = share / (options.device_runs - 1)  # of the run's progress, between the timings and the profiles
        device = _bench(options, _within(progress, f"bench, run {run}", start + each * (run - 2), each))
        save_device(device, folder.file(f"device-run-{run}.yaml"))
        runs = [load_device_file(folder.path / f"device-run-{i}.yaml") for i in range(1, run + 1)]
        save_device(best_of_runs(runs), folder.file("device.yaml"))
        manifest["device_runs"] = run
        folder.save_manifest(manifest)


def _time_kernels(options: CampaignOptions, folder: WorkingFolder, manifest: dict[str, Any], timer: Any,
                  kernels: list[CampaignKernel], progress: Progress) -> None:
    """Time every kernel not timed yet; the manifest is saved after each."""
    for index, kernel in enumerate(kernels):
        if kernel.name in manifest["kernels"]:
            continue
        n = kernel.sizes[1] if options.quick else kernel.sizes[0]
        progress(f"timing {kernel.name} (n = {n})", 0.3 + 0.25 * index / len(kernels))
        why_not = timer.supports(kernel)
        record: dict[str, Any] = {"n": n, "precision": kernel.precision}
        if why_not:
            record["skipped"] = why_not
        else:
            started = time.perf_counter()
            result = timer.time(kernel, n, options.repetitions)
            times = result["times_s"]
            median = statistics.median(times)
            record.update(result)
            record["median_s"] = median
            record["spread"] = statistics.pstdev(times) / median  # sigma / t, as spec §6 writes it
            record["range_spread"] = (max(times) - min(times)) / median
            record["wall_s"] = time.perf_counter() - started
        manifest["kernels"][kernel.name] = record
        folder.save_manifest(manifest)


def _ask_compiler(manifest: dict[str, Any], timer: Any, kernels: list[CampaignKernel], progress: Progress,
                  method: str, label: str, share: float, errors: tuple[type[Exception], ...]) -> Any:
    """Return what the timer's `method` says of the compiled timed kernels, or None (no such method, or it failed).

    A failure is a note beginning "no " + `label`, not a stop: the models then go without what it would have said.
    """
    timed = [k for k in kernels if "median_s" in manifest["kernels"].get(k.name, {})]
    if not timed or not hasattr(timer, method):
        return None
    progress(f"reading {label}", share)
    sizes = {k.name: k.profile_size(manifest["kernels"][k.name]["n"]) for k in timed}
    try:
        return getattr(timer, method)(timed, sizes)
    except errors as error:
        manifest["notes"].append(f"no {label}: {error}")
        return None


def _record_vectorisation(folder: WorkingFolder, manifest: dict[str, Any], timer: Any, kernels: list[CampaignKernel],
                          progress: Progress) -> None:
    """Record the SIMD lanes the compiler gave each timed kernel (gcc's or PoCL's report), where it says.

    The boat hull rules its CPU floors out by them (`score._hull`). The compiler's own text is kept in
    raw/vectorisation.txt, so that a later reader can read it again. A backend whose compiler gives no report
    (CUDA, an OpenCL platform other than PoCL) records None; a report that fails is a note, not a stop.
    """
    # ToolError: a compiler that fails; InputError: C the reader cannot parse.
    found = _ask_compiler(manifest, timer, kernels, progress, "vectorisation", "vectorisation report", 0.56,
                          (ToolError, InputError))
    if found is not None:
        folder.file("raw/vectorisation.txt").write_text(found.pop("raw", ""))
        found["raw"] = "raw/vectorisation.txt"
    manifest["vectorisation"] = found
    folder.save_manifest(manifest)


def _record_incore(folder: WorkingFolder, manifest: dict[str, Any], timer: Any, kernels: list[CampaignKernel],
                   progress: Progress) -> None:
    """Record each timed kernel's in-core cycles a work-item, from the code the device ran (docs/models.md §3.5).

    PoCL's CPU device (`_OpenClTimer.incore`) and the C suite (`NativeTimer.incore`: gcc's code with gcov's
    counts) say what they compiled; other backends record None. A tool that is missing or fails is a note, not a
    stop: the quantitative model then goes without the in-core floor.
    """
    # ToolError: a tool that fails; InputError: block counts the reader refuses; OSError: files that went missing.
    manifest["incore"] = _ask_compiler(manifest, timer, kernels, progress, "incore", "in-core floor", 0.97,
                                       (ToolError, InputError, OSError))
    folder.save_manifest(manifest)


def _profile_kernels(options: CampaignOptions, folder: WorkingFolder, manifest: dict[str, Any],
                     kernels: list[CampaignKernel], progress: Progress) -> None:
    """Profile every timed kernel (Oclgrind for OpenCL and the C suite's twins, Nsight Compute for CUDA); save them."""
    tool = "ncu" if options.backend == "cuda" else "oclgrind"  # the cpu backend's kernels have OpenCL twins
    if shutil.which(tool) is None:
        _without_profiles(folder, manifest, f"{tool} is not installed")
        return
    timed = [k for k in kernels if "median_s" in manifest["kernels"].get(k.name, {})]
    if tool == "ncu":
        _profile_with_ncu(folder, manifest, timed, progress)
    else:
        _profile_with_oclgrind(folder, manifest, timed, progress)


def _without_profiles(folder: WorkingFolder, manifest: dict[str, Any], why: str) -> None:
    """Record in the manifest that the run has no profiles, and why (the timings stand without them)."""
    manifest["profiling"] = {"tool": None, "incomplete": True,
                             "note": f"{why}: no profiles, so no quantitative predictions or projections"}
    folder.save_manifest(manifest)


def _profile_with_ncu(folder: WorkingFolder, manifest: dict[str, Any], timed: list[CampaignKernel],
                      progress: Progress) -> None:
    """Profile each kernel once at its run's size under Nsight Compute (real DRAM sectors, no scaling)."""
    from perfcast.profiles.capture import capture

    progress("profiling with Nsight Compute", 0.7)
    listing = ",".join(f"{k.name}={manifest['kernels'][k.name]['n']}" for k in timed)
    command = [sys.executable, "-m", "perfcast.campaign.cuda", listing]
    try:
        captured = capture("ncu", command, folder.file("raw/ncu.yaml"), timeout=1800).profile
    except ToolError as error:
        # The timings stand without profiles (roofline and boat hull are scored on them): keep them, and say why
        # the quantitative model and the projection have nothing to work on. ncu's log stays in raw/.
        _without_profiles(folder, manifest, str(error))
        return
    profiles, missing = [], []
    for kernel in timed:
        try:
            # Named as the suite names it: ncu may print a signature ("triad(float*, ...)"), the scores look up names.
            profile = replace(captured.kernel(kernel.name), name=kernel.name)
        except NotFound:
            missing.append(kernel.name)
            continue
        profiles.append(profile)
        manifest["kernels"][kernel.name]["profile"] = {"profile_n": manifest["kernels"][kernel.name]["n"],
                                                       "profiled_duration_s": profile.duration}
    notes = captured.notes
    if not profiles:
        _without_profiles(folder, manifest, "Nsight Compute profiled none of the timed kernels (its log is "
                                            "raw/ncu.ncu.txt)")
        return
    if missing:
        notes = (*notes, f"Nsight Compute profiled no launch of {', '.join(missing)} (its log is raw/ncu.ncu.txt)")
    ProfileSet(captured.source, tuple(profiles), notes).save(folder.file("profile.yaml"))
    manifest["profiling"] = {"tool": f"Nsight Compute {captured.source.version or ''}".strip()}
    if missing:
        manifest["profiling"].update(note=notes[-1], incomplete=True)
    folder.save_manifest(manifest)


def _profile_with_oclgrind(folder: WorkingFolder, manifest: dict[str, Any], timed: list[CampaignKernel],
                           progress: Progress) -> None:
    """Profile each kernel under Oclgrind at 1 and 2 work-groups, check the scaling, scale to the run's NDRange."""
    from perfcast.campaign.score import footprint_profile
    from perfcast.devices.catalog import load_device_file
    from perfcast.profiles.capture import capture

    sizes = {k.name: k.profile_size(manifest["kernels"][k.name]["n"]) for k in timed}
    listing = ",".join(f"{name}={n}" for name, n in sizes.items())
    captured: dict[int, ProfileSet] = {}
    for step, groups in enumerate((1, 2)):
        progress(f"profiling with Oclgrind ({groups} work-group{'s' if groups > 1 else ''} per kernel)",
                 0.7 + 0.15 * step)
        path = folder.file(f"raw/oclgrind-{groups}.yaml")
        if path.exists():
            captured[groups] = load_profile(path)
            continue
        command = [sys.executable, "-m", "perfcast.campaign.oclgrind_driver", str(groups), listing]
        try:
            captured[groups] = capture("oclgrind", command, path, timeout=1800).profile
        except ToolError as error:
            raise ToolError(f"profiling the suite under Oclgrind failed: {error}") from None
    per_item = {k.name: captured[1].kernel(k.name).metrics.get("ldst", 1.0) / k.profile_launch(sizes[k.name], 1).items
                for k in timed}
    device = load_device_file(folder.path / "device.yaml")
    traffic = _simulate_traffic(folder, manifest, timed, progress, per_item, device,
                                TRAFFIC_ACCESSES_QUICK if manifest.get("quick") else TRAFFIC_ACCESSES)
    profiles = []
    for kernel in timed:
        record = manifest["kernels"][kernel.name]
        n_profile = sizes[kernel.name]
        items = {g: kernel.profile_launch(n_profile, g).items for g in (1, 2)}
        small, large = (captured[g].kernel(kernel.name) for g in (1, 2))
        small = KernelProfile(small.name, small.launches, small.metrics, work_items=items[1], notes=small.notes)
        large = KernelProfile(large.name, large.launches, large.metrics, work_items=items[2], notes=large.notes)
        differences = {m: d for m, d in scaling_differences(small, large).items() if m in MODEL_METRICS}
        worst = max(differences.items(), key=lambda item: item[1])
        scaled = large.scaled(record["work_items"] / items[2], work_items=record["work_items"])
        read, written = kernel.footprint(record["n"])
        record["footprint_bytes"] = {"read": read, "written": written}
        simulated = traffic.profiles.get(kernel.name)
        if simulated is not None:
            values = {m: v for m, v in simulated.metrics.items() if m in TRAFFIC_METRICS}
            scaled = scaled.with_metrics(
                f"bytes per level simulated through {traffic.device}'s caches, a sample of "
                f"{traffic.groups[kernel.name]} work-groups at the run's size scaled to its "
                f"{record['work_items']} work-items (compulsory footprint: {read:.4g} B read + {written:.4g} B "
                "written)", simulated.bytes_from, **values)
            record["simulated_bytes"] = values
            record["traced_of"] = traffic.totals[kernel.name]
        else:
            # A CPU reads each line it stores to first, and perfcast bench counts those bytes in its bandwidths.
            scaled = footprint_profile(scaled, read, written, device)
            if traffic.note:
                scaled = scaled.with_metrics(traffic.note)
        if worst[1] > SCALING_TOLERANCE:
            scaled = scaled.with_metrics(f"counts per work-item differ by {worst[1]:.1%} ({worst[0]}) between 1 and 2 "
                                         "work-groups: the scaling is approximate")
        record["profile"] = {"profile_n": n_profile, "profiled_items": items, "scaling_worst": worst,
                             "scaled_by": record["work_items"] / items[2]}
        profiles.append(scaled)
    source = captured[2].source
    notes = captured[2].notes
    manifest["profiling"] = {**(manifest.get("profiling") or {}), "tool": f"Oclgrind {source.version or ''}".strip(),
                             "tolerance": SCALING_TOLERANCE}
    if manifest["backend"] != "opencl":
        twin = ("the timed kernels are the C of suite.c; the counts are Oclgrind's of their OpenCL twins in suite.cl "
                "(the same algorithm, arguments and work per work-item), not of the compiled C")
        notes = (*notes, twin)
        manifest["profiling"]["note"] = twin
    ProfileSet(source, tuple(profiles), notes).save(folder.file("profile.yaml"))
    folder.save_manifest(manifest)


def _traced_groups(kernel: CampaignKernel, n: int, accesses_per_item: float, cores: int,
                   accesses: float = TRAFFIC_ACCESSES) -> int:
    """Return the work-groups to trace of a kernel: `accesses` worth, at least two waves, inside the problem."""
    full = kernel.launch(n)
    group_items = int(np.prod(kernel.profile_launch(n, 1).local_size))
    wanted = int(accesses / max(accesses_per_item * group_items, 1.0))
    groups = max(2 * cores, min(wanted, full.items // group_items))

    def inside(count: int) -> bool:
        launch = kernel.profile_launch(n, count)
        offset = launch.offset or (0,) * len(launch.global_size)
        return all(o + g <= f for o, g, f in zip(offset, launch.global_size, full.global_size, strict=False))

    while groups > 1 and not inside(groups):
        groups //= 2
    return groups


@dataclass(frozen=True)
class _SimulatedTraffic:
    """The traffic run: simulated profiles by kernel, the device, work-groups traced and in the launch, or why not."""

    profiles: dict[str, KernelProfile]
    device: str = ""
    groups: dict[str, int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    note: str = ""


def _simulate_traffic(folder: WorkingFolder, manifest: dict[str, Any], timed: list[CampaignKernel],
                      progress: Progress, accesses_per_item: dict[str, float], device: Device,
                      accesses: float = TRAFFIC_ACCESSES) -> _SimulatedTraffic:
    """Trace each kernel under Oclgrind at the run's size, a sample of its work-groups, and simulate its traffic."""
    from perfcast.devices.cache_view import cache_hierarchy
    from perfcast.profiles.capture import TrafficRequest, capture

    try:
        hierarchy = cache_hierarchy(device)
    except InputError as error:
        return _SimulatedTraffic({}, note=f"no traffic simulation: {error}")
    totals, groups = {}, {}
    for kernel in timed:
        n = manifest["kernels"][kernel.name]["n"]
        launch = kernel.launch(n)
        totals[kernel.name] = launch.items // int(np.prod(launch.local_size))
        groups[kernel.name] = _traced_groups(kernel, n, accesses_per_item.get(kernel.name, 1.0), hierarchy.cores,
                                             accesses)
    path = folder.file("raw/oclgrind-traffic.yaml")
    if path.exists():
        captured = load_profile(path)
    else:
        progress(f"tracing memory accesses under Oclgrind ({min(groups.values())}–{max(groups.values())} "
                 f"work-groups per kernel) and simulating {hierarchy.device}'s caches", 0.95)
        listing = ",".join(f"{k.name}={manifest['kernels'][k.name]['n']}@{groups[k.name]}" for k in timed)
        command = [sys.executable, "-m", "perfcast.campaign.oclgrind_driver", "1", listing]
        # Each launch is charged as if it ran alone, caches cold: whether a timed kernel's data stays in the
        # last-level cache between its repeated launches depends on a capacity a shared VM does not give it.
        # On a CPU each kernel's work-items go through it in vectors as wide as its compiler made them (1 where
        # it left the kernel scalar), which decides how its accesses meet the caches.
        evidence = manifest.get("vectorisation") or {}
        lanes = evidence.get("item_lanes") or evidence.get("lanes") or None
        request = TrafficRequest(hierarchy, total_groups=totals, lanes=lanes)
        try:
            captured = capture("oclgrind", command, path, timeout=1800, traffic=request).profile
        except ToolError as error:
            return _SimulatedTraffic({}, note=f"the traffic simulation failed: {error}")
    found = {}
    for kernel in timed:
        try:
            profile = captured.kernel(kernel.name)
        except NotFound:
            continue
        if profile.bytes_from and profile.bytes_from.startswith("simulated"):
            # The suite times each kernel after a checked launch and a warm-up: its timed launches find the pages
            # the traced (first) launch touched first mapped already (docs/models.md §3.7).
            kept = {k: v for k, v in profile.metrics.items() if k not in FIRST_TOUCH_METRICS}
            found[kernel.name] = replace(profile, metrics=kept)
    manifest["profiling"] = {**(manifest.get("profiling") or {}), "traffic": {
        "device": hierarchy.device, "groups": groups, "totals": totals, "cores": hierarchy.cores,
        "levels": [{"name": level.name, "size": level.size, "line": level.line, "ways": level.ways,
                    "instances": level.instances, "write": level.write, "allocate": level.allocate,
                    "assumed": list(level.assumed)} for level in hierarchy.levels],
        "notes": list(hierarchy.notes)}}
    return _SimulatedTraffic(found, hierarchy.device, groups, totals)


def run_campaign(options: CampaignOptions, progress: Progress = lambda label, done: None) -> Path:
    """Run (or resume) a campaign and return the archive it packed."""
    if options.backend not in CAMPAIGN_BACKENDS:
        raise InputError(f"unknown campaign backend {options.backend!r}; choose one of {', '.join(CAMPAIGN_BACKENDS)}")
    if not 1 <= options.device_runs <= 5:
        raise InputError(f"--device-runs {options.device_runs}: measure the device 1 to 5 times")
    if options.repetitions < 10:
        raise InputError(f"--repetitions {options.repetitions}: a campaign times each kernel at least 10 times")
    kernels = _selected(options.kernels)
    # The backend first: a machine that cannot run it (no CuPy, no OpenCL device) is told so and keeps no folder.
    timer = CAMPAIGN_BACKENDS[options.backend][1](options.device)
    folder = WorkingFolder.for_archive(options.output)
    if options.fresh:
        folder.discard()
    if folder.exists():
        manifest = folder.manifest()
        differences = _resume_differences(manifest, options)
        if differences:
            raise ArchiveError(f"{folder.path} holds an unfinished run made with other options ("
                               + "; ".join(differences) + "): finish it with the same options, or start again "
                               "with --fresh (what it measured is then discarded)")
        manifest["notes"].append(f"resumed {_dt.datetime.now(_dt.UTC).isoformat(timespec='seconds')}")
    else:
        manifest = _fresh_manifest(options)
        folder.save_manifest(manifest)
    if manifest["environment"] is None:
        manifest["environment"] = timer.environment()
    if manifest["device"] is None or not (folder.path / "device.yaml").exists():
        progress("measuring the device (perfcast bench)", 0.0)
        manifest["device"] = measure_device(options, folder, progress)
        manifest["device_runs"] = 1
        folder.save_manifest(manifest)
    _time_kernels(options, folder, manifest, timer, kernels, progress)
    if "vectorisation" not in manifest:
        _record_vectorisation(folder, manifest, timer, kernels, progress)
    if options.device_profile is None:
        # Measured again after the kernels, because a ceiling is the best rate the device reaches and one run
        # of the suite on a shared host can fall in a slow spell the kernels were not timed in.
        measure_device_again(options, folder, manifest, progress)
    if not (folder.path / "profile.yaml").exists():
        _profile_kernels(options, folder, manifest, kernels, progress)
    if "incore" not in manifest:
        _record_incore(folder, manifest, timer, kernels, progress)
    progress("packing the archive", 0.98)
    archive = folder.pack(options.output)
    progress("done", 1.0)
    return archive
