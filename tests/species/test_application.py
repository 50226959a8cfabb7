"""Applications: the fast-focus example on the catalog GPUs, and errors in application files."""

from pathlib import Path

import pytest

from perfcast.devices.catalog import catalog
from perfcast.devices.hull_view import hull_inputs
from perfcast.species.application import predict_app, predict_primitive, priced_f
from perfcast.species.application_file import ApplicationFileError, load_application

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "fast-focus.yaml"


def test_fast_focus_on_gtx470_and_gts250():
    application = load_application(EXAMPLE)
    assert [p.name for p in application.primitives] == [
        "histogram", "maximum", "threshold", "erode", "x-projection", "y-projection",
    ]
    totals = {}
    for name in ("gtx470", "gts250"):
        inputs = hull_inputs(catalog()[name])
        total, steps = predict_app(application, inputs.figures)
        assert len(steps) == 6
        assert all(step.variables.origin == "reference" for step in steps)
        assert total.lower <= total.upper
        # image in: 4 MiB over 8 GB/s
        assert dict(total.transfers)["image to device"] == pytest.approx(4 * 2**20 / 8e9)
        totals[name] = total
    # GTS 250 has half the bandwidth and ~43 % of the compute of the GTX 470
    assert totals["gts250"].lower > totals["gtx470"].lower


def test_threshold_on_gtx470_by_hand():
    inputs = hull_inputs(catalog()["gtx470"])
    step = predict_primitive("1024x1024|element -> 1024x1024|element", inputs.figures, [1])
    n = 2**20
    assert step.prediction.terms["m0"][0] == pytest.approx(4 * 2 * n / 133.92e9)
    assert step.prediction.terms["c0"][0] == pytest.approx(n * 17 / 1088.64e9)


def test_cpu_transfers_cost_nothing():
    total, _ = predict_app(load_application(EXAMPLE), hull_inputs(catalog()["core-i7-930"]).figures)
    assert all(seconds == 0 for _, seconds in total.transfers)


