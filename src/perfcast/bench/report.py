"""Pieces shared by the Markdown reports of the validations."""

from __future__ import annotations

__all__ = ["reproduce_block"]


def reproduce_block(command: str) -> list[str]:
    """Return the Markdown lines that show the command reproducing a report."""
    return ["Reproduce with:", "", "```sh", command, "```", ""]
