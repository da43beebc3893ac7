"""``recworld report``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def report(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Run directories (with samples.jsonl) or suites (all their runs/*)."),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Output directory (default: SUITE/report, or the runs' common parent)."
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Bootstrap seed (default: the one each run's metrics.json used).")
    ] = None,
) -> None:
    """Write report.md, report.html, metrics.csv and table.csv for one or more runs."""
    from recworld.report.runs import default_out_dir
    from recworld.report.writer import write_report

    target = out if out is not None else default_out_dir(paths)
    written = write_report(paths, target, seed=seed)
    for path in written.values():
        typer.echo(str(path))


def register(app: typer.Typer) -> None:
    """Add this package's commands to the ``recworld`` app."""
    app.command("report")(report)
