"""Read report.html's tables back, with the standard library's HTML parser: what a reader sees."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path


@dataclass
class HtmlCell:
    text: str
    title: str = ""
    classes: tuple[str, ...] = ()

    @property
    def bold(self) -> bool:
        return "bold" in self.classes


@dataclass
class HtmlTable:
    key: str
    columns: list[str] = field(default_factory=list)
    rows: list[list[HtmlCell]] = field(default_factory=list)
    row_classes: list[str] = field(default_factory=list)

    def row(self, first: str) -> list[HtmlCell]:
        """The body row whose first cell reads ``first`` (exactly one)."""
        found = [r for r in self.rows if r[0].text == first]
        assert len(found) == 1, (self.key, first, [r[0].text for r in self.rows])
        return found[0]

    def cell(self, first: str, column: str) -> HtmlCell:
        return self.row(first)[self.columns.index(column)]

    def labels(self) -> list[str]:
        return [r[0].text for r in self.rows]


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, HtmlTable] = {}
        self._table: HtmlTable | None = None
        self._cell: HtmlCell | None = None
        self._in_cols = False
        self._row: list[HtmlCell] | None = None
        self._row_class = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "table" and "id" in a and self._table is None:
            self._table = HtmlTable(a["id"])
        elif self._table is None:
            return
        elif tag == "tr":
            self._in_cols = "cols" in a.get("class", "")
            self._row = [] if "groups" not in a.get("class", "") else None
            self._row_class = a.get("class", "")
        elif tag in ("td", "th") and self._row is not None:
            self._cell = HtmlCell("", a.get("title", ""), tuple(a.get("class", "").split()))

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.text += data

    def handle_endtag(self, tag: str) -> None:
        if self._table is None:
            return
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._cell.text = self._cell.text.strip()
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._in_cols:
                self._table.columns = [c.text for c in self._row]
            else:
                self._table.rows.append(self._row)
                self._table.row_classes.append(self._row_class)
            self._row = None
        elif tag == "table":
            self.tables[self._table.key] = self._table
            self._table = None


def html_tables(path: Path) -> dict[str, HtmlTable]:
    parser = _Parser()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.tables


def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def leading_score(text: str) -> float:
    """The score a cell starts with: ``0.553 [0.491, 0.612]`` -> 0.553."""
    return float(text.split(maxsplit=1)[0].replace("−", "-"))
