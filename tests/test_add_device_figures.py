"""scripts/add_device_figures.py: an archive's device profile takes the figures a later bench run has and it lacks."""

import zipfile

import pytest
import yaml


@pytest.fixture(scope="module")
def script(load_script):
    return load_script("add_device_figures")


def test_only_the_missing_figures_are_lent_and_the_notes_say_so(script, tmp_path):
    archive = tmp_path / "prog" / "prog.zip"
    archive.parent.mkdir()
    device = {"name": "vm", "barriers": {"value": 1.0e10}, "notes": None}
    with zipfile.ZipFile(archive, "w") as written:
        written.writestr("device.yaml", yaml.safe_dump(device))
        written.writestr("profile.yaml", "kernels: []\n")
    source = tmp_path / "after.yaml"
    source.write_text(yaml.safe_dump({"barriers": {"value": 2.0e10}, "barrier_values": {"value": 3.0e10}}))
    assert script.amend(archive, tmp_path / "out", source) == ["barrier_values"]
    with zipfile.ZipFile(tmp_path / "out" / "prog" / "prog.zip") as read:
        amended = yaml.safe_load(read.read("device.yaml"))
        assert read.read("profile.yaml") == b"kernels: []\n"
    assert amended["barriers"]["value"] == 1.0e10 and amended["barrier_values"]["value"] == 3.0e10
    assert amended["notes"].startswith("barrier_values from after.yaml")
    with pytest.raises(OSError, match="the archive itself"):
        script.amend(archive, tmp_path, source)


def test_a_named_ceiling_is_lent_beside_the_ones_the_archive_has(script, tmp_path):
    archive = tmp_path / "prog" / "prog.zip"
    archive.parent.mkdir()
    device = {"name": "vm", "bandwidth_ceilings": {"guarded accesses": {"value": 1.0e10}}}
    with zipfile.ZipFile(archive, "w") as written:
        written.writestr("device.yaml", yaml.safe_dump(device))
    source = tmp_path / "after.yaml"
    source.write_text(yaml.safe_dump({"bandwidth_ceilings": {"guarded accesses": {"value": 9.0},
                                                             "guarded copy": {"value": 2.0e10}}}))
    figures = ("bandwidth_ceilings:guarded accesses", "bandwidth_ceilings:guarded copy")
    assert script.amend(archive, tmp_path / "out", source, figures) == ["bandwidth_ceilings:guarded copy"]
    with zipfile.ZipFile(tmp_path / "out" / "prog" / "prog.zip") as read:
        ceilings = yaml.safe_load(read.read("device.yaml"))["bandwidth_ceilings"]
    assert ceilings == {"guarded accesses": {"value": 1.0e10}, "guarded copy": {"value": 2.0e10}}
