"""scripts/polybench_gpu_programs.py: PolyBench/GPU's programs built at compile-time sizes, listed as campaign programs."""

import shutil
import subprocess

import pytest


@pytest.fixture(scope="module")
def polybench(load_script):
    return load_script("polybench_gpu_programs")


def test_each_program_is_profiled_at_two_sizes_below_its_timed_one_with_a_declared_exponent_per_kernel(polybench):
    for program in polybench.programs():
        small, large = program.profiled
        assert small.keys() == large.keys() == program.timed.keys(), program.name
        # Sizes (not time steps) grow 1.5x or more from one profile to the next, so the campaign checks each kernel's
        # scaling and carries its reuse distances on, and stay below the timed run's.
        sizes = [name for name in program.timed if name not in ("TSTEPS", "TMAX")]
        assert all(1.5 * small[n] <= large[n] < program.timed[n] for n in sizes), program.name
        assert all(p in (1, 1.5, 2, 3) for p in program.scaling.values()), program.name
    names = [p.name for p in polybench.programs()]
    assert len(names) == len(set(names))


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("git") is None, reason="needs gcc and git")
def test_a_program_is_built_once_per_size_and_listed_with_its_scaling(polybench, tmp_path, monkeypatch):
    # A miniature of the suite's layout in a git repository: one program whose size is a macro, printed by it.
    repo = tmp_path / "repo"
    (repo / "OpenCL/utilities").mkdir(parents=True)
    (repo / "OpenCL/utilities/polybench.h").write_text("#include <stdio.h>\n")
    program = repo / "OpenCL/linear-algebra/kernels/tiny"
    program.mkdir(parents=True)
    (program / "tiny.c").write_text('#include <polybench.h>\nint main(void) { printf("%d %d\\n", N, RUN_ON_CPU); '
                                    "return 0; }\n")
    (program / "tiny.cl").write_text("__kernel void tiny_kernel(void) {}\n")
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"]):
        subprocess.run(["git", *command], cwd=repo, check=True)
    tiny = polybench.Program("tiny", "linear-algebra/kernels/tiny", "tiny", {"N": 64}, ({"N": 8}, {"N": 16}),
                             {"tiny_kernel": 2}, "A test program.")
    monkeypatch.setattr(polybench, "programs", lambda: [tiny])
    # The OpenCL library may be missing here: the miniature needs none.
    monkeypatch.setattr(polybench, "compile_cmd", lambda cmd, cwd, log: subprocess.run(
        [c for c in cmd if c != "-lOpenCL"], cwd=cwd).returncode == 0)
    (entry,) = polybench.build(repo / ".git", tmp_path / "out", None)
    assert entry["command"] == ["./tiny_64"] and entry["profile_commands"] == [["./tiny_8"], ["./tiny_16"]]
    assert entry["scaling"] == {"tiny_kernel": 2} and entry["suite"] == "polybench-gpu"
    ran = [subprocess.run(c, cwd=entry["cwd"], capture_output=True, text=True, check=True).stdout.strip()
           for c in (entry["command"], *entry["profile_commands"])]
    assert ran == ["64 0", "8 0", "16 0"]  # each size compiled in, the suite's own CPU reference (RUN_ON_CPU) off
