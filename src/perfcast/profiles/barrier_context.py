"""The values a kernel keeps live across its barriers, read from its LLVM IR: a CPU runtime's context (§3.9).

An OpenCL runtime on a CPU runs each region between barriers as a loop over the work-items, so a value one region
defines and a later one uses is stored per work-item at the barrier and loaded again after it (PoCL's context
arrays). Values every work-item shares (kernel arguments, group ids, sizes, constants, and what is computed
from them alone) need no copy per work-item, and a work-item's ids are recomputed from the loop's index. So a
barrier's context is the SSA values live across it that depend on a work-item's id, other than the id itself.

Liveness is the textbook backward data flow over the function's basic blocks (a phi's incoming value is live at
the end of the block it comes from). A kernel's figure is the mean over its barrier calls: the profile counts its
barrier crossings, not which call each one was.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence

__all__ = ["barrier_context_values"]

_LABEL = re.compile(r"^(?P<name>[\w.$-]+):")
_DEFINED = re.compile(r"^\s+(?P<name>%[\w.$-]+)\s*=")
_VALUE = re.compile(r"%[\w.$-]+")
_TARGET = re.compile(r"label (?P<name>%[\w.$-]+)")
_INCOMING = re.compile(r"\[\s*(?P<value>[^,\]]+),\s*(?P<block>%[\w.$-]+)\s*\]")
_BARRIER = re.compile(r"@_Z(?:7barrier|18work_group_barrier)j")
# The builtins whose results differ from one work-item to the next, and which a runtime recomputes from its loop.
_IDS = re.compile(r"@_Z(?:12get_local_id|13get_global_id|20get_global_linear_id|19get_local_linear_id)[jv]?\(")


def _blocks(lines: Sequence[str]) -> tuple[list[str], dict[str, list[str]]]:
    """Return a function's block names in order and each block's instructions (comments and metadata dropped)."""
    order: list[str] = []
    body: dict[str, list[str]] = {}
    for line in lines:
        code = re.split(r",?\s+!\w+ !\d+", line.split(";")[0])[0].rstrip()
        label = _LABEL.match(code)
        if label:
            order.append("%" + label["name"])
            body[order[-1]] = []
        elif code.strip():
            if not order:  # instructions before any label: the entry block, left unnamed
                order.append("%entry")
                body["%entry"] = []
            if code.startswith("    ") or code.lstrip().startswith("]"):
                body[order[-1]][-1] += " " + code.strip()  # a switch's cases, one a line: its terminator's
            else:
                body[order[-1]].append(code)
    return order, body


def _uses(instruction: str, blocks: set[str]) -> set[str]:
    """Return the SSA values an instruction reads (a phi's are charged to its incoming blocks, not here)."""
    defined = _DEFINED.match(instruction)
    operands = instruction.split("=", 1)[1] if defined else instruction
    if re.match(r"\s*phi\b", operands) or "@llvm.dbg." in operands:  # debug records use nothing
        return set()
    return {name for name in _VALUE.findall(operands) if name not in blocks}


def _variant(body: dict[str, list[str]]) -> tuple[set[str], set[str]]:
    """Return the values that depend on a work-item's id, and the ids' own calls, over a function's blocks."""
    definitions = {m["name"]: line for lines in body.values() for line in lines if (m := _DEFINED.match(line))}
    ids = {name for name, line in definitions.items() if _IDS.search(line)}
    variant, changed = set(ids), True
    while changed:
        changed = False
        for name, line in definitions.items():
            if name not in variant and any(v in variant for v in _VALUE.findall(line.split("=", 1)[1])):
                variant.add(name)
                changed = True
    return variant, ids


def _barrier_sites(lines: Sequence[str]) -> list[int]:
    """Return, per barrier call of one function, the work-item-variant values live across it (ids left out)."""
    order, body = _blocks(lines)
    blocks = set(order)
    successors = {b: _TARGET.findall(body[b][-1]) if body[b] else [] for b in order}
    from_phis: dict[str, set[str]] = defaultdict(set)  # block -> values its successors' phis take from it
    for b in order:
        for line in body[b]:
            if re.search(r"=\s*phi\b", line):
                for incoming in _INCOMING.finditer(line):
                    value = incoming["value"].strip()
                    if value.startswith("%") and value not in blocks:
                        from_phis[incoming["block"]].add(value)
    variant, ids = _variant(body)

    def walk(b: str, live: set[str], sites: list[int] | None = None) -> set[str]:
        """Return what is live at block b's start given what is live at its end; count each barrier's context."""
        live = set(live)
        for line in reversed(body[b]):
            if sites is not None and _BARRIER.search(line):
                sites.append(len((live & variant) - ids))
            if (defined := _DEFINED.match(line)) is not None:
                live.discard(defined["name"])
            live |= _uses(line, blocks)
        return live

    live_in: dict[str, set[str]] = {b: set() for b in order}
    live_out: dict[str, set[str]] = {b: set() for b in order}
    changed = True
    while changed:
        changed = False
        for b in reversed(order):
            out = set(from_phis[b]).union(*(live_in.get(s, set()) for s in successors[b]))
            live = walk(b, out)
            if out != live_out[b] or live != live_in[b]:
                live_out[b], live_in[b], changed = out, live, True
    sites: list[int] = []
    for b in order:
        walk(b, live_out[b], sites)
    return sites


def _definitions(lines: Sequence[str]) -> list[list[str]]:
    """Return the bodies of the definitions one function name's lines hold (two builds of a kernel give two).

    perfcast.profiles.oclgrind joins every module's definition of a name (SHOC builds each kernel in single and
    double precision): a label seen again starts the next definition, as no function names a block twice.
    """
    bodies: list[list[str]] = [[]]
    seen: set[str] = set()
    for line in lines:
        label = _LABEL.match(line)
        if label:
            if label["name"] in seen:
                bodies.append([])
                seen = set()
            seen.add(label["name"])
        bodies[-1].append(line)
    return bodies


def barrier_context_values(functions: dict[str, list[str]], kernels: Iterable[str]) -> dict[str, float]:
    """Return, per kernel with a barrier in its own body, the mean work-item-variant values live across one (count).

    `functions`: each IR function's body lines (perfcast.profiles.oclgrind's reading of the dumped modules; a
    kernel built twice has both definitions, whose barrier calls are pooled). A kernel whose barriers sit in
    functions it calls is left out: their values live in another frame.
    """
    found = {}
    for kernel in kernels:
        if kernel in functions:
            sites = [site for body in _definitions(functions[kernel]) for site in _barrier_sites(body)]
            if sites:
                found[kernel] = sum(sites) / len(sites)
    return found
