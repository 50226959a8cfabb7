"""Class variables of a species (spec §2.2): the reference table, and derivation for any other species.

Sizes are read slowest dimension first: in ``AxB`` the B elements of a row
are contiguous, so a work unit that walks a whole row (``tile(1xB)``) makes
neighbouring work units access memory B elements apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from perfcast.models.boathull import ClassVariables
from perfcast.species.grammar import Access, Species, SpeciesBindingError

__all__ = ["ClassVariables", "HaloTile", "class_variables", "halo_accesses", "power_of_two"]

@dataclass(frozen=True)
class HaloTile:
    """The work-group tile of outputs staged in local memory for neighbourhood classes (default 16x16)."""

    tx: int = 16
    ty: int = 16

    def __post_init__(self) -> None:
        if self.tx < 1 or self.ty < 1:
            raise ValueError(f"halo tile must be positive, got {self.tx}x{self.ty}")


def _shape(access: Access) -> tuple[int, ...]:
    """Return the bound size of `access` with a 1-D size K read as Kx1."""
    dims = tuple(int(d) for d in access.size)
    return dims + (1,) if len(dims) == 1 else dims


def _pattern_shape(access: Access, rank: int) -> tuple[int, ...]:
    """Return the bound pattern size of `access`, padded with 1s to `rank` dimensions."""
    dims = tuple(int(d) for d in access.pattern.size or ())
    if len(dims) > rank:
        raise SpeciesBindingError(f"{access}: the {access.pattern.kind} size has more dimensions than the array")
    return dims + (1,) * (rank - len(dims))


def _count(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def power_of_two(value: float) -> float:
    """Return `value` rounded to the nearest power of two (at least 1)."""
    return float(2 ** max(0, round(math.log2(max(value, 1.0)))))


def halo_accesses(access: Access, tile: HaloTile) -> float:
    """Return α: the extra coalesced reads (elements) of a neighbourhood staged per work-group tile."""
    shape = _shape(access)
    hood = _pattern_shape(access, len(shape))
    # The 2-D formula of spec §2.2 on the first two dimensions; further dimensions multiply in as whole planes.
    n, m = hood[0], hood[1]
    tile_area = tile.tx * tile.ty
    planes = _count(hood[2:]) if len(hood) > 2 else 1
    return _count(shape) * ((tile.tx + n - 1) * (tile.ty + m - 1) * planes - tile_area) / tile_area


def _check_tiles(species: Species) -> None:
    """Raise SpeciesBindingError where a tile does not divide its array or a neighbourhood exceeds it."""
    for access in (*species.inputs, *species.outputs):
        if access.pattern.kind not in ("tile", "neighb"):
            continue
        shape = _shape(access)
        pattern = _pattern_shape(access, len(shape))
        for axis, (extent, part) in enumerate(zip(shape, pattern)):
            if access.pattern.kind == "tile" and extent % part:
                raise SpeciesBindingError(
                    f"{access}: tile extent {part} does not divide the array extent {extent} (dimension {axis + 1})"
                )
            if access.pattern.kind == "neighb" and part > extent:
                raise SpeciesBindingError(f"{access}: neighbourhood {part} exceeds the array extent {extent}")


def _units(access: Access) -> int:
    """Return how many work units an access pattern defines: tiles for tile, elements otherwise."""
    shape = _shape(access)
    if access.pattern.kind == "tile":
        return _count(shape) // _count(_pattern_shape(access, len(shape)))
    return _count(shape)


def _work_units(species: Species) -> int:
    """Return w: the tiles of a tiled input, else the units of tile/element outputs, else the largest input's.

    Several tiled inputs whose tile counts multiply to the element outputs' size combine every tile of one with
    every tile of the other (rows of A with columns of B in a matrix product): each output is a work unit.
    """
    tiled = [_units(a) for a in species.inputs if a.pattern.kind == "tile"]
    outputs = [_units(a) for a in species.outputs if a.pattern.kind == "element"]
    if len(tiled) > 1 and outputs and max(outputs) == math.prod(tiled) and max(outputs) > max(tiled):
        return max(outputs)
    for side in (species.inputs, species.outputs):
        tiles = [_units(a) for a in side if a.pattern.kind == "tile"]
        if tiles:
            return max(tiles)
    elements = [_units(a) for a in species.outputs if a.pattern.kind == "element"]
    if elements:
        return max(elements)
    return max(_units(a) for a in species.inputs)


# ---------------------------------------------------------------- the reference table (spec §2.2)

Matcher = Callable[[Species, HaloTile], "ClassVariables | None"]


def _single(species: Species) -> tuple[Access, Access] | None:
    if len(species.inputs) == 1 and len(species.outputs) == 1:
        return species.inputs[0], species.outputs[0]
    return None


def _element_to_element(s: Species, tile: HaloTile) -> ClassVariables | None:
    pair = _single(s)
    if not pair or (pair[0].pattern.kind, pair[1].pattern.kind) != ("element", "element"):
        return None
    a, b = pair
    if _shape(a) != _shape(b):
        return None
    n = _count(_shape(a))
    if s.unordered:
        return ClassVariables(n, 1, 16, 2 * n, 2 * n, 0, ("c1", "m1"), "reference", "xy-mirroring")
    return ClassVariables(n, 1, 16, 2 * n, 2 * n, 0, ("c1",), "reference", "binarization")


def _tile_to_element(s: Species, tile: HaloTile) -> ClassVariables | None:
    pair = _single(s)
    if s.unordered or not pair or (pair[0].pattern.kind, pair[1].pattern.kind) != ("tile", "element"):
        return None
    a, b = pair
    shape = _shape(a)
    if len(shape) != 2:
        return None
    u, v = _pattern_shape(a, 2)
    n, w = _count(shape), _units(a)
    if _count(_shape(b)) != w:
        return None
    if u == 1 and v == shape[1] and v > 1:
        return ClassVariables(w, v, power_of_two(4 * v), n + w, n + w, 0, ("c1", "m1"), "reference", "x-projection")
    return ClassVariables(w, u * v, power_of_two(4 * u * v), n + w, n + w, 0, ("c1",), "reference", "scale down")


def _tile_to_tile(s: Species, tile: HaloTile) -> ClassVariables | None:
    pair = _single(s)
    if s.unordered or not pair or (pair[0].pattern.kind, pair[1].pattern.kind) != ("tile", "tile"):
        return None
    a, b = pair
    if _shape(a) != _shape(b) or a.pattern.size != b.pattern.size or len(_shape(a)) != 2:
        return None
    n, m = _count(_shape(a)), _count(_pattern_shape(a, 2))
    return ClassVariables(n // m, m, power_of_two(4 * m), 2 * n, n, n, ("c1",), "reference", "2D-DCT")


def _enlarge(s: Species, tile: HaloTile) -> ClassVariables | None:
    pair = _single(s)
    if s.unordered or not pair or (pair[0].pattern.kind, pair[1].pattern.kind) != ("element", "tile"):
        return None
    a, b = pair
    shape, out = _shape(a), _shape(b)
    if len(shape) != 2 or len(out) != 2:
        return None
    u, v = _pattern_shape(b, 2)
    if out != (shape[0] * u, shape[1] * v):
        return None
    n = _count(shape)
    return ClassVariables(n, u * v, power_of_two(4 * u * v), n + n * u * v, n + n * u * v, 0, ("c1",), "reference", "enlarge")


def _neighbourhood(s: Species, tile: HaloTile) -> ClassVariables | None:
    pair = _single(s)
    if s.unordered or not pair or (pair[0].pattern.kind, pair[1].pattern.kind) != ("neighb", "element"):
        return None
    a, b = pair
    if _shape(a) != _shape(b) or len(_shape(a)) != 2:
        return None
    n = _count(_shape(a))
    hood = _count(_pattern_shape(a, 2))
    one_d = len(a.pattern.size or ()) == 1
    alpha = halo_accesses(a, tile)
    name = "1D convolution" if one_d else "2D convolution"
    # Each application reads its neighbour from the tile staged on chip: an issued load (the GPU's i1 floor).
    return ClassVariables(n, hood, 64, 2 * n, 2 * n + alpha, 0, ("c1", "i1"), "reference", name)


def _to_shared(s: Species, tile: HaloTile) -> ClassVariables | None:
    pair = _single(s)
    if s.unordered or not pair or (pair[0].pattern.kind, pair[1].pattern.kind) != ("element", "shared"):
        return None
    a, b = pair
    n, k = _count(_shape(a)), _count(_shape(b))
    if k == 1:
        return ClassVariables(n, 1, 16, n + 1, n, 1, ("c1",), "reference", "sum")
    return ClassVariables(n, 1, 64, n + k, k, n, ("c1",), "reference", "histogram")


def _differencing(s: Species, tile: HaloTile) -> ClassVariables | None:
    if s.unordered or len(s.inputs) != 2 or len(s.outputs) != 1:
        return None
    if any(a.pattern.kind != "element" for a in (*s.inputs, *s.outputs)):
        return None
    shapes = {_shape(a) for a in (*s.inputs, *s.outputs)}
    if len(shapes) != 1:
        return None
    n = _count(shapes.pop())
    return ClassVariables(n, 1, 32, 3 * n, 3 * n, 0, ("c1",), "reference", "differencing")


_REFERENCE: tuple[Matcher, ...] = (
    _element_to_element,
    _tile_to_element,
    _tile_to_tile,
    _enlarge,
    _neighbourhood,
    _to_shared,
    _differencing,
)


# ---------------------------------------------------------------- derivation for any other species


def _derive(s: Species, tile: HaloTile) -> ClassVariables:
    """Return class variables from the principles of §2.2 for a species outside the reference table."""
    w = _work_units(s)
    # Outputs that combine tiles of several inputs (a matrix product) have more work units than any input tiles.
    combined = w > max((_units(a) for a in s.inputs if a.pattern.kind == "tile"), default=w)
    m = 1.0
    d = c = u = 0.0
    overhead = 16.0 * len(s.inputs)
    strided = s.unordered
    for access in s.inputs:
        shape = _shape(access)
        n = _count(shape)
        d += n
        kind = access.pattern.kind
        if kind == "neighb":
            m = max(m, _count(_pattern_shape(access, len(shape))))
            c += n + halo_accesses(access, tile)
            overhead = max(overhead, 64.0)
        elif kind == "tile":
            pattern = _pattern_shape(access, len(shape))
            # Each work unit reads its share of the tiles, or, combining tiles of several inputs, one whole tile of each.
            m = max(m, _count(pattern) * (1 if combined else _units(access) / w))
            c += n
            # A tile only its own work unit reads is loaded as the operator is applied: index maths and a load
            # each application (4m, the reference's tile classes). Tiles combined into more work units than they
            # number (a matrix product's rows and columns) are each read by many units, so a kernel stages them
            # on chip and its loads and index maths are amortised over the units sharing them, as a
            # neighbourhood's window is: the neighbourhood's 64.
            overhead = max(overhead, 64.0 if combined else 4 * m)
            # A work unit walking whole contiguous rows: neighbours are a row apart.
            strided = strided or (pattern[-1] == shape[-1] > 1 and _count(pattern[:-1]) == 1)
        elif kind == "full":
            m = max(m, n)  # every work unit reads the whole array; compulsory traffic is still one pass
            c += n
        else:  # element, shared
            m = max(m, n / w)
            c += n
    for access in s.outputs:
        shape = _shape(access)
        n = _count(shape)
        d += n
        kind = access.pattern.kind
        if kind == "shared" and n > 1:
            u += w  # scattered updates, one per work unit
            c += n
            overhead = max(overhead, 64.0)
        elif kind == "shared":
            u += 1
        else:
            m = max(m, n / w)
            c += n
            if kind == "tile":
                overhead = max(overhead, 4 * m)
    floors: tuple[str, ...] = ("c1", "m1") if strided else ("c1",)
    if any(access.pattern.kind == "neighb" for access in s.inputs):
        floors += ("i1",)  # neighbours read from the tile staged on chip, one load an application
    summary = f"derived: {len(s.inputs)} input(s), {len(s.outputs)} output(s), {w} work units"
    return ClassVariables(w, m, power_of_two(overhead), d, c, u, floors, "derived", summary)


def _check_outputs(species: Species, w: int) -> None:
    """Raise SpeciesBindingError where an element output's size differs from the number of work units."""
    for access in species.outputs:
        if access.pattern.kind == "element" and _count(_shape(access)) != w:
            raise SpeciesBindingError(
                f"{access}: an element output must have one element per work unit ({w}), "
                f"it has {_count(_shape(access))}"
            )


def class_variables(species: Species, tile: HaloTile = HaloTile()) -> ClassVariables:
    """Return the class variables of a bound species: its reference-table row, else derived ones."""
    if species.symbols:
        raise SpeciesBindingError(f"bind the size symbol(s) {', '.join(sorted(species.symbols))} first")
    _check_tiles(species)
    for matcher in _REFERENCE:
        found = matcher(species, tile)
        if found is not None:
            return found
    _check_outputs(species, _work_units(species))
    return _derive(species, tile)
