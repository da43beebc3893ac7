"""Checks across the rows of parsed tables: ids listed once, and only ids another file lists.

They run after :func:`~recworld.data._tables.read_table` and name the offending
row's file line, like every other error of a loader.
"""

from __future__ import annotations

from collections.abc import Collection

import pandas as pd

from recworld.data._tables import TableSpec, fail_at_row, first_duplicate


def require_unique(frame: pd.DataFrame, column: str, spec: TableSpec) -> None:
    """An id column lists each id once; the second occurrence is the error's line."""
    row = first_duplicate(frame[column])
    if row is not None:
        raise fail_at_row(spec, row, f"duplicate id {frame[column].iloc[row]!r}", field=column)


def require_known(
    frame: pd.DataFrame, column: str, spec: TableSpec, known: Collection[object], listed_in: str
) -> None:
    """Every value of ``column`` is one of ``known`` (the ids another file lists).

    A rating for an item the item file lacks would otherwise become a title-less
    item silently; the error names the rating's line.
    """
    unknown = ~frame[column].isin(list(known) if not isinstance(known, pd.Series) else known)
    if unknown.any():
        row = int(unknown.to_numpy().argmax())
        value = frame[column].iloc[row]
        raise fail_at_row(spec, row, f"id {value!r} is not listed in {listed_in}", field=column)
