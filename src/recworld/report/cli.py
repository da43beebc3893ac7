"""``recworld report``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from recworld.console.output import ProgressOption
from recworld.records import MAX_INT


class ReportFormat(StrEnum):
    latex = "latex"


Force = Annotated[
    bool,
    typer.Option(
        "--force", help="Write into an --out recworld did not write (files it does not write are kept)."
    ),
]


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
        int | None,
        typer.Option(
            min=0, max=MAX_INT, help="Bootstrap seed (default: the one each run's metrics.json used)."
        ),
    ] = None,
    pair: Annotated[
        list[str] | None,
        typer.Option("--pair", help="SMALL=LARGE model specs: a relative-improvement table (repeatable)."),
    ] = None,
    prices: Annotated[
        Path | None,
        typer.Option("--prices", help="JSON lines or CSV of model, input and output USD per 1M tokens."),
    ] = None,
    tsne_clusters: Annotated[
        int,
        typer.Option(
            "--tsne-clusters", min=1, max=1000, help="k-means clusters in the NeuMF t-SNE (paper Fig. 8: 5)."
        ),
    ] = 5,
    formats: Annotated[
        list[ReportFormat] | None,
        typer.Option(
            "--format",
            help="Also write this format: latex (report.tex, booktabs score tables with intervals). "
            "Repeatable; report.md, report.html and the CSVs are always written.",
        ),
    ] = None,
    force: Force = False,
    progress: ProgressOption = True,
) -> None:
    """Write report.md, report.html, metrics.csv and table.csv for one or more runs."""
    from recworld.report.runs import default_out_dir
    from recworld.report.sections import AnalysisOptions, parse_pairs, read_prices
    from recworld.report.writer import write_report

    prices_by_model = read_prices(prices) if prices is not None else {}
    options = AnalysisOptions(
        pairs=parse_pairs(pair or []), prices=prices_by_model, tsne_clusters=tsne_clusters
    )
    target = out if out is not None else default_out_dir(paths)
    latex = ReportFormat.latex in (formats or [])
    written = write_report(
        paths, target, seed=seed, options=options, force=force, progress=progress, latex=latex
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
