"""Species from C: the corpus in tests/data/classify (expectations written beside each loop) and perfcast's primitives.

Each corpus file states, above every outermost loop nest, what a person writes for it:
``expect: SPECIES ; f = F`` (classified exactly), ``expect unsure: ...`` (the classifier must flag a doubt) or
``expect: unclassified (why)``. Sizes in expectations may use the file's ``#define`` names.
"""

from __future__ import annotations

import re
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from perfcast.species.classify import ClassifyError, LoopNestSpecies, classify_file
from perfcast.species.grammar import Access, Species, parse_species

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc preprocesses the C files")

CORPUS = Path(__file__).parent.parent / "data" / "classify"
PRIMITIVES = Path(__file__).parent.parent.parent / "src" / "perfcast" / "kernels" / "primitives.c"
_EXPECT = re.compile(r"expect( unsure)?:\s*(?P<body>[^*]*?)\s*\*/")
_DEFINE = re.compile(r"^#define\s+(\w+)\s+(\d+)\s*$", re.MULTILINE)


def _expectations(path: Path) -> list[tuple[int, str, str, Fraction | None]]:
    """Return (line, kind, species, f) for every annotation of a corpus file; kind exact|unsure|unclassified."""
    found = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = _EXPECT.search(line)
        if not match:
            continue
        body = match["body"]
        if body.startswith("unclassified"):
            found.append((number, "unclassified", "", None))
            continue
        species, _, rest = body.partition(";")
        f_text = re.match(r"\s*f\s*=\s*([0-9/]+)", rest)
        f = Fraction(f_text.group(1)) if f_text else None
        found.append((number, "unsure" if match.group(1) else "exact", species.strip(), f))
    return found


def _key(access: Access) -> tuple:
    """Return what makes two accesses the same for the model: flat sizes for element/shared/full, shapes otherwise."""
    kind = access.pattern.kind
    dims = tuple(int(d) for d in access.size)
    size = (_product(dims),) if kind in ("element", "shared", "full") else dims
    pattern = tuple(int(d) for d in access.pattern.size or ())
    return kind, size, pattern


def _product(dims: tuple[int, ...]) -> int:
    total = 1
    for d in dims:
        total *= d
    return total


def _same(got: Species, expected: Species) -> bool:
    """Return whether two bound species describe the same class (inputs in any order)."""
    return (
        got.unordered == expected.unordered
        and sorted(map(_key, got.inputs)) == sorted(map(_key, expected.inputs))
        and sorted(map(_key, got.outputs)) == sorted(map(_key, expected.outputs))
    )


def _pair(path: Path) -> list[tuple[tuple[int, str, str, Fraction | None], LoopNestSpecies]]:
    """Return each expectation with the first loop nest that starts after it."""
    nests = list(classify_file(path).nests)
    pairs = []
    for expectation in _expectations(path):
        following = [n for n in nests if n.line > expectation[0]]
        assert following, f"{path.name}:{expectation[0]}: no loop nest after the expectation"
        nest = min(following, key=lambda n: n.line)
        nests.remove(nest)
        pairs.append((expectation, nest))
    assert not nests, f"{path.name}: loop nests without an expectation: {[n.location for n in nests]}"
    return pairs


def _bound(text: str, defines: dict[str, int], nest: LoopNestSpecies) -> tuple[Species, Species]:
    expected = parse_species(text)
    got = nest.parsed()
    values = {**defines, **{s: 4096 for s in expected.symbols | got.symbols if s not in defines}}
    return got.bind({s: values[s] for s in got.symbols}), expected.bind({s: values[s] for s in expected.symbols})


CASES = [*sorted(CORPUS.glob("*.c")), Path(__file__).parent.parent.parent / "examples" / "fast-focus.c"]


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_corpus_file_matches_its_expectations(path: Path) -> None:
    defines = {name: int(value) for name, value in _DEFINE.findall(path.read_text())}
    for (line, kind, species, f), nest in _pair(path):
        where = f"{path.name}:{nest.line} ({nest.function}), expected on line {line}"
        if kind == "unclassified":
            assert nest.status == "unclassified", f"{where}: got {nest.status} {nest.species}"
            assert nest.reasons, where
            continue
        if kind == "unsure":
            # A doubt must be said; a species may still be given.
            assert nest.status in ("unsure", "unclassified"), f"{where}: not flagged ({nest.species})"
            continue
        assert nest.status == "exact", f"{where}: {nest.status}: {nest.doubts or nest.reasons}"
        got, expected = _bound(species, defines, nest)
        assert _same(got, expected), f"{where}: got {got}, expected {expected}"
        if f is not None:
            assert nest.f_value({}) == pytest.approx(float(f)), f"{where}: f = {nest.f}, expected {f}"


