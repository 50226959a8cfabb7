"""`perfcast campaign run -- CMD`: an unmodified program of ours timed, profiled under Oclgrind, scored."""

import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfcast.campaign.archive import Archive, WorkingFolder
from perfcast.campaign.launch_log import Launch
from perfcast.campaign.program import group_launches, parse_scaling, scaling_check
from perfcast.campaign.report import score_archive
from perfcast.campaign.watched_run import ProgramFailed, run_watched
from perfcast.cli import app
from perfcast.errors import InputError
from perfcast.profiles.profile import KernelProfile

runner = CliRunner()
DEVICE_PROFILE = Path(__file__).parents[2] / "docs" / "validation" / "bench-opencl-pocl-profile.yaml"
needs_oclgrind = pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind not installed")


def _launch(kernel: str, size: tuple[int, ...], local: tuple[int, ...] | None, seq: int, time_ns: int) -> Launch:
    return Launch(seq, 1, "q", 1, kernel, size, local, None, 0, 0, 1000, 1000 + time_ns)


def test_launches_are_grouped_by_kernel_and_ndrange():
    launches = [_launch("a", (64,), (8,), 0, 10), _launch("b", (8,), None, 1, 5), _launch("a", (64,), (8,), 2, 30),
                _launch("a", (128,), (8,), 3, 40)]
    groups = group_launches(launches)
    assert [g.name for g in groups] == ["a[64/8]", "b", "a[128/8]"]
    assert [len(g.launches) for g in groups] == [2, 1, 1]
    assert groups[2].work_items == 128


def _profile(ldst: float, items: int) -> tuple[KernelProfile, float]:
    metrics = {"ldst": ldst, "inst_warp": ldst / 2, "fp32": ldst, "fp64": 0.0, "int": 3 * ldst}
    return KernelProfile("k", 1, metrics, work_items=items), float(items)


def test_the_scaling_check_by_hand():
    # Twice the work-items and twice the counts: follows work-items^1.
    assert scaling_check("k", _profile(100, 1000), _profile(200, 2000), 1.0) is None
    # A matrix product: 4x the work-items (2x n), 8x the counts (n^3) -> work-items^1.5.
    broken = scaling_check("k", _profile(100, 1000), _profile(800, 4000), 1.0)
    metric, seen, expected, fitted = broken
    assert (seen, expected) == (8.0, 4.0) and fitted == pytest.approx(1.5)
    assert scaling_check("k", _profile(100, 1000), _profile(800, 4000), 1.5) is None
    # Within the tolerance (5 %): accepted; past it: refused.
    assert scaling_check("k", _profile(100, 1000), _profile(204, 2000), 1.0) is None
    assert scaling_check("k", _profile(100, 1000), _profile(215, 2000), 1.0) is not None


def test_scaling_declarations():
    assert parse_scaling(["sgemm=1.5", "axpy=1"]) == {"sgemm": 1.5, "axpy": 1.0}
    for bad in ("sgemm", "=1", "sgemm=0", "sgemm=-1", "sgemm=x", "sgemm=nan"):
        with pytest.raises(InputError, match="KERNEL=p"):
            parse_scaling([bad])


def test_a_failing_program_says_its_status_and_the_end_of_its_errors(tmp_path):
    script = "import sys; print('about to fail', file=sys.stderr); sys.exit(3)"
    with pytest.raises(ProgramFailed, match=r"status 3(.|\n)*about to fail"):
        run_watched([sys.executable, "-c", script], stderr=tmp_path / "err", what="the program")


def test_a_program_past_its_memory_cap_is_stopped_and_told_in_words(tmp_path):
    script = "import time; x = bytearray(400 * 2**20); time.sleep(30)"
    with pytest.raises(ProgramFailed, match=r"more than the 0\.1 GiB allowed(.|\n)*smaller"):
        run_watched([sys.executable, "-c", script], memory_limit=100 * 2**20, advice="profile a smaller problem",
                    timeout=60)


def test_a_program_past_its_time_is_stopped():
    with pytest.raises(ProgramFailed, match="ran past 1 s"):
        run_watched([sys.executable, "-c", "import time; time.sleep(30)"], timeout=1)


@needs_oclgrind
def test_a_program_campaign_end_to_end(multi_kernel, tmp_path):
    program = str(multi_kernel)
    archive = tmp_path / "program.zip"
    # Oclgrind runs one kernel at a time: the threaded run is timed, a single-threaded one profiled.
    result = runner.invoke(app, ["campaign", "run", "-o", str(archive), "--device-profile", str(DEVICE_PROFILE),
                                 "--profile-cmd", f"{program} 8192 2 0", "--", program, "8192", "3", "1"])
    assert result.exit_code == 0, result.output
    assert not WorkingFolder.for_archive(archive).exists()
    read = Archive.read(archive)
    m = read.manifest
    assert m["kind"] == "program" and m["timed_run"]["timed"] == 4 * 3 + 3
    assert set(m["kernels"]) == {"scale[8192/64]", "scale[8192/32]", "axpy", "blur2d", "sum_task"}
    assert m["kernels"]["scale[8192/64]"]["launches"] == 3 and m["kernels"]["scale[8192/32]"]["launches"] == 3
    assert all(r["median_s"] > 0 for r in m["kernels"].values())
    scores = score_archive(read)
    assert {s.kernel for s in scores.scores} == set(m["kernels"])
    assert scores.summaries["quantitative"].n == 5 and scores.summaries["roofline"].n == 5
    for score in scores.scores:
        assert "simulated for" in score.predictions["roofline"].detail
    # scale[8192/32] ran only in the threaded run: its counts are scale's, per work-item, and said so.
    assert "scaled" in m["profiling"]["note"]
    report = runner.invoke(app, ["campaign", "report", str(archive), "-o", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    text = (tmp_path / "report" / "report.md").read_text()
    assert "program: `" in text and "blur2d" in text


def test_a_program_that_launches_nothing_or_fails_leaves_no_archive(multi_kernel, tmp_path):
    archive = tmp_path / "none.zip"
    result = runner.invoke(app, ["campaign", "run", "-o", str(archive), "--device-profile", str(DEVICE_PROFILE),
                                 "--", sys.executable, "-c", "print('no OpenCL here')"])
    assert result.exit_code == 2 and "launched no OpenCL kernel" in result.output
    assert not archive.exists()
    result = runner.invoke(app, ["campaign", "run", "-o", str(archive), "--fresh", "--device-profile",
                                 str(DEVICE_PROFILE), "--", str(multi_kernel)])
    assert result.exit_code == 2 and "status 1" in result.output and "usage" in result.output
    assert not archive.exists()


def test_profile_commands_are_checked(tmp_path):
    result = runner.invoke(app, ["campaign", "run", "-o", str(tmp_path / "a.zip"), "--profile-cmd", "'unclosed",
                                 "--", "true"])
    assert result.exit_code == 2 and "--profile-cmd" in result.output
    with pytest.raises(InputError):
        parse_scaling(["k=inf"])
