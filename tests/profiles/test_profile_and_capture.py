"""Profile files (versioned), kernel lookup, scaling, and running the profilers: Oclgrind for real, ncu/nvprof faked."""

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from perfcast.errors import NotFound, ToolError
from perfcast.profiles import ProfileError, read_profile
from perfcast.profiles.capture import TOOLS, capture, ncu_arguments
from perfcast.profiles.metrics import ALL_METRICS, METRICS, ncu_metric_names, nvprof_metric_names
from perfcast.profiles.profile import KernelProfile, ProfileSet, ProfileSource, load_profile, scaling_differences

DATA = Path(__file__).parent.parent / "data" / "profiles"
PROGRAM = DATA / "opencl_program.py"
needs_oclgrind = pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind not installed (apt-get install oclgrind)")


def test_save_and_load_round_trip(tmp_path):
    profile = read_profile(DATA / "ncu-raw-constructed.csv")
    path = profile.save(tmp_path / "p.yaml")
    again = load_profile(path)
    assert again.kernels == profile.kernels
    assert again.source == profile.source
    assert read_profile(path).kernels == profile.kernels  # sniffed as perfcast's own format


def test_other_versions_are_refused(tmp_path):
    path = read_profile(DATA / "ncu-raw-constructed.csv").save(tmp_path / "p.yaml")
    path.write_text(path.read_text().replace("version: 1", "version: 7"))
    with pytest.raises(ProfileError, match="profile version 7; this perfcast reads version 1"):
        load_profile(path)


