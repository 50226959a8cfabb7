"""`perfcast campaign run -- CMD`: an unmodified program of ours timed, profiled under Oclgrind, scored."""

import shutil
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from perfcast.campaign.archive import Archive, WorkingFolder
from perfcast.campaign.launch_log import Launch
from perfcast.campaign.program import group_launches, parse_scaling, scaling_check
from perfcast.campaign.program_species import KernelSpecies
from perfcast.campaign.report import score_archive
from perfcast.campaign.vector_evidence import pocl_device
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
    # PoCL says how wide it vectorised each kernel's work-group loop (one more run of the profile command).
    evidence = m["vectorisation"]
    if pocl_device(m["timed_run"]["devices"][0]) is None:
        assert evidence is None
    else:
        assert evidence["command"] == f"{program} 8192 2 0" and evidence["threads"] >= 1
        assert set(evidence["lanes"]) <= {"scale", "axpy", "blur2d", "sum_task"} and "axpy" in evidence["lanes"]
        assert all(lanes >= 1 for lanes in evidence["lanes"].values())
        with zipfile.ZipFile(archive) as z:
            assert "vectorized" in z.read(evidence["raw"]).decode(errors="replace")
        # ...which the boat hull takes for its CPU floors: a range no wider than with every floor.
        axpy = {"axpy": KernelSpecies("N|element ^ N|element -> N|element")}
        hull = next(s for s in score_archive(read, axpy).scores if s.kernel == "axpy").predictions["boat hull"]
        assert "floors by the compiler" in hull.detail
        read.manifest["vectorisation"] = None
        every = next(s for s in score_archive(read, axpy).scores if s.kernel == "axpy").predictions["boat hull"]
        assert hull.lower == pytest.approx(every.lower) and hull.upper <= every.upper
    # And, on PoCL's CPU device with llvm-mca, the inner loops of the code it compiled (two more runs).
    if pocl_device(m["timed_run"]["devices"][0]) is None:
        assert m["incore"] is None
    elif m["incore"] is not None:
        assert set(m["incore"]["kernels"]) <= {"scale", "axpy", "blur2d", "sum_task"}
        assert all(k["cycles_per_item"] >= 0 and k["instructions_per_item"] > 0 for k in m["incore"]["kernels"].values())
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
    assert result.exit_code == 2 and "launched no kernel" in result.output
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


DATA = Path(__file__).parents[1] / "data" / "launches"


def test_a_recorded_nvprof_trace_reads_as_launches():
    from perfcast.campaign.cuda_launches import read_gpu_trace

    log = read_gpu_trace((DATA / "nvprof-gpu-trace-matrixMul.csv").read_text())
    assert len(log.launches) == 10  # the copies are not launches
    first = log.launches[0]
    assert first.kernel == "void matrixMulCUDA<int=32>(float*, float*, float*, int, int)"  # correlation id gone
    assert first.global_size == (640, 320) and first.local_size == (32, 32) and first.work_items == 204800
    assert first.duration == pytest.approx(0.077602e-3) and first.start == pytest.approx(587.796940e6)
    assert log.devices == ["GeForce GTX 1080 Ti"]
    groups = group_launches(log.timed())
    assert [(g.name, len(g.launches)) for g in groups] == [(first.kernel, 10)]


def test_an_nsys_trace_reads_as_launches():
    from perfcast.campaign.cuda_launches import read_gpu_trace

    # Recorded on an H100 (2026-11-26): the copies are not launches; grid x block gives the global size.
    log = read_gpu_trace((DATA / "nsys-cuda-gpu-trace.csv").read_text())
    assert [x.kernel for x in log.launches] == ["triad", "sgemm_tiled"]
    triad, sgemm = log.launches
    assert triad.global_size == (16_777_216,) and triad.local_size == (256,)
    assert sgemm.global_size == (1024, 1024) and sgemm.local_size == (16, 16) and sgemm.queue == "7"
    assert sgemm.duration == pytest.approx(269.671e-6)
    assert log.devices == ["NVIDIA H100 80GB HBM3"]


def test_a_trace_with_nsys_lines_before_it_and_cpp_names_reads_as_launches():
    from perfcast.campaign.cuda_launches import read_gpu_trace

    log = read_gpu_trace((DATA / "nsys-cuda-gpu-trace-constructed.csv").read_text())
    assert [x.kernel for x in log.launches] == ["triad(float*, const float*, const float*, float, int)"] * 2 + [
        "sgemm_tiled"]
    sgemm = log.launches[2]
    assert sgemm.global_size == (1024, 1024) and sgemm.local_size == (16, 16) and sgemm.queue == "13"
    assert sgemm.duration == pytest.approx(31e-6)


