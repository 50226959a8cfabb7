"""The in-core cycles of a kernel's inner loops on a CPU, from the code the CPU runs (docs/models.md, §3.5).

Three readings are combined:

* Oclgrind's executions of each basic block, with the source lines of its instructions (the plugin
  `oclgrind_blocks.cpp`), over one work-group doing the timed work per work-item;
* the kernel PoCL compiled, built with `-g`: its innermost loops (a loop head and its last backward jump, with no
  other loop inside and none overlapping it without nesting) and the source lines of their instructions (its debug line
  table), read by objdump from the function `_pocl_kernel_NAME`, the one the line table covers;
* llvm-mca's cycles per iteration of each loop's body on the CPU PoCL compiled for: its steady state, so the
  dependencies one iteration carries to the next are in it, beside the ports alone (its block throughput).

A loop runs the IR block that shares most source lines with it (at least half of the block's). Where that
block runs more than once a work-item, the loop is an inner loop of the source, and it costs

    cycles a work-item = executions a work-item / unroll x cycles an iteration / copies

`unroll`: the median, over the block's lines, of how many separate runs of the line the body holds (the
compiler unrolled the loop that many times); `copies`: how many loops of the function run the same block with
the same instructions (the compiler unrolled the loop over work-items around it). Where the work-item loop around
the copies is found (`work_item_loop`), its code is laid out straight, each copy at its iterations a work-item,
and llvm-mca's cycles for it over the copies stand instead (`laid_out_cycles`): the core's window overlaps as many
consecutive work-items' chains as their code lets it. Elsewhere the copies are taken to overlap, that many
work-items' chains in flight at once (a heuristic). Each block is priced once, by the smallest loop that runs
it (a larger one is an unrolled remainder), and `copies` counts the loops with that one's instructions. A loop
over the work-items themselves (its block runs once a work-item or less) is left out: §3's throughput and the
issue floor price it; so is a loop that runs vectors of work-items (256- or 512-bit registers, gathers,
scatters: PoCL vectorised the work-item loop of a region of it), whose iterations the block counts do not give.
The readers are pure; `objdump_function` (`disassembly`), `debug_lines`, `mca_cycles`, `llvm_cpus` and
`analyse_pocl_kernels` call the tools.
"""

from __future__ import annotations

import bisect
import math
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from perfcast.errors import ToolError
from perfcast.profiles.profile import ProfileError

__all__ = ["BLOCKS_PLUGIN_SOURCE", "Block", "INNER", "InCore", "Loop", "LoopCost", "PoclReading",
           "analyse_pocl_kernels", "code_precision", "compiled_fp_lanes", "debug_lines", "disassembly",
           "fp_arithmetic_lanes", "function_code", "group_items", "innermost_loops", "integer_divides", "is_padding",
           "kernel_incore", "listed_functions", "llvm_cpus", "llvm_host_cpu", "loop_at", "loop_ranges", "mca_cycles", "mca_tool",
           "masked_memory", "modelled_core", "objdump_function", "pocl_llvm_cpu", "read_blocks", "unroll_factor", "with_lines",
           "WorkItemLoop", "laid_out_cycles", "work_item_loop", "work_item_trace"]

BLOCKS_PLUGIN_SOURCE = Path(__file__).with_name("oclgrind_blocks.cpp")
INNER = 1.01  # executions a work-item above which a loop is an inner one (a loop's own line counts its entries too)
MCA_ITERATIONS = 500  # iterations llvm-mca simulates: enough for a steady state of any loop body seen here
# Instructions a work-item's code laid out straight may have for llvm-mca (`laid_out_cycles`): several times the
# window of the cores LLVM models (224-512 instructions), so that longer ones are carried on along a line.
TRACE_LIMIT = 2048
MCA_INSTRUCTIONS = 250_000  # instructions llvm-mca simulates for a work-item's code (at least 10 of its iterations)
_SKIPPED = ("nop", "data16", "cs nop", "xchg   %ax,%ax")  # alignment padding inside a loop: never executed
_JUMP = re.compile(r"^j\w+\s+([0-9a-f]+)$")


@dataclass(frozen=True)
class Block:
    """One basic block of a kernel: function, name, executions (over the profiled launch), instructions, lines."""

    function: str
    name: str
    executions: int
    lines: frozenset[int]
    instructions: int = 0  # the block's own, as Oclgrind counts them (phis and debug intrinsics aside)


@dataclass(frozen=True)
class Loop:
    """One innermost loop of compiled code: address range, body (closing jump left out), its lines, each body line."""

    start: int
    end: int
    body: tuple[str, ...]
    lines: frozenset[int]
    sequence: tuple[int, ...] = ()  # the source line of each instruction of the body (0 left out), in order


