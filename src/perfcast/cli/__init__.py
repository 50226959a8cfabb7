"""The `perfcast` command line: thin typer commands that call the library and print tables or JSON."""

# Importing a command module registers its commands; `perfcast --help` lists them in this order.
from perfcast.cli import devices, roofline, hull, classify, profile, project, sass, choose, bench, campaign, validate, tune  # noqa: F401, I001
from perfcast.cli.common import app

__all__ = ["app", "main"]


def main() -> None:
    """Run the perfcast command line."""
    import sys

    # A terminal that cannot show µ, – or ∞ (PYTHONIOENCODING=ascii, a C locale) gets '?' instead of a crash.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    app()