def test_a_trace_without_its_columns_is_refused():
    from perfcast.campaign.cuda_launches import read_nsys_gpu_trace
    from perfcast.campaign.launch_log import LaunchLogError

    with pytest.raises(LaunchLogError, match="GrdX"):
        read_nsys_gpu_trace("Start (ns),Duration (ns),Name\n1,2,k\n")
    with pytest.raises(LaunchLogError, match="no GPU trace table"):
        read_nsys_gpu_trace("nothing here\n")


def test_cuda_groups_take_the_mean_of_their_kernels_ncu_launches():
    from perfcast.campaign.program import cuda_group_profiles
    from perfcast.profiles.profile import ProfileSet, ProfileSource

    manifest = {"kernels": {"triad": {"kernel": "triad(float*, const float*, const float*, float, int)",
                                      "work_items": 1048576},
                            "other": {"kernel": "missing_kernel", "work_items": 10}}}
    captured = ProfileSet(ProfileSource("Nsight Compute"), (KernelProfile("_Z5triadPfPKfS1_fi", 4, {"ldst": 400.0}),))
    profiles, notes = cuda_group_profiles(manifest, captured)
    assert [p.name for p in profiles] == ["triad"] and profiles[0].metrics["ldst"] == pytest.approx(100.0)
    assert any("missing_kernel" in note or "other" in note for note in notes)


def test_a_kernel_whose_work_grows_without_its_work_items_is_refused():
    # A task (one work-item) whose loop runs n times: the same NDRange at both sizes, twice the counts.
    assert scaling_check("k", _profile(100, 1), _profile(200, 1), 1.0)[:3] == ("ldst", 2.0, 1.0)
    assert scaling_check("k", _profile(100, 1), _profile(100, 1), 1.0) is None


@needs_oclgrind
def test_a_refused_scaling_is_said_with_its_numbers_and_the_run_resumes(multi_kernel, tmp_path):
    program = str(multi_kernel)
    archive = tmp_path / "task.zip"
    arguments = ["campaign", "run", "-o", str(archive), "--device-profile", str(DEVICE_PROFILE),
                 "--profile-cmd", f"{program} 1024 1", "--profile-cmd", f"{program} 2048 1", "--", program, "8192", "2"]
    result = runner.invoke(app, arguments)
    # sum_task is one work-item looping over min(n, 4096) elements: its counts double, its NDRange does not.
    assert result.exit_code == 2 and "sum_task" in result.output and "timed size" in result.output
    # The hint names the one NDRange both ran, so that a user whose sizes round up to it sees why.
    assert "both profiled runs launched it at 1 work-items" in " ".join(result.output.split())
    assert not archive.exists() and WorkingFolder.for_archive(archive).exists()
    for index in (0, 1):  # Oclgrind's work is kept for the next attempt
        assert (WorkingFolder.for_archive(archive).path / f"raw/profile-{index}/launches.json").exists()


@needs_oclgrind
def test_two_program_archives_are_projected_onto_each_other(multi_kernel, tmp_path):
    program = str(multi_kernel)
    other = Path(__file__).parents[2] / "docs" / "validation" / "programs" / "xeon-avx512" / "device.yaml"
    archives = []
    for index, device in enumerate((DEVICE_PROFILE, other)):
        archive = tmp_path / f"p{index}.zip"
        result = runner.invoke(app, ["campaign", "run", "-o", str(archive), "--device-profile", str(device),
                                     "--", program, "4096", "2"])
        assert result.exit_code == 0, result.output
        archives.append(str(archive))
    report = runner.invoke(app, ["campaign", "report", *archives, "-o", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    text = (tmp_path / "report" / "report.md").read_text()
    assert text.count("## Projection (§4)") == 2 and "| blur2d | fp32 |" in text


def test_an_interrupted_program_is_stopped_with_everything_it_started():
    import os
    import signal
    import time

    def interrupt(elapsed: float) -> None:
        if elapsed > 0.5:
            raise KeyboardInterrupt

    child = "import time; time.sleep(61)"
    script = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {child!r}]); time.sleep(60)"
    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        run_watched([sys.executable, "-c", script], progress=interrupt)
    assert time.perf_counter() - started < 10
    alive = []  # nothing of its session is left running, the child it started included
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if b"time.sleep(6" in command and b"pytest" not in command:
            alive.append(int(entry))
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive


