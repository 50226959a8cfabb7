"""How right `perfcast classify` is on loop nests whose species a person wrote down: exact, partial, wrong, none.

A corpus is C files with the expected species beside their loop nests, in one of two spellings:

- perfcast's: ``/* expect: SPECIES ; f = F */`` (or ``/* expect: unclassified (why) */``) on the lines
  just above a loop, optionally after ``/* why: ... */``; sizes may use the file's ``#define`` names;
- the Bones compiler's (the species' authors): ``#pragma species kernel A[0:N-1]|element -> B[0:N-1]|element``
  above the loop it describes; array names and index ranges are read, ranges become sizes.

Each annotation is paired with the loop nest perfcast reports at the first loop after it (never across another
loop: an annotated inner loop of a nest perfcast classifies whole gets no nest). Sizes compare as numbers of
elements, as the boat hull counts them (a 512x1024 element access is a 1024x512 one); tile and neighbourhood
shapes compare dimension by dimension; f compares where the annotation gives it. Verdicts:
*exact* (the same inputs and outputs, as multisets, with their sizes and patterns; unordered alike),
*partial* (the same outputs with a shared input, or the same access kinds and patterns with other
sizes), *wrong* (a species, but neither), *unclassified* (no species where one was written). A nest the
person marked unclassified is exact when perfcast gives none too, and wrong otherwise.
"""

from __future__ import annotations

import ast
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Literal

from perfcast.errors import InputError
from perfcast.output_files import markdown_cell, reproduce_block
from perfcast.species.c_source import CSourceError, macro_values
from perfcast.species.classify import ClassifyError, LoopNestSpecies, classify_file
from perfcast.species.grammar import Access, Species, SpeciesSyntaxError, parse_species

__all__ = ["Annotation", "CorpusScore", "Scored", "Verdict", "corpus_files", "read_annotations", "score_corpus",
           "score_file"]

Verdict = Literal["exact", "partial", "wrong", "unclassified"]
VERDICTS: tuple[Verdict, ...] = ("exact", "partial", "wrong", "unclassified")
_UNBOUND = 4096  # around the value both sides give a size symbol the file does not define
_EXPECT = re.compile(r"/\*\s*expect:\s*(?P<body>.*?)\s*\*/")
_WHY = re.compile(r"/\*\s*why:\s*(?P<body>.*?)\s*\*/")
_BONES = re.compile(r"^\s*#\s*pragma\s+species\s+kernel\s+(?P<body>.+?)\s*$")
_LOCAL_INT = re.compile(r"\b(?:const\s+)?(?:int|long)\s+(\w+)\s*=\s*([^;,]+);")

# One access, compared: (pattern kind, number of elements -- None where unknown, a tuple where any of several
# fits --, pattern shape or None where unknown).
_Key = tuple[str, int | tuple[int, ...] | None, tuple[int, ...] | None]


class CorpusError(InputError):
    """An annotated corpus that cannot be read: no files, or an annotation that does not parse."""


@dataclass(frozen=True)
class Annotation:
    """What a person wrote for the loop after `line`: a species, or None for 'unclassified'."""

    path: str
    line: int
    expected: str | None
    f: Fraction | None
    why: str
    style: Literal["perfcast", "bones"]
    inputs: tuple[_Key, ...] = ()
    outputs: tuple[_Key, ...] = ()
    unordered: bool | None = None  # None: the spelling does not say (Bones)


@dataclass(frozen=True)
class Scored:
    """One annotation, the nest perfcast paired with it (None when no loop follows), the verdict and why."""

    annotation: Annotation
    nest: LoopNestSpecies | None
    verdict: Verdict
    detail: str

    def to_json(self) -> dict[str, object]:
        """Return a JSON-ready dict."""
        nest = self.nest
        return {
            "file": self.annotation.path, "line": self.annotation.line, "style": self.annotation.style,
            "expected": self.annotation.expected, "why": self.annotation.why,
            "nest": nest.location if nest else None, "status": nest.status if nest else None,
            "species": nest.species if nest else None, "repetitions": nest.repetitions if nest else None,
            "verdict": self.verdict, "detail": self.detail,
        }


