"""Species given to a program's kernels (`--species`): parsed, bound per NDRange, and the boat hull scored."""

import json
import shutil
import sys
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.campaign.archive import Archive
from perfcast.campaign.program_species import KernelSpecies, group_sizes, parse_program_species, work_groups
from perfcast.campaign.report import score_archive
from perfcast.campaign.score import score_profiled
from perfcast.cli import app
from perfcast.devices.catalog import get_device, load_device_file
from perfcast.devices.hull_view import hull_inputs
from perfcast.errors import InputError
from perfcast.profiles.profile import KernelProfile
from perfcast.species.application import predict_primitive

runner = CliRunner()
ROOT = Path(__file__).parents[2]
HOTSPOT = ROOT / "docs" / "validation" / "programs" / "xeon-avx512" / "hotspot" / "hotspot.zip"
SUITE = ROOT / "docs" / "validation" / "campaign-pocl" / "xeon-avx512" / "campaign-pocl-xeon.zip"


def test_declarations_are_parsed_with_and_without_f_and_element_size():
    found = parse_program_species(["stencil=XxY|neighb(3x3) -> XxY|element; f=9", "axpy=N|element -> N|element",
                                   "histogram=N|element -> 256|shared; s=1; f=2", "bodies=N|element -> N|element; s=16"])
    assert found == {"stencil": KernelSpecies("XxY|neighb(3x3) -> XxY|element", 9.0),
                     "axpy": KernelSpecies("N|element -> N|element", None),
                     "histogram": KernelSpecies("N|element -> 256|shared", 2.0, 1.0),
                     "bodies": KernelSpecies("N|element -> N|element", None, 16.0)}
    assert found["histogram"].text() == "N|element -> 256|shared; f=2.0; s=1.0"
    # What a manifest keeps reads back as the same declaration.
    assert parse_program_species({k: v.text() for k, v in found.items()}) == found


@pytest.mark.parametrize("bad, message", [
    ("stencil", "KERNEL=SPECIES"),
    ("=N|element -> N|element", "KERNEL=SPECIES"),
    ("k=N|element -> N|element; f=-1", "f=F"),
    ("k=N|element -> N|element; g=2", "f=F"),
    ("k=N|element -> N|element; f=nan", "f=F"),
    ("k=N|element -> N|element; s=0", "s=B"),
    ("k=N|element -> N|element; f=1; f=2", "at most once"),
    ("k=M|element -> M|element", "cannot be bound"),
    ("k=N|nonsense -> N|element", "species"),
])
def test_bad_declarations_are_refused(bad, message):
    with pytest.raises(InputError, match=message):
        parse_program_species([bad])


def test_one_kernel_given_two_species_is_refused():
    with pytest.raises(InputError, match="two species"):
        parse_program_species(["k=N|element -> N|element", "k=N|element -> N|element; f=2"])
    # The same species spelled twice (spacing, chunk for tile) is one declaration.
    assert len(parse_program_species(["k=Nx4|chunk(1x4) -> N|element", "k= Nx4 | tile(1x4) ->N|element"])) == 1


def test_sizes_are_bound_per_group():
    assert group_sizes({"global_size": [64, 512], "work_items": 32768}) == {"N": 32768, "X": 64, "Y": 512}
    assert group_sizes({"global_size": [100]}) == {"N": 100, "X": 100}
    with pytest.raises(InputError, match="no work-items"):
        group_sizes({})


def test_the_hull_of_a_profiled_kernel_by_hand():
    device = get_device("a100-80gb")
    # An element-wise kernel of 2**20 work-items counting 2 FMAs (4 FLOP) each: f defaults to 4 FLOP per element.
    items = 2**20
    profile = KernelProfile("k", 1, {"fma_fp32": 2.0 * items, "ldst": 2.0 * items}, work_items=items)
    record = {"median_s": 1e-4, "spread": 0.01, "global_size": [items], "work_items": items}
    score = score_profiled("k", record, device, profile, KernelSpecies("N|element -> N|element"))
    hull = score.predictions["boat hull"]
    expected = predict_primitive(f"{items}|element -> {items}|element", hull_inputs(device).figures, 4.0).prediction
    assert (hull.lower, hull.upper) == pytest.approx((float(expected.lower[0]), float(expected.upper[0])))
    assert "f = 4 (the profile's fp32 FLOP" in hull.detail
    # A given f is used as given: four times the work is never faster.
    given = score_profiled("k", record, device, profile, KernelSpecies("N|element -> N|element", 16.0))
    assert given.predictions["boat hull"].upper >= hull.upper
    # A given element size moves the bytes: 16-byte elements are four times the 4-byte ones' m0.
    wide = score_profiled("k", record, device, profile, KernelSpecies("N|element -> N|element", None, 16.0))
    expected = predict_primitive(f"{items}|element -> {items}|element", hull_inputs(device, "fp32", 16).figures, 4.0,
                                 element_bytes=16).prediction
    assert wide.predictions["boat hull"].lower == pytest.approx(float(expected.lower[0]))
    assert "16 B elements (given)" in wide.predictions["boat hull"].detail and "4 B elements;" in hull.detail
    # Without a species the hull is left out and says how to give one.
    assert "--species" in score_profiled("k", record, device, profile).left_out["boat hull"]


