"""What `perfcast choose` ranks devices for: a workload read from anything perfcast already understands.

Each kind of workload is predicted by the model that fits what it knows of the work:
- a profile (`perfcast profile -o`, or ncu / nvprof / Oclgrind output) or a campaign archive: the
  quantitative roofline (§3), summed over the kernels;
- an application file, a species, or a C file (`perfcast classify`): the boat hull (§2), the middle of its range;
- a recorded tuning space of the GPU corpus (`corpus:KERNEL`, measured on `--source`): the cross-GPU
  projection (§4) of the source's best configuration onto each target GPU.

A device the model cannot predict (a figure missing from its file, a CPU for a GPU projection) is left out
with the reason, never given a made-up time.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from perfcast.devices.schema import Device
from perfcast.errors import InputError
from perfcast.species.application import Application, Primitive

if TYPE_CHECKING:  # the profile and corpus readers load when a workload of theirs is read
    from perfcast.campaign.archive import Archive
    from perfcast.profiles.profile import ProfileSet
    from perfcast.validation.corpus import CorpusKernel
    from perfcast.validation.gpu_scores import ScoredGpu
    from perfcast.validation.kernel_work import KernelWork

__all__ = ["HullWorkload", "Prediction", "ProfileWorkload", "TunedOptima", "TunedSpaceWorkload", "Workload",
           "WorkloadError", "WorkloadOptions", "read_workload", "tuned_optima"]

CORPUS_PREFIX = "corpus:"


class WorkloadError(InputError):
    """A workload that cannot be read, or a device it cannot be predicted on (the message says why)."""


@dataclass(frozen=True)
class Prediction:
    """A workload's predicted time on one device (s) by one model, and what decided it, in words."""

    time: float
    detail: str
    is_measurement: bool = False  # the time is measured, not predicted (the device a space was tuned on)


class Workload(ABC):
    """A workload: its name, what it was read from, the model that predicts it, and times measured on devices."""

    kind: str = ""
    model: str = ""

    def __init__(self, name: str, origin: str, measured: Mapping[str, float] | None = None) -> None:
        self.name = name
        self.origin = origin
        self.measured: dict[str, float] = dict(measured or {})  # device name -> s, where a measurement is known
        self.notes: list[str] = []  # what a reader of the ranking must know about the workload

    @abstractmethod
    def predict(self, device: Device) -> Prediction:
        """Return the workload's predicted time (s) on `device`; NotFound or WorkloadError where it cannot."""

    def band_scope(self, device: Device) -> str:
        """Return the device class whose validated band applies to this workload's prediction on `device`."""
        return device.kind


class ProfileWorkload(Workload):
    """Profiled kernels (all launches of each), predicted by the quantitative roofline and summed."""

    kind, model = "profile", "quantitative"

    def __init__(self, name: str, origin: str, profile: ProfileSet, kernels: Sequence[str] = (),
                 measured: Mapping[str, float] | None = None) -> None:
        from perfcast.models.quantitative import kernel_parameters
        from perfcast.profiles.profile import ProfileError

        super().__init__(name, origin, measured)
        self.kernels = []
        self.skipped: list[str] = []
        for kernel in profile.select(list(kernels)):
            try:
                kernel_parameters(kernel.counts())
            except (ProfileError, ValueError) as error:
                if kernels:
                    raise WorkloadError(f"{origin}: kernel {kernel.name!r}: {error}") from None
                self.skipped.append(f"{kernel.name}: {error}")
                continue
            self.kernels.append(kernel)
        if self.skipped:
            self.notes.append(f"{len(self.skipped)} kernel(s) without the model's metrics left out of the sum: "
                              + "; ".join(self.skipped[:3]))
        if not self.kernels:
            raise WorkloadError(f"{origin}: no kernel has the metrics the quantitative model needs: "
                                + "; ".join(self.skipped[:3]))

    def predict(self, device: Device) -> Prediction:
        """Return the sum (s) of the kernels' §3 times on `device`, and how many were memory bound."""
        from perfcast.campaign.score import predict_profiled
        from perfcast.devices.quantitative_view import quantitative_inputs

        inputs = quantitative_inputs(device)
        total = 0.0
        bounds: Counter[str] = Counter()
        unpriced: set[str] = set()
        for kernel in self.kernels:
            try:
                # With §3.1, §3.2 and §3.4 where the profile and the device give them (§3.3 needs a compiler's report).
                prediction, _, left_out = predict_profiled(kernel, inputs)
            except ValueError as error:  # e.g. an fp64 kernel on a device without double precision
                raise WorkloadError(f"kernel {kernel.name!r}: {error}") from None
            total += prediction.time
            bounds[prediction.bound] += 1
            # A device without the rates leaves the profile's divisions or scattered loads unpriced: said, so
            # that a ranking of measured devices against catalog ones shows why it may favour the latter.
            unpriced.update(_LEFT_OUT.get(term, f"{term} unpriced") for term in left_out)
        if len(self.kernels) == 1:
            detail = f"{next(iter(bounds))} bound"
        else:
            detail = ", ".join(f"{n} of {len(self.kernels)} kernels {bound} bound" for bound, n in bounds.most_common())
        if unpriced:
            detail += f" ({'; '.join(sorted(unpriced))})"
        return Prediction(total, detail)


