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
    done = run_script(checkout, "t1", "campaign", "special", "bench", "conversions", "bogus")
    assert done.returncode == 0, done.stdout + done.stderr
    log = (out / "gpu-t1.log").read_text()
    for step in ("campaign", "special", "bench", "conversions"):
        assert f"== {step}" in log
    assert log.count("-- exit ") == 4 and "-- exit 0 " not in log
    assert "CuPy" in log and "ncu" in log  # the reasons, from perfcast itself
    assert "unknown step bogus" in log
    assert sorted(p.name for p in out.iterdir()) == ["gpu-t1.log"]  # a failed campaign leaves nothing to bring back


def test_the_deadline_skips_what_no_longer_fits(checkout):
    _, _, out = checkout
    done = run_script(checkout, "t2", "bench", budget="5")
    assert done.returncode == 0
    assert "skipped (no time left)" in (out / "gpu-t2.log").read_text()


def test_without_pip_the_wheels_are_unpacked(checkout):
    """A machine whose Python has no pip still gets the carried wheels: each is unpacked into /tmp/site."""
    import zipfile

    root, bin_dir, out = checkout
    (root / ".whl").mkdir()
    with zipfile.ZipFile(root / ".whl" / "perfcast_probe-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("perfcast_probe_marker.py", "VALUE = 1\n")
    nopip = bin_dir / "python3"  # a python3 whose `-m pip` fails, as on a machine without pip
    nopip.write_text(f'#!/bin/sh\n[ "$1 $2" = "-m pip" ] && exit 1\nexec "{sys.executable}" "$@"\n')
    done = run_script(checkout, "t3", "bogus")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unpacking the wheels" in (out / "gpu-t3.log").read_text()
    assert Path("/tmp/site/perfcast_probe_marker.py").exists()
    Path("/tmp/site/perfcast_probe_marker.py").unlink()


@pytest.mark.skipif(shutil.which("timeout") is None, reason="coreutils timeout is missing")
@pytest.mark.parametrize("budget, hub_s, short", [("60", "400", False), ("200", "60", False), ("30", "400", True)])
def test_the_hub_step_takes_the_spaces_named_and_ends_its_search_before_the_deadline(checkout, budget, hub_s, short):
    """HUB_KERNELS picks the spaces; the search gets HUB_S or the time left, whichever is shorter, less 25 s
    (half of it below 50 s), so it stops by itself and its cache is packed, rather than the deadline cutting it."""
    import re

    root, bin_dir, out = checkout
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OUT": str(out), "BUDGET": budget,
           "WORK": str(root.parent / "work"), "HUB_KERNELS": "dedispersion-milo", "HUB_S": hub_s}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(["bash", "scripts/gpu-measure.sh", "t4", "hub"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    log = (out / "gpu-t4.log").read_text()
    searches = re.findall(r"\((\d+) s left\): python3 scripts/hub-tune.py \S+ (\S+) (\d+) ", log)
    assert [kernel for _, kernel, _ in searches] == ["dedispersion-milo"]
    left, limit = int(searches[0][0]), int(searches[0][2])
    assert left <= min(int(budget), int(hub_s))
    if short:
        assert 1 <= limit <= left // 2 + 1  # a second may pass between the two clocks read
    else:
        assert left - 25 <= limit <= left - 24


def test_the_stream_step_says_where_babelstream_should_be_and_brings_nothing_back(checkout):
    _, _, out = checkout
    done = run_script(checkout, "t3", "stream")
    assert done.returncode == 0, done.stdout + done.stderr
    log = (out / "gpu-t3.log").read_text()
    assert "no .babelstream/src/main.cpp" in log and "stream step skipped" in log
    assert sorted(p.name for p in out.iterdir()) == ["gpu-t3.log"]