def test_corpus_score_is_at_least_ninety_percent_exact_and_never_wrong_unflagged() -> None:
    total = exact = flagged = 0
    for path in CASES:
        defines = {name: int(value) for name, value in _DEFINE.findall(path.read_text())}
        for (_, kind, species, f), nest in _pair(path):
            if kind == "unclassified":
                continue  # not a species: refusing is the right answer, scored by the test above
            total += 1
            if nest.status != "exact":
                flagged += 1
                continue
            got, expected = _bound(species, defines, nest)
            assert _same(got, expected) and (f is None or nest.f_value({}) == float(f)), (
                f"{nest.location}: wrong without a flag: {got}"
            )
            exact += 1
    assert total >= 30
    assert exact / total >= 0.90, f"{exact} of {total} exact"
    assert exact + flagged == total


# ---------------------------------------------------------------------------------------- perfcast's primitives

def test_primitives_c_classifies_as_the_hand_written_species() -> None:
    nests = {(n.function, n.line): n for n in classify_file(PRIMITIVES).nests}
    by_function: dict[str, list[LoopNestSpecies]] = {}
    for (function, _), nest in sorted(nests.items(), key=lambda item: item[0][1]):
        by_function.setdefault(function, []).append(nest)
    element_plain, element_blocked, element_tail = by_function["elementwise"]
    assert (element_plain.species, element_plain.f, element_plain.status) == ("N|element -> N|element", "1", "exact")
    assert (element_blocked.species, element_blocked.f, element_blocked.status) == (
        "N|element -> N|element", "2*k", "exact")
    assert element_tail.status == "remainder"
    blocked, partials, tail = by_function["reduce_sum"]
    assert (blocked.species, blocked.f, blocked.status) == ("N|element -> 1|shared", "2*k + 1", "exact")
    assert partials.species == "128|element -> 1|shared"
    assert tail.status == "remainder"
    (hood,) = by_function["neighbourhood"]
    assert hood.status == "exact"
    assert hood.species == "ROWSxCOLS|neighb(SIZExSIZE) -> ROWSxCOLS|element"
    assert hood.f == "2*k + 2"
    assert hood.symbols == {"ROWS": "rows", "COLS": "cols", "SIZE": "size", "K": "k"}
    assert hood.f_value({"k": 4}) == 10
    # primitives.py says the same, for the sizes it runs
    bound = hood.parsed().bind({"ROWS": 1024, "COLS": 1024, "SIZE": 5})
    assert str(bound) == "1024x1024|neighb(5x5) -> 1024x1024|element"


# -------------------------------------------------------------------------------------------------- details

def _write(tmp_path: Path, text: str, name: str = "k.c") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_symbols_stay_symbolic_and_bind_by_c_name_or_symbol(tmp_path: Path) -> None:
    path = _write(tmp_path, "void f(const float *x, float *y, int n, int reps) {\n"
                  "  for (int i = 0; i < n; i++) { float v = x[i];\n"
                  "    for (int r = 0; r < reps; r++) v = v * 0.5f + 1.0f;\n"
                  "    y[i] = v; } }\n")
    (nest,) = classify_file(path).nests
    assert nest.species == "N|element -> N|element"
    assert nest.f == "2*reps"
    assert nest.f_value({"reps": 3}) == 6
    assert nest.f_value({"REPS": 5}) == 10
    assert nest.f_value({}) is None


def test_defines_reach_the_preprocessor_only_for_macros(tmp_path: Path) -> None:
    path = _write(tmp_path, "#ifndef N\n#define N 16\n#endif\nfloat a[N], b[N];\n"
                  "void f(void) { for (int i = 0; i < N; i++) b[i] = a[i] + 1.0f; }\n")
    assert classify_file(path).nests[0].species == "16|element -> 16|element"
    assert classify_file(path, defines={"N": 64}).nests[0].species == "64|element -> 64|element"


def test_call_costs_are_counted_said_and_overridable(tmp_path: Path) -> None:
    path = _write(tmp_path, "#include <math.h>\nvoid f(const float *x, float *y, int n) {\n"
                  "  for (int i = 0; i < n; i++) y[i] = expf(x[i]) * 2.0f; }\n")
    (nest,) = classify_file(path).nests
    assert nest.f == "9"
    assert any("expf counted as 8 ops" in r for r in nest.reasons)
    (nest,) = classify_file(path, call_costs={"expf": 20}).nests
    assert nest.f == "21"


def test_unknown_calls_are_doubts_not_silent(tmp_path: Path) -> None:
    path = _write(tmp_path, "float g(float);\nvoid f(const float *x, float *y, int n) {\n"
                  "  for (int i = 0; i < n; i++) y[i] = g(x[i]); }\n")
    (nest,) = classify_file(path).nests
    assert nest.status == "unsure"
    assert any("'g'" in d for d in nest.doubts)


def test_unresolved_macros_are_listed(tmp_path: Path) -> None:
    path = _write(tmp_path, "float a[ROWS][COLS], b[ROWS][COLS];\n"
                  "void f(void) { for (int i = 0; i < ROWS; i++)\n"
                  "  for (int j = 0; j < COLS; j++) b[i][j] = -a[i][j]; }\n")
    result = classify_file(path)
    assert result.unresolved == ("COLS", "ROWS")
    assert result.nests[0].species == "ROWSxCOLS|element -> ROWSxCOLS|element"