def test_a_scaling_the_two_profiled_commands_could_not_check_is_said():
    from perfcast.campaign.program import ProfiledRun, ProgramOptions, _group_profiles

    def run(items: int) -> ProfiledRun:
        launch = _launch("k", (items,), (64,), 0, 100)
        return ProfiledRun(("p",), ((launch, KernelProfile("k", 1, {"ldst": 2.0 * items}, work_items=items)),))

    manifest = {"kernels": {"k": {"kernel": "k", "global_size": [4096], "local_size": [64], "work_items": 4096}}}
    options = ProgramOptions(("app",), Path("a.zip"), profile_commands=(("p", "1"), ("p", "2")))
    profiles, notes = _group_profiles(options, manifest, [run(1024), run(1024)])  # two runs, one size
    assert profiles[0].metrics["ldst"] == pytest.approx(2.0 * 4096)
    assert any("same work-items" in note for note in notes)
    profiles, notes = _group_profiles(options, manifest, [run(1024), run(2048)])  # two sizes: checked, no note
    assert not any("same work-items" in note for note in notes)


def test_a_scaled_group_carries_its_bytes_per_level_to_the_timed_size_by_its_reuse_distances():
    """Two profiled sizes whose long reuses grow with the work-items: at the timed size they miss the L1 they hit."""
    from perfcast.campaign.program import ProfiledRun, ProgramOptions, _group_profiles
    from perfcast.models.caches import CacheLevel
    from perfcast.profiles.reuse import COLD, REUSE_BINS, histogram_metrics

    def histogram(long: float) -> dict[str, float]:
        found = np.zeros(REUSE_BINS + 1)
        found[0], found[1 + int(np.floor(4 * np.log2(long)))], found[COLD] = 60.0, 30.0, 10.0
        return histogram_metrics(found, np.zeros(REUSE_BINS + 1))

    def run(items: int) -> ProfiledRun:
        # 100 accesses a launch: 60 re-touch their line, 30 come back after items / 8 lines, 10 are first touches.
        metrics = {"ldst": 1.0 * items, "l1_bytes": 400.0, "l2_bytes": 640.0, "dram_bytes": 640.0,
                   **histogram(items / 8)}
        return ProfiledRun(("p",), ((_launch("k", (items,), (64,), 0, 100),
                                     KernelProfile("k", 1, metrics, work_items=items)),))

    levels = (CacheLevel("L1", 32 * 1024, 64, 8, 2), CacheLevel("L2", 1 << 20, 64, 16, 1))  # 1024 and 16 384 lines
    manifest = {"kernels": {"k": {"kernel": "k", "global_size": [65536], "local_size": [64], "work_items": 65536}}}
    options = ProgramOptions(("app",), Path("a.zip"), profile_commands=(("p", "1"), ("p", "2")))
    profiles, _ = _group_profiles(options, manifest, [run(1024), run(2048)], levels)
    found = profiles[0].metrics
    # Scaled 32x from 2048 work-items; the 30 long reuses a launch (at 256 lines, L1 hits) are at 8192 lines
    # timed: 32 x 30 more accesses miss L1, a 64-byte line each; L2 still holds them.
    assert found["unextrapolated_l2_bytes"] == pytest.approx(640.0 * 32)
    assert found["l2_bytes"] == pytest.approx(640.0 * 32 + 32 * 30 * 64, rel=0.02)
    assert found["dram_bytes"] == pytest.approx(640.0 * 32)
    assert any("reuse distances carried" in note for note in profiles[0].notes)
    # Without the device's caches, or with one profiled size, the bytes are the scaled ones.
    plain, _ = _group_profiles(options, manifest, [run(1024), run(2048)])
    assert plain[0].metrics["l2_bytes"] == pytest.approx(640.0 * 32) and "unextrapolated_l2_bytes" not in plain[0].metrics
    one, _ = _group_profiles(ProgramOptions(("app",), Path("a.zip"), profile_commands=(("p", "2"),)), manifest,
                             [run(2048)], levels)
    assert one[0].metrics["l2_bytes"] == pytest.approx(640.0 * 32)


