"""``recworld lunar rate | annotate | agreement``: the quality validation of a LUNAR folder.

``rate`` asks an LLM for the paper's quality scores (Tables 1, 9); ``annotate`` exports a blind
sheet for human raters; ``agreement`` compares raters (Tables 2, 10). ``lunar report`` then
shows whatever of these exists in the folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from recworld.console.output import JsonOption, ProgressOption
from recworld.lunar import cli_options as o
from recworld.lunar import cli_output as show
from recworld.lunar.config import DEFAULT_FAIL_ON_ERROR


def rate(
    root: Annotated[
        Path, typer.Argument(metavar="ROOT", help="LUNAR folder (after lunar synth; queries optional).")
    ],
    model: o.Model,
    max_records: Annotated[
        int, typer.Option("--max-records", min=1, help="Records shown per user, evenly spread.")
    ] = 120,
    no_queries: Annotated[bool, typer.Option("--no-queries", help="Do not rate the queries.")] = False,
    base_url: o.BaseUrl = None,
    api_key_env: o.ApiKeyEnv = "OPENAI_API_KEY",
    attempts: o.Attempts = 3,
    concurrency: o.Concurrency = 4,
    timeout: o.Timeout = 900.0,
    max_retries: o.MaxRetries = 6,
    seed: o.Seed = 0,
    compact: o.Compact = None,
    allow_insecure_http: o.Insecure = False,
    fail_on_error: o.FailOnError = DEFAULT_FAIL_ON_ERROR,
    retry_failures: o.RetryFailures = False,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """LLM-rated log plausibility and profile consistency (paper Tables 1, 9), plus query quality."""
    from recworld.lunar.ratings import RateConfig, rate_quality

    fields = {
        "root": root,
        "max_records": max_records,
        "queries": not no_queries,
        "fail_on_error": fail_on_error,
    }
    config = o.build(RateConfig, fields | {"llm": o.session(dict(locals()))})
    run = show.tracked("rate", progress, lambda: rate_quality(config))
    overall = run["summary"]["overall"]
    text = (
        f"rated {root}: plausibility {_fmt(overall['plausibility'])}, profile consistency "
        f"{_fmt(overall['profile'])}, queries {_fmt(overall['query'])} "
        f"({run['counts']['failures']} failures of {run['counts']['asked']})"
    )
    data = {"command": "rate", "root": str(root), "counts": run["counts"], "summary": run["summary"]}
    show.emit(as_json, data, [text])


def annotate(
    root: Annotated[Path, typer.Argument(metavar="ROOT", help="LUNAR folder.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Sheet folder [default: ROOT/annotation].")
    ] = None,
    histories: Annotated[int, typer.Option("--histories", min=0, help="Users to sample.")] = 30,
    queries: Annotated[int, typer.Option("--queries", min=0, help="Queries to sample.")] = 100,
    max_records: Annotated[int, typer.Option("--max-records", min=1, help="Records shown per history.")] = 60,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sample and the item ids.")] = 0,
    as_json: JsonOption = False,
) -> None:
    """Export a blind rating sheet (CSV + static HTML form); the id key stays in ROOT."""
    from recworld.lunar.annotate import export_sheet

    done = export_sheet(root, out, histories=histories, queries=queries, seed=seed, max_records=max_records)
    text = (
        f"wrote {done['out']}/sheet.csv and form.html ({done['histories']} histories, "
        f"{done['queries']} queries); key: {done['key']} (keep it from the raters)"
    )
    show.emit(
        as_json,
        {"command": "annotate", **{k: str(v) if isinstance(v, Path) else v for k, v in done.items()}},
        [text],
    )


def agreement(
    ratings: Annotated[list[Path], typer.Argument(help="Long-format CSVs: item_id,rater,dimension,score.")],
    llm_raters: Annotated[
        str, typer.Option("--llm-raters", help="Comma list of LLM raters (names starting llm: always are).")
    ] = "",
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Where agreement.json/.csv go; a LUNAR folder feeds the report."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Exact, within-one agreement and Gwet's AC1 per dimension and rater pair (Tables 2, 10)."""
    from recworld.io import atomic_write_json, atomic_write_text
    from recworld.lunar.agreement import agreement_rows, read_all, rows_csv, rows_json, rows_text

    machines = {r.strip() for r in llm_raters.split(",") if r.strip()}
    rows = agreement_rows(read_all(ratings), machines)
    target = out or ratings[0].parent
    document = {"sources": [str(p) for p in ratings], "llm_raters": sorted(machines), "rows": rows_json(rows)}
    atomic_write_json(target / "agreement.json", document)
    atomic_write_text(target / "agreement.csv", rows_csv(rows))
    lines = [rows_text(rows) if rows else "no rater pair shares an item"]
    show.emit(
        as_json,
        {"command": "agreement", **document},
        [*lines, f"wrote {target / 'agreement.json'} and agreement.csv"],
    )


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def register(app: typer.Typer) -> None:
    """Add the three commands to ``recworld lunar``."""
    app.command("rate")(rate)
    app.command("annotate")(annotate)
    app.command("agreement")(agreement)
