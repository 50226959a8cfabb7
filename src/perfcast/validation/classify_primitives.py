"""Classify -> predict -> measure: perfcast's own C primitives classified from their source, then timed.

The species and f come from `perfcast classify` on `kernels/primitives.c`, not
from the hand-written species in `kernels/primitives.py`; both are reported so
that a reader sees whether the classifier agrees with the person who wrote
the kernels, and whether the measured time falls in the range predicted from
the classified species.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from perfcast.devices.hull_view import HullInputs
from perfcast.kernels.primitives import SOURCE, SyntheticPrimitive
from perfcast.output_files import markdown_cell, reproduce_block
from perfcast.species.classify import LoopNestSpecies, classify_file
from perfcast.species.grammar import parse_species
from perfcast.validation.boathull_primitives import (
    ValidationRun,
    primitives_for,
    validate_boathull,
)

__all__ = ["ClassifiedPrimitive", "classified_primitives", "classify_markdown", "validate_classified"]

# Which function of primitives.c runs each primitive, and the C arguments that a complexity f becomes.
_FUNCTIONS: dict[str, tuple[str, Callable[[int], dict[str, int]]]] = {
    "elementwise": ("elementwise", lambda f: {"k": 0 if f == 1 else f // 2}),
    "reduction": ("reduce_sum", lambda f: {"k": (f - 1) // 2}),
    "neighbourhood": ("neighbourhood", lambda f: {"k": (f - 2) // 2}),
}


@dataclass(frozen=True)
class ClassifiedPrimitive:
    """A runnable primitive with the loop nest the classifier chose for it at each f, and whether they agree."""

    primitive: SyntheticPrimitive
    nests: dict[int, LoopNestSpecies]  # f -> the classified nest that runs it
    species: str | None  # the classified species, bound to the run's sizes
    f_agrees: dict[int, bool]  # f -> classified f (with the run's k) equals the f the kernel runs
    problem: str | None  # why the primitive cannot be predicted from its classification


def _sizes(primitive: SyntheticPrimitive) -> dict[str, int]:
    """Return the C size arguments of a primitive, read from its hand-written species."""
    species = parse_species(primitive.species)
    dims = [int(d) for d in species.outputs[0].size]
    if primitive.name == "neighbourhood":
        hood = species.inputs[0].pattern.size or (1,)
        return {"rows": dims[0], "cols": dims[1], "size": int(hood[0])}
    return {"n": int(species.inputs[0].size[0])}


def classified_primitives(quick: bool) -> list[ClassifiedPrimitive]:
    """Return perfcast's native primitives, each with its species and f classified from primitives.c."""
    result = classify_file(SOURCE)
    chosen = []
    for primitive in primitives_for(quick):
        function, arguments = _FUNCTIONS[primitive.name]
        candidates = [n for n in result.nests if n.function == function and n.species is not None]
        sizes = _sizes(primitive)
        nests: dict[int, LoopNestSpecies] = {}
        agrees: dict[int, bool] = {}
        problem = None
        if not candidates:
            reasons = [r for n in result.nests if n.function == function for r in n.reasons[-1:]]
            problem = f"{function}: not classified ({'; '.join(reasons) or 'no loop nest'})"
        for f in primitive.complexities:
            values = {**sizes, **arguments(f)}
            # The first nest that gives this f: elementwise's k == 0 loop (f = 1 always) comes before its k loop.
            for nest in candidates:
                value = nest.f_value(values)
                uses_k = nest.f_poly is not None and "k" in nest.f_poly.symbols()
                if value is not None and (uses_k or value == f):
                    nests[f] = nest
                    agrees[f] = value == f
                    break
        species = None
        if nests:
            first = next(iter(nests.values()))
            symbols = {s: sizes[c] for s, c in first.symbols.items() if c in sizes}
            species = str(first.parsed().bind(symbols))
        chosen.append(ClassifiedPrimitive(primitive, nests, species, agrees, problem))
    return chosen