def test_a_file_that_does_not_parse_gets_a_compiler_style_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "void f(float *x) {\n  for (int i = 0; i < 4; i++ x[i] = 0;\n}\n", "broken.c")
    with pytest.raises(ClassifyError, match=r"broken\.c:2:\d+: error"):
        classify_file(path)


def test_a_missing_include_is_the_preprocessors_message(tmp_path: Path) -> None:
    path = _write(tmp_path, '#include "nowhere.h"\nvoid f(void) {}\n', "inc.c")
    with pytest.raises(ClassifyError, match="nowhere.h"):
        classify_file(path)


def test_a_missing_function_is_named_with_the_ones_there(tmp_path: Path) -> None:
    path = _write(tmp_path, "void alpha(void) {}\nvoid beta(void) {}\n")
    with pytest.raises(ClassifyError, match=r"no function named 'gamma' \(functions: alpha, beta\)"):
        classify_file(path, "gamma")


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ClassifyError, match="cannot read"):
        classify_file(tmp_path / "absent.c")


@pytest.mark.parametrize("body, reason", [
    ("int i = 0; while (i < n) { y[i] = x[i]; i++; }", "while loop"),
    ("for (int i = 0; i < n; i++) { if (x[i] < 0) break; y[i] = x[i]; }", "break"),
    ("for (int i = 0; i < n; i++) { y[i] = x[i]; i += 2; }", "changed in the body"),
    ("for (int i = 0; i < n; i += n / 4 + 1) y[i] = x[i];", "steps by a symbolic"),
])
def test_loops_outside_species_are_reported_with_why(tmp_path: Path, body: str, reason: str) -> None:
    path = _write(tmp_path, f"void f(const float *x, float *y, int n) {{ {body} }}\n")
    (nest,) = classify_file(path).nests
    assert nest.status == "unclassified"
    assert reason in " ".join(nest.reasons)


def test_scatter_of_a_permutation_and_json(tmp_path: Path) -> None:
    path = _write(tmp_path, "void f(const float *x, float *y, int n) {\n"
                  "  for (int i = 0; i < n; i++) y[n - 1 - i] = x[i]; }\n")
    (nest,) = classify_file(path).nests
    assert nest.species == "unordered N|element -> N|element"
    assert any("mirrored" in r for r in nest.reasons)
    data = nest.to_json()
    assert data["status"] in ("exact", "unsure")
    assert set(data) >= {"species", "f", "reasons", "doubts", "symbols", "element_bytes"}


def test_element_size_and_precision_come_from_the_c_types(tmp_path: Path) -> None:
    path = _write(tmp_path, "void f(const double *x, double *y, long n) {\n"
                  "  for (long i = 0; i < n; i++) y[i] = 3.0 * x[i]; }\n"
                  "void g(const unsigned char *x, unsigned int *h) {\n"
                  "  for (int i = 0; i < 64; i++) h[x[i]]++; }\n")
    first, second = classify_file(path).nests
    assert (first.element_bytes, first.precision) == (8, "fp64")
    assert second.species.endswith("|shared")
    assert second.status == "unsure"  # the size of h is not declared


@pytest.mark.parametrize("body", [
    "for (int i = 0; i < n; i++) { switch ((int)x[i]) { case 0: y[i] = 1; break; default: y[i] = 2; } }",
    "for (int i = 0; i < n; i++) { if (x[i] > 0) goto out; y[i] = x[i]; } out: ;",
    "int i = 0; do { y[i] = x[i]; i++; } while (i < n);",
    "for (int i = 0, j = 0; i < n; i++, j++) y[i] = x[j];",
    "for (int i = 0; i < n; i++) *(y + i) = *(x + i) * 2.0f;",
    "for (int i = 0; i < n; i++) { float *p = y; *p = x[i]; }",
    "for (int i = 0; i < n; i++) y[i] = (*fn)(x[i]);",
    "for (int i = 0; i < n; i++) m[i][i] = 0.0f;",
    "for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) m[i][j] = m[j][i];",
    "for (int i = 0; i < n; i++) s->v[i] = x[i];",
    "for (int i = 0; i < n; i++) y[i * i] = x[i];",
    "for (int i = 0; i < n; i++) y[i % 4] += x[i];",
    "for (int i = 0; i < n; i++) y[i] = x[i] ? x[i] : (float)(i > 2);",
    "for (int i = 0; i < 0; i++) y[i] = x[i];",
    "for (int i = n; i >= 0; i--) y[i] = x[i] + 1.0f;",
    "for (;;) { y[0] = 1; break; }",
    "for (int i = 0; i < n; i++) ;",
    "for (int i = 0; i < n; i++) { y[i] = x[i]; continue; }",
])
def test_odd_code_never_raises_only_reports(tmp_path: Path, body: str) -> None:
    path = _write(tmp_path, "struct S { float v[8]; };\n"
                  "void f(const float *x, float *y, float **m, struct S *s, float (*fn)(float), int n) {\n"
                  f"  {body}\n}}\n")
    nests = classify_file(path).nests
    assert nests
    for nest in nests:
        assert nest.status in ("exact", "unsure", "unclassified", "remainder")
        assert nest.reasons or nest.doubts
        if nest.species is not None:
            parse_species(nest.species)
