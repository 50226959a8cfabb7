"""Reader of Nsight Compute's source page in SASS: how many threads executed each instruction of a kernel.

`ncu --page source --csv --print-source sass` (or `ncu --import REPORT --page source --csv --print-source sass`;
the report must hold the SourceCounters section, e.g. `--section SourceCounters` or `--set full`) writes, per
profiled launch, a line `"Kernel Name","<name>"`, a header with at least "Address", "Source" and
"Thread Instructions Executed" (versions differ in the rest: a leading "#" column, the warp-stall columns'
names, a repeated "Instructions Executed"), then one row per SASS instruction. Addresses are absolute; the
offset from the kernel's first instruction is what `cuobjdump -sass` prints as /*0010*/. Counts may carry
thousands separators. Launches of one kernel are summed per offset.

The projection (spec §4) weights each basic block of the source's SASS by these counts (`perfcast.profiles.sass`).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from perfcast.profiles.profile import ProfileError

__all__ = ["SassCount", "looks_like_ncu_source", "read_ncu_source"]

_COUNT = "Thread Instructions Executed"
_PREDICATE = re.compile(r"^@!?U?P[0-9T]$")


@dataclass(frozen=True)
class SassCount:
    """One SASS instruction of a profiled kernel: offset from the kernel's start (B), opcode, threads that ran it."""

    offset: int
    opcode: str
    threads: float


def looks_like_ncu_source(text: str) -> bool:
    """Return True when `text` is Nsight Compute's source page as CSV (a kernel line and an Address/Source header)."""
    head = text.splitlines()[:400]
    return any(line.startswith('"Kernel Name",') for line in head) and any(
        '"Address"' in line and '"Source"' in line for line in head)


def _number(text: str, kernel: str, address: str) -> float:
    """Return a count: thousands separators dropped, an empty cell 0 (an instruction never reached)."""
    cleaned = text.strip().replace(",", "")
    if not cleaned:
        return 0.0
    try:
        value = float(cleaned)
    except ValueError:
        raise ProfileError(f"kernel {kernel!r}, address {address}: {_COUNT} {text!r} is not a number") from None
    if value < 0 or value != value:
        raise ProfileError(f"kernel {kernel!r}, address {address}: {_COUNT} {text!r} is not a count")
    return value


def _opcode(source: str) -> str:
    """Return the opcode of a SASS line with its modifiers, without a guarding predicate: '@P0 FFMA.FTZ R1, ...' -> 'FFMA.FTZ'."""
    words = source.replace(";", " ").split()
    if words and _PREDICATE.match(words[0]):
        words = words[1:]
    return words[0] if words else ""


def read_ncu_source(text: str) -> dict[str, list[SassCount]]:
    """Return each kernel's SASS instructions with the threads that executed them, by offset, launches summed."""
    kernels: dict[str, dict[int, SassCount]] = {}
    kernel: str | None = None
    columns: dict[str, int] | None = None
    rows: list[tuple[str, str, str]] = []

    def finish() -> None:
        if kernel is None or not rows:
            return
        addresses = [int(address, 16) for address, _, _ in rows]
        base = min(addresses)
        into = kernels.setdefault(kernel, {})
        for value, (address, source, count) in zip(addresses, rows):
            offset, opcode = value - base, _opcode(source)
            before = into.get(offset)
            if before is not None and before.opcode != opcode:
                raise ProfileError(f"kernel {kernel!r}: two launches disagree at offset {offset:#06x} "
                                   f"({before.opcode} and {opcode}): profile one build of it")
            threads = _number(count, kernel, address) + (before.threads if before else 0.0)
            into[offset] = SassCount(offset, opcode, threads)

    for line in text.splitlines():
        if not line.strip() or line.startswith("=="):
            continue
        cells = next(csv.reader(io.StringIO(line)))
        if cells and cells[0] == "Kernel Name":
            finish()
            kernel, columns, rows = (cells[1].strip() if len(cells) > 1 else ""), None, []
            continue
        if kernel is None:
            continue  # the program's own output before the first kernel
        if columns is None:
            if "Address" in cells and "Source" in cells:
                if _COUNT not in cells:
                    raise ProfileError(f"kernel {kernel!r}: the source page has no {_COUNT!r} column: profile with "
                                       "the SourceCounters section (ncu --section SourceCounters, or --set full)")
                columns = {name: cells.index(name) for name in ("Address", "Source", _COUNT)}
            continue
        if len(cells) <= max(columns.values()):
            continue
        address = cells[columns["Address"]].strip()
        if not address:
            continue  # a CUDA source line interleaved with the SASS (--print-source cuda,sass)
        if not re.fullmatch(r"(0x)?[0-9a-fA-F]+", address):
            raise ProfileError(f"kernel {kernel!r}: address {address!r} is not hexadecimal")
        rows.append((address, cells[columns["Source"]], cells[columns[_COUNT]]))
    finish()
    if not kernels:
        raise ProfileError("no kernel in the Nsight Compute source page: expected a '\"Kernel Name\",' line and an "
                           "Address/Source header (ncu --page source --csv --print-source sass)")
    return {name: sorted(found.values(), key=lambda c: c.offset) for name, found in kernels.items()}