# What a device leaves out of a profile's §3.1–§3.9 terms (predict_profiled's left-out keys), in a ranking's words.
_LEFT_OUT = {"integer divisions": "integer divisions unpriced (no measured rate here)",
             "latency floor": "no latency floor (traffic simulated for another device)",
             "issue floor": "no issue floor for scalar code (no compiler's report)",
             "atomics": "atomics unpriced (no measured rate here)",
             "first touches": "first-touched pages unpriced (no measured rate here)",
             "launch": "launches unpriced (no measured rate here)",
             "barriers": "barrier crossings, or the values kept across them, unpriced (no measured rate here)"}


class HullWorkload(Workload):
    """An application (steps with species and f), predicted by the boat hull: the middle of the total's range."""

    kind, model = "application", "boat hull"

    def __init__(self, name: str, origin: str, application: Application, kind: str = "application",
                 measured: Mapping[str, float] | None = None) -> None:
        super().__init__(name, origin, measured)
        self.application = application
        self.kind = kind

    def predict(self, device: Device) -> Prediction:
        """Return the middle (s) of the boat hull's range of the whole application on `device`, with the range."""
        from perfcast.devices.hull_view import elementary_ops, hull_inputs
        from perfcast.species.application import predict_app
        from perfcast.units import format_duration

        application = self.application
        try:
            inputs = hull_inputs(device, application.precision, application.element_size)
            calls = any(p.elementary_calls for p in application.primitives)
            extra = elementary_ops(device, application.precision).extra if calls else 0.0
            total, _ = predict_app(application, inputs.figures, extra_ops_per_call=extra)
        except ValueError as error:
            raise WorkloadError(str(error)) from None
        middle = (total.lower + total.upper) / 2
        return Prediction(middle, f"range {format_duration(total.lower, 3)} to {format_duration(total.upper, 3)}")


class TunedSpaceWorkload(Workload):
    """A corpus kernel tuned on a source GPU, projected onto each target by §4 (its best configuration there)."""

    kind, model = "tuned space", "projection"

    def __init__(self, kernel: CorpusKernel, source: str, optima: TunedOptima | None = None) -> None:
        from perfcast.validation.gpu_scores import REPLAY_COVERAGE

        if source not in kernel.devices:
            raise WorkloadError(f"corpus:{kernel.name} was not measured on {source!r}; --source is one of: "
                                f"{', '.join(kernel.devices)}")
        optima = optima or tuned_optima(kernel)
        super().__init__(f"{kernel.name} (tuned on {source})", f"{CORPUS_PREFIX}{kernel.name}", optima.measured)
        if source not in optima.measured:
            raise WorkloadError(f"corpus:{kernel.name}: no plausible configuration measured on {source}")
        self.kernel = kernel
        self.source = source
        self.work = optima.work
        self.coverage = optima.coverage
        self.row = optima.best_rows[source]
        if self.coverage[source] < REPLAY_COVERAGE:
            self.notes.append(f"{source} measured {self.coverage[source]:.1%} of the space: its best configuration "
                              "is a short search's, not a tuned optimum, and the projections start from it")

    @functools.cached_property
    def _source_figures(self) -> tuple[Device, ScoredGpu]:
        """Return the source GPU and the figures the projection reads of it (once for every target)."""
        from perfcast.devices.catalog import get_device
        from perfcast.validation.gpu_scores import gpu_figures

        source = get_device(self.source)
        return source, gpu_figures(source)

    def predict(self, device: Device) -> Prediction:
        """Return the source's best configuration projected (s) onto `device`, a GPU."""
        from perfcast.validation.gpu_scores import gpu_figures, project_configuration

        if device.kind != "gpu":
            raise WorkloadError("the cross-GPU projection predicts GPUs only")
        if device.name == self.source:
            return Prediction(self.measured[self.source], "measured: the space was tuned here", True)
        try:
            source, on_source = self._source_figures
            on_target = gpu_figures(device, source=source)
            time, _ = project_configuration(self.work, self.row, self.measured[self.source], on_source, on_target)
        except ValueError as error:  # a figure the projection cannot use
            raise WorkloadError(str(error)) from None
        if not (math.isfinite(time) and time > 0):
            raise WorkloadError(f"the projection gave {time!r} s")
        return Prediction(time, f"projected from {self.source} ({self.measured[self.source] * 1e3:.3g} ms)")

    def band_scope(self, device: Device) -> str:
        """Return 'same vendor' or 'across vendors': the projection's error depends on it."""
        from perfcast.choose.bands import ACROSS_VENDORS, SAME_VENDOR
        from perfcast.devices.catalog import get_device

        return SAME_VENDOR if get_device(self.source).vendor == device.vendor else ACROSS_VENDORS