@dataclass(frozen=True)
class LoopCost:
    """A loop with what it costs: llvm-mca's cycles an iteration (steady state, ports alone) and its share."""

    lines: tuple[int, ...]
    instructions: int
    cycles: float  # an iteration, steady state
    ports: float  # an iteration, the ports alone
    executions_per_item: float | None  # of the IR block it runs, a work-item; None: no block matched
    unroll: int
    copies: int
    lanes: int = 1  # source iterations a vector iteration of the body runs (gcc's vectorised loops)
    flattened: int = 0  # copies of an inner loop laid into this body, the loop around it (0: none)
    # llvm-mca's cycles a work-item of the work-item loop around this loop, each copy of it laid out at its
    # iterations (`work_item_trace`): the core's window overlaps consecutive work-items' chains. None: not laid out.
    item_cycles: float | None = None

    @property
    def inner(self) -> bool:
        """Return whether the loop runs an inner loop of the source (more than once a work-item, or laid in it)."""
        return self.flattened > 0 or (self.executions_per_item is not None and self.executions_per_item > INNER)

    @property
    def cycles_per_item(self) -> float:
        """Return the loop's cycles a work-item (0 for a loop over work-items); its work-item's code's where laid out."""
        if not self.inner:
            return 0.0
        if self.item_cycles is not None:
            return self.item_cycles
        assert self.executions_per_item is not None
        return self.executions_per_item / (self.unroll * self.lanes) * self.cycles / self.copies


@dataclass(frozen=True)
class InCore:
    """A kernel's in-core cycles a work-item on one CPU (llvm-mca's name for it), and the loops they come from.

    `instructions_per_item`: Oclgrind's instructions a work-item of the same launch, so that the cycles can be
    carried to another size as the instruction counts are (a program's groups).
    """

    cpu: str
    cycles_per_item: float
    loops: tuple[LoopCost, ...]
    instructions_per_item: float = 0.0
    fp_lanes: float | None = None  # `compiled_fp_lanes` of the kernel's matched loops; None: no arithmetic in them
    masked: bool = False  # a loop of it loads or stores with AVX's masked moves (`masked_memory`)
    divides: int | None = None  # integer divide instructions in the code it compiled into; None: not read
    # llvm-mca's cycles a work-item of the kernel's whole code where that is one loop over the work-items, read
    # with its counts (gcc's code: `perfcast.profiles.incore_gcc`); None: not read, or not the whole code
    item_cycles: float | None = None

    def as_record(self) -> dict[str, object]:
        """Return the estimate as a manifest keeps it (JSON types)."""
        return {"cpu": self.cpu, "cycles_per_item": self.cycles_per_item,
                "instructions_per_item": self.instructions_per_item, "fp_lanes": self.fp_lanes, "masked": self.masked,
                "divides": self.divides, "item_cycles": self.item_cycles,
                "loops": [{"lines": list(c.lines), "instructions": c.instructions, "cycles": c.cycles,
                           "ports": c.ports, "executions_per_item": c.executions_per_item, "unroll": c.unroll,
                           "copies": c.copies, "lanes": c.lanes, "flattened": c.flattened, "inner": c.inner,
                           "item_cycles": c.item_cycles}
                          for c in self.loops]}


def read_blocks(text: str) -> dict[str, list[Block]]:
    """Return each kernel's blocks from the plugin's output (executions summed over the kernel's launches)."""
    summed: dict[tuple[str, str, str], int] = Counter()
    shape: dict[tuple[str, str, str], tuple[int, frozenset[int]]] = {}
    for number, row in enumerate(text.splitlines(), 1):
        if not row.strip():
            continue
        fields = row.split("\t")
        if len(fields) != 6 or not fields[3].isdigit() or not fields[4].isdigit():
            raise ProfileError(f"block counts, line {number}: expected kernel, function, block, executions, "
                               f"instructions and lines separated by tabs, not {row[:80]!r}")
        key = (fields[0], fields[1], fields[2])
        summed[key] += int(fields[3])
        shape[key] = (int(fields[4]), frozenset(int(v) for v in fields[5].split(",") if v))
    found: dict[str, list[Block]] = {}
    for (kernel, function, name), executions in summed.items():
        instructions, lines = shape[(kernel, function, name)]
        found.setdefault(kernel, []).append(Block(function, name, executions, lines, instructions))
    return found


def group_items(kernel: str, blocks: Sequence[Block]) -> int | None:
    """Return the work-items of the profiled launch: the executions of the kernel's entry block (None: not found)."""
    entries = [b.executions for b in blocks if b.function == kernel and b.name == "entry"]
    return max(entries) if entries else None


