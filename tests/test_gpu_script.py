"""scripts/gpu-measure.sh, the one command a GPU call runs, checked here where there is no GPU: every step
runs, fails at once without CuPy and ncu, and says so in the log; nothing but the log comes back."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "src").symlink_to(ROOT / "src")
    (root / "scripts").symlink_to(ROOT / "scripts")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python3"  # a new file, never written through a link to an interpreter
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    return root, bin_dir, out


def run_script(checkout, *args, budget="60"):
    root, bin_dir, out = checkout
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OUT": str(out), "BUDGET": budget,
           "WORK": str(root.parent / "work")}
    env.pop("PYTHONPATH", None)
    return subprocess.run(["bash", "scripts/gpu-measure.sh", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.skipif(shutil.which("timeout") is None, reason="coreutils timeout is missing")
def test_every_step_runs_and_says_why_it_failed(checkout, monkeypatch):
    if shutil.which("ncu"):
        pytest.skip("ncu is installed: the steps would measure for real")
    _, _, out = checkout
    done = run_script(checkout, "t1", "campaign", "special", "bench", "bogus")
    assert done.returncode == 0, done.stdout + done.stderr
    log = (out / "gpu-t1.log").read_text()
    for step in ("campaign", "special", "bench"):
        assert f"== {step}" in log
    assert log.count("-- exit ") == 3 and "-- exit 0 " not in log
    assert "CuPy" in log and "ncu" in log  # the reasons, from perfcast itself
    assert "unknown step bogus" in log
    assert sorted(p.name for p in out.iterdir()) == ["gpu-t1.log"]  # a failed campaign leaves nothing to bring back


def test_the_deadline_skips_what_no_longer_fits(checkout):
    _, _, out = checkout
    done = run_script(checkout, "t2", "bench", budget="5")
    assert done.returncode == 0
    assert "skipped (no time left)" in (out / "gpu-t2.log").read_text()
