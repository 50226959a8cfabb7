"""Measured validation of the boat hull model on this CPU: synthetic primitives timed against their prediction."""

from __future__ import annotations

import datetime as _dt
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from perfcast.bench.timing import interleaved_timings
from perfcast.devices.hull_view import HullInputs
from perfcast.kernels.primitives import (
    SyntheticPrimitive,
    elementwise,
    load_primitives,
    neighbourhood,
    reduction,
)
from perfcast.output_files import reproduce_block
from perfcast.species.application import predict_primitive

__all__ = ["ValidationPoint", "ValidationRun", "primitives_for", "validate_boathull"]

# The kernels are vectorised and multi-threaded: those floors are ruled out for the point prediction.
KERNEL_ASSUMPTIONS = ("vectorised", "multithreaded")


@dataclass(frozen=True)
class ValidationPoint:
    """One primitive at one complexity: measured median time (s) against the predicted point and range (s)."""

    primitive: str
    species: str
    class_name: str
    f: int
    measured: float
    spread: float
    predicted: float  # lower end with the kernels' assumptions: max(c0, m0)
    binding: str
    range_lower: float  # the range with no assumption (floors kept)
    range_upper: float

    @property
    def error(self) -> float:
        """Return the absolute percentage error |predicted - measured| / measured, in %."""
        return abs(self.predicted - self.measured) / self.measured * 100

    @property
    def in_range(self) -> bool:
        """Return whether the measurement lies inside the predicted range without assumptions."""
        return self.range_lower <= self.measured <= self.range_upper


@dataclass(frozen=True)
class ValidationRun:
    """A validation run: its points and the environment it ran in."""

    points: tuple[ValidationPoint, ...]
    device: str
    compiler: str
    flags: str
    repetitions: int
    date: str
    machine: str


def primitives_for(quick: bool) -> list[SyntheticPrimitive]:
    """Return the synthetic primitives, sized past the last-level cache (or small, for --quick)."""
    library = load_primitives()
    n, side = (1 << 22, 1024) if quick else (1 << 25, 2048)
    return [elementwise(library, n), reduction(library, n), neighbourhood(library, side, side, 5)]


def validate_boathull(
    inputs: HullInputs,
    primitives: Sequence[SyntheticPrimitive],
    *,
    repetitions: int = 10,
    complexities: Callable[[SyntheticPrimitive], Sequence[int]] = lambda p: p.complexities,
    progress: Callable[[int], None] = lambda _: None,
) -> ValidationRun:
    """Return every primitive timed at every complexity (median of `repetitions`, round-robin) beside its prediction.

    `progress` gets the number of timing rounds completed.
    """
    if inputs.device.kind != "cpu":
        raise ValueError(f"the native primitives run on this CPU; {inputs.device.name} is a {inputs.device.kind}")
    library = load_primitives()
    cases = [(primitive, f) for primitive in primitives for f in complexities(primitive)]
    timings = interleaved_timings(
        [partial(primitive.run, f) for primitive, f in cases], repetitions=repetitions, warmup=1, progress=progress
    )
    points = []
    for (primitive, f), timing in zip(cases, timings):
        point = predict_primitive(primitive.species, inputs.figures, [f], assume=KERNEL_ASSUMPTIONS)
        span = predict_primitive(primitive.species, inputs.figures, [f]).prediction
        points.append(
            ValidationPoint(
                primitive=primitive.name,
                species=primitive.species,
                class_name=f"{point.variables.name} ({point.variables.origin})",
                f=f,
                measured=timing.median,
                spread=timing.spread,
                predicted=float(point.prediction.lower[0]),
                binding=str(point.prediction.lower_term[0]),
                range_lower=float(span.lower[0]),
                range_upper=float(span.upper[0]),
            )
        )
    return ValidationRun(
        points=tuple(points),
        device=inputs.device.full_name,
        compiler=library.compiler,
        flags=" ".join(library.command[1:-3]),
        repetitions=repetitions,
        date=_dt.date.today().isoformat(),
        machine=f"{platform.machine()}, {platform.system()} {platform.release()}",
    )


def summary(points: Sequence[ValidationPoint]) -> dict[str, dict[str, float]]:
    """Return per primitive the median and maximum absolute percentage error (%) and the share inside the range."""
    result = {}
    for name in dict.fromkeys(p.primitive for p in points):
        errors = [p.error for p in points if p.primitive == name]
        inside = [p.in_range for p in points if p.primitive == name]
        result[name] = {
            "median_error": float(np.median(errors)),
            "max_error": float(max(errors)),
            "in_range": float(np.mean(inside)),
        }
    return result


def validation_markdown(run: ValidationRun, inputs: HullInputs, command: str, chart: str | None) -> str:
    """Return the validation report in Markdown: results first, then environment, inputs and every point."""
    results = ["## Results", "", "| primitive | species | median abs. error | max abs. error | inside range |",
               "|---|---|---:|---:|---:|"]
    species = {p.primitive: p.species for p in run.points}
    for name, row in summary(run.points).items():
        results.append(
            f"| {name} | `{species[name].replace('|', chr(92) + '|')}` | {row['median_error']:.1f} % | "
            f"{row['max_error']:.1f} % | {row['in_range']:.0%} |"
        )
    for term, label in (("c0", "compute-bound"), ("m0", "memory-bound")):
        chosen = [p for p in run.points if p.binding == term]
        if chosen:
            ratio = float(np.median([p.predicted / p.measured for p in chosen]))
            results.append("")
            results.append(
                f"{label.capitalize()} points ({term} binds, {len(chosen)} points): median predicted / measured "
                f"time = {ratio:.2f}, median abs. error {float(np.median([p.error for p in chosen])):.1f} %."
            )
    if chart:
        results += ["", f"![measured against predicted]({chart})"]
    lines = [
        "# Boat hull model: measured validation on a CPU",
        "",
        "Synthetic primitives of known species and tunable operator complexity `f`, written in C",
        "(`src/perfcast/kernels/primitives.c`), timed on this machine and compared with the boat hull",
        "prediction (spec §2.4) made from the device description alone, before any timing.",
        "",
        *reproduce_block(command),
        f"- date: {run.date}; machine: {run.machine}",
        f"- device: {run.device}",
        f"- compiler: {run.compiler}; flags: `{run.flags}`",
        f"- each point: median of {run.repetitions} timed runs after one discarded warm-up, all points timed",
        "  round-robin (one run of each per round) so that a slow spell on this shared machine touches them alike;",
        "  spread = (max - min) / median",
        "- prediction: the lower end max(c0, m0) with the floors the kernels rule out (vectorised, multithreaded);",
        "  the range column is the prediction with no assumption (all CPU floors kept)",
        "",
        *results,
        "",
        "## Device figures used by the prediction",
        "",
    ]
    lines += [f"- {name}: {source}" for name, source in inputs.sources.items()]
    lines += [
        "",
        "## Points",
        "",
        "| primitive | class | f | measured | spread | predicted | bound by | abs. error | range (no assumptions) | in range |",
        "|---|---|---:|---:|---:|---:|---|---:|---|---|",
    ]
    for p in run.points:
        lines.append(
            f"| {p.primitive} | {p.class_name} | {p.f} | {p.measured * 1e3:.3f} ms | {p.spread:.0%} | "
            f"{p.predicted * 1e3:.3f} ms | {p.binding} | {p.error:.1f} % | "
            f"{p.range_lower * 1e3:.3f} – {p.range_upper * 1e3:.3f} ms | {'yes' if p.in_range else 'no'} |"
        )
    return "\n".join(lines) + "\n"