@dataclass(frozen=True)
class CorpusScore:
    """Every annotation of a corpus scored; counts per verdict."""

    scored: tuple[Scored, ...]
    files: tuple[str, ...]

    def counts(self) -> dict[Verdict, int]:
        """Return the number of annotations per verdict (every verdict present, zero where none)."""
        found = Counter(s.verdict for s in self.scored)
        return {v: found.get(v, 0) for v in VERDICTS}

    def exact_fraction(self) -> float:
        """Return the share of annotations classified exactly (0 for an empty corpus)."""
        return self.counts()["exact"] / len(self.scored) if self.scored else 0.0


def corpus_files(paths: Iterable[Path]) -> list[Path]:
    """Return the C files named by `paths` (files, or directories searched recursively), sorted, each once."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            for c_file in sorted(path.rglob("*.c")):
                found.setdefault(c_file, None)
        elif path.is_file():
            found.setdefault(path, None)
        else:
            raise CorpusError(f"{path}: no such file or directory")
    if not found:
        raise CorpusError(f"no C file in {', '.join(str(p) for p in paths)}")
    return list(found)


def read_annotations(path: Path) -> list[Annotation]:
    """Return every annotation of the C file at `path`, in line order (CorpusError for one that does not parse)."""
    return _read(path, path.read_text(encoding="utf-8", errors="replace"))[0]


def _read(path: Path, text: str) -> tuple[list[Annotation], dict[str, int]]:
    """Return the annotations of a file and its numeric macros (read once: the preprocessor is a process)."""
    lines = text.splitlines()
    annotations: list[Annotation] = []
    macros: dict[str, int] | None = None
    in_comment = False
    for number, line in enumerate(lines, start=1):
        # A pragma inside a block comment is switched off (Bones' examples keep alternatives that way).
        was_in_comment = in_comment
        for token in re.findall(r"/\*|\*/", _code_of(line) if not in_comment else line):
            in_comment = token == "/*"
        found = _EXPECT.search(_code_of(line) if not was_in_comment else line)
        if found:
            if macros is None:
                macros = _numeric_macros(path, text)
            why = _WHY.search(lines[number - 2]) if number >= 2 else None
            annotations.append(_perfcast_annotation(path, number, found["body"], why["body"] if why else "",
                                                    macros))
            continue
        bones = _BONES.match(line)
        if bones and not was_in_comment:
            if macros is None:
                macros = _numeric_macros(path, text)
            annotations.append(_bones_annotation(path, number, bones["body"], macros))
    return annotations, macros if macros is not None else {}


def _code_of(line: str) -> str:
    """Return a line without its // comment (a '/*' there opens nothing)."""
    at = line.find("//")
    return line if at < 0 or "/*" in line[:at] else line[:at]


def _perfcast_annotation(path: Path, line: int, body: str, why: str, defines: dict[str, int]) -> Annotation:
    if body.startswith("unclassified"):
        return Annotation(str(path), line, None, None, why or body, "perfcast")
    species_text, _, rest = body.partition(";")
    f_text = re.match(r"\s*f\s*=\s*([0-9/]+)", rest)
    try:
        species = parse_species(species_text.strip())
        bound = _bind(species, defines)
    except SpeciesSyntaxError as error:
        raise CorpusError(f"{path}:{line}: {error}") from None
    return Annotation(str(path), line, species_text.strip(), Fraction(f_text.group(1)) if f_text else None, why,
                      "perfcast", tuple(_keys(bound.inputs)), tuple(_keys(bound.outputs)), bound.unordered)


def _bones_annotation(path: Path, line: int, body: str, macros: dict[str, int]) -> Annotation:
    sides = body.split("->")
    if len(sides) != 2:
        raise CorpusError(f"{path}:{line}: a species kernel pragma needs one '->': {body}")
    try:
        inputs, outputs = (tuple(_bones_key(access.strip(), macros) for access in side.split("^")) for side in sides)
    except ValueError as error:
        raise CorpusError(f"{path}:{line}: {error}") from None
    return Annotation(str(path), line, body, None, "", "bones", inputs, outputs, None)


_BONES_ACCESS = re.compile(r"^(?:[A-Za-z_]\w*\[)?(?P<ranges>[^\]|]*)\]?\|(?P<kind>\w+)(?:\((?P<pattern>.*)\))?$")
_BONES_KINDS = {"element": "element", "shared": "shared", "full": "full", "chunk": "tile", "tile": "tile",
                "neighbourhood": "neighb", "neighborhood": "neighb", "void": "void"}


