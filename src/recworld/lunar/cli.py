"""Command-line commands of this package (filled in by its implementation)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this package's commands to the ``recworld`` app."""