@dataclass(frozen=True)
class TunedOptima:
    """What every source of one corpus kernel shares: its work, and per catalog GPU its best plausible time."""

    work: KernelWork
    measured: dict[str, float]  # GPU -> s, the best plausible configuration's time
    best_rows: dict[str, int]  # GPU -> that configuration's row
    coverage: dict[str, float]  # GPU -> the share of the space it measured


def tuned_optima(kernel: CorpusKernel) -> TunedOptima:
    """Return the kernel's work and, per catalog GPU that measured it plausibly, its best configuration and time."""
    import numpy as np

    from perfcast.devices.catalog import known_devices
    from perfcast.validation.gpu_scores import gpu_figures, roofline_score
    from perfcast.validation.kernel_work import kernel_work

    work = kernel_work(kernel.name, kernel.configs, kernel.parameters, kernel.problem)
    catalog = known_devices()
    optima = TunedOptima(work, {}, {}, {})
    for device in kernel.devices:
        if device not in catalog or not kernel.measured(device).any():
            continue
        # The corpus report's rule: a record beating the compulsory-DRAM bound by more than 2x is broken.
        plausible = roofline_score(kernel, work, device, gpu_figures(catalog[device])).plausible(kernel)
        if plausible.any():
            times = np.where(plausible, kernel.times[:, kernel.column(device)], np.inf)
            optima.best_rows[device] = int(np.argmin(times))
            optima.measured[device] = float(times[optima.best_rows[device]])
            optima.coverage[device] = float(kernel.measured(device).mean())
    return optima


@dataclass(frozen=True)
class WorkloadOptions:
    """What some workloads need besides the file: kernels to keep, sizes to bind, f, the tuned space's source GPU."""

    kernels: tuple[str, ...] = ()
    bind: Mapping[str, int] = field(default_factory=dict)
    f: float = 1.0
    element_size: float = 4.0
    precision: str | None = None  # None: fp32 for a species, the loop nests' own for a C file
    function: str | None = None
    source: str | None = None


def _c_file(path: Path, options: WorkloadOptions) -> HullWorkload:
    """Return the classified loop nests of a C file as one application (one step per nest)."""
    from perfcast.species.application_file import resolve_application
    from perfcast.species.c_source import CSourceError, parse_c_file
    from perfcast.species.classify import ClassifyError, classify_source

    defines = dict(options.bind)
    try:
        result = classify_source(parse_c_file(path, defines), options.function)
    except (ClassifyError, CSourceError) as error:
        raise WorkloadError(f"{path}: {error}") from None
    nests = [n for n in result.nests if n.species is not None]
    if not nests:
        listing = ", ".join(f"{n.location} ({n.status})" for n in result.nests) or "none"
        raise WorkloadError(f"{path}: no loop nest the boat hull can predict (loop nests: {listing})")
    steps = tuple(Primitive(name=n.location, source=str(path.resolve()), function=n.function, line=n.line,
                            define=defines) for n in nests)
    # Without --precision, the nests' own: fp64 where any nest computes in double.
    own = "fp64" if any(n.precision == "fp64" for n in nests) else "fp32"
    application = Application(name=path.stem, precision=options.precision or own, primitives=steps)
    return HullWorkload(path.stem, str(path), resolve_application(application, path.parent, str(path)), "C file")


def _species(text: str, options: WorkloadOptions) -> HullWorkload:
    """Return one species (with its sizes bound) as a one-step application."""
    from perfcast.species.application_file import resolve_application

    try:
        application = Application(name=text, bind=dict(options.bind), element_size=options.element_size,
                                  precision=options.precision or "fp32",
                                  primitives=(Primitive(name="species", species=text, f=options.f),))
    except ValidationError as error:
        reasons = "; ".join(item["msg"].removeprefix("Value error, ") for item in error.errors(include_url=False))
        raise WorkloadError(f"{text!r} is neither a file nor a species: {reasons}") from None
    return HullWorkload(text, "species", resolve_application(application, Path("."), "species"), "species")


