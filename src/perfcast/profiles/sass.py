"""What a CUDA kernel compiles to, per architecture: the SASS of special functions, for the projection (spec §4).

A kernel is compiled with `nvcc -cubin` for each architecture and disassembled with `cuobjdump -sass` (from the
CUDA toolkit or the PyPI wheel nvidia-cuda-cuobjdump). Its instructions are split into basic blocks (leaders:
the first instruction, every branch or call target, and the instruction after a branch, call, return or exit).
A block is a special-function block when it holds an `MUFU` (the special-function unit: ex2, lg2, sin, cos,
rsq, rcp) or belongs to a subroutine reached by `CALL` (the slow paths of division and square root). FLOP per
block count `FADD`/`FMUL`/`DADD`/`DMUL` as 1 and the fused forms as 2 (paired half precision twice that).

Without a profile the FLOP ratio target/source counts each block once (static). The method weights each block
by the threads that executed it on the source: given Nsight Compute's source page of the profiled run
(`perfcast.profiles.ncu_source`), `SassComparison.executed_flop_ratio` weighs each source block's FLOP by its
executions and scales the special-function blocks' share by their target/source FLOP, the others' by theirs.
The profiled SASS must be the compiled one: every opcode is compared, offset by offset.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from perfcast.errors import InputError, ToolError

__all__ = ["Block", "SassComparison", "basic_blocks", "compare_sass", "compile_cubin", "disassemble", "find_tool",
           "sass_functions"]

_LINE = re.compile(r"^\s*/\*(?P<address>[0-9a-f]{4,})\*/\s+(?P<text>[^;]*);")
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(?P<name>\S+)")
_TARGET = re.compile(r"\b(?:BRA|BSSY|CALL\.\S+|CALL|SSY|PBK|BRX|JMP|JCAL)\b[^;]*?\b0x(?P<target>[0-9a-f]+)\b")
_ENDS_BLOCK = ("BRA", "BRX", "JMP", "EXIT", "RET", "CALL", "BREAK", "KILL")
# FLOP per thread of each arithmetic opcode: fused forms 2, the paired half-precision forms twice that.
_FLOP = {"FADD": 1, "FMUL": 1, "FFMA": 2, "DADD": 1, "DMUL": 1, "DFMA": 2, "HADD2": 2, "HMUL2": 2, "HFMA2": 4}


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: address, predicate-free opcode (with modifiers), the whole text."""

    address: int
    opcode: str
    text: str

    @property
    def family(self) -> str:
        """Return the opcode without modifiers: 'FFMA.RM' -> 'FFMA'."""
        return self.opcode.split(".")[0]


@dataclass(frozen=True)
class Block:
    """A basic block: its instructions, whether it computes a special function, and its FLOP (FMA = 2)."""

    start: int
    instructions: tuple[Instruction, ...]
    special: bool

    @property
    def flop(self) -> int:
        """Return the FLOP of one execution of the block by one thread."""
        # HFMA2.MMA with zero operands is how the compiler moves a constant into a register: no arithmetic.
        return sum(_FLOP.get(i.family, 0) for i in self.instructions if not i.opcode.startswith("HFMA2.MMA"))


def find_tool(name: str) -> str:
    """Return the path of a CUDA tool (nvcc, cuobjdump, nvdisasm): on PATH, else in an installed NVIDIA wheel."""
    found = shutil.which(name)
    if found:
        return found
    for folder in sys.path:
        for candidate in Path(folder).glob(f"nvidia/*/bin/{name}"):
            if candidate.is_file():
                return str(candidate)
    hint = "the CUDA toolkit" if name == "nvcc" else f"pip install nvidia-cuda-{name}"
    raise ToolError(f"{name} is not installed: {hint}")


