"""``recworld measures`` and ``recworld build``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def measures() -> None:
    """List the LRWorld measure catalogue: id, scale, factor, format, domains, required fields."""
    from rich.console import Console
    from rich.table import Table

    from recworld.lrworld.catalogue import MEASURES

    table = Table(title="LRWorld measures")
    for column in ("measure", "scale", "factor", "format", "domains", "requires"):
        table.add_column(column)
    for m in MEASURES:
        table.add_row(
            m.id,
            m.scale.value,
            m.factor.value,
            m.format.value,
            ",".join(sorted(d.value for d in m.domains)),
            ",".join(m.requires) or "-",
        )
    Console().print(table)


def build(
    dataset: Annotated[
        str, typer.Option("--dataset", help="A fetched dataset name, a dataset folder, or raw files.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Suite directory to write (replaced atomically).")],
    format: Annotated[
        str | None, typer.Option("--format", help="Source format (default: detect from the files).")
    ] = None,
    metadata: Annotated[
        Path | None, typer.Option("--metadata", help="Item metadata CSV/JSONL to join (cast, director, ...).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random draw in the build.")] = 0,
    per_measure: Annotated[
        int, typer.Option("--per-measure", help="Questions per measure (fewer if fewer targets exist).")
    ] = 1000,
    measures: Annotated[
        str | None, typer.Option("--measures", help="Comma-separated measure ids (default: all that apply).")
    ] = None,
    negatives: Annotated[
        str,
        typer.Option(
            "--negatives",
            help="hit@1 negatives: 'uniform' (the paper) or 'popularity' (weighted by interaction count).",
        ),
    ] = "uniform",
) -> None:
    """Build an LRWorld suite: questions/<measure>.jsonl, dataset/ and manifest.json."""
    from pydantic import ValidationError
    from rich.console import Console
    from rich.table import Table

    from recworld.data import resolve_dataset
    from recworld.errors import ConfigError
    from recworld.lrworld.config import BuildConfig
    from recworld.lrworld.suite import build_suite

    chosen = tuple(m.strip() for m in measures.split(",") if m.strip()) if measures else None
    try:
        config = BuildConfig.model_validate(
            {"seed": seed, "per_measure": per_measure, "measures": chosen, "negatives": negatives}
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"option {field or 'config'}: {first['msg']}") from None
    data = resolve_dataset(dataset, format, metadata)
    manifest = build_suite(data, config, out)

    timings = manifest["timings"]
    table = Table(title=f"LRWorld suite {manifest['dataset']} -> {out}")
    for column in ("measure", "questions", "skipped", "seconds"):
        table.add_column(column, justify="right" if column in ("questions", "seconds") else "left")
    for measure_id, count in manifest["counts"].items():
        table.add_row(measure_id, str(count), "", f"{timings.get(f'measure:{measure_id}', 0.0):.2f}")
    for measure_id, reason in manifest["skipped"].items():
        table.add_row(measure_id, "0", reason, "")
    console = Console()
    console.print(table)
    shared = {k: v for k, v in timings.items() if not k.startswith("measure:")}
    console.print("stages: " + ", ".join(f"{k} {v:.2f}s" for k, v in shared.items()))
    short = manifest["users_skipped"]["too_short_history"]
    if short:
        console.print(f"{short} users skipped: {manifest['users_skipped']['rule']}")


def register(app: typer.Typer) -> None:
    """Add this package's commands to the ``recworld`` app."""
    app.command("measures")(measures)
    app.command("build")(build)
