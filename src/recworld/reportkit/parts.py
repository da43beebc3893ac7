"""The pieces every report is made of, before any file format: cells, tables, figures, sections.

A report's section builders compute these once; :mod:`recworld.reportkit.markdown`
and the page template (:mod:`recworld.reportkit.html`) render them. A cell's text
is what every rendering shows; ``title``, ``css`` and ``view`` are for HTML only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["DASH", "Cell", "Figure", "Section", "Table", "cells"]

DASH = "–"  # a cell without a value


@dataclass(frozen=True)
class Cell:
    text: str
    bold: bool = False  # the best of its column (never a dash)
    title: str = ""  # a tooltip: what the cell's number is made of (an exact interval)
    css: str = ""  # "warn" (a flag, an error), "muted"
    view: str = ""  # the key of the samples behind the cell in the sample viewer


def cells(*texts: str) -> list[Cell]:
    return [Cell(t) for t in texts]


@dataclass(frozen=True, kw_only=True)
class Table:
    """A table with an optional row of column groups above its columns."""

    key: str  # the HTML id (unique in the page)
    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    caption: str = ""
    groups: Sequence[tuple[str, int]] = ()  # (name, span) over columns[1:]
    row_css: Sequence[str] = ()  # one class per row ("chance", "ceiling"), or none
    left: int = 1  # how many leading columns hold text (left-aligned); the rest are numbers

    def column(self, name: str) -> list[str]:
        """The texts of one column, top to bottom."""
        j = list(self.columns).index(name)
        return [row[j].text for row in self.rows]

    def to_records(self) -> list[dict[str, str]]:
        return [{c: cell.text for c, cell in zip(self.columns, row, strict=True)} for row in self.rows]


@dataclass(frozen=True)
class Figure:
    key: str  # the HTML id is ``fig-<key>``
    svg: str
    caption: str = ""


@dataclass(frozen=True, kw_only=True)
class Section:
    """One part of a report: an intro, notes to read first, tables and figures, subsections.

    ``empty`` says why the section has nothing (or less) to show, and which command
    would fill it: a section that renders never leaves a reader a silent gap.
    """

    key: str  # the HTML id
    title: str
    intro: str = ""
    notes: Sequence[str] = field(default_factory=list)
    tables: Sequence[Table] = field(default_factory=list)
    figures: Sequence[Figure] = field(default_factory=list)
    empty: str = ""
    subsections: Sequence[Section] = field(default_factory=list)
    figures_first: bool = False  # the figure is the point, the tables its numbers
