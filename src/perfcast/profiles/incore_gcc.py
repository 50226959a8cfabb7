"""The in-core cycles of C kernels gcc compiled, from gcov's line counts (docs/models.md §3.5, "C kernels").

Three readings, as on PoCL (`perfcast.profiles.incore`), with gcov in Oclgrind's place:

* gcov's executions of each source line, from a build with `--coverage` run once at the timed size. gcov counts
  the program as written (its counters go in before gcc vectorises or unrolls), so a line's count is its source
  iterations;
* the compiled code, built with `-g` and the timed build's flags (gcc's code does not change with -g): its loops
  and the source line of each instruction (objdump, the line table);
* llvm-mca's cycles an iteration of a loop body, steady state, on the CPU the code runs on.

A loop of compiled code runs a source loop. Its head instruction and its closing jump run every iteration, so the
smaller of their lines' counts is the source iterations it runs (a line may also run outside the loop, never
less often than it). One iteration of the body runs `unroll x lanes` of them: unroll, the median separate runs,
in the body, of the lines with that count (gcc copied the statement that often); lanes, the elements of the widest
packed arithmetic in the body (`vector_factor`; gcc's report must say it vectorised a loop of the function, or a
float4's own 128-bit arithmetic would count). Loops closing on one source line run one source loop, gcc's vector
loop and its remainder: the loop with the most source iterations an iteration prices it, of those a pass of the
loop around has the iterations for (below a vector's worth, the remainder runs them all). A loop whose source
iterations are at most one a work-item is the loop over the work-items: no inner loop's floor, but where such
loops are the kernel's whole code (no inner loop, one of them runs every work-item, none calls a function) their
cycles a work-item are `item_cycles`, which stand for the kernel's core in the quantitative model (§3.5, "The
whole work-item"). A loop of one source line shows no copies in its lines: there the copies of its statement
are counted in the body itself (`repeated_copies`).

An inner loop of few trips an entry is laid that many times into the loop around it (flattened) when the result
has at most FLAT_LIMIT instructions: llvm-mca then lets one work-item's chain overlap the next one's, as the core's
window does (a hash's 16 dependent rounds: 160 cycles a work-item alone, 95 laid out, 73 measured on the Xeon VM).
A long inner loop keeps its own steady state, which the overlap of its entries barely changes. The functions are
pure; the price of a body comes in as a function (`mca_cycles` in a campaign).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from perfcast.errors import ToolError
from perfcast.profiles.incore import (
    INNER,
    InCore,
    Loop,
    LoopCost,
    compiled_fp_lanes,
    innermost_loops,
    integer_divides,
    is_padding,
    loop_at,
    loop_ranges,
    unroll_factor,
)
from perfcast.profiles.profile import ProfileError

__all__ = ["FLAT_LIMIT", "c_kernel_incore", "read_gcov_lines", "repeated_copies", "source_iterations",
           "vector_factor"]

FLAT_LIMIT = 2048  # instructions of a flattened body: several times any core's window, and quick for llvm-mca

_REGISTER_BYTES = {"x": 16, "y": 32, "z": 64}
# Packed instructions whose width says nothing of the iterations: moves, broadcasts and rearrangements (a
# broadcast of a scalar fills a zmm), packs, and the logic ops gcc also uses on a scalar held in an xmm register
# (a float's fabs is vandps, a zeroed sum vxorps). Named without AVX's leading v.
_NOT_COUNTED = re.compile(r"^(?:p?mov|p?broadcast|p?perm|p?shuf|extract|insert|p?unpck|p?blend|p?alignr|zero|"
                          r"pextr|pinsr|p?compress|p?expand|p?andn?|p?x?or|pternlog|pack|psadbw|p?test|kmov)")
_FP_ELEMENT = re.compile(r"^\w*?(ps|pd|ph)$")  # the last element type named: a conversion's destination's
_INT_ELEMENT = re.compile(r"^p\w*?(b|w|d|q)$")
_ELEMENT_BYTES = {"ps": 4, "pd": 8, "ph": 2, "b": 1, "w": 2, "d": 4, "q": 8}
_VECTOR_REGISTER = re.compile(r"%([xyz])mm\d+")


def _operands(text: str) -> list[str]:
    """Return an AT&T instruction's operands (masks and broadcasts in braces left out), commas in ( ) kept."""
    text = re.sub(r"\{[^}]*\}", "", text)
    found, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            found.append(current.strip())
            current = ""
        else:
            current += char
    return [*found, current.strip()] if current.strip() else found


