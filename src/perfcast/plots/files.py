"""Writing charts to disk."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from perfcast.output_files import replaced

if TYPE_CHECKING:  # matplotlib loads only when a chart is drawn
    from matplotlib.figure import Figure

__all__ = ["SAVE_FORMATS", "save_figure"]

SAVE_FORMATS = (".png", ".svg", ".pdf")


def save_figure(figure: Figure, path: str | Path) -> Path:
    """Write `figure` to `path` as PNG, SVG or PDF (by extension) and return the path."""
    path = Path(path)
    if path.suffix.lower() not in SAVE_FORMATS:
        raise ValueError(f"cannot write {path.name!r}: use one of {', '.join(SAVE_FORMATS)}")
    with replaced(path) as partial:
        figure.savefig(partial, format=path.suffix.lower().lstrip("."))
    return path
