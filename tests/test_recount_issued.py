"""scripts/recount_issued.py: an archive profiled before `inst_alu` or `barriers` gets it from its raw Oclgrind histograms."""

import zipfile

import pytest
import yaml

HISTOGRAM = """Instructions executed for kernel 'k':
             100 - add
             100 - getelementptr
Instructions executed for kernel 'k':
             300 - add
             100 - getelementptr
"""

@pytest.fixture(scope="module")
def recount(load_script):
    return load_script("recount_issued")


def test_a_group_is_of_the_kernel_its_record_names_else_the_name_before_its_ndrange():
    from perfcast.campaign.score import group_kernel

    assert group_kernel("lud_perimeter[6144x1/32x1]", {}) == "lud_perimeter"
    assert group_kernel("StencilKernel (-DSINGLE_PRECISION)", {"kernel": "StencilKernel"}) == "StencilKernel"
    assert group_kernel("k (-DX)[64/16]", {"kernel": "k"}) == "k" and group_kernel("plain", {}) == "plain"


def test_each_group_takes_its_kernels_issued_share_of_its_own_counts(recount, tmp_path):
    # Launches of shares 1/2 and 3/4: over both, 400 issued of 600 counted (2/3, not the mean of the shares, 5/8),
    # applied to the scaled group's 32 x 640.
    archive = tmp_path / "prog" / "prog.zip"
    archive.parent.mkdir()
    profile = {"format": "perfcast-profile", "version": 1, "kernels": [
        {"name": "k[64/16]", "launches": 1, "metrics": {"inst_warp": 640.0, "ldst": 5000.0}},
        {"name": "other", "launches": 1, "metrics": {"inst_warp": 10.0}}]}
    with zipfile.ZipFile(archive, "w") as written:
        written.writestr("profile.yaml", yaml.safe_dump(profile))
        written.writestr("raw/profile-0/oclgrind.txt", HISTOGRAM)
        written.writestr("manifest.json", '{"kernels": {"k[64/16]": {"kernel": "k"}}}')
    out = recount.recount(archive, tmp_path / "out")
    assert out == tmp_path / "out" / "prog" / "prog.zip"
    with zipfile.ZipFile(out) as read:
        assert sorted(read.namelist()) == ["manifest.json", "profile.yaml", "raw/profile-0/oclgrind.txt"]
        kernels = yaml.safe_load(read.read("profile.yaml"))["kernels"]
    assert kernels[0]["metrics"]["inst_alu"] == pytest.approx(2 / 3 * 32 * 640)
    assert kernels[0]["metrics"]["ldst"] == 5000.0  # the rest as it was
    assert "inst_alu" not in kernels[1]["metrics"]  # no histogram of that kernel: nothing invented


def test_barriers_are_recounted_the_same_way(recount, tmp_path):
    # Two launches of 64 and 128 crossings over 400 and 800 counted instructions: 192 / 1200 of the group's 32 x 100.
    archive = tmp_path / "prog" / "prog.zip"
    archive.parent.mkdir()
    histogram = ("Instructions executed for kernel 'k':\n             64 - call _Z7barrierj()\n"
                 "             336 - add\nInstructions executed for kernel 'k':\n"
                 "             128 - call _Z7barrierj()\n             672 - add\n")
    profile = {"format": "perfcast-profile", "version": 1, "kernels": [
        {"name": "k", "launches": 1, "metrics": {"inst_warp": 100.0}}]}
    with zipfile.ZipFile(archive, "w") as written:
        written.writestr("profile.yaml", yaml.safe_dump(profile))
        written.writestr("raw/profile-0/oclgrind.txt", histogram)
        written.writestr("manifest.json", '{"kernels": {}}')
    with zipfile.ZipFile(recount.recount(archive, tmp_path / "out", "barriers")) as read:
        metrics = yaml.safe_load(read.read("profile.yaml"))["kernels"][0]["metrics"]
    assert metrics["barriers"] == pytest.approx(192 / 1200 * 32 * 100) and "inst_alu" not in metrics
