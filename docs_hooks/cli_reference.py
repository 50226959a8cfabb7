"""mkdocs hook: the CLI reference page, generated from the typer app at every build so it never drifts."""

from __future__ import annotations

from typing import Any

import typer

PLACEHOLDER = "<!-- perfcast cli reference -->"


def _commands(command: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    """Return every command under `command` with its path, groups first, in the order --help lists them."""
    found = [(path, command)]
    if hasattr(command, "list_commands"):  # a group (typer ships its own copy of click: no isinstance)
        ctx = command.context_class(command, info_name=path[-1])
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found += _commands(sub, [*path, name])
    return found


def _escape(text: str) -> str:
    # Brackets too: "KERNEL=SPECIES[; s=B]" would otherwise read as a Markdown reference link.
    return (text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")
            .replace("[", "\\[").replace("]", "\\]"))


def cli_reference() -> str:
    """Return the Markdown of every command: what it does, its usage, arguments and options."""
    from perfcast.cli import app

    root = typer.main.get_command(app)
    lines: list[str] = []
    for path, command in _commands(root, ["perfcast"]):
        ctx = command.context_class(command, info_name=" ".join(path))
        depth = min(len(path) + 1, 4)
        lines += [f"{'#' * depth} `{' '.join(path)}`", ""]
        if command.help:
            lines += [command.help.strip(), ""]
        pieces = command.collect_usage_pieces(ctx)
        lines += ["```text", f"{' '.join(path)} {' '.join(pieces)}".rstrip(), "```", ""]
        rows = []
        for param in command.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None and param.param_type_name == "argument":
                record = (param.human_readable_name, getattr(param, "help", "") or "")
            if record is None or param.name == "help":
                continue
            names, _, value = record[0].partition(" <")
            value = value.removesuffix(">").replace("|", "/")
            rows.append(f"| `{names.replace('|', '/')}` | {_escape(value) or '—'} | {_escape(record[1])} |")
        if rows:
            lines += ["| argument or option | value | meaning |", "|---|---|---|", *rows, ""]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Fill the CLI reference page's placeholder."""
    if PLACEHOLDER in markdown:
        return markdown.replace(PLACEHOLDER, cli_reference())
    return markdown