def innermost_loops(instructions: Sequence[tuple[int, str, int]]) -> list[Loop]:
    """Return the innermost loops of a function given as (address, instruction, source line; 0: none) in order.

    A loop is a loop head (the target of backward jumps) and the range up to its last backward jump to it (a loop
    whose body branches may close in several places); innermost: no other loop's range lies inside it. Ranges may
    overlap without nesting: a rotated loop's latch can sit inside the next loop's range, and a chain of jumps
    into an unrolled remainder looks like several overlapping loops (`kernel_incore` prices a block by its
    smallest loop, so such a chain does not price one).
    """
    ranges = loop_ranges(instructions)
    inner = [(s, e) for s, e in ranges if not any(s <= s2 and e2 <= e and (s2, e2) != (s, e) for s2, e2 in ranges)]
    return [loop_at(instructions, start, end) for start, end in inner]


def loop_ranges(instructions: Sequence[tuple[int, str, int]]) -> list[tuple[int, int]]:
    """Return every loop of a function as (head, last backward jump to it) addresses, innermost or not, by head."""
    last: dict[int, int] = {}
    for address, text, _ in instructions:
        jump = _JUMP.match(text)
        if jump and int(jump[1], 16) < address:
            last[int(jump[1], 16)] = address
    return sorted(last.items())


def is_padding(instruction: str) -> bool:
    """Return whether an instruction is alignment padding (never executed inside a loop)."""
    return instruction.startswith(_SKIPPED)


def loop_at(instructions: Sequence[tuple[int, str, int]], start: int, end: int) -> Loop:
    """Return the loop of a function from its head `start` to its closing jump `end` (addresses)."""
    inside = [(text, line) for address, text, line in instructions if start <= address <= end]
    body = tuple(text for text, _ in inside[:-1] if not is_padding(text))
    sequence = tuple(line for text, line in inside[:-1] if line and not is_padding(text))
    return Loop(start, end, body, frozenset(line for _, line in inside if line), sequence)