def test_work_groups_per_group_of_launches():
    assert work_groups({"global_size": [100, 10], "local_size": [32, 5]}) == 4 * 2  # a partial group counts
    assert work_groups({"global_size": [4096]}) is None  # NULL local size: the platform's choice, unknown
    assert work_groups({"global_size": [64], "local_size": [64]}) == 1


def test_the_compilers_report_sets_a_program_kernels_cpu_floors_by_hand():
    device = load_device_file(ROOT / "docs" / "validation" / "programs" / "xeon-avx512" / "device.yaml")
    figures = hull_inputs(device).figures
    n = figures.n_threads
    items = 2**16
    profile = KernelProfile("k", 1, {"fma_fp32": 2.0 * items, "ldst": 2.0 * items}, work_items=items)
    species = KernelSpecies("N|element -> N|element")
    report = {"tool": "PoCL x vectoriser remarks", "lanes": {"k": 4}, "threads": n}

    def hull(local: int | None, vectorisation=report):
        record = {"median_s": 1e-4, "spread": 0.01, "kernel": "k", "global_size": [items], "work_items": items,
                  "local_size": [local] if local else None}
        return score_profiled("k[g]", record, device, profile, species, vectorisation).predictions["boat hull"]

    def expected(**kwargs):
        found = predict_primitive(f"{items}|element -> {items}|element", figures, 4.0, **kwargs).prediction
        return float(found.lower[0]), float(found.upper[0])

    # Enough work-groups for every thread: no single-thread floor, and the no-SIMD floor at (L / 4)·c0.
    wide = hull(64)
    assert (wide.lower, wide.upper) == pytest.approx(expected(assume=("multithreaded",), vector_lanes=4))
    assert "4 of 16 SIMD lanes" in wide.detail and "no single-thread floor" in wide.detail
    # One work-group keeps one thread busy: the single-thread floors stay.
    one = hull(items)
    assert (one.lower, one.upper) == pytest.approx(expected(vector_lanes=4))
    assert f"but 1 work-group for the hull's {n}" in one.detail and one.upper >= wide.upper
    # The platform chose the local size: its groups are unknown, the threads are taken at their word.
    assert hull(None).upper == pytest.approx(wide.upper)
    # No report: the spec's floors.
    assert (hull(64, None).lower, hull(64, None).upper) == pytest.approx(expected())


def test_a_committed_program_archive_scored_with_a_species():
    species = parse_program_species(["hotspot=512x512|neighb(3x3) ^ 512x512|element -> 512x512|element"])
    result = score_archive(Archive.read(HOTSPOT), species)
    (score,) = result.scores
    hull = score.predictions["boat hull"]
    assert hull.lower < hull.upper and hull.contained is not None
    assert result.summaries["boat hull"].n == 1
    with pytest.raises(InputError, match="not a kernel of the program"):
        score_archive(Archive.read(HOTSPOT), parse_program_species(["calculate_temp=N|element -> N|element"]))
    with pytest.raises(InputError, match="suite's kernels"):
        score_archive(Archive.read(SUITE), species)


def test_a_group_species_wins_over_its_kernels(tmp_path):
    # Two NDRanges of one kernel: the group named in full gets its own species.
    with zipfile.ZipFile(HOTSPOT) as source:
        members = {name: source.read(name) for name in source.namelist()}
    manifest = json.loads(members["manifest.json"])
    record = manifest["kernels"].pop("hotspot")
    manifest["kernels"]["hotspot[688x688/16x16]"] = record
    manifest["kernels"]["hotspot[64x64/16x16]"] = {**record, "global_size": [64, 64], "work_items": 4096}
    manifest["species"] = {"hotspot": "XxY|neighb(3x3) -> XxY|element; f=4"}  # f given: the renamed groups have
    # no profile to count it from
    members["manifest.json"] = json.dumps(manifest).encode()
    path = tmp_path / "two.zip"
    with zipfile.ZipFile(path, "w") as target:
        for name, data in members.items():
            target.writestr(name, data)
    result = score_archive(Archive.read(path), parse_program_species(
        ["hotspot[688x688/16x16]=512x512|neighb(3x3) -> 512x512|element; f=4"]))
    details = {s.kernel: s.predictions["boat hull"].detail for s in result.scores}
    assert details["hotspot[688x688/16x16]"].startswith("512x512|neighb(3x3)")
    assert details["hotspot[64x64/16x16]"].startswith("64x64|neighb(3x3)")  # the kernel's, bound to its NDRange


