"""The documentation site: its CLI reference is generated from the app, and every page is in the nav."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import typer
import yaml

from perfcast.cli import app

ROOT = Path(__file__).parent.parent


def _hook():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "docs_hooks" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_lists_every_command_and_option() -> None:
    text = _hook().cli_reference()
    root = typer.main.get_command(app)
    for name in root.list_commands(None):  # type: ignore[arg-type]
        assert f"`perfcast {name}`" in text, name
    assert "`perfcast validate classify`" in text and "--corpus" in text and "--csv" in text
    assert "`perfcast classify`" in text and "--explain / --brief" in text


def test_every_page_of_the_nav_exists_and_every_top_page_is_in_it() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python", "#"))

    def pages(entries: list) -> list[str]:
        found = []
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            found += pages(value) if isinstance(value, list) else [value]
        return found

    listed = pages(config["nav"])
    for page in listed:
        assert (ROOT / "docs" / page).is_file(), page
    for page in (ROOT / "docs").glob("*.md"):
        assert page.name in listed, f"docs/{page.name} is not in the site's nav"
