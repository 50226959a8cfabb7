"""What every command of the `perfcast` command line shares: the app, consoles, errors, device lookup."""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from perfcast import __version__
from perfcast.errors import PerfcastError
from perfcast.output_files import check_writable, json_finite
from perfcast.plots.files import SAVE_FORMATS
from perfcast.units import format_duration

if TYPE_CHECKING:  # the schema (pydantic) and catalog load when a device is looked up, not for --help
    from rich.progress import ProgressColumn

    from perfcast.devices.schema import Device


class _PerfcastGroup(TyperGroup):
    """The root command group: the one place where a PerfcastError becomes `error: ...` and exit status 2."""

    def invoke(self, ctx: Any) -> Any:  # noqa: D102 - the command group's own method
        try:
            return super().invoke(ctx)
        except PerfcastError as error:
            raise fail(str(error)) from None
        except KeyboardInterrupt:
            # Commands that keep work as they go (tune, campaign) say so themselves before this; every other
            # command writes its files whole at the end, through a temporary file renamed over the target.
            errors.print("interrupted: nothing was written (perfcast writes each output whole when the command "
                         "ends; an earlier file of the same name is untouched)", highlight=False)
            raise typer.Exit(130) from None


app = typer.Typer(
    cls=_PerfcastGroup,
    help="perfcast: how fast will this kernel run on that processor, and why.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: object) -> str:
    """Return `text` without control characters (terminal escape sequences included) and with rich markup escaped."""
    return escape(_CONTROL.sub("", str(text)))


class _SafeConsole(Console):
    """A console that never lets a control character reach the terminal, whatever string it is handed."""

    def render_str(self, text: str, **kwargs: Any) -> Any:  # noqa: D102 - rich's own method
        return super().render_str(_CONTROL.sub("", text), **kwargs)


# Outside a terminal (a pipe, a file, CI, subprocess) rich would fit every table to 80 columns, wrapping and
# cutting cells ('kern…'): there, nothing is fitted to a width and every line is printed whole.
_WHOLE = 100_000


def _is_terminal(stream: Any) -> bool:
    """Return True when `stream` is a terminal (False for a pipe, a file, or a closed or foreign stream)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _width(stream: Any) -> int | None:
    """Return the console width for `stream`: the terminal's (None: rich measures it), else unlimited."""
    return None if _is_terminal(stream) else _WHOLE


# emoji=False: rich would otherwise turn user text such as 'a:-1:1e9' into 'a👎1e9'.
console = _SafeConsole(emoji=False, width=_width(sys.stdout), soft_wrap=not _is_terminal(sys.stdout))
errors = _SafeConsole(stderr=True, emoji=False, width=_width(sys.stderr))

HOST = "host"

CSV_HELP = "Write the results as CSV to this file ('-': standard output, with everything else on standard error)."
CsvOutput = Annotated[Path | None, typer.Option("--csv", help=CSV_HELP)]


def _plain(cell: Any) -> str:
    """Return a table cell as plain text: rich markup undone, line breaks made spaces."""
    from rich.text import Text

    text = cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain
    return " ".join(text.split("\n")).strip()


def table_csv(table: Any) -> str:
    """Return a rich table's header and rows as CSV text (a header split over lines becomes one)."""
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_plain(column.header) for column in table.columns)
    for row in zip(*(list(column.cells) for column in table.columns)):
        writer.writerow(_plain(cell) for cell in row)
    return buffer.getvalue()


def print_table(table: Any, csv_to: Path | None = None) -> None:
    """Print a rich table, or write it as CSV to `csv_to` ('-': standard output)."""
    if csv_to is None:
        console.print(table)
        return
    _write_csv(table_csv(table), csv_to)


def _write_csv(text: str, csv_to: Path) -> None:
    """Write CSV text to `csv_to`: standard output for '-', else the file (whole or not at all)."""
    if str(csv_to) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from perfcast.output_files import write_text_atomic

    check_writable(csv_to, "--csv", (".csv",))
    write_text_atomic(csv_to, text)
    errors.print(f"wrote {printable(csv_to)}", highlight=False)


def write_rows_csv(rows: Sequence[Mapping[str, Any]], csv_to: Path) -> None:
    """Write tidy rows (one mapping each, numbers in base units) as CSV to `csv_to` ('-': standard output).

    The header is every key in the order first met; a row without a key leaves its cell empty. Commands
    that print several tables write one CSV of all their rows, a column naming what each row belongs to.
    """
    import io

    header = list(dict.fromkeys(key for row in rows for key in row))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(_csv_cell(row.get(key)) for key in header)
    _write_csv(buffer.getvalue(), csv_to)


