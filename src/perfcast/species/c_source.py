"""Reading a C file for classification: `gcc -E` with perfcast's stand-in headers, then pycparser.

The system headers use GNU extensions that a C99 parser rejects, so the file
is preprocessed with ``-nostdinc`` against the small headers in ``c_headers/``
(type names and constants only). Errors keep the compiler's shape,
``file:line:col: message``, with the line numbers of the user's file.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pycparser import c_ast, c_parser

from perfcast.errors import InputError

__all__ = ["CSourceError", "ParsedSource", "macro_values", "parse_c_file", "parse_c_text"]

HEADERS = Path(__file__).with_name("c_headers")

# GNU spellings that real code uses and pycparser does not know; erased or mapped to C99 by the preprocessor.
_GNU_DEFINES = (
    "-D__attribute__(x)=",
    "-D__restrict=restrict",
    "-D__restrict__=restrict",
    "-D__inline=inline",
    "-D__inline__=inline",
    "-D__extension__=",
    "-D__const=const",
    "-D__volatile__=volatile",
    "-D__builtin_expect(x,y)=(x)",
)


class CSourceError(InputError):
    """A C file that cannot be preprocessed or parsed; the message is compiler-style (file:line:col)."""


@dataclass(frozen=True)
class ParsedSource:
    """A parsed translation unit, its file name, and the macro names the file defines or tests."""

    path: str
    ast: c_ast.FileAST
    macro_names: frozenset[str]
    text: str


_MACRO_LINE = re.compile(r"^\s*#\s*(?:define|undef|ifdef|ifndef|if|elif)\b(.*)$", re.MULTILINE)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def macro_names(text: str) -> frozenset[str]:
    """Return the identifiers named on #define/#if lines: the ones a --define must reach the preprocessor for."""
    return frozenset(name for line in _MACRO_LINE.findall(text) for name in _IDENTIFIER.findall(line))


def preprocess(path: Path, defines: Mapping[str, int | str] = {}, compiler: str = "gcc") -> str:
    """Return the preprocessed text of the C file at `path`, with `defines` given as -D."""
    exe = shutil.which(compiler)
    if exe is None:
        raise CSourceError(f"{path}: cannot preprocess: {compiler!r} is not installed (apt-get install gcc)")
    command = [exe, "-E", "-nostdinc", "-std=gnu99", "-I", str(HEADERS), *_GNU_DEFINES]
    command += [f"-D{name}={value}" for name, value in defines.items()]
    command.append(str(path))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CSourceError(f"{path}: cannot preprocess: {error}") from None
    if done.returncode != 0:
        message = "\n".join(line for line in done.stderr.splitlines() if line.strip())
        raise CSourceError(message or f"{path}: the preprocessor failed (exit {done.returncode})")
    # Inline assembly (compiler barriers, mostly) has no arithmetic on data and no C99 syntax: drop it.
    return _ASM.sub("", done.stdout)


def macro_values(path: Path) -> dict[str, str]:
    """Return the object-like macros the file defines after preprocessing (name -> replacement text)."""
    exe = shutil.which("gcc")
    if exe is None:
        raise CSourceError(f"{path}: cannot preprocess: 'gcc' is not installed (apt-get install gcc)")
    command = [exe, "-E", "-dM", "-nostdinc", "-std=gnu99", "-I", str(HEADERS), *_GNU_DEFINES, str(path)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CSourceError(f"{path}: cannot preprocess: {error}") from None
    if done.returncode != 0:
        raise CSourceError(done.stderr.strip() or f"{path}: the preprocessor failed (exit {done.returncode})")
    found = re.findall(r"^#define\s+([A-Za-z]\w*)\s+(.+?)\s*$", done.stdout, re.MULTILINE)
    return {name: value for name, value in found}


_ASM = re.compile(r"\b(?:__asm__|__asm|asm)\b\s*(?:volatile\b|goto\b|\s)*\((?:[^()]|\([^()]*\))*\)")


_PARSE_LOCATION = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<rest>.*)$", re.DOTALL)


def parse_c_text(text: str, name: str) -> c_ast.FileAST:
    """Return the pycparser AST of preprocessed `text`; errors as `file:line:col: error: ...`."""
    try:
        return c_parser.CParser().parse(text, filename=name)
    except Exception as error:  # pycparser raises ParseError, and plain errors on some malformed input
        message = str(error)
        found = _PARSE_LOCATION.match(message)
        if found:
            raise CSourceError(
                f"{found['file']}:{found['line']}:{found['col']}: error: {found['rest']}"
            ) from None
        raise CSourceError(f"{name}: error: {message}") from None


def parse_c_file(path: str | Path, defines: Mapping[str, int | str] = {}) -> ParsedSource:
    """Return the parsed C file at `path`; `defines` reach the preprocessor only for names the file uses as macros."""
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise CSourceError(f"{path}: cannot read: {error.strerror or error}") from None
    names = macro_names(raw)
    text = preprocess(path, {k: v for k, v in defines.items() if k in names})
    return ParsedSource(str(path), parse_c_text(text, str(path)), names, raw)