def test_malformed_profile_is_an_input_error(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("format: perfcast-profile\nversion: 1\nsource: {tool: x}\nkernels: [{name: k}]\n")
    with pytest.raises(ProfileError, match="malformed profile"):
        load_profile(path)


def test_kernel_lookup():
    profile = read_profile(DATA / "ncu-raw-constructed.csv")
    assert profile.kernel("triad(float*, const float*, const float*, float)").name.startswith("triad")
    assert profile.kernel("dgemm_naive").launches == 1
    with pytest.raises(NotFound, match="no kernel 'sgemm'.*it has: triad"):
        profile.kernel("sgemm")
    with pytest.raises(NotFound, match="matches several"):
        profile.kernel("const")


def test_duplicate_kernels_and_empty_profiles_are_refused():
    kernel = KernelProfile("k", 1, {"fp32": 1.0})
    with pytest.raises(ProfileError, match="listed twice"):
        ProfileSet(ProfileSource("x"), (kernel, kernel))
    with pytest.raises(ProfileError, match="no kernel"):
        ProfileSet(ProfileSource("x"), ())


def test_scaling_compares_per_work_item():
    small = KernelProfile("k", 1, {"fp32": 100.0, "int": 50.0}, work_items=100)
    large = KernelProfile("k", 2, {"fp32": 2000.0, "int": 1010.0}, work_items=1000)
    differences = scaling_differences(small, large)
    assert differences["fp32"] == 0
    assert differences["int"] == pytest.approx(0.01 / 1.01)
    scaled = small.scaled(10, work_items=1000)
    assert scaled.metrics["fp32"] == 1000 and "scaled by 10" in scaled.notes[-1]
    with pytest.raises(ProfileError):
        scaling_differences(small, KernelProfile("k", 1, {}))


def test_metric_lists_cover_the_model():
    assert len(ncu_metric_names()) == len(ALL_METRICS) + 1
    assert "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in ncu_metric_names()
    assert "gpu__time_duration.sum" in ncu_metric_names()
    assert {"flop_count_sp_fma", "flop_count_dp_fma", "inst_compute_ld_st", "inst_executed", "inst_fp_32",
            "inst_fp_64", "inst_integer", "dram_read_transactions", "dram_write_transactions",
            "flop_count_sp_add", "flop_count_dp_mul"} <= set(nvprof_metric_names())
    arguments = ncu_arguments(Path("raw.csv"))
    assert arguments[:8] == ["--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none", "--metrics"]


def test_docs_metrics_names_every_metric():
    doc = (Path(__file__).parents[2] / "docs" / "metrics.md").read_text()
    for spec in METRICS:
        for name in (spec.symbol, spec.nvprof, spec.ncu[0][0]):
            assert name in doc, name
    for spec in ALL_METRICS:
        assert spec.ncu[0][0] in doc and f"`{spec.name}`" in doc, spec.name


# ------------------------------------------------------------------ running the tools

def _fake_tool(directory: Path, name: str, output: Path, version: str) -> None:
    """Write a stand-in for a profiler: prints its version, or copies `output` to the --log-file it is given."""
    script = directory / name
    script.write_text(f"""#!{sys.executable}
import shutil, sys
args = sys.argv[1:]
if args == ["--version"]:
    print({version!r})
    sys.exit(0)
log = args[args.index("--log-file") + 1]
shutil.copyfile({str(output)!r}, log)
with open(log + ".args", "w") as handle:
    handle.write("\\n".join(args))
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.mark.parametrize(("tool", "sample", "version", "kernel"), [
    ("ncu", "ncu-raw-constructed.csv", "NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2025.3.1.0", "triad"),
    ("nvprof", "nvprof-metrics-constructed.csv", "nvprof: NVIDIA (R) Cuda command line profiler\nRelease version 10.2",
     "saxpy"),
])
def test_capture_with_a_fake_tool(tmp_path, monkeypatch, tool, sample, version, kernel):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_tool(bin_dir, tool, DATA / sample, version)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = capture(tool, ["./app", "--size", "1024"], tmp_path / "app.yaml")
    assert result.raw == tmp_path / f"app.{tool}.txt" and result.raw.exists()
    args = Path(str(result.raw) + ".args").read_text().splitlines()
    assert args[-3:] == ["./app", "--size", "1024"]
    profile = load_profile(tmp_path / "app.yaml")
    assert profile.kernel(kernel).counts()
    assert profile.source.command == "./app --size 1024" and profile.source.date
    assert profile.source.version in ("2025.3.1.0", "10.2")


# What ncu 2025 writes to its --log-file when the counters are kept to administrators (it may exit with 0).
NCU_PERMISSION_LOG = """==PROF== Connected to process 4242 (/usr/bin/python3.12)
==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the \
target device 0. For instructions on enabling permissions and to get more information see \
https://developer.nvidia.com/ERR_NVGPUCTRPERM
==PROF== Disconnected from process 4242
==WARNING== No kernels were profiled.
""".replace("\\\n", "")


@pytest.mark.parametrize("capture_source", [False, True])
def test_ncu_without_counter_permission_says_how_to_get_it(tmp_path, monkeypatch, capture_source):
    from perfcast.profiles.capture import capture_ncu_source

    log = tmp_path / "denied.txt"
    log.write_text(NCU_PERMISSION_LOG)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_tool(bin_dir, "ncu", log, "Version 2025.3.1.0")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(ToolError, match="restricted to administrators.*NVreg_RestrictProfilingToAdminUsers=0"):
        if capture_source:
            capture_ncu_source(["./app"], tmp_path / "p.yaml")
        else:
            capture("ncu", ["./app"], tmp_path / "p.yaml")
    assert not (tmp_path / "p.yaml").exists()


def test_an_ncu_failure_quotes_its_own_errors(tmp_path, monkeypatch):
    log = tmp_path / "failed.txt"
    log.write_text("==PROF== Connected to process 7\n==ERROR== Failed to profile \"triad\" in process 7\n"
                   "==ERROR== An error was reported by the driver\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_tool(bin_dir, "ncu", log, "Version 2025.3.1.0")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(ToolError) as raised:
        capture("ncu", ["./app"], tmp_path / "p.yaml")
    message = str(raised.value)
    assert message.count('==ERROR== Failed to profile "triad" in process 7') == 1  # quoted once, by the reader
    assert "An error was reported by the driver" in message and message.endswith(f"(ncu's log: {tmp_path / 'p.ncu.txt'})")

    log.write_text("==ERROR== The application returned an error code (1).\n")
    _fake_tool(bin_dir, "ncu", log, "Version 2025.3.1.0")
    bin_dir.joinpath("ncu").write_text(bin_dir.joinpath("ncu").read_text() + "sys.exit(1)\n")
    with pytest.raises(ToolError, match=r"exited with status 1.*ncu said: ==ERROR== The application returned an error "
                                        r"code \(1\)\. \(ncu's log"):
        capture("ncu", ["./app"], tmp_path / "p.yaml")


def test_capture_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolError, match="ncu is not on PATH"):
        capture("ncu", ["./app"], tmp_path / "p.yaml")
    with pytest.raises(ToolError, match="unknown profiler 'vtune'"):
        capture("vtune", ["./app"], tmp_path / "p.yaml")
    with pytest.raises(ToolError, match="give the program"):
        capture("ncu", [], tmp_path / "p.yaml")
    assert set(TOOLS) == {"ncu", "nvprof", "oclgrind"}


@needs_oclgrind
def test_oclgrind_end_to_end(tmp_path):
    result = capture("oclgrind", [sys.executable, str(PROGRAM), "128"], tmp_path / "small.yaml")
    profile = result.profile
    assert result.extra and result.extra[0].suffix == ".ll"  # the IR was dumped and kept
    assert {k.name for k in profile.kernels} == {"saxpy", "dexp", "hash"}
    dexp = profile.kernel("dexp")
    assert dexp.metrics["fp64"] == 128 * 10 and not dexp.notes  # precision from the IR, no guess
    assert profile.source.version == "21.10" or profile.source.version


@needs_oclgrind
def test_oclgrind_counts_scale_with_the_work_items(tmp_path):
    """The basis of profiling at a reduced NDRange: per work-item, two sizes agree within 1 %."""
    small = capture("oclgrind", [sys.executable, str(PROGRAM), "128"], tmp_path / "small.yaml").profile
    large = capture("oclgrind", [sys.executable, str(PROGRAM), "1024"], tmp_path / "large.yaml").profile
    for name in ("saxpy", "dexp", "hash"):
        a = KernelProfile(name, small.kernel(name).launches, small.kernel(name).metrics, work_items=128)
        b = KernelProfile(name, large.kernel(name).launches, large.kernel(name).metrics, work_items=1024)
        worst = max(scaling_differences(a, b).values())
        assert worst <= 0.01, (name, scaling_differences(a, b))


@needs_oclgrind
def test_oclgrind_program_failure_keeps_the_output(tmp_path):
    with pytest.raises(ToolError, match="exited with status"):
        capture("oclgrind", [sys.executable, str(PROGRAM), "not-a-number"], tmp_path / "bad.yaml")
    assert (tmp_path / "bad.oclgrind.txt").exists()


def test_two_oclgrind_captures_take_turns_at_the_shared_ir_folder(tmp_path, monkeypatch):
    """Oclgrind names its dumped IR itself: a second capture waits for the first instead of taking its files."""
    import threading

    import perfcast.profiles.capture as capture_module

    monkeypatch.setattr(capture_module, "OCLGRIND_IR_DIR", tmp_path)
    order: list[str] = []
    waited = threading.Event()
    with capture_module.oclgrind_ir_turn() as first:
        (tmp_path / "oclgrind_A.ll").write_text("first run's IR")

        def second_capture() -> None:
            with capture_module.oclgrind_ir_turn(waited.set) as mark:
                order.append("second")
                assert capture_module.collect_oclgrind_ir(mark, tmp_path / "second") == []

        thread = threading.Thread(target=second_capture)
        thread.start()
        assert waited.wait(5.0)  # it had to wait: the first holds the turn
        assert [p.name for p in capture_module.collect_oclgrind_ir(first, tmp_path / "first")] == ["oclgrind_A.ll"]
        order.append("first")
    thread.join(5.0)
    assert order == ["first", "second"]


def test_a_profile_of_many_kernels_is_built_in_linear_time():
    """50 000 kernels: a duplicate check by list.count took minutes (1.25e9 comparisons); a Counter, milliseconds."""
    import time

    kernels = tuple(KernelProfile(f"k{i}", 1, {"fp32": 1.0}) for i in range(50_000))
    started = time.perf_counter()
    ProfileSet(ProfileSource("test"), kernels)
    assert time.perf_counter() - started < 5.0
