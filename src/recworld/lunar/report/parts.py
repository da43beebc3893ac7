"""The pieces a LUNAR report is made of, before any file format: tables, figures, notes, sections.

Section builders (:mod:`.scores`, :mod:`.privacy`, :mod:`.ablation`, :mod:`.quality`)
compute these once; :mod:`.render` writes them as Markdown and HTML. A cell's text
is what both renderings show; ``view`` names the viewer entry behind it (HTML only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Cell", "Figure", "Section", "Table", "cells"]


@dataclass(frozen=True)
class Cell:
    text: str
    title: str = ""  # a tooltip: what the cell's number is made of
    css: str = ""  # "warn" (a flag), "muted"
    view: str = ""  # the key of the answers behind the cell in the sample viewer


def cells(*texts: str) -> list[Cell]:
    return [Cell(t) for t in texts]


@dataclass(frozen=True)
class Table:
    key: str  # the HTML id (unique in the page)
    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    caption: str = ""
    left: int = 2  # leading text columns (left-aligned)

    def column(self, name: str) -> list[str]:
        """The texts of one column, top to bottom."""
        j = list(self.columns).index(name)
        return [row[j].text for row in self.rows]


@dataclass(frozen=True)
class Figure:
    key: str
    svg: str
    caption: str


@dataclass(frozen=True)
class Section:
    """One part of the report: an intro, notes to read first, tables and figures.

    ``empty`` says why the section has nothing to show (and which command would fill
    it); a section always renders, so a reader never meets a silent gap.
    """

    key: str
    title: str
    intro: str = ""
    notes: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    empty: str = ""
    subsections: list[Section] = field(default_factory=list)
    figures_first: bool = False  # the figure is the point (Figure 4), the tables its numbers
