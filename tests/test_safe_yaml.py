"""The YAML perfcast reads: duplicate keys, depth, size, encoding, dates and tags each give a clear error."""

import pytest

from perfcast.devices.catalog import DeviceFileError, catalog, device_to_yaml, load_device_file, local_profiles
from perfcast.safe_yaml import MAX_FILE_BYTES, YamlInputError, load_yaml_file, load_yaml_text


def test_duplicate_keys_are_refused_with_both_lines():
    with pytest.raises(YamlInputError, match=r"duplicate key 'name' \(first on line 1\)"):
        load_yaml_text("name: a\nkind: gpu\nname: b\n", "x.yaml")


def test_deep_nesting_is_refused_without_recursion_errors():
    with pytest.raises(YamlInputError, match="nested"):
        load_yaml_text("a: " + "[" * 100_000 + "]" * 100_000, "deep.yaml")
    with pytest.raises(YamlInputError, match="deeper than 64"):
        load_yaml_text("a: " + "[" * 70 + "]" * 70, "deep.yaml")


def test_python_tags_are_refused():
    with pytest.raises(YamlInputError, match="not valid YAML"):
        load_yaml_text("a: !!python/object/apply:os.system ['true']\n", "evil.yaml")


def test_dates_stay_text():
    assert load_yaml_text("date: 2026-13-45\n") == {"date": "2026-13-45"}


def test_files_must_be_utf8_small_and_files(tmp_path):
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(YamlInputError, match=r"line 1: not UTF-8 text \(byte 0xe9\)"):
        load_yaml_file(bad)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a" * (MAX_FILE_BYTES + 1))
    with pytest.raises(YamlInputError, match="more than"):
        load_yaml_file(big)
    # A profile (a program's launch groups take megabytes) is read to MAX_PROFILE_BYTES; a device file is not.
    from perfcast.safe_yaml import MAX_PROFILE_BYTES

    big.write_bytes(b"a: " + b"b" * (MAX_FILE_BYTES + 1))
    assert load_yaml_file(big, MAX_PROFILE_BYTES) == {"a": "b" * (MAX_FILE_BYTES + 1)}
    with pytest.raises(YamlInputError, match="more than the 4,194,304"):
        load_yaml_text(big.read_text())
    with pytest.raises(YamlInputError, match="is a folder"):
        load_yaml_file(tmp_path)
    with pytest.raises(YamlInputError, match="cannot read"):
        load_yaml_file(tmp_path / "absent.yaml")


def test_a_bad_date_in_a_device_file_names_the_field(tmp_path):
    text = device_to_yaml(catalog()["v100"])
    text = text.replace("source: spec", "source: measured\n    tool: stream\n    date: 2026-13-45", 1)
    path = tmp_path / "dated.yaml"
    path.write_text(text)
    with pytest.raises(DeviceFileError, match=r"date"):
        load_device_file(path)


def test_a_truncated_local_profile_is_skipped_with_a_warning(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(device_to_yaml(catalog()["v100"]).replace("name: v100", "name: my-v100"))
    (tmp_path / "broken.yaml").write_text("name: half\nkind: gp")
    with pytest.warns(UserWarning, match="broken.yaml"):
        found = local_profiles(tmp_path)
    assert list(found) == ["my-v100"]


@pytest.mark.parametrize("value, message", [
    ("4", "newer than this perfcast reads"),
    ("0", "expected a positive whole number"),
    ("one", "expected a positive whole number"),
])
def test_device_files_carry_a_schema_version(tmp_path, value, message):
    text = device_to_yaml(catalog()["v100"])
    assert text.startswith("schema: 3\n")
    path = tmp_path / "v.yaml"
    path.write_text(text.replace("schema: 3", f"schema: {value}", 1))
    with pytest.raises(DeviceFileError, match=message):
        load_device_file(path)
    for older in ("schema: 2\n", "schema: 1\n", ""):  # older schemas, and files from before the field, as they were
        path.write_text(text.replace("schema: 3\n", older, 1))
        assert load_device_file(path) == catalog()["v100"]


def test_aliases_that_expand_past_the_limit_are_refused_at_once():
    import time

    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 10):  # nine levels of nine references: 387 million values in 500 bytes
        levels.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    text = "\n".join(levels) + "\n"
    assert len(text) < 1000
    started = time.perf_counter()
    with pytest.raises(YamlInputError, match="aliases are expanded"):
        load_yaml_text(text, "laughs.yaml")
    assert time.perf_counter() - started < 2.0


def test_a_few_shared_aliases_are_read():
    data = load_yaml_text("base: &b {x: 1}\none: *b\ntwo: *b\n")
    assert data["one"] == data["two"] == {"x": 1}


def test_an_integer_of_thousands_of_digits_is_an_input_error():
    with pytest.raises(YamlInputError, match="cannot read"):
        load_yaml_text("compute_units: " + "9" * 5000 + "\n", "big.yaml")


def test_an_alias_that_refers_to_itself_is_refused_by_line():
    with pytest.raises(YamlInputError, match=r"^cycle.yaml: line 1: an alias that refers to itself$"):
        load_yaml_text("a: &a [x, *a]\n", "cycle.yaml")


def test_a_refusal_names_its_source_once():
    with pytest.raises(YamlInputError) as caught:
        load_yaml_text("[" * 100 + "]" * 100, "deep.yaml")
    assert str(caught.value).count("deep.yaml") == 1