def _corpus(name: str, options: WorkloadOptions) -> TunedSpaceWorkload:
    """Return a corpus kernel's recorded space on --source as a workload."""
    from perfcast.validation.corpus import read_corpus

    corpus = read_corpus()
    if name not in corpus.kernels:
        raise WorkloadError(f"no corpus kernel {name!r} (corpus kernels: {', '.join(corpus.kernels)})")
    if options.source is None:
        raise WorkloadError(f"{CORPUS_PREFIX}{name} is a space measured on several GPUs: name the one it was tuned "
                            f"on with --source ({', '.join(corpus.kernels[name].devices)})")
    return TunedSpaceWorkload(corpus.kernels[name], options.source)


def _archive_measured(archive: Archive, kernels: Sequence[str]) -> dict[str, float]:
    """Return the summed median time (s) of `kernels` on the archive's device, by device name.

    Under the archive device's name and, where its full name is a catalog device's (a measured profile of a
    catalogued model), under that device's name too.
    """
    from perfcast.campaign.projection import ArchiveRun
    from perfcast.devices.catalog import catalog

    run = ArchiveRun.of(archive)
    if not kernels or any(name not in run.timings for name in kernels):
        return {}
    total = sum(run.timings[name][0] for name in kernels)
    measured = {run.device.name: total}
    model = run.device.full_name.removesuffix(" (measured)")
    for device in catalog().values():
        if device.full_name == model:
            measured[device.name] = total
    return measured


def read_workload(what: str | Path, options: WorkloadOptions | None = None) -> Workload:
    """Return the workload in `what`: a profile, campaign archive, application YAML, C file, 'corpus:KERNEL' or species."""
    from perfcast.campaign.archive import Archive, ArchiveError
    from perfcast.profiles import read_profile
    from perfcast.profiles.profile import PROFILE_FORMAT, ProfileError, ProfileSet, profile_from_text
    from perfcast.safe_yaml import MAX_PROFILE_BYTES, YamlInputError, load_yaml_file
    from perfcast.species.application_file import load_application

    options = options or WorkloadOptions()
    text = str(what)
    if text.startswith(CORPUS_PREFIX):
        return _corpus(text.removeprefix(CORPUS_PREFIX), options)
    path = Path(text)
    if not path.exists():
        if "->" in text:
            return _species(text, options)
        raise WorkloadError(f"{text}: no such file, and not a species (a species reads 'INPUT -> OUTPUT') nor "
                            "corpus:KERNEL")
    if path.is_dir() or path.suffix == ".zip":
        try:
            archive = Archive.read(path)
        except ArchiveError as error:
            raise WorkloadError(str(error)) from None
        if archive.profile_yaml is None:
            raise WorkloadError(f"{path}: the campaign archive holds no profile (it ran without a profiler)")
        profile = profile_from_text(archive.profile_yaml, f"{path}:profile.yaml")
        workload = ProfileWorkload(_named(path.stem, options.kernels), str(path), profile, options.kernels)
        workload.measured = _archive_measured(archive, [k.name for k in workload.kernels])
        return workload
    if path.suffix == ".c":
        return _c_file(path, options)
    parsed: dict[str, Any] | None = None  # a perfcast profile's YAML, where the file is one
    if path.suffix in (".yaml", ".yml"):
        try:
            # A profile's YAML may run to MAX_PROFILE_BYTES (a program's thousand launch groups); an application
            # file's own reader keeps its smaller limit.
            data = load_yaml_file(path, MAX_PROFILE_BYTES)
        except YamlInputError as error:
            raise WorkloadError(str(error)) from None
        if isinstance(data, dict) and "primitives" in data:
            application = load_application(path)
            return HullWorkload(application.name, str(path), application)
        if isinstance(data, dict) and data.get("format") == PROFILE_FORMAT:
            parsed = data  # a perfcast profile, read once: a 5 MB one takes seconds to parse
    try:
        profile = ProfileSet.from_mapping(parsed, str(path)) if parsed is not None else read_profile(path)
    except ProfileError as error:
        raise WorkloadError(f"{path}: not a workload perfcast reads ({error}); choose reads profiles, campaign "
                            "archives, application files, C files, species and corpus:KERNEL") from None
    return ProfileWorkload(_named(path.stem, options.kernels), str(path), profile, options.kernels)


def _named(stem: str, kernels: Sequence[str]) -> str:
    """Return a profile workload's name: the file's, with the kernels kept where -k chose some."""
    return f"{stem}: {', '.join(kernels)}" if kernels else stem