def _bones_key(access: str, macros: dict[str, int]) -> _Key:
    """Return the comparison key of one Bones access, e.g. ``A[0:N-1,0:M-1]|chunk(0:0,0:M-1)``."""
    found = _BONES_ACCESS.match(access)
    if not found or found["kind"] not in _BONES_KINDS:
        raise ValueError(f"cannot read the access {access!r}")
    extents = [_range_extent(r, macros) for r in found["ranges"].split(",")]
    elements = None if None in extents else _product(e for e in extents if e is not None)
    size: int | tuple[int, ...] | None = elements
    pattern: tuple[int, ...] | None = ()
    if found["pattern"]:
        widths = [_range_extent(r, macros) for r in found["pattern"].split(",")]
        pattern = None if None in widths else _trimmed(tuple(w for w in widths if w is not None))
        if elements is not None and pattern is not None and len(widths) == len(extents) and \
                _BONES_KINDS[found["kind"]] == "neighb":
            # Bones sizes a neighbourhood by the range of its centres; perfcast by the elements read, which
            # add the window's reach unless the code guards the border: either is the same access.
            halo = _product((e or 0) + (w or 1) - 1 for e, w in zip(extents, widths))
            size = (elements, halo)
    if found["kind"] == "void":
        # Bones writes a loop that reads nothing (a fill) as 0:0|void; perfcast as 1|full, the stored value.
        return "full", 1, ()
    return _BONES_KINDS[found["kind"]], size, pattern


def _range_extent(text: str, macros: dict[str, int]) -> int | None:
    """Return hi - lo + 1 of a Bones range ``lo:hi`` with the file's macros, or None when it names a loop index."""
    low, sep, high = text.partition(":")
    if not sep:
        return None
    values = [_evaluate(part.strip(), macros) for part in (low, high)]
    if values[0] is None or values[1] is None:
        return None
    return abs(values[1] - values[0]) + 1


def _evaluate(text: str, names: dict[str, int]) -> int | None:
    """Return the integer value of a C constant expression of + - * / and names, or None (never runs code)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None

    def value(node: ast.AST) -> Fraction | None:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return Fraction(node.value)
        if isinstance(node, ast.Name):
            return Fraction(names[node.id]) if node.id in names else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = value(node.operand)
            return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)):
            left, right = value(node.left), value(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            return None if right == 0 else Fraction(int(left / right))  # C division truncates
        return None

    result = value(tree)
    return None if result is None else int(result)


def _numeric_macros(path: Path, text: str) -> dict[str, int]:
    """Return the file's macros and constant int locals that evaluate to integers."""
    try:
        raw = macro_values(path)
    except CSourceError:
        raw = {}
    for name, value in _LOCAL_INT.findall(text):
        # int n = 256; is a size only while nothing sets n again (n = ..., or &n handed to a reader).
        set_again = len(re.findall(rf"\b{name}\s*=[^=]", text)) > 1 or re.search(rf"&\s*{name}\b", text)
        if name not in raw and not set_again:
            raw[name] = value
    values: dict[str, int] = {}
    for _ in range(4):  # macros defined through other macros
        for name, expression in raw.items():
            if name not in values:
                result = _evaluate(expression.strip(), values)
                if result is not None:
                    values[name] = result
    return values


def _unbound(name: str) -> int:
    """Return the value a size symbol nothing defines takes on both sides: its own, so that swapped symbols differ."""
    return _UNBOUND + 8 * (zlib.crc32(name.encode()) % 1024)


def _bind(species: Species, defines: dict[str, int]) -> Species:
    return species.bind({s: defines.get(s, _unbound(s)) for s in species.symbols})


