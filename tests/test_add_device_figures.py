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
