"""The in-core cycles of a kernel's inner loops on a CPU, from the code the CPU runs (docs/models.md, §3.5).

Three readings are combined:

* Oclgrind's executions of each basic block, with the source lines of its instructions (the plugin
  `oclgrind_blocks.cpp`), over one work-group doing the timed work per work-item;
* the kernel PoCL compiled, built with `-g`: its innermost loops (a backward jump whose range holds no other
  backward jump and overlaps none without nesting) and the source lines of their instructions (its debug line
  table), read by objdump from the function `_pocl_kernel_NAME`, the one the line table covers;
* llvm-mca's cycles per iteration of each loop's body on the CPU PoCL compiled for: its steady state, so the
  dependencies one iteration carries to the next are in it, beside the ports alone (its block throughput).

A loop runs the IR block that shares most source lines with it (ties: the most executed). Where that block runs
more than once a work-item, the loop is an inner loop of the source, and it costs

    cycles a work-item = executions a work-item / unroll x cycles an iteration / copies

`unroll`: how many separate runs of one source line the body holds (the compiler unrolled the loop that many
times); `copies`: how many loops of the function run the same lines (the compiler unrolled the loop over
work-items around it, so that many work-items' chains are in flight at once). A loop over the work-items
themselves (its block runs once a work-item or less) is left out: §3's throughput and the issue floor price it.
The readers are pure; `objdump_function`, `debug_lines`, `mca_cycles`, `llvm_cpus` and `analyse_pocl_kernels` call
the tools.
"""

from __future__ import annotations

import bisect
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from perfcast.errors import ToolError
from perfcast.profiles.profile import ProfileError

__all__ = ["BLOCKS_PLUGIN_SOURCE", "Block", "InCore", "Loop", "LoopCost", "analyse_pocl_kernels", "debug_lines",
           "group_items", "innermost_loops", "kernel_incore", "llvm_cpus", "mca_cycles", "mca_tool",
           "objdump_function", "pocl_llvm_cpu", "read_blocks", "with_lines"]

BLOCKS_PLUGIN_SOURCE = Path(__file__).with_name("oclgrind_blocks.cpp")
MCA_ITERATIONS = 500  # iterations llvm-mca simulates: enough for a steady state of any loop body seen here
_SKIPPED = ("nop", "data16", "cs nop", "xchg   %ax,%ax")  # alignment padding inside a loop: never executed
_JUMP = re.compile(r"^j\w+\s+([0-9a-f]+)$")


@dataclass(frozen=True)
class Block:
    """One basic block of a kernel: its function, name, executions (over the profiled launch) and source lines."""

    function: str
    name: str
    executions: int
    lines: frozenset[int]


@dataclass(frozen=True)
class Loop:
    """One innermost loop of compiled code: its address range, body (closing jump left out), lines and unroll."""

    start: int
    end: int
    body: tuple[str, ...]
    lines: frozenset[int]
    unroll: int


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

    @property
    def inner(self) -> bool:
        """Return whether the loop is an inner loop of the source (its block runs more than once a work-item)."""
        return self.executions_per_item is not None and self.executions_per_item > 1.0

    @property
    def cycles_per_item(self) -> float:
        """Return the loop's cycles a work-item (0 for a loop over work-items)."""
        if not self.inner:
            return 0.0
        assert self.executions_per_item is not None
        return self.executions_per_item / self.unroll * self.cycles / self.copies


@dataclass(frozen=True)
class InCore:
    """A kernel's in-core cycles a work-item on one CPU (llvm-mca's name for it), and the loops they come from."""

    cpu: str
    cycles_per_item: float
    loops: tuple[LoopCost, ...]

    def as_record(self) -> dict[str, object]:
        """Return the estimate as a manifest keeps it (JSON types)."""
        return {"cpu": self.cpu, "cycles_per_item": self.cycles_per_item,
                "loops": [{"lines": list(c.lines), "instructions": c.instructions, "cycles": c.cycles,
                           "ports": c.ports, "executions_per_item": c.executions_per_item, "unroll": c.unroll,
                           "copies": c.copies, "inner": c.inner} for c in self.loops]}