def test_a_group_takes_its_median_launchs_first_touched_pages_and_a_scaled_one_grows_them_with_its_buffers():
    """Pages a launch touches first are that launch's alone: a group of three launches, one on fresh pages, pays none."""
    from perfcast.campaign.program import ProfiledRun, ProgramOptions, _group_profiles

    def launch(items: int, pages: float, seq: int) -> tuple:
        return (_launch("k", (items,), (64,), seq, 100),
                KernelProfile("k", 1, {"ldst": 2.0 * items ** 1.5, "first_store_pages": pages, "first_load_pages": 0.0},
                              work_items=items))

    timed = {"kernel": "k", "global_size": [1024], "local_size": [64], "work_items": 1024}
    options = ProgramOptions(("app",), Path("a.zip"))
    three = ProfiledRun(("p",), (launch(1024, 60.0, 0), launch(1024, 0.0, 1), launch(1024, 0.0, 2)))
    profiles, _ = _group_profiles(options, {"kernels": {"k": timed}}, [three])
    assert profiles[0].metrics["first_store_pages"] == 0.0 and profiles[0].metrics["ldst"] == 2.0 * 1024 ** 1.5
    two = ProfiledRun(("p",), (launch(1024, 60.0, 0), launch(1024, 60.0, 1), launch(1024, 0.0, 2)))
    assert _group_profiles(options, {"kernels": {"k": timed}}, [two])[0][0].metrics["first_store_pages"] == 60.0
    # Profiled at 1024 work-items, timed at 4096: the counts grow as declared (^1.5), the pages 4x, as the buffers.
    scaled = {"kernel": "k", "global_size": [4096], "local_size": [64], "work_items": 4096}
    options = ProgramOptions(("app",), Path("a.zip"), profile_commands=(("p", "1"),), scaling={"k": 1.5})
    profiles, _ = _group_profiles(options, {"kernels": {"k": scaled}}, [ProfiledRun(("p",), (launch(1024, 60.0, 0),))])
    assert profiles[0].metrics["ldst"] == pytest.approx(2.0 * 4096 ** 1.5)
    assert profiles[0].metrics["first_store_pages"] == pytest.approx(240.0)
    # srad profiled for 2 iterations, timed for 1500: its one fresh launch of 2 is one of 1500 at the timed run.
    srad = ProfiledRun(("p",), (launch(1024, 60.0, 0), launch(1024, 0.0, 1)))
    options = ProgramOptions(("app",), Path("a.zip"))
    for launches, pages in ((1500, 0.0), (2, 30.0)):
        record = {**timed, "launches": launches}
        found = _group_profiles(options, {"kernels": {"k": record}}, [srad])[0][0].metrics["first_store_pages"]
        assert found == pages


def test_a_groups_record_keeps_its_median_launchs_page_faults_and_the_score_prices_them():
    from dataclasses import replace as with_fields

    from perfcast.campaign.program import LaunchGroup, _timing_record
    from perfcast.campaign.score import with_timed_faults

    launches = [with_fields(_launch("k", (64,), (64,), i, 100), faults=f) for i, f in enumerate((900, 3, 5))]
    group = LaunchGroup("k", "k", (64,), (64,), tuple(launches))
    assert _timing_record(group)["faults"] == 5
    unlogged = LaunchGroup("k", "k", (64,), (64,), (_launch("k", (64,), (64,), 0, 100), *launches[1:]))
    assert _timing_record(unlogged)["faults"] == 4  # one launch uncounted (a late callback): the others' median
    mostly = LaunchGroup("k", "k", (64,), (64,), (*(_launch("k", (64,), (64,), i, 100) for i in range(2)), launches[2]))
    assert "faults" not in _timing_record(mostly)  # most launches uncounted: none for the group
    traced = KernelProfile("k", 1, {"ldst": 1.0, "first_store_pages": 700.0, "first_load_pages": 2.0})
    counted, note = with_timed_faults(traced, {"faults": 5})
    assert counted.metrics["first_store_pages"] == 5.0 and counted.metrics["first_load_pages"] == 0.0
    assert "5 page faults" in note and "702 pages no one wrote" in note and counted.notes[-1] == note
    # No fault where the trace found pages (an allocator that reused memory): the pages go, and the note says so.
    counted, note = with_timed_faults(traced, {"faults": 0})
    assert counted.metrics["first_store_pages"] == 0.0 and "0 page faults" in note
    assert with_timed_faults(traced, {}) == (traced, None)
    assert with_timed_faults(KernelProfile("k", 1, {"ldst": 1.0}), {"faults": 0})[1] is None


