"""`perfcast sass`: how a CUDA kernel's special functions compile on two architectures (the projection's FLOP ratio)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from perfcast.cli.common import (
    CsvOutput,
    app,
    check_csv,
    print_json,
    print_table,
    printable,
    text_out,
)


@app.command("sass")
def sass_command(
    source: Annotated[Path, typer.Argument(help="CUDA C source (.cu).")],
    source_arch: Annotated[str, typer.Option("--from", help="Architecture the kernel was profiled on, e.g. sm_80.")],
    target_arch: Annotated[str, typer.Option("--to", help="Architecture to project onto, e.g. sm_90.")],
    define: Annotated[list[str] | None, typer.Option("--define", "-D", help="A macro for nvcc, e.g. TILE=16 (repeatable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    csv_to: CsvOutput = None,
) -> None:
    """FLOP in special-function blocks (MUFU, division and square-root slow paths) per kernel on both architectures."""
    from perfcast.errors import InputError
    from perfcast.profiles.sass import compare_sass

    if not source.is_file():
        raise InputError(f"{source}: no such file")
    check_csv(csv_to)
    options = [f"-D{d}" for d in define or []]
    with tempfile.TemporaryDirectory() as folder:
        found = compare_sass(source, source_arch, target_arch, Path(folder), options)
    if as_json:
        print_json([{**vars(c), "flop_ratio": c.flop_ratio} for c in found])
        return
    table = Table(box=box.SIMPLE_HEAVY, title=f"{printable(source.name)}: {source_arch} -> {target_arch} "
                  "(FLOP per thread, each block counted once)")
    for column in ("kernel", "special blocks", f"special FLOP {source_arch}", f"special FLOP {target_arch}",
                   f"other FLOP {source_arch}", f"other FLOP {target_arch}", "FLOP ratio"):
        table.add_column(column, justify="left" if column == "kernel" else "right")
    for c in found:
        table.add_row(printable(c.kernel), f"{c.special_blocks[0]} / {c.special_blocks[1]}", str(c.special_source),
                      str(c.special_target), str(c.other_source), str(c.other_target), f"{c.flop_ratio:.3f}")
    print_table(table, csv_to)
    text_out(csv_to).print("The ratio is static: the method weights each block by the threads that ran it on the source, "
                  "which perfcast does not read yet.")
