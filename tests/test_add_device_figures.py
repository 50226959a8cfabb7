"""scripts/add_device_figures.py: an archive's device profile takes the figures a later bench run has and it lacks."""

import zipfile
from pathlib import Path

import pytest
import yaml

# A device profile perfcast bench wrote (PoCL on the Zen 3 VM), which an amended one must still be.
PROFILE = Path(__file__).parent.parent / "docs/validation/programs/polybench-zen3/device.yaml"


def _profile(**changes: object) -> dict:
    device = yaml.safe_load(PROFILE.read_text())
    for name in ("barriers", "barrier_values", "local_loads"):
        device.pop(name, None)
    device["bandwidth_ceilings"].pop("guarded copy", None)
    return {**device, **changes}


@pytest.fixture(scope="module")
def script(load_script):
    return load_script("add_device_figures")


def test_only_the_missing_figures_are_lent_and_the_notes_say_so(script, tmp_path):
    archive = tmp_path / "prog" / "prog.zip"
    archive.parent.mkdir()
    figure = {"source": "measured", "tool": "test", "date": "2026-11-29"}
    device = _profile(barriers={"value": 1.0e10, **figure}, notes=None)
    with zipfile.ZipFile(archive, "w") as written:
        written.writestr("device.yaml", yaml.safe_dump(device))
        written.writestr("profile.yaml", "kernels: []\n")
    source = tmp_path / "after.yaml"
    source.write_text(yaml.safe_dump({"barriers": {"value": 2.0e10, **figure},
                                      "barrier_values": {"value": 3.0e10, **figure}}))
    assert script.amend(archive, tmp_path / "out", source) == ["barrier_values"]
    with zipfile.ZipFile(tmp_path / "out" / "prog" / "prog.zip") as read:
        amended = yaml.safe_load(read.read("device.yaml"))
        assert read.read("profile.yaml") == b"kernels: []\n"
    assert amended["barriers"]["value"] == 1.0e10 and amended["barrier_values"]["value"] == 3.0e10
    assert amended["notes"].startswith("barrier_values from after.yaml")
    with pytest.raises(OSError, match="the archive itself"):
        script.amend(archive, tmp_path, source)


def test_a_named_ceiling_is_lent_beside_the_ones_the_archive_has_and_one_perfcast_refuses_is_not(script, tmp_path):
    archive = tmp_path / "prog" / "prog.zip"
    archive.parent.mkdir()
    device = _profile()
    own = device["bandwidth_ceilings"]["guarded accesses"]
    with zipfile.ZipFile(archive, "w") as written:
        written.writestr("device.yaml", yaml.safe_dump(device))
    figure = {"source": "measured", "tool": "test", "date": "2026-11-29"}
    source = tmp_path / "after.yaml"
    source.write_text(yaml.safe_dump({"bandwidth_ceilings": {"guarded accesses": {"value": 9.0e9, **figure},
                                                             "guarded copy": {"value": 2.0e9, **figure}}}))
    figures = ("bandwidth_ceilings:guarded accesses", "bandwidth_ceilings:guarded copy")
    assert script.amend(archive, tmp_path / "out", source, figures) == ["bandwidth_ceilings:guarded copy"]
    with zipfile.ZipFile(tmp_path / "out" / "prog" / "prog.zip") as read:
        ceilings = yaml.safe_load(read.read("device.yaml"))["bandwidth_ceilings"]
    assert ceilings["guarded accesses"] == own and ceilings["guarded copy"]["value"] == 2.0e9
    # A lent ceiling above the archive's DRAM figure makes a profile perfcast refuses: refused before writing.
    source.write_text(yaml.safe_dump({"bandwidth_ceilings": {"guarded copy": {"value": 1.0e15, **figure}}}))
    with pytest.raises(ValueError, match="not one perfcast reads"):
        script.amend(archive, tmp_path / "again", source, figures)
    assert not (tmp_path / "again" / "prog" / "prog.zip").exists()
