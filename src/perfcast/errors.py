"""perfcast's one error base class: everything perfcast raises about its input is a PerfcastError.

The command line catches PerfcastError once (``perfcast.cli.main``) and prints
``error: ...`` with exit status 2. Each subclass is also the built-in
exception it refines (ValueError for bad input, LookupError for a name that
is not there, RuntimeError for a tool that cannot run), so code that catches
those keeps working.
"""

from __future__ import annotations

__all__ = ["BackendUnavailable", "InputError", "NotFound", "PerfcastError", "ToolError"]


class PerfcastError(Exception):
    """Base of every error perfcast raises about input, files, names or tools; its message is for people."""


class InputError(PerfcastError, ValueError):
    """Input that perfcast cannot use: a malformed file, option, species or value."""


class NotFound(PerfcastError, LookupError):
    """A name that is not there: a device, a function, a run, a level."""

    def __str__(self) -> str:
        # LookupError's str() of a KeyError quotes its message; this one does not.
        return str(self.args[0]) if self.args else ""


class ToolError(PerfcastError, RuntimeError):
    """A tool perfcast needs that cannot run here: a compiler, an OpenCL platform, a GPU."""


class BackendUnavailable(ToolError):
    """A benchmark backend that cannot run here (no compiler, no OpenCL platform, no CUDA GPU), with the reason."""