def compile_cubin(source: Path, arch: str, folder: Path, options: Sequence[str] = ()) -> Path:
    """Compile `source` for `arch` (e.g. sm_80) into a cubin in `folder` and return its path."""
    if not re.fullmatch(r"sm_\d{2,3}a?", arch):
        raise ToolError(f"architecture {arch!r}: expected sm_NN, e.g. sm_80")
    cubin = folder / f"{source.stem}.{arch}.cubin"
    done = subprocess.run([find_tool("nvcc"), "-cubin", f"-arch={arch}", *options, "-o", str(cubin), str(source)],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise ToolError(f"nvcc -arch={arch} failed on {source.name}: {done.stderr.strip()[-600:]}")
    return cubin


def disassemble(cubin: Path) -> str:
    """Return `cuobjdump -sass` of a cubin."""
    done = subprocess.run([find_tool("cuobjdump"), "-sass", str(cubin)], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise ToolError(f"cuobjdump -sass {cubin.name} failed: {done.stderr.strip()[-400:]}")
    return done.stdout


def sass_functions(text: str) -> dict[str, list[Instruction]]:
    """Return each function's instructions from `cuobjdump -sass` output."""
    functions: dict[str, list[Instruction]] = {}
    current: list[Instruction] | None = None
    for line in text.splitlines():
        function = _FUNCTION.match(line)
        if function:
            current = functions.setdefault(function["name"], [])
            continue
        match = _LINE.match(line)
        if match and current is not None:
            words = match["text"].split()
            if words and re.fullmatch(r"@!?U?P[0-9T]", words[0]):  # a predicate guards it
                words = words[1:]
            if words:
                current.append(Instruction(int(match["address"], 16), words[0], match["text"].strip()))
    return functions


def basic_blocks(instructions: Sequence[Instruction]) -> list[Block]:
    """Return the basic blocks of one function, each marked special or not."""
    if not instructions:
        return []
    leaders = {instructions[0].address}
    calls: set[int] = set()
    for index, instruction in enumerate(instructions):
        target = _TARGET.search(instruction.text)
        if target:
            leaders.add(int(target["target"], 16))
            if instruction.family == "CALL":
                calls.add(int(target["target"], 16))
        if instruction.family in _ENDS_BLOCK and index + 1 < len(instructions):
            leaders.add(instructions[index + 1].address)
    blocks: list[list[Instruction]] = []
    for instruction in instructions:
        if instruction.address in leaders or not blocks:
            blocks.append([])
        blocks[-1].append(instruction)
    subroutine_start = min(calls) if calls else None
    return [Block(b[0].address, tuple(b),
                  any(i.family == "MUFU" for i in b) or (subroutine_start is not None and b[0].address >= subroutine_start))
            for b in blocks]


@dataclass(frozen=True)
class SassComparison:
    """One kernel compiled for two architectures: FLOP in special-function blocks and elsewhere, and their ratio."""

    kernel: str
    source_arch: str
    target_arch: str
    special_source: int
    special_target: int
    other_source: int
    other_target: int
    special_blocks: tuple[int, int]  # how many blocks, source and target
    source_blocks: tuple[Block, ...] = ()

    @property
    def flop_ratio(self) -> float:
        """Return FLOP_t / FLOP_s with every block counted once (1.0 when the kernel has no FLOP)."""
        source = self.special_source + self.other_source
        return (self.special_target + self.other_target) / source if source else 1.0

    def executed_flop_ratio(self, executed: Mapping[int, tuple[str, float]]) -> float:
        """Return FLOP_t / FLOP_s with each source block weighted by its executions (offset -> (opcode, threads)).

        W_special and W_other are the FLOP the source executed in special-function blocks and elsewhere; each is
        scaled by its blocks' static target/source FLOP. Special blocks without FLOP on the source (a lone MUFU)
        contribute the target's special FLOP once per execution of such a block. Raises InputError where the
        profiled SASS is not the compiled one.
        """
        mismatched = [f"{i.address:#06x}: profiled {executed.get(i.address, ('nothing', 0.0))[0]}, compiled {i.opcode}"
                      for b in self.source_blocks for i in b.instructions
                      if i.address not in executed or executed[i.address][0] != i.opcode]
        if mismatched or not self.source_blocks:
            raise InputError(
                f"{self.kernel}: the profiled SASS is not what --sass compiles for {self.source_arch} "
                f"({len(mismatched)} instruction(s) differ, e.g. {'; '.join(mismatched[:3]) or 'no blocks'}): "
                "compile with the options the profiled binary was built with (--define), for the profiled GPU")
        flop = {True: 0.0, False: 0.0}
        runs = {True: 0.0, False: 0.0}
        for block in self.source_blocks:
            threads = executed[block.start][1]
            flop[block.special] += threads * block.flop
            runs[block.special] += threads
        source = flop[True] + flop[False]
        if source == 0:
            return 1.0
        other = flop[False] * (self.other_target / self.other_source if self.other_source else 1.0)
        if self.special_source:
            special = flop[True] * self.special_target / self.special_source
        else:
            special = self.special_target * runs[True] / max(self.special_blocks[0], 1)
        return (other + special) / source


def compare_sass(source: Path, source_arch: str, target_arch: str, folder: Path,
                 options: Sequence[str] = ()) -> list[SassComparison]:
    """Compile `source` for both architectures and compare every kernel's special-function FLOP."""
    sides = {}
    for arch in (source_arch, target_arch):
        sides[arch] = sass_functions(disassemble(compile_cubin(source, arch, folder, options)))
    comparisons = []
    for kernel in sorted(set(sides[source_arch]) & set(sides[target_arch])):
        blocks = {arch: basic_blocks(sides[arch][kernel]) for arch in (source_arch, target_arch)}

        def flop(arch: str, special: bool, blocks: dict[str, list[Block]] = blocks) -> int:
            return sum(b.flop for b in blocks[arch] if b.special == special)

        comparisons.append(SassComparison(
            kernel, source_arch, target_arch, flop(source_arch, True), flop(target_arch, True),
            flop(source_arch, False), flop(target_arch, False),
            (sum(b.special for b in blocks[source_arch]), sum(b.special for b in blocks[target_arch])),
            tuple(blocks[source_arch]),
        ))
    return comparisons