def _trimmed(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Return a pattern shape without its leading 1s: tile(1x1xN) of a 3-D array is tile(N) of a flat one."""
    dims = list(shape)
    while len(dims) > 1 and dims[0] == 1:
        dims.pop(0)
    return tuple(dims)


def _product(values: Iterable[int]) -> int:
    total = 1
    for v in values:
        total *= v
    return total


def _keys(accesses: Iterable[Access]) -> list[_Key]:
    """Return the comparison keys of bound accesses: kind, number of elements, pattern shape."""
    keys: list[_Key] = []
    for access in accesses:
        size = _product(int(d) for d in access.size)
        pattern = access.pattern.size
        keys.append((access.pattern.kind, size, _trimmed(tuple(int(d) for d in pattern)) if pattern else ()))
    return keys


def _same_keys(expected: Sequence[_Key], got: Sequence[_Key]) -> bool:
    """Return True when the two multisets of accesses match; an unknown expected size or shape matches any."""
    if len(expected) != len(got):
        return False
    left = list(got)
    for kind, size, pattern in sorted(expected, key=lambda k: (k[1] is None, k[2] is None)):
        hit = next((g for g in left if g[0] == kind and _size_fits(size, g[1])
                    and (pattern is None or g[2] == pattern)), None)
        if hit is None:
            return False
        left.remove(hit)
    return True


def _size_fits(expected: int | tuple[int, ...] | None, got: int | tuple[int, ...] | None) -> bool:
    """Return True when a size `got` fits the expected one (None: any; a tuple: any of its values)."""
    if expected is None:
        return True
    if isinstance(expected, tuple):
        return got in expected
    return got == expected


def _verdict(annotation: Annotation, nest: LoopNestSpecies | None, defines: dict[str, int]) -> tuple[Verdict, str]:
    """Return the verdict for `nest` against `annotation`, and a few words on why."""
    given = nest is not None and nest.species is not None
    if annotation.expected is None:
        if given:
            return "wrong", "a species was given where none fits"
        return "exact", "no species, as expected"
    if not given:
        why = nest.reasons[-1] if nest is not None and nest.reasons else "no loop nest starts after the annotation"
        return "unclassified", why
    assert nest is not None and nest.species is not None
    species = parse_species(nest.species)
    values = {s: defines.get(nest.symbols.get(s, s), defines.get(s, _unbound(s))) for s in species.symbols}
    bound = species.bind(values)
    inputs, outputs = _keys(bound.inputs), _keys(bound.outputs)
    same_order = annotation.unordered is None or annotation.unordered == bound.unordered
    if _same_keys(annotation.inputs, inputs) and _same_keys(annotation.outputs, outputs) and same_order:
        got_f = nest.f_value({**{c: defines[c] for c in defines}})
        if annotation.f is not None and got_f is not None and abs(got_f - float(annotation.f)) > 1e-9 * max(1, abs(got_f)):
            return "partial", f"the same species, but f = {nest.f}, not {annotation.f}"
        return "exact", "the same species"
    shapes = Counter((k, p) for k, _, p in (*annotation.inputs, *annotation.outputs))
    got_shapes = Counter((k, p) for k, _, p in (*inputs, *outputs))
    matched = _matched(annotation.inputs, inputs) + _matched(annotation.outputs, outputs)
    expected_count = len(annotation.inputs) + len(annotation.outputs)
    if shapes == got_shapes:
        return "partial", "the same access patterns, other sizes"
    if 2 * matched >= expected_count:
        return "partial", f"{matched} of {expected_count} accesses the same"
    return "wrong", f"{matched} of {expected_count} accesses the same"


def _matched(expected: Sequence[_Key], got: Sequence[_Key]) -> int:
    """Return how many expected accesses find an equal one among `got` (each used once)."""
    left = list(got)
    count = 0
    for key in expected:
        hit = next((g for g in left if _same_keys([key], [g])), None)
        if hit is not None:
            left.remove(hit)
            count += 1
    return count


def score_file(path: Path) -> list[Scored]:
    """Return every annotation of the C file at `path` with the nest perfcast classified there and the verdict."""
    text = path.read_text(encoding="utf-8", errors="replace")
    annotations, defines = _read(path, text)
    if not annotations:
        return []
    try:
        nests = list(classify_file(path).nests)
    except ClassifyError as error:
        return [Scored(a, None, "unclassified" if a.expected else "exact", f"the file does not parse: {error}")
                for a in annotations]
    every = list(nests)
    scored = []
    for annotation in annotations:
        following = [n for n in nests if n.line > annotation.line]
        nest = min(following, key=lambda n: n.line) if following else None
        if nest is not None and annotation.style == "bones" and _code_lines_between(text, annotation.line, nest.line):
            nest = None  # the pragma names a loop inside one that perfcast classified whole
        if nest is not None and _loop_between(text, annotation.line, nest.line):
            nest = None  # the annotated loop is not a nest perfcast reports (it lies inside one): never another's
        if nest is not None:
            nests.remove(nest)
        verdict, detail = _verdict(annotation, nest, defines)
        enclosing = max((n for n in every if n.line < annotation.line), key=lambda n: n.line, default=None)
        if nest is None and enclosing is not None:
            detail = f"an inner loop of the nest perfcast classifies whole at line {enclosing.line}"
        scored.append(Scored(annotation, nest, verdict, detail))
    return scored


def _loop_between(text: str, first: int, last: int) -> bool:
    """Return True when a for, while or do loop starts strictly between two lines (comments aside)."""
    for line in text.splitlines()[first:last - 1]:
        if re.search(r"\b(for|while|do)\b", _code_of(line).split("/*")[0]):
            return True
    return False


def _code_lines_between(text: str, first: int, last: int) -> bool:
    """Return True when a line of code (not a comment, pragma or blank) lies strictly between two lines."""
    for line in text.splitlines()[first:last - 1]:
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "//", "/*", "*")):
            return True
    return False


def score_corpus(paths: Iterable[Path]) -> CorpusScore:
    """Return the scores of every annotated C file under `paths` (files or directories)."""
    files = corpus_files(paths)
    scored: list[Scored] = []
    for path in files:
        scored.extend(score_file(path))
    if not scored:
        raise CorpusError("no annotated loop nest ('/* expect: ... */' or '#pragma species kernel') in "
                          f"{len(files)} file(s)")
    return CorpusScore(tuple(scored), tuple(str(f) for f in files))


def default_corpora() -> list[Path]:
    """Return the annotated corpora of a source checkout (tests/data/classify/{polybench,bones}), those present."""
    root = Path(__file__).resolve().parents[3] / "tests" / "data" / "classify"
    return [root / name for name in ("polybench", "bones") if (root / name).is_dir()]


def corpus_markdown(scores: Sequence[tuple[str, CorpusScore]], command: str,
                    goals: Mapping[str, str] | None = None) -> str:
    """Return the Markdown report of classify's scores on each named corpus: results first, then every nest.

    `goals` names the goal of a corpus (e.g. "≥ 90 %"); others are checks without one.
    """
    lines = [
        "# `perfcast classify` on real loop nests",
        "",
        "Each corpus is published C code with the species a person wrote for its loop nests; `perfcast classify`",
        "reads the code alone and its answer is compared with theirs (`src/perfcast/validation/classify_corpus.py`",
        "says how: *exact* is the same inputs and outputs with their sizes and patterns, *partial* the same",
        "patterns with other sizes or at least half the accesses the same, *wrong* a species that is neither,",
        "*unclassified* no species where one was written). The comparison is deterministic: no machine enters it.",
        "",
        *reproduce_block(command),
        "| corpus | loop nests | exact | partial | wrong | unclassified | exact share | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, score in scores:
        counts = score.counts()
        lines.append(f"| {markdown_cell(name)} | {len(score.scored)} | {counts['exact']} | {counts['partial']} | "
                     f"{counts['wrong']} | {counts['unclassified']} | {100 * score.exact_fraction():.1f} % | "
                     f"{(goals or {}).get(name, '— (a check)')} |")
    for name, score in scores:
        lines += ["", f"## {markdown_cell(name)}", ""]
        misses = [s for s in score.scored if s.verdict != "exact"]
        lines.append(f"{len(score.scored) - len(misses)} of {len(score.scored)} exact. "
                     + ("Not exact:" if misses else "Every nest exact."))
        if misses:
            lines += ["", "| nest | verdict | written by hand | perfcast | why |", "|---|---|---|---|---|"]
            for s in misses:
                got = f"`{s.nest.species}`" if s.nest and s.nest.species else "—"
                written = markdown_cell(s.annotation.expected or "unclassified")
                lines.append(f"| {markdown_cell(_where(s))} | {s.verdict} | `{written}` "
                             f"| {markdown_cell(got)} | {markdown_cell(s.detail)} |")
        lines += ["", "<details><summary>Every nest</summary>", "",
                  "| nest | launches | written by hand | verdict | the person's reason |", "|---|---:|---|---|---|"]
        for s in score.scored:
            launches = s.nest.repetitions if s.nest and s.nest.repetitions else "1"
            written = markdown_cell(s.annotation.expected or "unclassified")
            lines.append(f"| {markdown_cell(_where(s))} | {markdown_cell(launches)} | `{written}` "
                         f"| {s.verdict} | {markdown_cell(s.annotation.why or '—')} |")
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def _where(scored: Scored) -> str:
    path = Path(scored.annotation.path)
    return f"{path.parent.name}/{path.name}:{scored.annotation.line}"