def test_an_nsys_that_cannot_make_a_report_says_so(multi_kernel, tmp_path, monkeypatch):
    """As on the H200 image (2026-11-26): nsys records a .qdstrm, its importer is missing, no report follows."""
    from perfcast.campaign.program import ProgramOptions, _time_program
    from perfcast.errors import ToolError

    fake = tmp_path / "bin" / "nsys"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nwhile [ \"$1\" != -o ]; do shift; done; touch \"$2.qdstrm\"\n"
                    "echo 'Importer error status: An unknown error occurred.' >&2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{__import__('os').environ['PATH']}")
    options = ProgramOptions((str(multi_kernel), "2048", "1"), tmp_path / "n.zip", timer="nsys")
    folder = WorkingFolder.for_archive(options.output)
    with pytest.raises(ToolError, match=r"wrote no report \(nsys says: Importer error\): only report.qdstrm"):
        _time_program(options, folder, {"kernels": {}, "notes": [], "timed_run": None}, lambda label, done: None)


def test_an_nsys_whose_importer_lacks_a_library_says_which(multi_kernel, tmp_path, monkeypatch):
    """As on the H100 image (2026-11-26): Nsight Compute's nsys has its importer in a sibling host folder, and the
    importer cannot load libdw.so.1; the error names the importer and the library."""
    from perfcast.campaign import cuda_launches
    from perfcast.campaign.program import ProgramOptions, _time_program
    from perfcast.errors import ToolError

    host = tmp_path / "host"
    nsys = host / "target-linux-x64" / "nsys"
    importer = host / "linux-desktop-glibc_2_11_3-x64" / "QdstrmImporter"
    for path in (nsys, importer):
        path.parent.mkdir(parents=True)
        path.write_text("#!/bin/sh\nwhile [ \"$1\" != -o ]; do shift; done; touch \"$2.qdstrm\"\n"
                        "echo 'Importer error status: An unknown error occurred.' >&2\n")
        path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{nsys.parent}:{__import__('os').environ['PATH']}")
    monkeypatch.setattr(cuda_launches, "missing_libraries", lambda program: ["libdw.so.1"])
    options = ProgramOptions((str(multi_kernel), "2048", "1"), tmp_path / "n.zip", timer="nsys")
    folder = WorkingFolder.for_archive(options.output)
    with pytest.raises(ToolError, match=rf"{importer} cannot load libdw.so.1: .*LD_LIBRARY_PATH"):
        _time_program(options, folder, {"kernels": {}, "notes": [], "timed_run": None}, lambda label, done: None)
    assert cuda_launches.find_qdstrm_importer(str(nsys)) == importer


def test_missing_libraries_reads_ldd(tmp_path, monkeypatch):
    from perfcast.campaign.cuda_launches import missing_libraries

    # ldd's report as on the H100 image for Nsight Compute's QdstrmImporter (2026-11-26), from a stand-in ldd.
    ldd = tmp_path / "ldd"
    ldd.write_text("#!/bin/sh\nprintf '\\tlinux-vdso.so.1 (0x00007ffc)\\n\\tlibdw.so.1 => not found\\n"
                   "\\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\\n'\n")
    ldd.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{__import__('os').environ['PATH']}")
    assert missing_libraries(Path(sys.executable)) == ["libdw.so.1"]
    ldd.write_text("#!/bin/sh\nexit 1\n")  # ldd fails: nothing is claimed missing
    assert missing_libraries(Path(sys.executable)) == []


