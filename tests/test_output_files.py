"""Outputs are checked before the work and replaced whole."""

import pytest

from perfcast.output_files import UnwritablePath, check_writable, replaced, write_text_atomic


def test_impossible_paths_are_refused_before_any_work(tmp_path):
    with pytest.raises(UnwritablePath, match=r"--output /proc/x.png: cannot write there"):
        check_writable("/proc/x.png", "--output")
    with pytest.raises(UnwritablePath, match="is a folder"):
        check_writable(tmp_path, "--csv")
    with pytest.raises(UnwritablePath, match="use one of .png"):
        check_writable(tmp_path / "chart.gif", "-o", (".png", ".svg"))
    check_writable(tmp_path / "new" / "folder" / "report.md", "--markdown")  # folders are made
    assert not list((tmp_path / "new" / "folder").iterdir())  # and the probe leaves nothing behind


def test_an_interrupted_write_keeps_the_previous_file(tmp_path):
    path = tmp_path / "profile.yaml"
    write_text_atomic(path, "old\n")
    with pytest.raises(KeyboardInterrupt):
        with replaced(path) as partial:
            partial.write_text("half of the new")
            raise KeyboardInterrupt
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["profile.yaml"]
    write_text_atomic(path, "new\n")
    assert path.read_text() == "new\n"


def test_json_finite_turns_nan_and_infinities_into_null_at_any_depth() -> None:
    import json
    import math

    from perfcast.output_files import json_finite

    data = {"a": math.nan, "b": [1.5, math.inf, (-math.inf, 2)], "c": {"d": 0.0, "e": "NaN"}, "f": None, "g": 3}
    clean = json_finite(data)
    assert clean == {"a": None, "b": [1.5, None, [None, 2]], "c": {"d": 0.0, "e": "NaN"}, "f": None, "g": 3}
    json.dumps(clean, allow_nan=False)  # valid JSON


def test_json_finite_turns_numpy_scalars_into_numbers() -> None:
    import numpy as np

    from perfcast.output_files import json_finite

    clean = json_finite({"a": np.float32(1.5), "b": np.float64("nan"), "c": [np.int64(3), np.float32("inf")],
                         "d": np.bool_(True), "e": np.array(2.0)})
    assert clean == {"a": 1.5, "b": None, "c": [3, None], "d": True, "e": 2.0}
    assert type(clean["c"][0]) is int and type(clean["d"]) is bool


def test_print_json_writes_nan_as_null(capsys) -> None:
    import json

    import numpy as np

    from perfcast.cli.common import print_json

    print_json({"ape": float("nan"), "n": np.int64(3), "t": np.float32(0.25), "rows": [float("inf"), 1.0]})
    assert json.loads(capsys.readouterr().out) == {"ape": None, "n": 3, "t": 0.25, "rows": [None, 1.0]}
