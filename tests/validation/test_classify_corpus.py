"""Scoring `perfcast classify` against species written by hand: both annotation spellings, the verdicts, the corpora."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.cli import app
from perfcast.validation.classify_corpus import (
    CorpusError,
    corpus_markdown,
    default_corpora,
    read_annotations,
    score_corpus,
    score_file,
)

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc preprocesses the C files")

CORPORA = Path(__file__).parent.parent / "data" / "classify"


def _write(tmp_path: Path, text: str, name: str = "k.c") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_perfcast_annotations_give_each_verdict(tmp_path: Path) -> None:
    path = _write(tmp_path, """#define N 512
/* why: the same species */
/* expect: N|element ^ N|element -> N|element ; f = 2 */
void right(float a, const float x[N], const float y[N], float z[N]) { for (int i = 0; i < N; i++) z[i] = a * x[i] + y[i]; }
/* expect: 256|element ^ 256|element -> 256|element */
void sizes(float a, const float x[N], const float y[N], float z[N]) { for (int i = 0; i < N; i++) z[i] = a * x[i] + y[i]; }
/* expect: N|neighb(3) -> 1|shared */
void other(float a, const float x[N], const float y[N], float z[N]) { for (int i = 0; i < N; i++) z[i] = a * x[i] + y[i]; }
/* expect: N|element -> N|element */
void none(const float *x, float *y, int n) { int i = 0; for (;;) { if (i >= n) break; y[i] = x[i]; i++; } }
/* expect: unclassified (an early exit) */
void agree(const float *x, float *y, int n) { for (int i = 0; i < n; i++) { if (x[i] < 0) break; y[i] = x[i]; } }
/* expect: unclassified (it is not) */
void given(const float x[N], float y[N]) { for (int i = 0; i < N; i++) y[i] = x[i]; }
""")
    annotations = read_annotations(path)
    assert [a.style for a in annotations] == ["perfcast"] * 6
    assert annotations[0].why == "the same species" and annotations[0].f == 2
    verdicts = [s.verdict for s in score_file(path)]
    assert verdicts == ["exact", "partial", "wrong", "unclassified", "exact", "wrong"]


def test_bones_pragmas_are_read_with_their_ranges(tmp_path: Path) -> None:
    path = _write(tmp_path, """#define N 256
#define HALF (N/2)
int main(void) {
    int i, n;
    int size = 64;
    float A[N], B[HALF], C[N][N], D[N];
    #pragma species kernel A[0:N-1]|chunk(0:1) -> B[0:HALF-1]|element
    for (i = 0; i < HALF; i++) B[i] = A[2 * i] + A[2 * i + 1];
    #pragma species kernel A[0:N-1]|neighbourhood(-1:1) -> D[0:N-1]|element
    for (i = 1; i < N - 1; i++) D[i] = A[i - 1] + A[i] + A[i + 1];
    #pragma species kernel 0:0|void -> 0:size-1|element
    for (i = 0; i < size; i++) D[i] = 0;
    /*
    #pragma species kernel A[0:N-1]|element -> D[0:N-1]|element
    */
    return 0;
}
""")
    annotations = read_annotations(path)
    assert len(annotations) == 3  # the one inside a comment is switched off
    chunk, window, fill = annotations
    assert chunk.inputs == (("tile", 256, (2,)),) and chunk.outputs == (("element", 128, ()),)
    assert window.inputs == (("neighb", (256, 258), (3,)),)  # centres, or centres plus the reach
    assert fill.inputs == (("full", 1, ()),) and fill.outputs == (("element", 64, ()),)
    assert [s.verdict for s in score_file(path)] == ["exact", "partial", "exact"]  # D is written on 254 only


def test_a_pragma_on_an_inner_loop_of_a_whole_nest_is_said_so(tmp_path: Path) -> None:
    path = _write(tmp_path, """#define N 64
