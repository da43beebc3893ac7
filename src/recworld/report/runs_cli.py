"""``recworld runs SUITE``: the runs of a suite (or run folders), one row each, with their settings.

Reads each folder's ``run.json`` (and, when there is none, counts the lines of
``samples.jsonl``); nothing is scored, so it answers in a moment. A folder
under ``runs/`` without samples is listed as ``unfinished``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from recworld.console.options import Given, JsonOutput, with_options

COLUMNS = ("folder", "model", "mode", "variant", "settings", "n", "errors", "status", "finished")


def run_rows(paths: list[Path]) -> list[dict[str, Any]]:
    """One dict per run folder named by ``paths`` (a suite stands for its ``runs/*``), unfinished ones too."""
    from recworld.evaluation.records import read_run_header
    from recworld.report.runs import gather_run_dirs
    from recworld.reportkit.settings import describe_settings

    finished, unfinished = gather_run_dirs(paths)
    rows: list[dict[str, Any]] = []
    for folder in sorted([*finished, *unfinished], key=lambda p: p.name):
        row: dict[str, Any] = {"folder": folder.name, "path": str(folder)}
        header_path = folder / "run.json"
        if header_path.is_file():
            header = read_run_header(header_path)
            row |= {
                "model": header.model,
                "mode": header.mode,
                "variant": header.variant,
                "settings": describe_settings(header.settings),
                "settings_keys": header.settings,
                "n": header.counts.answered,
                "errors": header.counts.errors,
                "status": header.status if folder in finished else "unfinished",
                "finished": header.finished,
            }
        else:
            samples = folder / "samples.jsonl"
            lines = samples.read_bytes().count(b"\n") if samples.is_file() else 0
            row |= {"model": "?", "mode": "?", "variant": "?", "settings": "", "settings_keys": {}}
            row |= {
                "n": lines,
                "errors": 0,
                "status": "finished" if lines else "unfinished",
                "finished": None,
            }
        rows.append(row)
    return rows


@with_options(JsonOutput)
def runs_command(
    paths: Annotated[list[Path], typer.Argument(help="Suites (all their runs/*) or run directories.")],
    *,
    given: Given,
) -> None:
    """List runs with their settings, answered count, errors and status."""
    from recworld.console.output import emit_json, print_table

    rows = run_rows(paths)
    if given.build().as_json:
        emit_json({"runs": rows})
        return
    print_table(COLUMNS, [["" if r[c] is None else r[c] for c in COLUMNS] for r in rows])
