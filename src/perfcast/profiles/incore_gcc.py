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
loop and its remainder: the loop with the most source iterations an iteration prices it. A loop whose source
iterations are at most one a work-item is the loop over the work-items, left out as on PoCL: §3's throughput
prices it.

An inner loop of few trips an entry is laid that many times into the loop around it (flattened) when the result
has at most FLAT_LIMIT instructions: llvm-mca then lets one work-item's chain overlap the next one's, as the core's
window does (a hash's 16 dependent rounds: 160 cycles a work-item alone, 95 laid out, 73 measured on the Xeon VM).
A long inner loop keeps its own steady state, which the overlap of its entries barely changes. The functions are
pure; the price of a body comes in as a function (`mca_cycles` in a campaign).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from perfcast.profiles.incore import (
    INNER,
    InCore,
    Loop,
    LoopCost,
    innermost_loops,
    is_padding,
    loop_at,
    loop_ranges,
    unroll_factor,
)
from perfcast.profiles.profile import ProfileError

__all__ = ["FLAT_LIMIT", "c_kernel_incore", "read_gcov_lines", "source_iterations", "vector_factor"]

FLAT_LIMIT = 2048  # instructions of a flattened body: several times any core's window, and quick for llvm-mca

_REGISTER_BYTES = {"x": 16, "y": 32, "z": 64}
# Packed instructions that move, spread or rearrange elements rather than compute on them: their width says
# nothing of the iterations (a broadcast of a scalar fills a zmm).
_NOT_ARITHMETIC = re.compile(r"^v(?:p?mov|p?broadcast|p?perm|p?shuf|extract|insert|p?unpck|p?blend|p?alignr|zero|"
                             r"pextr|pinsr|p?compress|p?expand)")
_FP_ELEMENT = re.compile(r"^v\w*?(ps|pd|ph)\b")
_INT_ELEMENT = re.compile(r"^vp\w*?(b|w|d|q)\b")
_ELEMENT_BYTES = {"ps": 4, "pd": 8, "ph": 2, "b": 1, "w": 2, "d": 4, "q": 8}


def vector_factor(body: Sequence[str], widest_bytes: int) -> int:
    """Return the elements an iteration of a loop body handles: its widest packed arithmetic (1: scalar).

    `widest_bytes`: the widest vector gcc's report says it vectorised a loop of the function with (0: none, so
    the body's packed instructions are a kernel's own vector types or straight-line code: 1).
    """
    if widest_bytes <= 0:
        return 1
    lanes = 1
    for instruction in body:
        mnemonic = instruction.split(None, 1)[0] if instruction.strip() else ""
        if not mnemonic.startswith("v") or _NOT_ARITHMETIC.match(mnemonic):
            continue
        element = _FP_ELEMENT.match(mnemonic) or _INT_ELEMENT.match(mnemonic)
        registers = [_REGISTER_BYTES[r] for r in re.findall(r"%([xyz])mm\d+", instruction)]
        if element is None or not registers:
            continue
        width = max(registers)
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
            number, count = int(line["line_number"]), int(line["count"])
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
    return iterations, unroll_factor(loop.sequence, same) if same else 1


def _flattened(function: Sequence[tuple[int, str, int]], outer: Loop, inner: Loop, trips: int) -> list[str]:
    """Return the outer loop's body with the inner loop laid `trips` times in its place (closing jumps left out)."""
    body: list[str] = []
    for address, text, _ in function:
        if not outer.start <= address < outer.end or is_padding(text):
            continue
        if address == inner.start:
            body.extend(list(inner.body) * trips)
        elif not inner.start <= address <= inner.end:
            body.append(text)
    return body


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
    for function in functions:
        lines = {address: line for address, _, line in function}
        ranges = loop_ranges(function)
        chosen: dict[int, tuple[Loop, int, int, int]] = {}
        for loop in innermost_loops(function):
            counted = source_iterations(loop, lines, counts) if loop.lines else None
            if counted is None:
                continue
            iterations, unroll = counted
            lanes = vector_factor(loop.body, widest_bytes)
            latch = _ends(loop, lines)[1]
            best = chosen.get(latch)
            # gcc's vector loop and its remainder close on the same line: the one running most a pass prices it.
            if best is None or (unroll * lanes, -len(loop.body)) > (best[2] * best[3], -len(best[0].body)):
                chosen[latch] = (loop, iterations, unroll, lanes)
        inner = [entry for entry in chosen.values() if entry[1] > INNER * items]
        for loop, iterations, unroll, lanes in chosen.values():
            per_item = iterations / items
            cost = None
            if per_item > INNER:
                cost = _laid_out(function, lines, ranges, counts, (loop, iterations, unroll, lanes), inner, items,
                                 price, widest_bytes)
            if cost is None:
                cycles, ports = price(loop.body) if per_item > INNER else (0.0, 0.0)
                cost = LoopCost(tuple(sorted(loop.lines)), len(loop.body) + 1, cycles, ports, per_item, unroll, 1,
                                lanes)
            found.append(cost)
    return InCore(cpu, sum(cost.cycles_per_item for cost in found), tuple(found))


def _laid_out(function: Sequence[tuple[int, str, int]], lines: Mapping[int, int], ranges: Sequence[tuple[int, int]],
              counts: Mapping[int, int], entry: tuple[Loop, int, int, int], inner: Sequence[tuple[Loop, int, int, int]],
              items: int, price: Callable[[Sequence[str]], tuple[float, float]], widest_bytes: int) -> LoopCost | None:
    """Return an inner loop priced laid into the loop around it, or None where it is not (see the module's text)."""
    loop, iterations, unroll, lanes = entry
    around = [(s, e) for s, e in ranges if s <= loop.start and loop.end <= e and (s, e) != (loop.start, loop.end)]
    if not around:
        return None
    start, end = min(around, key=lambda r: r[1] - r[0])
    if any(other is not loop and start <= other.start and other.end <= end for other, *_ in inner):
        return None  # two inner loops in one: which overlaps which is not this reading's to say
    outer = loop_at(function, start, end)
    counted = source_iterations(outer, lines, counts)
    if counted is None:
        return None
    outer_iterations, outer_unroll = counted
    # A vectorised inner loop's sum is reduced across its lanes after it, in the outer loop's own code: those
    # vectors are the inner loop's. (Taking them as the outer's would change the trips and the body alike.)
    own = [text for address, text, _ in function if start <= address < end and not loop.start <= address <= loop.end]
    outer_lanes = 1 if lanes > 1 else vector_factor(own, widest_bytes)
    passes = outer_iterations / (outer_unroll * outer_lanes)
    trips = round(iterations / (unroll * lanes) / passes) if passes > 0 else 0
    if trips < 1 or trips * len(loop.body) + len(outer.body) - len(loop.body) > FLAT_LIMIT:
        return None
    body = _flattened(function, outer, loop, trips)
    cycles, ports = price(body)
    return LoopCost(tuple(sorted(outer.lines | loop.lines)), len(body) + 1, cycles, ports, outer_iterations / items,
                    outer_unroll, 1, outer_lanes, trips)