def test_campaign_report_takes_species(tmp_path):
    out = tmp_path / "report"
    result = runner.invoke(app, ["campaign", "report", str(HOTSPOT), "-o", str(out), "--species",
                                 "hotspot=512x512|neighb(3x3) ^ 512x512|element -> 512x512|element"])
    assert result.exit_code == 0, result.output
    assert "boat hull: n = 1" in result.output
    report = (out / "report.md").read_text()
    assert "--species" in report and "512x512|neighb(3x3)" in report
    bad = runner.invoke(app, ["campaign", "report", str(SUITE), "-o", str(tmp_path / "r2"), "--species",
                              "triad=N|element -> N|element"])
    assert bad.exit_code != 0 and "program" in bad.output


def test_campaign_run_refuses_species_for_the_suite(tmp_path):
    result = runner.invoke(app, ["campaign", "run", "-o", str(tmp_path / "a.zip"), "--species",
                                 "k=N|element -> N|element"])
    assert result.exit_code != 0 and "program" in result.output


def test_campaign_run_refuses_a_separator_with_no_program_after_it(tmp_path, monkeypatch):
    # Click drops a trailing `--`; the command line is read back from sys.argv, as a shell gives it.
    args = ["campaign", "run", "-o", str(tmp_path / "a.zip"), "--quick", "--"]
    monkeypatch.setattr(sys, "argv", ["perfcast", *args])
    result = runner.invoke(app, args)
    assert result.exit_code != 0 and "nothing after --" in result.output
    assert not (tmp_path / "a.zip").exists()


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_the_manifest_keeps_the_species():
    from perfcast.campaign.program import ProgramOptions, _fresh_manifest

    options = ProgramOptions(("./app",), Path("a.zip"), species=parse_program_species(
        ["k=N|element -> N|element; f=3"]))
    assert _fresh_manifest(options)["species"] == {"k": "N|element -> N|element; f=3.0"}
    # f is kept to its last digit, not rounded to six
    assert parse_program_species(["k=N|element -> N|element; f=1234567.89"])["k"].text().endswith("f=1234567.89")


def _archive_with(tmp_path, name, change):
    """Return a copy of the committed hotspot archive with its manifest changed by `change(manifest)`."""
    with zipfile.ZipFile(HOTSPOT) as source:
        members = {member: source.read(member) for member in source.namelist()}
    manifest = json.loads(members["manifest.json"])
    change(manifest)
    members["manifest.json"] = json.dumps(manifest).encode()
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as target:
        for member, data in members.items():
            target.writestr(member, data)
    return path


def test_a_launch_timed_at_zero_is_left_out_not_divided_by(tmp_path):
    path = _archive_with(tmp_path, "zero.zip", lambda m: m["kernels"]["hotspot"].update(median_s=0.0))
    result = score_archive(Archive.read(path), parse_program_species(["hotspot=N|element -> N|element; f=1"]))
    (score,) = result.scores
    assert not score.predictions and "timed at 0 s" in score.left_out["boat hull"]


def test_the_archives_own_species_are_checked_and_named_by_the_archive(tmp_path):
    bad = _archive_with(tmp_path, "bad.zip", lambda m: m.update(species={"hotspot": "N|element -> N|element; f=-1"}))
    with pytest.raises(InputError, match="bad.zip: the species recorded by campaign run"):
        score_archive(Archive.read(bad))
    # The command line's species for that kernel replaces the recorded one.
    fixed = score_archive(Archive.read(bad), parse_program_species(["hotspot=N|element -> N|element; f=1"]))
    assert "boat hull" in fixed.scores[0].predictions
    from perfcast.campaign.archive import ArchiveError

    wrong = _archive_with(tmp_path, "wrong.zip", lambda m: m.update(species={"hotspot": 3}))
    with pytest.raises(ArchiveError, match="'species' must map"):
        Archive.read(wrong)


def test_a_symbol_the_ndrange_lacks_is_said_in_words():
    device = get_device("a100-80gb")
    record = {"median_s": 1e-4, "spread": 0.01, "global_size": [64, 64], "work_items": 4096}
    score = score_profiled("k", record, device, None, KernelSpecies("ZxYxX|element -> ZxYxX|element", 1.0))
    assert "uses Z, but this group's NDRange has 2 dimensions" in score.left_out["boat hull"]
    given = score_profiled("k", record, device, None, KernelSpecies("YxX|element -> YxX|element", 1.0))
    assert "fp32 assumed: no profile" in given.predictions["boat hull"].detail


def test_a_report_of_several_programs_takes_each_species_where_it_applies(tmp_path):
    other = _archive_with(tmp_path, "other.zip", lambda m: m["kernels"].update(
        {"relax": {**m["kernels"].pop("hotspot"), "kernel": "relax"}}))
    out = tmp_path / "two"
    result = runner.invoke(app, ["campaign", "report", str(HOTSPOT), str(other), "-o", str(out), "--species",
                                 "hotspot=512x512|neighb(3x3) -> 512x512|element"])
    assert result.exit_code == 0, result.output
    bad = runner.invoke(app, ["campaign", "report", str(HOTSPOT), str(other), "-o", str(tmp_path / "three"),
                              "--species", "nowhere=N|element -> N|element"])
    assert bad.exit_code != 0 and "none of the programs" in bad.output
    assert not (tmp_path / "three").exists()  # refused before anything was written
