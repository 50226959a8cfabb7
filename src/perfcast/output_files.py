"""Writing results: output paths checked before any work, and files replaced whole, never half-written.

A benchmark or a validation can measure for minutes; an output path that
cannot be written must be said before that, not after. And an interrupted
write must leave the previous file as it was: every file is written next to
its target and renamed over it (atomic on POSIX file systems).
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from perfcast.errors import InputError

__all__ = ["UnwritablePath", "check_writable", "json_finite", "replaced", "reproduce_block", "same_file",
           "write_text_atomic"]


def _read_umask() -> int:
    """Return the process's umask (reading it means setting it: done once, at import, before any thread starts)."""
    current = os.umask(0)
    os.umask(current)
    return current


_UMASK = _read_umask()  # mkstemp makes files 0600; a written result gets 0644 less the umask


class UnwritablePath(InputError):
    """An output path perfcast cannot write, named with the option that gave it."""


def same_file(a: str | Path, b: str | Path) -> bool:
    """Return whether two paths name one file: the same real path, or the same inode (a hard link)."""
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_writable(path: str | Path | None, option: str = "output", suffixes: tuple[str, ...] = (),
                   inputs: Sequence[str | Path | None] = ()) -> None:
    """Raise UnwritablePath unless a file can be created at `path` (its folder is made if missing).

    `inputs`: files the command reads; an output that is one of them, by any spelling, symbolic or hard link,
    is refused before anything is read or written.
    """
    if path is None:
        return
    path = Path(path)
    for source in inputs:
        if source is not None and same_file(path, source):
            raise UnwritablePath(f"{option} {path}: is {source}, which this command reads; write elsewhere")
    if suffixes and path.suffix.lower() not in suffixes:
        raise UnwritablePath(f"{option} {path}: use one of {', '.join(suffixes)}")
    if path.is_dir():
        raise UnwritablePath(f"{option} {path}: is a folder")
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # A real try: permission bits say nothing about /proc, read-only mounts or root.
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{path.name}.", suffix=".check"):
            pass
    except OSError as error:
        raise UnwritablePath(f"{option} {path}: cannot write there ({error.strerror or error})") from None


@contextmanager
def replaced(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; when the block ends without error it replaces `path` whole."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix)
    os.close(handle)
    partial = Path(name)
    try:
        yield partial
        partial.chmod(0o644 & ~_UMASK)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` through a temporary file renamed over it; return the path."""
    with replaced(path) as partial:
        partial.write_text(text, encoding="utf-8")
    return Path(path)


def markdown_cell(text: str) -> str:
    """Return `text` fit for one cell of a Markdown table: pipes escaped, on one line."""
    return text.replace("|", "\\|").replace("\n", " ")


def reproduce_block(command: str) -> list[str]:
    """Return the Markdown lines that open every written report: the command that reproduces it."""
    return ["Reproduce with:", "", "```sh", command, "```", ""]


def json_finite(data: Any) -> Any:
    """Return `data` (dicts, lists, tuples, numbers) with every NaN or infinite float as None: JSON has neither.

    NumPy scalars (float32, int64, bool_) become the Python numbers they hold, so that JSON writes numbers, not
    their text.
    """
    item = getattr(data, "item", None)
    if item is not None and getattr(data, "shape", None) == ():  # a NumPy scalar (an array of shape () too)
        data = item()
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: json_finite(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [json_finite(value) for value in data]
    return data
