"""Application files (YAML): reading them into an Application, with C loop nests classified where a step gives one.

The schema (Primitive, Transfer, Application) lives in perfcast.species.application beside the predictions,
as devices keep schema.py and catalog.py apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from perfcast.errors import InputError
from perfcast.safe_yaml import load_model_file
from perfcast.species.application import APPLICATION_VERSION, Application, Primitive
from perfcast.species.grammar import (
    SpeciesBindingError,
    SpeciesSyntaxError,
    parse_species,
)

__all__ = ["ApplicationFileError", "load_application", "resolve_application"]


class ApplicationFileError(InputError):
    """An application file that cannot be read, with every problem named by field."""


def load_application(path: str | Path) -> Application:
    """Return the application described by the YAML file at `path`; errors name the file and fields."""
    path = Path(path)
    application = load_model_file(path, Application, APPLICATION_VERSION, "application", ApplicationFileError)
    return resolve_application(application, path.parent, str(path))


def resolve_application(application: Application, folder: Path, origin: str) -> Application:
    """Return `application` with the C loop nests of its steps classified (sources relative to `folder`) and checked."""
    resolved = []
    for index, primitive in enumerate(application.primitives):
        where = f"{origin}: primitives.{index} ({primitive.name})"
        if primitive.source is not None:
            primitive = _from_source(primitive, folder, application.bind, where)
        try:
            parse_species(primitive.species or "").bind(application.bind)
        except (SpeciesBindingError, SpeciesSyntaxError) as error:
            raise ApplicationFileError(f"{where}: {error}") from None
        resolved.append(primitive)
    return application.model_copy(update={"primitives": tuple(resolved)})


def _from_source(primitive: Primitive, folder: Path, bind: Mapping[str, int], where: str) -> Primitive:
    """Return `primitive` with the species and f of its C loop nest (classified now)."""
    from perfcast.species.c_source import CSourceError, parse_c_file
    from perfcast.species.classify import ClassifyError, bind_symbols, classify_source, conversions, elementary_calls

    source = Path(primitive.source or "")
    source = source if source.is_absolute() else folder / source
    defines = {**bind, **primitive.define}
    try:
        parsed = parse_c_file(source, defines)
        result = classify_source(parsed, primitive.function)
    except (ClassifyError, CSourceError) as error:
        raise ApplicationFileError(f"{where}: {error}") from None
    nests = [n for n in result.nests if primitive.line is None or n.line == primitive.line]
    usable = [n for n in nests if n.species is not None]
    listing = ", ".join(f"{n.location} ({n.status})" for n in result.nests) or "none"
    if primitive.line is not None and not nests:
        raise ApplicationFileError(f"{where}: no loop nest starts on line {primitive.line} of {source} "
                                   f"(loop nests: {listing})")
    if len(usable) != 1:
        problem = "no classified loop nest" if not usable else "several loop nests"
        raise ApplicationFileError(f"{where}: {source} has {problem} here (loop nests: {listing}); "
                                   "choose one with 'function' and 'line'")
    nest = usable[0]
    symbols = bind_symbols(nest, defines)
    species = nest.parsed()
    if symbols:
        species = species.bind({**symbols, **{s: v for s, v in bind.items() if s in species.symbols}})
    f = primitive.f if primitive.f is not None else nest.f_value(defines)
    if f is None:
        raise ApplicationFileError(f"{where}: f = {nest.f} of {nest.location} has unbound symbols; "
                                   "add them to 'define' or give 'f'")
    element_size = primitive.element_size or nest.element_bytes
    def given_or_counted(given: float | None, counter: Callable[..., list[float | None]], what: str,
                         field: str) -> float:
        """Return the file's figure, else what `counter` counts per application in the nest's C code."""
        if given is not None:
            return given
        counted: float | None = counter(parsed, result.nests, primitive.function, defines)[result.nests.index(nest)]
        if counted is None:
            raise ApplicationFileError(f"{where}: the {what} of {nest.location} do not come to a number with the "
                                       f"sizes bound; add them to 'define' or give '{field}'")
        return counted

    calls = given_or_counted(primitive.elementary_calls, elementary_calls, "elementary calls", "elementary_calls")
    converted = given_or_counted(primitive.conversions, conversions, "conversions", "conversions")
    return primitive.model_copy(update={"species": str(species), "f": f, "element_size": element_size,
                                        "elementary_calls": calls, "conversions": converted})