def vector_factor(body: Sequence[str], widest_bytes: int) -> int:
    """Return the elements an iteration of a loop body handles: its widest packed arithmetic (1: scalar).

    Each instruction's width is its destination's (the last operand; a compare into a mask register or a
    scatter to memory: its widest vector register), in its element type (the last the mnemonic names).
    `widest_bytes`: the widest vector gcc's report says it vectorised a loop of the function with; wider
    instructions are not counted, and with 0 (none vectorised) the body's packed instructions are a kernel's own
    vector types or straight-line code: 1.
    """
    if widest_bytes <= 0:
        return 1
    lanes = 1
    for instruction in body:
        parts = instruction.split(None, 1)
        if len(parts) < 2:
            continue
        mnemonic = parts[0][1:] if parts[0].startswith("v") else parts[0]
        if _NOT_COUNTED.match(mnemonic):
            continue
        # Integer SIMD mnemonics begin with p (vpcmpd compares dwords, though it ends in pd); floating point's do not.
        element = (_INT_ELEMENT if mnemonic.startswith("p") else _FP_ELEMENT).match(mnemonic)
        operands = _operands(parts[1])
        if element is None or not operands:
            continue
        destination = _VECTOR_REGISTER.fullmatch(operands[-1])
        registers = [destination[1]] if destination else _VECTOR_REGISTER.findall(parts[1])
        if not registers:
            continue
        width = max(_REGISTER_BYTES[r] for r in registers)
        if width <= widest_bytes:
            lanes = max(lanes, width // _ELEMENT_BYTES[element[1]])
    return lanes


def read_gcov_lines(text: str, source: str) -> dict[int, int]:
    """Return each line's executions in source file `source` (its name) from gcov's JSON (`gcov --json-format`)."""
    try:
        report = json.loads(text)
        files = report["files"]
    except (ValueError, KeyError, TypeError) as error:
        raise ProfileError(f"gcov's JSON could not be read: {error}") from None
    counts: dict[int, int] = {}
    for entry in files:
        if Path(str(entry.get("file", ""))).name != Path(source).name:
            continue
        for line in entry.get("lines", []):
            try:
                number, count = int(line["line_number"]), int(line["count"])
            except (KeyError, TypeError, ValueError):
                raise ProfileError(f"gcov's JSON has a line without a number and a count: {line!r:.120}") from None
            counts[number] = max(counts.get(number, 0), count)
    if not counts:
        raise ProfileError(f"gcov's JSON has no lines of {Path(source).name}")
    return counts


def _ends(loop: Loop, lines: Mapping[int, int]) -> tuple[int, int]:
    """Return the source lines of a loop's head instruction and of its closing jump (0: none)."""
    head = loop.sequence[0] if loop.sequence else 0
    return head, lines.get(loop.end, 0) or (loop.sequence[-1] if loop.sequence else 0)


def source_iterations(loop: Loop, lines: Mapping[int, int], counts: Mapping[int, int]) -> tuple[int, int] | None:
    """Return (source iterations the loop runs, source iterations an iteration of its body runs as copies), or None.

    `lines`: address -> source line of the function's instructions; `counts`: gcov's executions per line. None
    where the head's or the closing jump's line was not counted.
    """
    ends = [counts.get(line) for line in _ends(loop, lines)]
    if None in ends:
        return None  # code gcov has no count for (OpenMP's chunking, a prologue): not a loop of the source's
    iterations = min(count for count in ends if count is not None)
    same = {line for line in loop.lines if counts.get(line) == iterations}
    unroll = unroll_factor(loop.sequence, same) if same else 1
    if len(same) == 1 and unroll == 1:
        # A loop of one source line is one run of it however often gcc copied the statement (reduce_sum's
        # `s += x[i]`, eight vaddss a pass): the copies are read from the body itself.
        unroll = repeated_copies(loop.body)
    return iterations, unroll


# The loop's own control: the closing compare (or test) and the updates of its counters and pointers by a
# constant, which gcc makes once a pass whatever it unrolled.
_CONTROL = re.compile(r"^(?:cmp|test)\w*\s|^(?:add|sub|inc|dec)[lq]?\s+(?:\$-?(?:0x)?[0-9a-f]+,)?%\w+$"
                      r"|^lea[lq]?\s+-?(?:0x)?[0-9a-f]*\(%\w+\),%\w+$")
_DISPLACEMENT = re.compile(r"(?<![\w$])-?(?:0x)?[0-9a-f]*\(")
_BRANCH = re.compile(r"^j\w+\s")
_CALL = re.compile(r"^call\w*\s")


def repeated_copies(body: Sequence[str]) -> int:
    """Return how many identical copies of one statement a loop body holds, its own control left out (else 1).

    Identical: the same instructions with the same registers, only the displacements of their memory operands
    differing. Copies read consecutive elements, so where the body moves a pointer its operands go through by a
    constant, the copies' first displacements fall in as many distinct places of that step: a statement that adds
    three neighbours into one register, a[i-1], a[i] and a[i+1] a step of one element, is one copy, not three.
    """
    statements = [line for line in body if not _CONTROL.match(line) and not _BRANCH.match(line)]
    shapes = [_DISPLACEMENT.sub("D(", line) for line in statements]
    n = len(shapes)
    for period in range(1, n // 2 + 1):
        if n % period == 0 and all(shapes[i] == shapes[i % period] for i in range(n)):
            copies = n // period
            return copies if _spread_over_the_step(statements[::period], body, copies) else 1
    return 1


_STEP = re.compile(r"^(?:add|sub)[lq]?\s+\$(-?(?:0x)?[0-9a-f]+),(%\w+)$")
_FIRST_OPERAND = re.compile(r"(?<![\w$])(-?(?:0x)?[0-9a-f]*)\((%\w+)")


def _spread_over_the_step(copies: Sequence[str], body: Sequence[str], count: int) -> bool:
    """Return whether `count` copies' first memory operands fall in distinct places of their pointer's step.

    The step: the constant the body adds to (or takes from) the base register of those operands. Without one (an
    index register moved by inc) nothing is checked.
    """
    operands = [_FIRST_OPERAND.search(line) for line in copies]
    if any(found is None for found in operands):
        return True
    bases = {found[2] for found in operands if found is not None}
    steps = [abs(int(m[1], 16)) for m in map(_STEP.match, body) if m and m[2] in bases]
    if len(bases) != 1 or not steps or steps[0] == 0:
        return True
    offsets = {int(found[1] or "0", 16) % steps[0] for found in operands if found is not None}
    return len(offsets) == count


def _flattened(function: Sequence[tuple[int, str, int]], outer: Loop, inner: Loop, trips: int) -> list[str]:
    """Return the outer loop's body with the inner loop laid `trips` times in its place (closing jumps left out).

    The outer loop's own code is laid once a pass, all of it: a remainder loop, a guard or a peeled tail that does
    not run every pass is priced as if it did (an overestimate where it does not).
    """
    body: list[str] = []
    for address, text, _ in function:
        if not outer.start <= address < outer.end:
            continue
        if address == inner.start:
            body.extend(list(inner.body) * trips)
        elif not inner.start <= address <= inner.end and not is_padding(text):
            body.append(text)
    return body


@dataclass(frozen=True)
class _Reading:
    """A compiled loop with gcov's counts: source iterations, copies of the body, lanes, and its pass around it."""

    loop: Loop
    iterations: int
    unroll: int
    lanes: int
    around: tuple[Loop, int, int, int] | None  # the loop around it: loop, source iterations, unroll, lanes

    @property
    def per_pass(self) -> int:
        """Return the source iterations one iteration of the body runs."""
        return self.unroll * self.lanes

    @property
    def per_entry(self) -> float | None:
        """Return the source iterations the loop runs each pass of the loop around it (None: no such loop counted)."""
        if self.around is None:
            return None
        _, iterations, unroll, lanes = self.around
        return self.iterations / (iterations / (unroll * lanes)) if iterations > 0 else None


def _read(function: Sequence[tuple[int, str, int]], lines: Mapping[int, int], ranges: Sequence[tuple[int, int]],
          counts: Mapping[int, int], loop: Loop, widest_bytes: int) -> _Reading | None:
    """Return a loop read with gcov's counts and the loop around it, or None where gcov did not count it."""
    counted = source_iterations(loop, lines, counts)
    if counted is None:
        return None
    lanes = vector_factor(loop.body, widest_bytes)
    around = None
    enclosing = [(s, e) for s, e in ranges if s <= loop.start and loop.end <= e and (s, e) != (loop.start, loop.end)]
    if enclosing:
        start, end = min(enclosing, key=lambda r: r[1] - r[0])
        outer = loop_at(function, start, end)
        outer_counted = source_iterations(outer, lines, counts)
        if outer_counted is not None:
            # The loop around runs one source iteration a pass: its own vectors are an inner vector loop's (or
            # the reduction of its sum across lanes). gcc vectorises outer loops only where it unrolls the inner
            # one away, and then there is no inner loop to lay out.
            around = (outer, *outer_counted, 1)
    return _Reading(loop, counted[0], counted[1], lanes, around)


def _pricing(group: Sequence[_Reading]) -> _Reading:
    """Return the loop that prices a source loop: of the compiled loops closing on its line, the widest that runs.

    gcc's vector loop runs only where a pass of the loop around it has at least a vector's iterations; below
    that its remainder runs them all (the loops share gcov's counts, so the counts cannot tell).
    """
    running = [r for r in group if r.per_entry is None or r.per_pass <= r.per_entry * (1 + 1e-9)]
    if not running:
        return min(group, key=lambda r: (r.per_pass, len(r.loop.body)))
    return max(running, key=lambda r: (r.per_pass, -len(r.loop.body)))


def c_kernel_incore(cpu: str, functions: Sequence[Sequence[tuple[int, str, int]]], counts: Mapping[int, int],
                    items: int, price: Callable[[Sequence[str]], tuple[float, float]],
                    widest_bytes: int = 0) -> InCore:
    """Return a C kernel's in-core cycles a work-item from its compiled functions and gcov's line counts.

    `functions`: each function the kernel compiled into (a kernel and its OpenMP bodies), as (address,
    instruction, source line) in order; `items`: its work-items at the counted size; `price`: a body -> (cycles
    an iteration, steady state; the ports alone), llvm-mca's; `widest_bytes`: the widest vector gcc's report gives
    a loop of the kernel (0: none vectorised).
    """
    if items < 1:
        raise ProfileError(f"a launch of {items} work-items: no cycles a work-item")
    found: list[LoopCost] = []
    running: list[tuple[Loop, float]] = []  # each loop that runs inside a work-item, with its passes a work-item
    # The loops over the work-items: their function, reading, and source iterations a work-item.
    item_loops: list[tuple[Sequence[tuple[int, str, int]], _Reading, float]] = []
    for function in functions:
        lines = {address: line for address, _, line in function}
        ranges = loop_ranges(function)
        groups: dict[int, list[_Reading]] = {}
        for loop in innermost_loops(function):
            reading = _read(function, lines, ranges, counts, loop, widest_bytes) if loop.lines else None
            if reading is not None:
                # gcc's vector loop and its remainder close on the same source line.
                groups.setdefault(_ends(loop, lines)[1], []).append(reading)
        chosen = [_pricing(group) for group in groups.values()]
        inner = [r for r in chosen if r.iterations > INNER * items]
        for reading in chosen:
            per_item = reading.iterations / items
            if per_item > INNER:
                running.append((reading.loop, per_item / reading.per_pass))
            cost = _laid_out(function, reading, inner, items, price) if per_item > INNER else None
            if cost is None:
                cycles, ports = price(reading.loop.body) if per_item > INNER else (0.0, 0.0)
                if per_item <= INNER:
                    item_loops.append((function, reading, per_item))
                cost = LoopCost(tuple(sorted(reading.loop.lines)), len(reading.loop.body) + 1, cycles, ports, per_item,
                                reading.unroll, 1, reading.lanes)
            found.append(cost)
    # The elements a floating-point instruction works on, read from the instructions themselves: a loop gcc's
    # report calls scalar may run packed arithmetic all the same (its SLP vectoriser packs a fully unrolled inner
    # loop: sgemm_tiled's sixteen columns in two 8-float FMAs, reported only as "basic block part vectorized").
    return InCore(cpu, sum(cost.cycles_per_item for cost in found), tuple(found),
                  fp_lanes=compiled_fp_lanes(running),
                  divides=integer_divides(text for function in functions for _, text, _ in function),
                  item_cycles=_whole_item(item_loops, bool(running), items, price))


def _whole_item(item_loops: Sequence[tuple[Sequence[tuple[int, str, int]], _Reading, float]], inner: bool,
                items: int, price: Callable[[Sequence[str]], tuple[float, float]]) -> float | None:
    """Return llvm-mca's cycles a work-item where a kernel's whole code is loops over its work-items, else None.

    The whole code: no inner loop runs (their cycles are §3.5's floor), some loop runs every work-item (a loop
    that runs a few of them, a 3D stencil's row loop under an outer nest, leaves the rest of the code unread),
    and no loop calls a function (llvm-mca prices the call, not the routine: a libm call's hundreds of cycles).
    Each loop's cycles an iteration are spread over the source iterations an iteration runs (unroll x lanes). A
    loop over a block of work-items inside a loop over the blocks (reduce_sum's groups) is laid into that loop
    as an inner one is (`_laid_out`), where it is that loop's only one: a block's chain starts afresh, and the
    core's window runs the next block's beside the end of this one's. A body llvm-mca cannot price leaves the
    reading out (None), not the kernel's other readings.
    """
    if inner or not item_loops or max(per_item for _, _, per_item in item_loops) < 1 / INNER:
        return None
    if any(_CALL.match(line) for _, reading, _ in item_loops for line in reading.loop.body):
        return None
    total = 0.0
    readings = [reading for _, reading, _ in item_loops]  # two in one block loop: each at its own steady state
    try:
        for function, reading, per_item in item_loops:
            laid = _laid_out(function, reading, readings, items, price)
            if laid is not None:
                total += laid.cycles * (laid.executions_per_item or 0.0) / (laid.unroll * laid.lanes)
            else:
                total += price(reading.loop.body)[0] * per_item / reading.per_pass
    except ToolError:
        return None
    return total


def _laid_out(function: Sequence[tuple[int, str, int]], reading: _Reading, inner: Sequence[_Reading], items: int,
              price: Callable[[Sequence[str]], tuple[float, float]]) -> LoopCost | None:
    """Return an inner loop priced laid into the loop around it, or None where it is not (see the module's text)."""
    if reading.around is None or reading.per_entry is None:
        return None
    outer, outer_iterations, outer_unroll, outer_lanes = reading.around
    if any(other is not reading and outer.start <= other.loop.start and other.loop.end <= outer.end
           for other in inner):
        return None  # two inner loops in one: which overlaps which is not this reading's to say
    trips = math.floor(reading.per_entry / reading.per_pass + 0.5)  # half up: 2.5 passes are 3, not 2
    if trips < 1 or trips * len(reading.loop.body) + len(outer.body) - len(reading.loop.body) > FLAT_LIMIT:
        return None
    body = _flattened(function, outer, reading.loop, trips)
    cycles, ports = price(body)
    return LoopCost(tuple(sorted(outer.lines | reading.loop.lines)), len(body) + 1, cycles, ports,
                    outer_iterations / items, outer_unroll, 1, outer_lanes, trips)