def test_every_timer_reads_its_launches(multi_kernel, tmp_path, monkeypatch):
    """The registry's timers, each for real where it can run here: nsys through a stand-in that exports a trace."""
    from perfcast.campaign.program import TIMERS, ProgramOptions, _time_program

    fake = tmp_path / "bin" / "nsys"
    fake.parent.mkdir()
    trace = DATA / "nsys-cuda-gpu-trace.csv"
    # `nsys profile ... -o REPORT CMD` runs CMD; `nsys stats ... --output REPORT FILE` writes REPORT_cuda_gpu_trace.csv.
    fake.write_text("#!/bin/sh\nif [ \"$1\" = profile ]; then while [ \"$1\" != -o ]; do shift; done; "
                    "touch \"$2.nsys-rep\"; exit 0; fi\n"
                    "while [ \"$1\" != --output ]; do shift; done\n"
                    f"cp {trace} \"$2_cuda_gpu_trace.csv\"\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{__import__('os').environ['PATH']}")
    expected = {"opencl": {"scale", "axpy", "blur2d", "sum_task"},
                "nsys": {"triad", "sgemm_tiled"}}
    assert set(TIMERS) == set(expected)
    for timer in TIMERS:
        options = ProgramOptions((str(multi_kernel), "2048", "1"), tmp_path / f"{timer}.zip", timer=timer)
        folder = WorkingFolder.for_archive(options.output)
        manifest = {"kernels": {}, "notes": [], "timed_run": None}
        _time_program(options, folder, manifest, lambda label, done: None)
        assert set(manifest["kernels"]) >= expected[timer], timer
        assert manifest["timed_run"]["timer"] == timer


def test_a_programs_device_is_measured_device_runs_times_and_each_figure_is_the_best(tmp_path, monkeypatch):
    """--device-runs for a program: the bench runs after the program N times; device.yaml keeps each figure's best."""
    import itertools

    import perfcast.campaign.run as campaign_run
    from perfcast.campaign.program import ProgramOptions, _measure_device, _measure_device_again
    from perfcast.devices.catalog import load_device_file
    from perfcast.devices.schema import Device

    base = load_device_file(DEVICE_PROFILE)
    dram = base.memory_level("DRAM").bandwidth
    data = base.model_dump()
    for level in data["memory"]:
        if level["level"] == "DRAM":
            level["bandwidth"]["value"] = dram.value / 2
    slow = Device.model_validate(data)
    runs = itertools.cycle([slow, base, slow])

    def bench(options, progress):
        for done in (0.0, 0.5, 1.0):  # as perfcast bench reports its own progress
            progress("step", done)
        return next(runs)

    monkeypatch.setattr(campaign_run, "_bench", bench)
    folder = WorkingFolder.for_archive(tmp_path / "p.zip")
    folder.path.mkdir(parents=True)
    manifest = {"timed_run": {"devices": ["pthread"]}, "environment": None}
    seen = []
    options = ProgramOptions(("./app",), tmp_path / "p.zip", device_runs=3)
    _measure_device(options, folder, manifest, lambda label, done: seen.append(done))
    assert manifest["device_runs"] == 3 and all((folder.path / f"device-run-{i}.yaml").exists() for i in (1, 2, 3))
    kept = load_device_file(folder.path / "device.yaml").memory_level("DRAM").bandwidth
    assert kept.value == pytest.approx(dram.value) and "best of 3 runs" in kept.provenance.note
    assert seen == sorted(seen) and min(seen) == pytest.approx(0.1) and max(seen) == pytest.approx(0.4)
    gaps = [b - a for a, b in zip(seen, seen[1:])]
    assert max(gaps) <= 0.05 + 1e-9  # each run fills its own tenth: no jump between them
    # Interrupted after two of three runs: the campaign resumes with the device measured, and runs the third.
    again = WorkingFolder.for_archive(tmp_path / "r.zip")
    again.path.mkdir(parents=True)
    manifest = {"timed_run": {"devices": ["pthread"]}, "environment": None}
    _measure_device(ProgramOptions(("./app",), tmp_path / "r.zip", device_runs=2), again, manifest,
                    lambda label, done: None)
    assert manifest["device_runs"] == 2 and not (again.path / "device-run-3.yaml").exists()
    _measure_device_again(ProgramOptions(("./app",), tmp_path / "r.zip", device_runs=3), again, manifest,
                          lambda label, done: None)
    assert manifest["device_runs"] == 3 and (again.path / "device-run-3.yaml").exists()
    # With a given profile there is nothing to measure again.
    given = WorkingFolder.for_archive(tmp_path / "q.zip")
    given.path.mkdir(parents=True)
    manifest = {"timed_run": {"devices": ["pthread"]}, "environment": None}
    _measure_device(ProgramOptions(("./app",), tmp_path / "q.zip", device_profile=DEVICE_PROFILE, device_runs=3),
                    given, manifest, lambda label, done: None)
    assert manifest["device_runs"] == 1 and not (given.path / "device-run-2.yaml").exists()