def read_blocks(text: str) -> dict[str, list[Block]]:
    """Return each kernel's blocks from the plugin's output (executions summed over the kernel's launches)."""
    summed: dict[tuple[str, str, str], int] = Counter()
    lines: dict[tuple[str, str, str], frozenset[int]] = {}
    for number, row in enumerate(text.splitlines(), 1):
        if not row.strip():
            continue
        fields = row.split("\t")
        if len(fields) != 5 or not fields[3].isdigit():
            raise ProfileError(f"block counts, line {number}: expected kernel, function, block, executions and "
                               f"lines separated by tabs, not {row[:80]!r}")
        key = (fields[0], fields[1], fields[2])
        summed[key] += int(fields[3])
        lines[key] = frozenset(int(v) for v in fields[4].split(",") if v)
    found: dict[str, list[Block]] = {}
    for (kernel, function, name), executions in summed.items():
        found.setdefault(kernel, []).append(Block(function, name, executions, lines[(kernel, function, name)]))
    return found


def group_items(kernel: str, blocks: Sequence[Block]) -> int | None:
    """Return the work-items of the profiled launch: the executions of the kernel's entry block (None: not found)."""
    entries = [b.executions for b in blocks if b.function == kernel and b.name == "entry"]
    return max(entries) if entries else None


def innermost_loops(instructions: Sequence[tuple[int, str, int]]) -> list[Loop]:
    """Return the innermost loops of a function given as (address, instruction, source line; 0: none) in order.

    A loop is a backward jump and the range it closes; innermost: no other backward jump inside it. A range that
    overlaps another without nesting is not a loop of the source (a jump table of unrolled remainders) and is
    left out.
    """
    backward = []
    for address, text, _ in instructions:
        jump = _JUMP.match(text)
        if jump and int(jump[1], 16) < address:
            backward.append((int(jump[1], 16), address))
    inner = [(s, e) for s, e in backward
             if not any(s <= s2 and e2 <= e and (s2, e2) != (s, e) for s2, e2 in backward)]
    inner = [(s, e) for s, e in inner if not any(s < s2 <= e < e2 or s2 < s <= e2 < e for s2, e2 in inner)]
    loops = []
    for start, end in inner:
        inside = [(text, line) for address, text, line in instructions if start <= address <= end]
        body = tuple(text for text, _ in inside[:-1] if not text.startswith(_SKIPPED))
        sequence = [line for text, line in inside if line]
        runs = Counter(line for i, line in enumerate(sequence) if i == 0 or sequence[i - 1] != line)
        loops.append(Loop(start, end, body, frozenset(sequence), max(runs.values(), default=1)))
    return loops


def _matched(loop: Loop, blocks: Iterable[Block]) -> Block | None:
    """Return the IR block the loop runs: its lines all in the loop's, sharing most of them, then most executed."""
    fitting = [b for b in blocks if b.lines and b.lines <= loop.lines]
    return max(fitting, key=lambda b: (len(b.lines), b.executions), default=None)