def test_uncoalesced_fallback_is_stated():
    inputs = hull_inputs(catalog()["gtx470"])
    assert inputs.figures.p_uncoalesced == pytest.approx(133.92e9 * 4 / 32)
    assert "estimated" in inputs.sources["P_uncoalesced"]
    assert "no measured coalesced figure" in inputs.sources["P_coalesced"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('"1024x1024|element -> 256|shared"', '"1024x1024|elem -> 256|shared"'), "position 11"),
        (lambda t: t.replace("f: 1                 # one increment", "f: -1   # "), "primitives.0.f"),
        (lambda t: t.replace("    elements: 1024\n", "    bytes: 4 KiB\n    elements: 1024\n", 1), "exactly one of"),
        (lambda t: t.replace('"262144|element -> 1|shared"', '"NxN|element -> 1|shared"'), "unbound size symbol"),
        (lambda t: t + "colour: blue\n", "colour"),
        (lambda t: t.replace("version: 1 ", "version: 2 ", 1), "version 2; this perfcast reads version 1 (update perfcast)"),
        (lambda t: t.replace("version: 1 ", "version: 0 ", 1), "version"),
    ],
)
def test_bad_application_files(tmp_path, edit, message):
    path = tmp_path / "app.yaml"
    path.write_text(edit(EXAMPLE.read_text()))
    with pytest.raises(ApplicationFileError) as caught:
        load_application(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


@pytest.mark.skipif(__import__("shutil").which("gcc") is None, reason="gcc preprocesses the C file")
def test_fast_focus_from_c_predicts_what_the_hand_written_file_does():
    by_hand = load_application(EXAMPLE)
    from_c = load_application(EXAMPLE.with_name("fast-focus-from-c.yaml"))
    for hand, classified in zip(by_hand.primitives, from_c.primitives):
        assert classified.species == hand.species and classified.f == hand.f, hand.name
    inputs = hull_inputs(catalog()["gtx470"])
    assert predict_app(from_c, inputs.figures)[0] == predict_app(by_hand, inputs.figures)[0]


MAP = "N|element -> N|element"


def _map_app(tmp_path, primitive: str):
    path = tmp_path / "app.yaml"
    path.write_text(f"name: m\nbind: {{N: 1048576}}\nprimitives:\n  - {primitive}\n")
    return load_application(path)


def test_elementary_calls_are_priced_at_the_extra_ops_given(tmp_path):
    application = _map_app(tmp_path, f'{{name: map, species: "{MAP}", f: 35, elementary_calls: 3}}')
    primitive = application.primitives[0]
    assert priced_f(primitive) == 35
    assert priced_f(primitive, 915) == 35 + 3 * 915
    figures = hull_inputs(catalog()["core-i7-930"]).figures
    plain = predict_app(application, figures)[1][0].prediction.terms["c0"][0]
    priced = predict_app(application, figures, extra_ops_per_call=915)[1][0].prediction.terms["c0"][0]
    # c0 = w (f m + o) / P_compute with m = 1 and o = 16 for an element-wise map
    assert priced / plain == pytest.approx((35 + 2745 + 16) / (35 + 16))


def test_a_device_cheaper_than_f_counts_cannot_make_f_negative(tmp_path):
    application = _map_app(tmp_path, f'{{name: map, species: "{MAP}", f: 10, elementary_calls: 3}}')
    assert priced_f(application.primitives[0], -3) == 1
    with pytest.raises(ValueError, match="fewer ops than its 3 elementary calls"):
        priced_f(application.primitives[0], -7)


def test_negative_calls_are_refused(tmp_path):
    with pytest.raises(ApplicationFileError, match="primitives.0.elementary_calls"):
        _map_app(tmp_path, f'{{name: map, species: "{MAP}", f: 10, elementary_calls: -1}}')


needs_gcc = pytest.mark.skipif(__import__("shutil").which("gcc") is None, reason="gcc preprocesses the C file")


def _c_loop(tmp_path, name: str, parameters: str, body: str) -> None:
    """Write NAME.c: one function looping i over N = 2^20 with `body`, math.h included."""
    (tmp_path / f"{name}.c").write_text(f"#include <math.h>\n#define N 1048576\nvoid {name}({parameters}) {{\n"
                                        f"  for (int i = 0; i < N; i++) {body}\n}}\n")


@needs_gcc
def test_calls_are_counted_from_c_code(tmp_path):
    _c_loop(tmp_path, "map", "const float *x, float *y", "y[i] = expf(-x[i]) * logf(x[i] + 2.0f) + sqrtf(x[i]);")
    classified = _map_app(tmp_path, "{name: map, source: map.c}").primitives[0]
    assert classified.elementary_calls == 2  # expf and logf; sqrtf is one op, not a library routine
    assert classified.f == 2 * 8 + 1 + 4  # two calls at 8, sqrt 1, the negation, add, multiply and add
    given = _map_app(tmp_path, "{name: map, source: map.c, elementary_calls: 0}").primitives[0]
    assert given.elementary_calls == 0


@needs_gcc
def test_conversions_are_counted_from_c_code_and_priced_at_the_cost_given(tmp_path):
    _c_loop(tmp_path, "widen", "const unsigned char *x, float *y", "y[i] = x[i] * 0.5f;")
    classified = _map_app(tmp_path, "{name: widen, source: widen.c}").primitives[0]
    assert classified.conversions == 1 and classified.f == 1
    assert priced_f(classified) == 1 and priced_f(classified, ops_per_conversion=16) == 17
    given = _map_app(tmp_path, "{name: widen, source: widen.c, conversions: 0}").primitives[0]
    assert given.conversions == 0 and priced_f(given, ops_per_conversion=16) == 1
    figures = hull_inputs(catalog()["rtx-3090"]).figures
    application = _map_app(tmp_path, "{name: widen, source: widen.c}")
    plain = predict_app(application, figures)[1][0].prediction.terms["c0"][0]
    priced = predict_app(application, figures, ops_per_conversion=16)[1][0].prediction.terms["c0"][0]
    assert priced / plain == pytest.approx((17 + 16) / (1 + 16))  # c0 = w (f m + o) / P, m = 1, o = 16


@needs_gcc
def test_fast_focus_from_c_has_no_elementary_calls():
    assert all(p.elementary_calls == 0 for p in load_application(EXAMPLE.with_name("fast-focus-from-c.yaml")).primitives)


@needs_gcc
def test_calls_that_do_not_come_to_a_number_are_an_error_not_zero(tmp_path):
    _c_loop(tmp_path, "chain", "const float *x, float *y, int K",
            "{ float v = x[i]; for (int k = 0; k < K; k++) v = expf(v); y[i] = v; }")
    with pytest.raises(ApplicationFileError, match="elementary calls of chain:4 do not come to a number"):
        _map_app(tmp_path, "{name: chain, source: chain.c, f: 100}")
    bound = _map_app(tmp_path, "{name: chain, source: chain.c, define: {K: 3}}").primitives[0]
    assert bound.elementary_calls == 3 and bound.f == 3 * 8
    given = _map_app(tmp_path, "{name: chain, source: chain.c, f: 100, elementary_calls: 12}").primitives[0]
    assert given.elementary_calls == 12


def test_a_file_that_names_no_version_reads_as_version_1(tmp_path):
    path = tmp_path / "app.yaml"
    path.write_text(EXAMPLE.read_text().replace("version: 1 ", "# no version ", 1))
    assert load_application(path).primitives == load_application(EXAMPLE).primitives
