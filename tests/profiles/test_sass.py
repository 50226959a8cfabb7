"""SASS comparison of special functions (spec §4): block splitting on a recorded disassembly, and for real with nvcc."""

import shutil
from pathlib import Path

import pytest

from perfcast.errors import ToolError
from perfcast.profiles.sass import basic_blocks, compare_sass, find_tool, sass_functions

DATA = Path(__file__).parent.parent / "data" / "sass"


def test_recorded_sass_splits_into_blocks():
    """special.sm_80.sass: `cuobjdump -sass` of special.cu compiled by nvcc 13.0 for sm_80."""
    functions = sass_functions((DATA / "special.sm_80.sass").read_text())
    assert list(functions) == ["special"]
    instructions = functions["special"]
    assert instructions[0].address == 0 and instructions[0].opcode == "IMAD.MOV.U32"
    blocks = basic_blocks(instructions)
    assert sum(len(b.instructions) for b in blocks) == len(instructions)
    assert blocks[0].instructions[-1].opcode == "EXIT"  # '@P0 EXIT' ends the first block, its predicate dropped
    starts = {b.start for b in blocks}
    for instruction in instructions:  # every branch target starts a block
        if instruction.family == "BRA":
            assert int(instruction.text.split("0x")[-1], 16) in starts
    special = [b for b in blocks if b.special]
    calls = [int(i.text.split("0x")[-1], 16) for i in instructions if i.family == "CALL"]
    assert calls and special  # the division's slow path is a subroutine
    assert all(any(i.family == "MUFU" for i in b.instructions) or b.start >= min(calls) for b in special)
    assert any(b.start == min(calls) for b in special)
    assert sum(b.flop for b in blocks) > 0


@pytest.mark.needs_cuda_tools
@pytest.mark.parametrize(("source", "target"), [("sm_75", "sm_80"), ("sm_80", "sm_90"), ("sm_75", "sm_90")])
def test_special_functions_for_each_pair_of_architectures(tmp_path, source, target):
    (found,) = compare_sass(DATA / "special.cu", source, target, tmp_path)
    assert found.kernel == "special"
    assert found.special_source > 0 and found.special_target > 0  # exp, log, sin, sqrt, division
    assert found.special_blocks[0] > 1
    assert 0.5 < found.flop_ratio < 2


@pytest.mark.needs_cuda_tools
def test_a_kernel_without_special_functions(tmp_path):
    saxpy = tmp_path / "saxpy.cu"
    saxpy.write_text('extern "C" __global__ void saxpy(float *y, const float *x, float a)\n'
                     "{ int i = blockIdx.x * blockDim.x + threadIdx.x; y[i] = a * x[i] + y[i]; }\n")
    (found,) = compare_sass(saxpy, "sm_80", "sm_90", tmp_path)
    assert (found.special_source, found.special_target) == (0, 0)
    assert found.other_source == found.other_target == 2  # one FFMA
    assert found.flop_ratio == 1.0


def test_bad_architecture_and_missing_tool(tmp_path, monkeypatch):
    from perfcast.profiles.sass import compile_cubin

    with pytest.raises(ToolError, match="expected sm_NN"):
        compile_cubin(DATA / "special.cu", "volta", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr("sys.path", [str(tmp_path)])
    with pytest.raises(ToolError, match="pip install nvidia-cuda-nvdisasm"):
        find_tool("nvdisasm")
    assert shutil.which("nvdisasm") is None


@pytest.mark.needs_cuda_tools
def test_command_line(tmp_path):
    import json

    from typer.testing import CliRunner

    from perfcast.cli import app

    result = CliRunner().invoke(app, ["sass", str(DATA / "special.cu"), "--from", "sm_80", "--to", "sm_90", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    assert row["kernel"] == "special" and row["flop_ratio"] > 0
    missing = CliRunner().invoke(app, ["sass", str(tmp_path / "none.cu"), "--from", "sm_80", "--to", "sm_90"])
    assert missing.exit_code == 2 and "no such file" in missing.output