def unroll_factor(sequence: Sequence[int], lines: Iterable[int]) -> int:
    """Return how many times the compiler unrolled a loop: the median of the separate runs its block's lines have.

    `sequence`: the source line of each instruction of the loop's body, in order; `lines`: the lines of the IR
    block the loop runs. A line whose instructions sit apart (a loop header at the top and the bottom, two
    interleaved statements) adds a run or two; an unrolled body repeats every line. The median of the block's
    lines is robust to the first and follows the second.
    """
    wanted = set(lines)
    runs = Counter(line for i, line in enumerate(sequence)
                   if line in wanted and (i == 0 or sequence[i - 1] != line))
    counts = sorted(runs[line] for line in wanted if runs[line])
    return max(1, counts[(len(counts) - 1) // 2]) if counts else 1


_WIDE = re.compile(r"%[yz]mm")
_GATHER = re.compile(r"\bv(?:p)?(?:gather|scatter)")


def _vector(body: Sequence[str]) -> bool:
    """Return whether a loop body runs vectors of work-items: gathers and scatters, or 256- or 512-bit registers.

    128-bit registers are not enough to say so: scalar floating point and a kernel's own float4 use them. Nor
    are wider ones in a body whose floating-point arithmetic is mostly scalar: a kernel's own double4 moves and
    subtracts in 256-bit registers (SHOC's md: one packed subtraction among 13 scalar operations a neighbour),
    while a work-item loop the compiler vectorised does its arithmetic in vectors.
    """
    if any(_GATHER.search(line) for line in body):
        return True
    if not any(_WIDE.search(line) for line in body):
        return False
    lanes = [n for n in map(fp_arithmetic_lanes, body) if n is not None]
    return not lanes or 2 * sum(1 for n in lanes if n > 1) >= len(lanes)


def _shape(body: Sequence[str]) -> tuple[str, ...]:
    """Return a loop body without its jump targets: two copies of one loop differ only there."""
    return tuple(re.sub(r"\s+[0-9a-f]+$", "", line) if _JUMP.match(line) else line for line in body)


def _matched(loop: Loop, blocks: Iterable[Block]) -> Block | None:
    """Return the IR block the loop runs: at least half its lines in the loop's, most shared, then most executed.

    At least half, not all: the compiler may hoist a line's instructions out of the loop (an address computed
    once), and the block still runs in it.
    """
    def shared(block: Block) -> int:
        return len(block.lines & loop.lines)

    fitting = [b for b in blocks if b.lines and 2 * shared(b) >= len(b.lines)]
    return max(fitting, key=lambda b: (shared(b), b.executions), default=None)


def kernel_incore(cpu: str, blocks: Sequence[Block], loops: Sequence[Loop], items: int,
                  costs: Mapping[tuple[int, int], tuple[float, float]],
                  item_costs: Mapping[tuple[int, int], float] | None = None) -> InCore:
    """Return a kernel's in-core cycles a work-item from its blocks (`items` work-items) and its loops' costs.

    `costs`: (start, end) of each loop -> llvm-mca's (cycles an iteration, ports alone). Each IR block is priced
    once, by the smallest loop that runs it (a larger one is an unrolled remainder or a chain of jumps into one);
    the loops with the same instructions as that one are copies the compiler made of the work-item loop around
    it, and their number divides its cycles, as that many work-items' chains are taken to overlap. A loop no
    block fits is listed and costs nothing. `item_costs`: (start, end) of a loop -> llvm-mca's cycles a work-item
    of the work-item loop around it laid out straight (`work_item_trace`), which then stand for the loop's.
    """
    if items < 1:
        raise ProfileError(f"a launch of {items} work-items: no cycles a work-item")
    by_block: dict[Block | None, list[Loop]] = {}
    for loop in loops:
        if loop.lines:
            by_block.setdefault(_matched(loop, blocks), []).append(loop)
    weighted: list[tuple[Loop, float]] = []
    for block, group in by_block.items():
        if block is not None:
            # The block's iterations run in its most packed loop (a vector body beside its scalar remainder, or
            # a chain of jumps into one): that loop and its copies carry them.
            widest = max(group, key=lambda loop: compiled_fp_lanes([(loop, 1.0)]) or 0.0)
            alike = [loop for loop in group if _shape(loop.body) == _shape(widest.body)]
            share = block.executions / items / unroll_factor(widest.sequence, block.lines) / len(alike)
            weighted.extend((loop, share) for loop in alike)
    found = []
    for block, group in by_block.items():
        if block is not None and all(_vector(loop.body) for loop in group):
            # Run several work-items an iteration (PoCL's vectorised work-item loop): this reading has no count
            # of them, so it prices none; the throughput terms of §3 do.
            continue
        ordered = sorted((loop for loop in group if not _vector(loop.body)), key=lambda loop: len(loop.body))
        pricing = ordered if block is None else ordered[:1]
        for loop in pricing:
            cycles, ports = costs[(loop.start, loop.end)]
            unroll = unroll_factor(loop.sequence, block.lines) if block is not None else 1
            copies = sum(1 for other in group if _shape(other.body) == _shape(loop.body)) if block is not None else 1
            found.append(LoopCost(tuple(sorted(loop.lines)), len(loop.body) + 1, cycles, ports,
                                  None if block is None else block.executions / items, unroll, copies,
                                  item_cycles=(item_costs or {}).get((loop.start, loop.end))))
    instructions = sum(block.executions * block.instructions for block in blocks) / items
    return InCore(cpu, sum(cost.cycles_per_item for cost in found), tuple(found), instructions,
                  compiled_fp_lanes(weighted), any(masked_memory(loop.body) for loop in loops))


@dataclass(frozen=True)
class WorkItemLoop:
    """The work-item loop around an inner loop: its range, its copies of the inner loop, and their iterations."""

    start: int
    end: int
    copies: tuple[tuple[int, int], ...]  # (head, closing jump) of each copy: one work-item each
    iterations: float  # an inner loop's iterations a work-item (its block's executions a work-item over its unroll)


def work_item_loop(instructions: Sequence[tuple[int, str, int]], loop: Loop, blocks: Sequence[Block],
                   items: int) -> WorkItemLoop | None:
    """Return the work-item loop around an inner loop, where its code can be laid out straight (`work_item_trace`).

    `instructions`: the function as (address, instruction, source line); `blocks`: its IR blocks' counts over a
    launch of `items` work-items. The work-item loop is the smallest loop around `loop`; each loop inside it is a
    copy of `loop` (the work-item loop unrolled: one work-item each). None where there is no loop around `loop`,
    another loop lies beside its copies or crosses its bounds, `loop` runs once a work-item or less, or the code
    of the loop around matches no block or runs more than once a work-item (it is a loop of the source, not the
    work-items'). The iterations are the block's executions a work-item over the unroll (a mean: they may vary
    from one work-item to the next).
    """
    block = _matched(loop, blocks)
    if block is None or items < 1 or block.executions / items <= INNER:
        return None
    iterations = block.executions / items / unroll_factor(loop.sequence, block.lines)
    ranges = loop_ranges(instructions)
    around = [(s, e) for s, e in ranges if s <= loop.start and loop.end <= e and (s, e) != (loop.start, loop.end)]
    if not around or iterations < 1:
        return None
    start, end = min(around, key=lambda r: r[1] - r[0])
    if any(s < start <= e < end or start < s <= end < e for s, e in ranges):
        return None  # a loop that crosses its bounds (a jump back into it from beyond): not one work-item's code
    inside = [(s, e) for s, e in ranges if start <= s and e <= end and (s, e) != (start, end)]
    if any(_shape(loop_at(instructions, s, e).body) != _shape(loop.body) for s, e in inside):
        return None
    own = {line for address, _, line in instructions
           if line and start <= address <= end and not any(s <= address <= e for s, e in inside)} - loop.lines
    own_blocks = [b for b in blocks if b.lines & own]
    if not own_blocks or any(b.executions / items > INNER for b in own_blocks):
        return None
    return WorkItemLoop(start, end, tuple(inside), iterations)


def work_item_trace(instructions: Sequence[tuple[int, str, int]], around: WorkItemLoop,
                    iterations: int | None = None) -> tuple[str, ...]:
    """Return the work-item loop's code laid out straight: each copy of the inner loop `iterations` times.

    `iterations`: the inner loop's a work-item, rounded to the nearest, by default. Each copy's iterations keep
    their closing jump; padding is left out. llvm-mca then runs consecutive work-items' code back to back, as the
    core does: its window overlaps the next work-item's chain with this one's where a work-item's code is short.
    """
    count = max(1, round(around.iterations)) if iterations is None else iterations
    heads = dict(around.copies)
    trace: list[str] = []
    skip_to = -1
    for address, text, _ in instructions:
        if address < around.start or address > around.end or address <= skip_to or is_padding(text):
            continue
        if address in heads:
            skip_to = heads[address]
            body = [t for a, t, _ in instructions if address <= a <= skip_to and not is_padding(t)]
            trace.extend(body * count)
        else:
            trace.append(text)
    return tuple(trace)


def laid_out_cycles(instructions: Sequence[tuple[int, str, int]], around: WorkItemLoop,
                    cycles: Callable[[tuple[str, ...]], float], chain: float) -> float | None:
    """Return the cycles a work-item of the work-item loop laid out straight, given llvm-mca's cycles of a trace.

    Where the inner loops' iterations lay out more than `TRACE_LIMIT` instructions, two shorter layouts (the most
    iterations that fit, and half as many) are run and the cycles carried on along the line through them: past a
    window's worth, each more iteration costs what the chain does, and the overlap the window gives stays. The
    line rises at least by `chain` (llvm-mca's cycles an iteration of the inner loop alone) a copy an iteration:
    where the work-item's own code is long, the shorter layouts hide the chain behind its issue, which the full
    one, its chains longer than the window, does not. A mean of iterations between two whole numbers takes the
    cycles between theirs, in proportion. None where fewer than two iterations fit.
    """
    low = max(1, math.floor(around.iterations))
    high = max(low, math.ceil(around.iterations))
    longest_whole = work_item_trace(instructions, around, high)
    if len(longest_whole) <= TRACE_LIMIT:
        above = cycles(longest_whole)
        below = above if high == low else cycles(work_item_trace(instructions, around, low))
        return (below + (around.iterations - low) * (above - below)) / len(around.copies)
    base = len(work_item_trace(instructions, around, 0))
    each = (len(work_item_trace(instructions, around, 1)) - base) or 1
    longest = max(1, (TRACE_LIMIT - base) // each)
    shortest = max(1, longest // 2)
    if longest <= shortest:
        return None
    far, near = cycles(work_item_trace(instructions, around, longest)), cycles(work_item_trace(instructions, around,
                                                                                               shortest))
    slope = max((far - near) / (longest - shortest), chain * len(around.copies))
    return (far + (around.iterations - longest) * slope) / len(around.copies)


_MASKED_MOVE = re.compile(r"^vp?maskmov")


def masked_memory(body: Iterable[str]) -> bool:
    """Return whether a loop body loads or stores with AVX's masked moves (vmaskmovps/pd, vpmaskmovd/q).

    A vectorised work-item loop whose work-items are guarded (`if (i < n)`) masks its accesses; without mask
    registers (AVX2) a compiler does it with these, which cost more in the core than the bytes they move (AVX-512's
    masked `vmovups ...{%k1}` is not one of them).
    """
    return any(_MASKED_MOVE.match(instruction) for instruction in body)


_INTEGER_DIVIDE = re.compile(r"^i?div[bwlq]?\s")  # x86's div and idiv in AT&T syntax; divss, vdivps are not


def integer_divides(instructions: Iterable[str]) -> int:
    """Return how many of a code's instructions divide integers (x86's div and idiv, AT&T syntax; a count).

    The divider runs only these. A division a profiler counts in the IR it runs may have none in the code a CPU
    runs: a divisor the compiler came to know (a loop over powers of two unrolled, each divisor a constant) becomes
    shifts or a multiply (docs/models.md, §3.2).
    """
    return sum(1 for instruction in instructions if _INTEGER_DIVIDE.match(instruction))


_FP_ARITHMETIC = re.compile(r"^v?(?:fn?m(?:add|sub)\d{3}|fm(?:addsub|subadd)\d{3}|add|sub|mul|div|min|max|sqrt|"
                            r"r(?:sqrt|cp)(?:14|28)?|h(?:add|sub)|addsub|dp|scalef)(?P<kind>[sp][sd])\s+"
                            r"(?P<operands>.*)$")
_REGISTER_BITS = {"x": 128, "y": 256, "z": 512}


def fp_arithmetic_lanes(instruction: str) -> int | None:
    """Return the elements one floating-point arithmetic instruction works on (1: scalar), None for any other.

    x86 names its kind in the mnemonic (`ss`/`sd` scalar, `ps`/`pd` packed, single or double) and its width in the
    destination register: `vfmadd231ps %ymm1,%ymm2,%ymm3` works on 8 floats. Conversions, moves, shuffles,
    logic and half-precision arithmetic are not counted.
    """
    found = _FP_ARITHMETIC.match(instruction)
    if found is None:
        return None
    if found["kind"][0] == "s":
        return 1
    registers = re.findall(r"%([xyz])mm", found["operands"])
    if not registers:
        return None
    return _REGISTER_BITS[registers[-1]] // (32 if found["kind"][1] == "s" else 64)


def compiled_fp_lanes(loops: Iterable[tuple[Loop, float]]) -> float | None:
    """Return the elements a compiled floating-point instruction of the loops works on, weighted by how often it runs.

    `loops`: each loop with its iterations a work-item (its IR block's executions a work-item / unroll / copies,
    as `kernel_incore` counts them). A work-item loop the compiler vectorised gives its width (vectors of
    work-items); a loop left scalar whose statements the compiler packed into vectors (LLVM's SLP vectoriser:
    SHOC's sgemmNN adds sixteen products of one work-item in two 8-float FMAs) gives theirs: either way, the
    scalar operations a profiler counts that one compiled instruction does. None where the loops do no
    floating-point arithmetic.
    """
    total = weight = 0.0
    for loop, iterations in loops:
        lanes = [n for n in map(fp_arithmetic_lanes, loop.body) if n is not None]
        total += iterations * sum(lanes)
        weight += iterations * len(lanes)
    return total / weight if weight > 0 else None


# ------------------------------------------------------------------ the tools


def _run(command: Sequence[str], what: str, stdin: str | None = None) -> str:
    """Return a tool's standard output; ToolError with its message if it fails."""
    try:
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ToolError(f"{what}: {error}") from None
    if done.returncode != 0:
        raise ToolError(f"{what} failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    return done.stdout


def objdump_function(shared: Path, function: str) -> list[tuple[int, str]]:
    """Return (address, instruction in AT&T syntax) of `function` in a shared object; ToolError without objdump."""
    return function_code(disassembly(shared), function)


def disassembly(shared: Path) -> str:
    """Return objdump's listing of a shared object's code, in AT&T syntax; ToolError without objdump."""
    if shutil.which("objdump") is None:
        raise ToolError("objdump is not on PATH (apt-get install binutils)")
    return _run(["objdump", "-d", "--no-show-raw-insn", "-M", "att", str(shared)], f"objdump of {shared.name}")


def listed_functions(listing: str) -> list[str]:
    """Return the names of the functions an objdump listing holds, in its order."""
    return re.findall(r"^[0-9a-f]+ <([^>]+)>:$", listing, re.M)


def function_code(listing: str, function: str) -> list[tuple[int, str]]:
    """Return (address, instruction) of `function` in an objdump listing (`disassembly`); [] where it is absent."""
    head = f"<{function}>:"
    if head not in listing:
        return []
    found = []
    for line in listing.split(head, 1)[1].splitlines():
        if line.strip().endswith(">:"):  # the next function
            break
        entry = re.match(r"\s*([0-9a-f]+):\t(.*)", line)
        if entry:
            found.append((int(entry[1], 16), re.sub(r"\s+<.*>$", "", entry[2].strip())))
    return found


def debug_lines(shared: Path) -> list[tuple[int, int]]:
    """Return the (address, source line) rows of a shared object's line table for its main source, by address.

    Rows of other files (a header's inline functions) are left out: the main source is the file most rows name.
    Rows at one address keep the table's order (the last one holds from there).
    """
    table = _run(["objdump", "--dwarf=decodedline", str(shared)], f"the line table of {shared.name}")
    rows = [(m[1], int(m[3], 16), int(m[2])) for m in re.finditer(r"^(\S+)\s+(\d+)\s+0x([0-9a-f]+)", table, re.M)]
    if not rows:
        return []
    main = Counter(name for name, _, _ in rows).most_common(1)[0][0]
    return sorted(((address, line) for name, address, line in rows if name == main), key=lambda row: row[0])


def with_lines(instructions: Sequence[tuple[int, str]], table: Sequence[tuple[int, int]]) -> list[tuple[int, str, int]]:
    """Return each instruction with the source line the table gives its address (0 before the first row)."""
    addresses = [address for address, _ in table]
    found = []
    for address, text in instructions:
        row = bisect.bisect_right(addresses, address) - 1
        found.append((address, text, table[row][1] if row >= 0 else 0))
    return found


def mca_tool() -> str:
    """Return llvm-mca's path, the newest versioned one on PATH first (Debian's `llvm-mca` may be an older one)."""
    for name in (*(f"llvm-mca-{version}" for version in range(21, 10, -1)), "llvm-mca"):
        path = shutil.which(name)
        if path:
            return path
    raise ToolError("llvm-mca is not on PATH (apt-get install llvm)")


def _assemblable(instruction: str) -> str:
    """Return an instruction llvm-mca can assemble: a jump or call's bare hex target becomes a label."""
    return re.sub(r"^((?:j\w+|call\w*)\s+)([0-9a-f]+)$", r"\1.Ltarget_\2", instruction)


def mca_cycles(body: Sequence[str], cpu: str, tool: str, iterations: int = MCA_ITERATIONS) -> tuple[float, float]:
    """Return llvm-mca's cycles an iteration of a loop body on `cpu`: steady state, and the ports alone.

    ToolError where llvm-mca did not take every instruction (it says "error:" and still exits 0, leaving the
    line out of the cycles).
    """
    text = "\n".join(_assemblable(line) for line in body) + "\n"
    try:
        done = subprocess.run([tool, f"-mcpu={cpu}", f"-iterations={iterations}", "-"], input=text,
                              capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ToolError(f"llvm-mca: {error}") from None
    report = done.stdout
    cycles = re.search(r"Total Cycles:\s+(\d+)", report)
    ports = re.search(r"Block RThroughput:\s+([\d.]+)", report)
    taken = re.search(r"^Instructions:\s+(\d+)", report, re.M)
    if done.returncode != 0 or "error:" in done.stderr or cycles is None or ports is None or taken is None:
        said = done.stderr.strip().splitlines()
        raise ToolError(f"llvm-mca could not read a loop of {len(body)} instructions"
                        + (f": {said[0][:200]}" if said else ""))
    if int(taken[1]) != iterations * len(body):
        raise ToolError(f"llvm-mca took {int(taken[1]) // iterations} of a loop's {len(body)} instructions")
    return int(cycles[1]) / iterations, float(ports[1])


def llvm_cpus(tool: str) -> set[str]:
    """Return the x86-64 CPU names llvm-mca knows (its -mcpu=help list)."""
    try:
        done = subprocess.run([tool, "-mtriple=x86_64", "-mcpu=help"], input="", capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ToolError(f"{tool} -mcpu=help: {error}") from None
    return set(re.findall(r"^\s{2}([a-z0-9][\w.-]*)\s+- Select", done.stdout + done.stderr, re.M))


def llvm_host_cpu(tool: str) -> str:
    """Return the CPU LLVM takes this machine's to be (`llvm-mca --version`: "Host CPU: icelake-client")."""
    found = re.search(r"Host CPU:\s*(\S+)", _run([tool, "--version"], f"{Path(tool).name} --version"))
    if found is None:
        raise ToolError(f"{Path(tool).name} --version names no host CPU")
    return found[1]


def modelled_core(host: str, target: str | None, known: Iterable[str]) -> str | None:
    """Return the CPU llvm-mca should time a PoCL kernel's code on: the host's core, else PoCL's compile target.

    PoCL's CPU device runs on the host, but a distribution's PoCL compiles for a generic variant of the host's ISA
    (`pthread-haswell` on a Zen 3, `cpu-x86-64-v3` on a Zen 4): the instructions are the target's, their latencies
    and ports the host core's. `host`: LLVM's name for this machine's CPU (`llvm_host_cpu`); a name LLVM has no
    core model for (generic, x86-64 and its levels) gives way to `target` (`pocl_llvm_cpu`).
    """
    names = set(known)
    if host in names and host != "generic" and not host.startswith("x86-64"):
        return host
    return target


def pocl_llvm_cpu(device_name: str, known: Iterable[str]) -> str | None:
    """Return the LLVM CPU a PoCL CPU device compiles for, from its name ('pthread-skylake-avx512-Intel...')."""
    found = re.match(r"^(?:cpu-minimal|cpu-tbb|pthread|basic|cpu)-(.*)$", device_name.strip())
    if not found:
        return None
    rest = found[1]
    fitting = [cpu for cpu in known if rest == cpu or rest.startswith(cpu + "-")]
    return max(fitting, key=len, default=None)


@dataclass(frozen=True)
class PoclReading:
    """The in-core readings of a PoCL kernel cache: per kernel, and per kernel and precision of its builds.

    `precisions`: kernel -> "fp32"/"fp64" -> its builds of that precision, for a kernel built in both (SHOC
    builds each source with -DSINGLE_PRECISION and with -DK_DOUBLE_PRECISION), whose builds of each precision agree.
    """

    kernels: dict[str, InCore]
    precisions: dict[str, dict[str, InCore]]


def code_precision(instructions: Iterable[str]) -> str | None:
    """Return "fp64" where most of the code's floating-point arithmetic is on doubles, "fp32" where on floats, else None."""
    doubles = singles = 0
    for text in instructions:
        found = _FP_ARITHMETIC.match(text)
        if found is not None:
            doubles += found["kind"][1] == "d"
            singles += found["kind"][1] == "s"
    if doubles == singles == 0:
        return None
    return "fp64" if doubles > singles else "fp32"


def _agreed(found: Sequence[InCore]) -> InCore | None:
    """Return one reading for a kernel's builds where they give the same cycles within 10 %, else None.

    Its lanes are the narrowest build's (SHOC's gemm packs 8 floats or 4 doubles in a 256-bit register).
    """
    if max(e.cycles_per_item for e in found) > 1.1 * min(e.cycles_per_item for e in found):
        return None
    lanes = [e.fp_lanes for e in found if e.fp_lanes is not None]
    divides = [e.divides for e in found if e.divides is not None]
    return replace(found[0], fp_lanes=min(lanes) if len(lanes) == len(found) else None,
                   masked=any(e.masked for e in found),
                   divides=max(divides) if len(divides) == len(found) else None)


def analyse_pocl_kernels(cache: Path, blocks: Mapping[str, Sequence[Block]], cpu: str) -> PoclReading:
    """Return the in-core estimate of every kernel PoCL compiled (with -g) into the kernel cache `cache`.

    A kernel without block counts, whose entry block is missing, or whose code or line table objdump does not find,
    is left out. A kernel compiled more than once (another local size, or two programs' kernels of one name) is
    kept where every build gives it the same cycles within 10 %; where its builds are of two precisions (SHOC's
    md builds its kernel in single and double precision, 12.4 and 14.9 cycles a neighbour), each precision is
    kept apart where its own builds agree (`PoclReading.precisions`). The block counts are the kernel name's,
    every build's launches summed: the builds of one source run the same blocks.
    """
    tool = mca_tool()
    estimates: dict[str, list[tuple[str | None, InCore]]] = {}
    for shared in sorted(cache.rglob("*.so")):
        kernel = shared.stem
        counted = blocks.get(kernel)
        items = group_items(kernel, counted) if counted else None
        if not counted or not items:
            continue
        instructions = objdump_function(shared, f"_pocl_kernel_{kernel}")
        table = debug_lines(shared)
        if not instructions or not table:  # no code or no line table: unknown, not "no inner loop"
            continue
        # PoCL inlines every function a kernel calls into it (its Flatten pass): the kernel's function is all its code.
        divides = integer_divides(text for _, text in instructions)
        listing = with_lines(instructions, table)
        loops = innermost_loops(listing)
        costs = {(loop.start, loop.end): mca_cycles(loop.body, cpu, tool) for loop in loops if loop.lines}
        laid: dict[WorkItemLoop, float | None] = {}  # the copies of one loop share their work-item loop
        item_costs = {}
        for loop in loops:
            around = work_item_loop(listing, loop, counted, items) if loop.lines and not _vector(loop.body) else None
            if around is not None and around not in laid:
                try:
                    laid[around] = laid_out_cycles(listing, around, lambda trace: mca_cycles(
                        trace, cpu, tool, max(10, min(MCA_ITERATIONS, MCA_INSTRUCTIONS // max(1, len(trace)))))[0],
                        costs[(loop.start, loop.end)][0])
                except ToolError:  # code of the work-item loop llvm-mca cannot read: the loop's own cycles stand
                    laid[around] = None
            cycles = None if around is None else laid[around]
            if cycles is not None:
                item_costs[(loop.start, loop.end)] = cycles
        estimates.setdefault(kernel, []).append(
            (code_precision(text for _, text in instructions),
             replace(kernel_incore(cpu, counted, [loop for loop in loops if loop.lines], items, costs, item_costs),
                     divides=divides)))
    kernels = {kernel: agreed for kernel, found in estimates.items()
               if (agreed := _agreed([estimate for _, estimate in found])) is not None}
    precisions = {}
    for kernel, found in estimates.items():
        kinds = {precision for precision, _ in found}
        if len(kinds) < 2 or None in kinds:
            continue
        split = {str(kind): _agreed([estimate for precision, estimate in found if precision == kind])
                 for kind in sorted(k for k in kinds if k is not None)}
        if all(split.values()):
            precisions[kernel] = {kind: estimate for kind, estimate in split.items() if estimate is not None}
    return PoclReading(kernels, precisions)
