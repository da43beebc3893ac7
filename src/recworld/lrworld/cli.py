"""``recworld measures`` and ``recworld build``."""

from __future__ import annotations

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


def register(app: typer.Typer) -> None:
    """Add this package's commands to the ``recworld`` app."""
    app.command("measures")(measures)