int main(void) {
    int i, j;
    float A[N][N], s[N];
    for (i = 0; i < N; i++) {
        s[i] = 0;
        #pragma species kernel A[i:i,0:N-1]|element -> s[i:i]|shared
        for (j = 0; j < N; j++) s[i] += A[i][j];
    }
    return 0;
}
""")
    (scored,) = score_file(path)
    assert scored.verdict == "unclassified" and "classifies whole at line 5" in scored.detail


def test_bad_corpora_are_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such file"):
        score_corpus([tmp_path / "absent"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CorpusError, match="no C file"):
        score_corpus([empty])
    _write(empty, "void f(void) {}\n")
    with pytest.raises(CorpusError, match="no annotated loop nest"):
        score_corpus([empty])
    broken = _write(tmp_path, "/* expect: N|elemnt -> N|element */\nvoid f(void) {}\n", "broken.c")
    with pytest.raises(CorpusError, match="broken.c:1"):
        read_annotations(broken)


def test_the_polybench_corpus_is_at_least_ninety_percent_exact_and_never_wrong() -> None:
    score = score_corpus([CORPORA / "polybench"])
    misses = [f"{Path(s.annotation.path).name}:{s.annotation.line} {s.verdict}: {s.detail}"
              for s in score.scored if s.verdict != "exact"]
    assert len(score.scored) >= 40
    assert score.exact_fraction() >= 0.9, misses
    assert score.counts()["wrong"] == 0, misses


def test_the_authors_annotations_stay_where_they_are() -> None:
    """The Bones examples (the species' authors' own annotations): a guard against regressions."""
    score = score_corpus([CORPORA / "bones"])
    assert len(score.scored) >= 100
    assert score.exact_fraction() >= 0.88, score.counts()
    assert score.counts()["wrong"] <= 1, [s.annotation.line for s in score.scored if s.verdict == "wrong"]


def test_cli_scores_a_corpus_with_json_and_markdown(tmp_path: Path) -> None:
    runner = CliRunner()
    corpus = _write(tmp_path, "#define N 8\n/* expect: N|element -> N|element */\n"
                    "void f(const float x[N], float y[N]) { for (int i = 0; i < N; i++) y[i] = x[i]; }\n")
    report = tmp_path / "classify.md"
    result = runner.invoke(app, ["validate", "classify", "--corpus", str(corpus), "--json", "--markdown", str(report)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (entry,) = data["corpora"]
    assert entry["counts"] == {"exact": 1, "partial": 0, "wrong": 0, "unclassified": 0}
    assert entry["nests"][0]["verdict"] == "exact"
    text = report.read_text()
    assert "| k.c | 1 | 1 | 0 | 0 | 0 | 100.0 % |" in text and "Reproduce with" in text
    result = runner.invoke(app, ["validate", "classify", "--corpus", str(tmp_path / "nothing")])
    assert result.exit_code != 0 and "no such file" in result.output


def test_the_default_corpora_are_the_source_tree_s() -> None:
    assert [p.name for p in default_corpora()] == ["polybench", "bones"]
    text = corpus_markdown([("polybench", score_corpus([CORPORA / "polybench"]))], "perfcast validate classify")
    assert text.startswith("# `perfcast classify` on real loop nests") and "| polybench | " in text


def test_an_annotation_is_never_scored_against_another_loop_and_f_and_symbols_count(tmp_path: Path) -> None:
    path = _write(tmp_path, """#define N (512)  /* rows */
void whole(const float A[N][N], float s[N]) {
    for (int i = 0; i < N; i++) {
        s[i] = 0;
        /* expect: N|element -> N|element */
        for (int j = 0; j < N; j++) s[i] += A[i][j];
    }
}
/* expect: N|element -> N|element ; f = 7 */
void wrong_f(const float x[N], float y[N]) { for (int i = 0; i < N; i++) y[i] = 2 * x[i]; }
/* expect: MxK|tile(1xK) ^ K|full -> M|element */
void swapped(const float *A, const float *x, float *y, int m, int k) {
    for (int r = 0; r < k; r++) { float acc = 0; for (int c = 0; c < m; c++) acc += A[r * m + c] * x[c]; y[r] = acc; }
}
// a comment with a /* in it opens nothing
/* expect: N|element -> N|element */
void after(const float x[N], float y[N]) { for (int i = 0; i < N; i++) y[i] = x[i]; }
""")
    verdicts = [s.verdict for s in score_file(path)]
    # The inner loop's annotation is not paired with wrong_f's loop; f counts; K and M are told apart;
    # N = (512) with a comment is read through the preprocessor.
    assert verdicts == ["unclassified", "partial", "wrong", "exact"]