def validate_classified(
    inputs: HullInputs, chosen: Sequence[ClassifiedPrimitive], repetitions: int,
    complexities: Callable[[SyntheticPrimitive], Sequence[int]], progress: Callable[[int], None] = lambda _: None,
) -> ValidationRun:
    """Return the measured run of every classified primitive, predicted from its classified species."""
    runnable = [
        SyntheticPrimitive(c.primitive.name, c.species, c.primitive.complexities, c.primitive.run, c.primitive.result)
        for c in chosen if c.species is not None
    ]
    return validate_boathull(inputs, runnable, repetitions=repetitions, complexities=complexities, progress=progress)


def classify_markdown(chosen: Sequence[ClassifiedPrimitive], run: ValidationRun, inputs: HullInputs,
                      command: str) -> str:
    """Return the Markdown report: classification against the hand-written species, then measured vs predicted."""
    lines = [
        "# Classify -> predict -> measure: perfcast's C primitives",
        "",
        "`perfcast classify` reads `src/perfcast/kernels/primitives.c` (the native kernels behind",
        "`perfcast validate boathull`); the species and f it derives, bound to the run's sizes, are fed to the boat",
        "hull model for this machine, and the kernels are then timed. Nothing hand-written about a kernel enters",
        "the prediction: the species in `kernels/primitives.py` is shown only to compare.",
        "",
        *reproduce_block(command),
        f"- date: {run.date}; machine: {run.machine}",
        f"- device: {run.device}",
        f"- compiler: {run.compiler}; flags: `{run.flags}`",
        f"- each point: median of {run.repetitions} runs after a warm-up, all points timed round-robin",
        "",
        "## Device figures used by the prediction",
        "",
        *[f"- {name}: {source}" for name, source in inputs.sources.items()],
        "",
        "## Classification",
        "",
        "| primitive | C loop nest | status | classified species (bound) | classified f | hand-written species "
        "| same | f agrees |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in chosen:
        nests = list({n.location: n for n in c.nests.values()}.values())
        where = ", ".join(n.location for n in nests) or "—"
        status = ", ".join(dict.fromkeys(n.status for n in nests)) or "not classified"
        f_text = ", ".join(dict.fromkeys(n.f or "?" for n in nests)) or "—"
        same = "yes" if c.species is not None and parse_species(c.species) == parse_species(c.primitive.species) else "no"
        agrees = "yes" if c.f_agrees and all(c.f_agrees.values()) else ("—" if not c.f_agrees else "no")
        species = markdown_cell(f"`{c.species}`" if c.species else c.problem or "—")
        lines.append(
            f"| {c.primitive.name} | {where} | {status} | {species} | "
            f"{markdown_cell(f_text)} | `{markdown_cell(c.primitive.species)}` | {same} | {agrees} |"
        )
    lines += [
        "",
        "## Measured against the range predicted from the classification",
        "",
        "The range is the boat hull prediction with every CPU floor kept (the classifier cannot know that the code",
        "is vectorised and multi-threaded); the point is its lower end max(c0, m0).",
        "",
        "| primitive | f | measured | spread | predicted range | in range | point | abs. error |",
        "|---|---:|---:|---:|---|---|---:|---:|",
    ]
    for p in run.points:
        lines.append(
            f"| {p.primitive} | {p.f} | {p.measured * 1e3:.3f} ms | {p.spread:.0%} | "
            f"{p.range_lower * 1e3:.3f} – {p.range_upper * 1e3:.3f} ms | {'yes' if p.in_range else 'no'} | "
            f"{p.predicted * 1e3:.3f} ms | {p.error:.1f} % |"
        )
    inside = sum(p.in_range for p in run.points)
    lines += ["", f"{inside} of {len(run.points)} measured times fall inside the range predicted from the "
              "classified species."]
    for c in chosen:
        if c.species is None:
            lines += ["", f"- {c.primitive.name}: not predicted — {c.problem}"]
    return "\n".join(lines) + "\n"
