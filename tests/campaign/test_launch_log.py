"""The OpenCL launch log for real: a multi-kernel C program of ours, run with the interposer, against what it prints."""

import subprocess
from collections import Counter
from pathlib import Path

import pytest

from perfcast.campaign.launch_log import (
    LaunchCounter,
    LaunchLogError,
    build_launch_logger,
    launch_environment,
    read_launch_logs,
)


def run_logged(program: Path, tmp_path: Path, *arguments: str) -> tuple[list[str], Path]:
    """Run the program with the launch log; return its stdout lines and the log prefix."""
    prefix = tmp_path / "log" / "launches"
    prefix.parent.mkdir()
    env = launch_environment(prefix, build_launch_logger())
    done = subprocess.run([str(program), *arguments], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines(), prefix


def _said(lines: list[str]) -> Counter:
    """Return the launches the program printed: (pid, name, global, local) -> count."""
    found: Counter = Counter()
    for line in lines:
        if line.startswith("launch "):
            _, pid, name, _dims, global_size, local = line.split()
            found[(int(pid), name, tuple(int(v) for v in global_size.split(",")),
                   None if local == "-" else tuple(int(v) for v in local.split(",")))] += 1
    return found


def test_every_launch_is_logged_with_its_ndrange_and_time(multi_kernel, tmp_path):
    lines, prefix = run_logged(multi_kernel, tmp_path, "4096", "3", "2")
    log = read_launch_logs(prefix)
    logged = Counter((x.pid, x.kernel, x.global_size, x.local_size) for x in log.launches)
    assert logged == _said(lines)
    assert len(log.launches) == 4 * 3 + 2 * 3  # four kernels per repetition, then two threads of three
    assert all(x.timed and x.duration > 0 for x in log.launches)
    assert all(x.build == "" for x in log.launches)  # each kernel's program, built without options
    assert log.unfinished == 0 and log.exited == log.processes
    # NULL local size (axpy), a task (one work-item), a 2-D NDRange with an offset (blur2d).
    axpy = next(x for x in log.launches if x.kernel == "axpy")
    assert axpy.local_size is None and axpy.work_items == 4096
    task = next(x for x in log.launches if x.kernel == "sum_task")
    assert task.global_size == (1,) and task.work_items == 1
    blur = next(x for x in log.launches if x.kernel == "blur2d")
    assert blur.global_size == (64, 32) and blur.offset == (0, 8) and blur.shape() == "64x32/8x8"
    # The launches the program timed itself (its own profiling queue and event) carry the same timestamps.
    own = [tuple(int(v) for v in line.split()[3:5]) for line in lines if line.startswith("timed ")]
    assert sorted(own) == sorted((x.start, x.end) for x in log.launches if x.kernel == "blur2d")
    # Three queues of the main thread and one per worker thread, all made profiling (even the 1.x one).
    assert len(log.queues) == 5 and not log.unprofiled_queues
    assert len({x.thread for x in log.launches}) == 3
    assert LaunchCounter(prefix).count() == len(log.launches)


def test_a_forked_program_logs_each_process_apart(multi_kernel, tmp_path):
    lines, prefix = run_logged(multi_kernel, tmp_path, "1024", "2", "0", "fork")
    log = read_launch_logs(prefix)
    assert len(log.processes) == 2
    said = _said(lines)
    assert {pid for pid, *_ in said} == set(log.processes)
    assert Counter((x.pid, x.kernel, x.global_size, x.local_size) for x in log.launches) == said


def test_without_the_variable_the_library_only_passes_calls_through(multi_kernel, tmp_path):
    env = launch_environment(tmp_path / "unused", build_launch_logger())
    del env["PERFCAST_LAUNCH_LOG"]
    done = subprocess.run([str(multi_kernel), "256", "1"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "launches" in done.stdout and not list(tmp_path.iterdir())


FIRST_TOUCH_PROGRAM = Path(__file__).parent.parent / "data" / "opencl" / "first_touch.py"


def test_each_launch_counts_the_page_faults_it_made(multi_kernel, tmp_path):
    """A fresh 16 MiB buffer filled: about its 4096 pages faulted, the same fill again: next to none."""
    pytest.importorskip("pyopencl")
    import sys

    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if thp.exists() and "[always]" in thp.read_text():
        pytest.skip("transparent huge pages always on: a fresh buffer faults once per 2 MiB, not per 4 KiB page")

    # A runtime's callbacks may come late on a busy machine: the log then says "unknown" (-1) for that launch
    # rather than an undercount, and the program is run again (up to three times) for a launch it could judge.
    logger = build_launch_logger()
    for attempt in range(3):
        prefix = tmp_path / f"log{attempt}" / "launches"
        prefix.parent.mkdir()
        done = subprocess.run([sys.executable, str(FIRST_TOUCH_PROGRAM), "4096"], env=launch_environment(prefix, logger),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        launches = read_launch_logs(prefix).launches
        assert [launch.kernel for launch in launches] == ["fill", "fill", "fill", "copy", "total"]
        fresh, again = launches[0].faults, launches[1].faults
        if fresh is not None and again is not None:
            break
    # A 16 MiB allocation in a fresh process is a new mapping (past glibc's first mmap threshold): every page
    # faults once; the same pages again do not. The counts are the process's, so a few of the host's may join.
    assert fresh is not None and 0.95 * 4096 <= fresh <= 1.2 * 4096
    assert again is not None and again < 0.05 * 4096


def test_a_late_running_callback_leaves_the_faults_unknown_not_undercounted(multi_kernel, tmp_path):
    """A CL_RUNNING callback that reads its start 200 ms late (the log's test hook): the faults are logged unknown."""
    pytest.importorskip("pyopencl")
    import sys

    prefix = tmp_path / "log" / "launches"
    prefix.parent.mkdir()
    env = {**launch_environment(prefix, build_launch_logger()), "PERFCAST_LAUNCH_LOG_LATE_US": "200000"}
    done = subprocess.run([sys.executable, str(FIRST_TOUCH_PROGRAM), "1024"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    launches = read_launch_logs(prefix).launches
    assert [launch.kernel for launch in launches] == ["fill", "fill", "fill", "copy", "total"]
    # PoCL calls back on a worker thread, which then joins the kernel late: the others' work-groups ran (and
    # faulted) before the count began, so no count is logged; without the hook each launch's is (the test above).
    assert [launch.faults for launch in launches] == [None] * 5


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_reading_a_log_keeps_whole_lines_only(tmp_path):
    prefix = tmp_path / "launches"
    _write(tmp_path / "launches.7", "#perfcast-launch-log\t1\t7\t1\n"
           "Q\t0x1\t0\t2\tdev\n"
           "L\t0\t0x1\t7\t1\t100\t-\t-\t1\t2\t10\t30\t0\tk\n"
           "X\t1\t0x1\t7\t1\t100\t10\t-\t-54\tk\n"
           "L\t2\t0x1\t7\t1\t10")  # cut mid-write by a kill
    log = read_launch_logs(prefix)
    assert [x.seq for x in log.launches] == [0, 1]
    first, failed = log.launches
    assert first.timed and first.duration == pytest.approx(20e-9)
    assert failed.enqueue_failed and failed.status == -54 and not failed.timed
    assert log.devices == ["dev"] and log.exited == ()  # no E line: the process did not end normally
    assert LaunchCounter(prefix).count() == 1


def test_foreign_and_future_logs_are_refused(tmp_path):
    _write(tmp_path / "a.1", "hello\n")
    with pytest.raises(LaunchLogError, match="not a perfcast launch log"):
        read_launch_logs(tmp_path / "a")
    _write(tmp_path / "b.1", "#perfcast-launch-log\t4\t1\t0\n")
    with pytest.raises(LaunchLogError, match="format"):
        read_launch_logs(tmp_path / "b")
    _write(tmp_path / "c.1", "#perfcast-launch-log\t1\t1\t0\nL\t0\tq\n")
    with pytest.raises(LaunchLogError, match="fields"):
        read_launch_logs(tmp_path / "c")


def test_the_counter_reads_only_what_was_added(tmp_path):
    prefix = tmp_path / "launches"
    path = tmp_path / "launches.3"
    _write(path, "#perfcast-launch-log\t1\t3\t1\nL\t0\tq\t3\t1\t1\t-\t-\t1\t2\t3\t4\t0\tk\n")
    counter = LaunchCounter(prefix)
    assert counter.count() == 1
    with path.open("a") as handle:
        handle.write("L\t1\tq\t3\t1\t1\t-\t-\t1\t2\t3\t4\t0\tk\nL\t2\tq")  # one whole line, one half
    assert counter.count() == 2
    with path.open("a") as handle:
        handle.write("\t3\t1\t1\t-\t-\t1\t2\t3\t4\t0\tk\n")
    assert counter.count() == 3


def test_a_reused_pid_appends_a_second_header_that_starts_a_new_process(tmp_path):
    _write(tmp_path / "launches.9", "#perfcast-launch-log\t1\t9\t1\nL\t0\tq\t9\t1\t8\t-\t-\t1\t2\t3\t4\t0\tk\nE\t1\t0\n"
           "#perfcast-launch-log\t1\t9\t1\nL\t0\tq\t9\t1\t8\t-\t-\t1\t2\t5\t9\t0\tk\n")
    log = read_launch_logs(tmp_path / "launches")
    assert len(log.launches) == 2 and [x.end for x in log.launches] == [4, 9]


def test_kernels_of_one_name_from_two_builds_are_told_apart(tmp_path):
    # SHOC's md builds one source twice (-DSINGLE_PRECISION, -DK_DOUBLE_PRECISION): one kernel name, two kernels.
    from perfcast.campaign.program import _timing_record, group_launches

    def line(seq, program, start):
        return f"L\t{seq}\tq\t5\t1\t64\t16\t-\t1\t2\t{start}\t{start + 100 * (1 + seq % 2)}\t0\t{program}\tmd\n"

    _write(tmp_path / "launches.5", "#perfcast-launch-log\t2\t5\t1\n"
           "P\t0xa\t-cl-mad-enable -DSINGLE_PRECISION\nP\t0xb\t-cl-mad-enable -DK_DOUBLE_PRECISION\n"
           + "".join(line(seq, "0xa" if seq % 2 == 0 else "0xb", 1000 * seq + 10) for seq in range(6))
           + "L\t6\tq\t5\t1\t64\t16\t-\t1\t2\t9000\t9050\t0\t0xc\tother\n")
    log = read_launch_logs(tmp_path / "launches")
    assert [x.build for x in log.launches[:2]] == ["-cl-mad-enable -DSINGLE_PRECISION",
                                                   "-cl-mad-enable -DK_DOUBLE_PRECISION"]
    assert log.launches[-1].build == ""  # a program whose options were never logged
    groups = {group.name: group for group in group_launches(log.launches)}
    assert set(groups) == {"md (-DSINGLE_PRECISION)", "md (-DK_DOUBLE_PRECISION)", "other"}
    single, double = groups["md (-DSINGLE_PRECISION)"], groups["md (-DK_DOUBLE_PRECISION)"]
    assert len(single.launches) == len(double.launches) == 3
    assert _timing_record(single)["median_s"] == pytest.approx(100e-9)
    assert _timing_record(double)["median_s"] == pytest.approx(200e-9)
    assert _timing_record(single)["build"] == "-cl-mad-enable -DSINGLE_PRECISION"
    assert "build" not in _timing_record(groups["other"])  # one build: grouped by name as before


def test_a_format_3_log_reads_each_launchs_faults(tmp_path):
    _write(tmp_path / "a.7", "#perfcast-launch-log\t3\t7\t1\n"
           "L\t0\t0xq\t7\t1\t64\t-\t-\t1\t2\t3\t9\t0\t12\t0xp\tk\n"
           "L\t1\t0xq\t7\t1\t64\t-\t-\t1\t2\t3\t9\t0\t-1\t0xp\tk\n"
           "X\t2\t0xq\t7\t1\t64\t-\t-\t-5\t0xp\tk\n")
    first, unknown, failed = read_launch_logs(tmp_path / "a").launches
    assert first.faults == 12 and first.duration == pytest.approx(6e-9)
    assert unknown.faults is None and failed.enqueue_failed and failed.faults is None
    _write(tmp_path / "b.7", "#perfcast-launch-log\t2\t7\t1\nL\t0\t0xq\t7\t1\t64\t-\t-\t1\t2\t3\t9\t0\t0xp\tk\n")
    assert read_launch_logs(tmp_path / "b").launches[0].faults is None  # format 2: not counted


def test_a_format_1_log_has_no_builds_and_groups_by_name(tmp_path):
    from perfcast.campaign.program import group_launches

    _write(tmp_path / "launches.3", "#perfcast-launch-log\t1\t3\t1\n"
           "L\t0\tq\t3\t1\t1\t-\t-\t1\t2\t3\t4\t0\tk\nL\t1\tq\t3\t1\t1\t-\t-\t1\t2\t5\t7\t0\tk\n")
    log = read_launch_logs(tmp_path / "launches")
    assert all(x.build is None for x in log.launches)
    assert [group.name for group in group_launches(log.launches)] == ["k"]


def test_build_tags_name_each_build_once():
    from perfcast.campaign.program import build_tags

    assert build_tags(["-cl-mad-enable -DA", "-cl-mad-enable -DB"]) == {"-cl-mad-enable -DA": "-DA",
                                                                         "-cl-mad-enable -DB": "-DB"}
    assert build_tags(["", "-DX"]) == {"": "no options", "-DX": "-DX"}
    assert build_tags(["-DX", "-DX -DY"]) == {"-DX": "common options", "-DX -DY": "-DY"}
    # The same options in another order read alike: numbered, with their options, so that names stay unique.
    tags = build_tags(["-DA -DB", "-DB -DA"])
    assert tags == {"-DA -DB": "build 1: -DA -DB", "-DB -DA": "build 2: -DB -DA"}
