"""``recworld report``: its options are generated from :class:`~recworld.report.options.ReportOptions`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from recworld.console.options import Given, with_options
from recworld.report.options import ReportFormat, ReportOptions


@with_options(ReportOptions, required=True)
def report(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Run directories (with samples.jsonl) or suites (all their runs/*)."),
    ],
    *,
    given: Given,
) -> None:
    """Write report.md, report.html, metrics.csv and table.csv for one or more runs."""
    from recworld.report.runs import default_out_dir
    from recworld.report.sections import AnalysisOptions, parse_pairs, read_prices
    from recworld.report.writer import write_report

    job: ReportOptions = given.build()
    prices_by_model = read_prices(job.prices) if job.prices is not None else {}
    options = AnalysisOptions(
        pairs=parse_pairs(list(job.pairs)), prices=prices_by_model, tsne_clusters=job.tsne_clusters
    )
    target = job.out if job.out is not None else default_out_dir(paths)
    latex = ReportFormat.latex in job.formats
    written = write_report(
        paths, target, seed=job.seed, options=options, force=job.force, progress=job.progress, latex=latex
    )
    for path in written.values():
        typer.echo(str(path))


def register(app: typer.Typer) -> None:
    """Add this package's commands to the ``recworld`` app."""
    from recworld.report.analyze_cli import analyze_command
    from recworld.report.compare_cli import compare_command
    from recworld.report.runs_cli import runs_command

    app.command("report")(report)
    app.command("analyze")(analyze_command)
    app.command("runs")(runs_command)
    app.command("compare")(compare_command)
