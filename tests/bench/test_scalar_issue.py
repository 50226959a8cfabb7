"""The scalar-issue kernel's instructions per round, as Oclgrind counts them: the unit of the rate (§3.3)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast.bench.accelerator import SCALAR_INSTRUCTIONS
from perfcast.profiles.oclgrind import read_oclgrind

pytest.importorskip("pyopencl")
needs_oclgrind = pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind not installed")

SCRIPT = """
import numpy as np, pyopencl as cl
from perfcast.bench.accelerator import chain_defines
from perfcast.bench.accelerator import PER_ITEM
from perfcast.bench.cpu import SOURCE
source = SOURCE.with_suffix(".cl").read_text()
ctx = cl.create_some_context(False)
queue = cl.CommandQueue(ctx)
program = cl.Program(ctx, source).build(options=" ".join([*chain_defines(), f"-DPER_ITEM={PER_ITEM}", "-DCPU_RATES"]))
sink = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 16)
program.scalar_issue(queue, (16,), (1,), np.int32(ROUNDS), sink).wait()
"""


def _counted(tmp_path: Path, rounds: int) -> float:
    """Return the instructions Oclgrind counts per work-item of scalar_issue at `rounds` rounds, phis aside."""
    script = tmp_path / f"issue-{rounds}.py"
    script.write_text(SCRIPT.replace("ROUNDS", str(rounds)))
    env = {**os.environ, "PYOPENCL_NO_CACHE": "1", "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    done = subprocess.run(["oclgrind", "--inst-counts", sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    # The reader the issue floor reads (every lane of every instruction, phis aside), on Oclgrind's own output.
    kernel = read_oclgrind(done.stdout).kernel("scalar_issue")
    return 32 * kernel.metrics["inst_warp"] / 16


@needs_oclgrind
def test_oclgrind_counts_the_documented_instructions_per_round(tmp_path):
    # Two round counts apart: the prologue and epilogue cancel, the rounds' instructions remain.
    assert _counted(tmp_path, 100) - _counted(tmp_path, 50) == SCALAR_INSTRUCTIONS * 50
