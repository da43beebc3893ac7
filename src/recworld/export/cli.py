"""``recworld export``: write a suite for lm-eval, inspect_ai or Hugging Face datasets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from recworld.console.options import Given, with_options
from recworld.export.options import ExportOptions


@with_options(ExportOptions, required=True)
def export_command(
    suite_dir: Annotated[Path, typer.Argument(help="Suite directory (holds manifest.json, questions/).")],
    *,
    given: Given,
) -> None:
    """Export a suite so lm-eval, inspect_ai or `datasets` can run it; rerunning replaces the export."""
    from recworld.export.run import export_suite

    job: ExportOptions = given.build()
    to, out = job.to, job.out
    result = export_suite(suite_dir, to, out, measures=job.measures, progress=job.progress)
    counts = result["counts"]
    typer.echo(f"exported {sum(counts.values())} questions in {len(counts)} measures for {to} to {out}")
    typer.echo("names: " + ", ".join(result["names"]))


def register(app: typer.Typer) -> None:
    """Add ``export`` to the ``recworld`` app."""
    app.command("export")(export_command)