def _csv_cell(value: Any) -> str:
    """Return a CSV cell: numbers in full (repr), None empty, text as it is."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def check_csv(csv_to: Path | None) -> None:
    """Refuse a --csv file that cannot be written before any work is done ('-' is standard output)."""
    if csv_to is not None and str(csv_to) != "-":
        check_writable(csv_to, "--csv", (".csv",))


def text_out(csv_to: Path | None) -> Any:
    """Return where a command prints its words: standard error while its table goes to standard output as CSV."""
    return errors if csv_to is not None and str(csv_to) == "-" else console


def measuring_progress(*columns: str | ProgressColumn) -> Any:
    """Return the progress display of a long command, on stderr.

    On a terminal: a transient bar that redraws only on `update(..., refresh=True)` (rich otherwise redraws ten
    times a second from a thread of its own, and on a 2-core machine that thread takes its time from one of the
    benchmark's: the L1 triad's spread rose from 1 % to 35 % under an auto-refreshed bar), with the time left
    where a bar shows the fraction done. Elsewhere (a pipe, a log, CI): one line per step, with the time left.
    """
    from rich.progress import BarColumn, Progress, TimeRemainingColumn

    if not _is_terminal(sys.stderr):
        return _LineProgress()
    if any(isinstance(column, BarColumn) for column in columns):
        columns = (*columns, TimeRemainingColumn())
    return Progress(*columns, console=errors, transient=True, auto_refresh=False)


class _LineProgress:
    """Progress outside a terminal: a line on stderr each time a step starts, with the time spent and left."""

    def __init__(self) -> None:
        import time

        self._clock = time.monotonic
        self._started = self._clock()
        self._tasks: dict[int, dict[str, Any]] = {}

    def __enter__(self) -> _LineProgress:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def stop(self) -> None:
        """Nothing to take down: the lines stay."""

    def add_task(self, description: str, total: float | None = None, **_: Any) -> int:
        """Start following a task; return its id."""
        task = len(self._tasks)
        self._tasks[task] = {"description": description, "total": total, "completed": 0.0, "said": None}
        return task

    def update(self, task: int, description: str | None = None, completed: float | None = None,
               advance: float | None = None, **_: Any) -> None:
        """Record progress; print a line when the step's description changes."""
        state = self._tasks[task]
        if description is not None:
            state["description"] = description
        if completed is not None:
            state["completed"] = float(completed)
        if advance is not None:
            state["completed"] += float(advance)
        if state["description"] == state["said"]:
            return
        state["said"] = state["description"]
        elapsed = self._clock() - self._started
        line = f"[{format_duration(elapsed)}]"
        total = state["total"]
        if total:
            fraction = min(1.0, max(0.0, state["completed"] / total))
            line += f" {100 * fraction:3.0f} %"
            if 0 < fraction < 1:
                line += f", about {format_duration(elapsed * (1 - fraction) / fraction)} left"
        errors.print(f"{line}  {printable(state['description'])}", highlight=False)


def fail(message: str) -> typer.Exit:
    """Print `message` (plain text, never markup) as an error and return the exit to raise."""
    errors.print(f"[bold red]error:[/] {printable(message)}", highlight=False)
    return typer.Exit(code=2)


def check_chart_path(output: Path | None, option: str = "--output") -> None:
    """Raise an InputError before any work if `output` is not a chart format perfcast writes, or not writable."""
    check_writable(output, option, SAVE_FORMATS)


def registry_help(registry: dict[str, tuple[str, Any]]) -> str:
    """Return option help listing a registry's names (backends, strategies) with what each does."""
    return "One of: " + "; ".join(f"{name} ({about})" for name, (about, _) in registry.items()) + "."


def print_json(data: Any) -> None:
    """Print `data` as JSON on stdout, with no styling, for scripts (NaN and infinities as null: JSON has neither)."""
    typer.echo(json.dumps(json_finite(data), indent=2, default=str, allow_nan=False))


def resolve_device(name: str) -> Device:
    """Return the device named on the command line: a catalog name, a YAML path, or 'host' (detected now)."""
    if name == HOST:
        from perfcast.bench.detect import detect_cpu

        with console.status("detecting this machine (probing DRAM bandwidth)…"):
            return detect_cpu()
    from perfcast.devices.catalog import get_device

    try:
        return get_device(name)
    except PerfcastError as error:
        raise fail(str(error)) from None


def _version(value: bool) -> None:
    if value:
        typer.echo(f"perfcast {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """perfcast: how fast will this kernel run on that processor, and why."""

def format_time(seconds: float) -> str:
    """Return a duration in s, ms, µs or ns (4 significant digits)."""
    return format_duration(seconds)
