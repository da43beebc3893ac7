"""``recworld export``: write a suite for lm-eval, inspect_ai or Hugging Face datasets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from recworld.console.output import ProgressOption


def export_command(
    suite_dir: Annotated[Path, typer.Argument(help="Suite directory (holds manifest.json, questions/).")],
    to: Annotated[str, typer.Option("--to", help="lm-eval, inspect or hf.")],
    out: Annotated[Path, typer.Option("--out", help="New or empty directory, or a previous export.")],
    measures: Annotated[
        str | None, typer.Option("--measures", help="Comma-separated measure ids (default all).")
    ] = None,
    progress: ProgressOption = True,
) -> None:
    """Export a suite so lm-eval, inspect_ai or `datasets` can run it; rerunning replaces the export."""
    from recworld.export.run import export_suite

    chosen = tuple(m.strip() for m in measures.split(",") if m.strip()) if measures else None
    result = export_suite(suite_dir, to, out, measures=chosen, progress=progress)
    counts = result["counts"]
    typer.echo(f"exported {sum(counts.values())} questions in {len(counts)} measures for {to} to {out}")
    typer.echo("names: " + ", ".join(result["names"]))


def register(app: typer.Typer) -> None:
    """Add ``export`` to the ``recworld`` app."""
    app.command("export")(export_command)