def kernel_incore(cpu: str, blocks: Sequence[Block], loops: Sequence[Loop], items: int,
                  costs: Mapping[tuple[int, int], tuple[float, float]]) -> InCore:
    """Return a kernel's in-core cycles a work-item from its blocks (`items` work-items) and its loops' costs.

    `costs`: (start, end) of each loop -> llvm-mca's (cycles an iteration, ports alone). Loops running the same
    source lines are one loop in `copies` copies.
    """
    if items < 1:
        raise ValueError(f"a launch of {items} work-items")
    copies = Counter(loop.lines for loop in loops)
    found, seen = [], set()
    for loop in loops:
        if loop.lines in seen or not loop.lines:
            continue
        seen.add(loop.lines)
        block = _matched(loop, blocks)
        cycles, ports = costs[(loop.start, loop.end)]
        found.append(LoopCost(tuple(sorted(loop.lines)), len(loop.body) + 1, cycles, ports,
                              None if block is None else block.executions / items, loop.unroll, copies[loop.lines]))
    return InCore(cpu, sum(cost.cycles_per_item for cost in found), tuple(found))


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
    if shutil.which("objdump") is None:
        raise ToolError("objdump is not on PATH (apt-get install binutils)")
    listing = _run(["objdump", "-d", "--no-show-raw-insn", "-M", "att", str(shared)], f"objdump of {shared.name}")
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
    """Return the (address, source line) rows of a shared object's debug line table, by address (0: no line)."""
    table = _run(["objdump", "--dwarf=decodedline", str(shared)], f"the line table of {shared.name}")
    rows = [(int(m[2], 16), int(m[1])) for m in re.finditer(r"^\S+\s+(\d+)\s+0x([0-9a-f]+)", table, re.M)]
    return sorted(rows)


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


def mca_cycles(body: Sequence[str], cpu: str, tool: str) -> tuple[float, float]:
    """Return llvm-mca's cycles an iteration of a loop body on `cpu`: steady state, and the ports alone."""
    report = _run([tool, f"-mcpu={cpu}", f"-iterations={MCA_ITERATIONS}", "-"], "llvm-mca", "\n".join(body) + "\n")
    cycles = re.search(r"Total Cycles:\s+(\d+)", report)
    ports = re.search(r"Block RThroughput:\s+([\d.]+)", report)
    if cycles is None or ports is None:
        raise ToolError(f"llvm-mca gave no cycles for a loop of {len(body)} instructions")
    return int(cycles[1]) / MCA_ITERATIONS, float(ports[1])


def llvm_cpus(tool: str) -> set[str]:
    """Return the x86-64 CPU names llvm-mca knows (its -mcpu=help list)."""
    done = subprocess.run([tool, "-mtriple=x86_64", "-mcpu=help"], input="", capture_output=True, text=True,
                          check=False)
    return set(re.findall(r"^\s{2}([a-z0-9][\w.-]*)\s+- Select", done.stdout + done.stderr, re.M))


def pocl_llvm_cpu(device_name: str, known: Iterable[str]) -> str | None:
    """Return the LLVM CPU a PoCL CPU device compiles for, from its name ('pthread-skylake-avx512-Intel...')."""
    found = re.match(r"^(?:pthread|cpu|basic|cpu-minimal|cpu-tbb)-(.*)$", device_name.strip())
    if not found:
        return None
    rest = found[1]
    fitting = [cpu for cpu in known if rest == cpu or rest.startswith(cpu + "-")]
    return max(fitting, key=len, default=None)


def analyse_pocl_kernels(cache: Path, blocks: Mapping[str, Sequence[Block]], cpu: str) -> dict[str, InCore]:
    """Return the in-core estimate of every kernel PoCL compiled (with -g) into the kernel cache `cache`.

    A kernel without block counts, or whose entry block is missing, is left out.
    """
    tool = mca_tool()
    found: dict[str, InCore] = {}
    for shared in sorted(cache.rglob("*.so")):
        kernel = shared.stem
        counted = blocks.get(kernel)
        items = group_items(kernel, counted) if counted else None
        if not counted or not items or kernel in found:
            continue
        code = with_lines(objdump_function(shared, f"_pocl_kernel_{kernel}"), debug_lines(shared))
        loops = innermost_loops(code)
        costs = {(loop.start, loop.end): mca_cycles(loop.body, cpu, tool) for loop in loops if loop.lines}
        found[kernel] = kernel_incore(cpu, counted, [loop for loop in loops if loop.lines], items, costs)
    return found
