"""The match report of an item-metadata join: what matched, by which key, and what did not.

A join that quietly matches 3 of 5 rows leaves the user guessing which two were
lost and why, and how much of the catalogue the new fields now cover. The report
names each unmatched row by its file line and key values, gives the coverage
figures, and is small enough to keep in ``dataset.source["metadata"]`` (the
unmatched rows and items beyond the first few are only counted).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from recworld.records import FrozenRecord

REPORT_SCHEMA: Literal["recworld.metadata-match/1"] = "recworld.metadata-match/1"
REPORT_NAME = "metadata_match.json"  # the full report beside a suite's manifest
SHOWN_ROWS = 20  # unmatched rows named in the report; the rest are counted
SHOWN_ITEMS = 5  # items without metadata named in the report


class UnmatchedRow(FrozenRecord):
    """One metadata row that reached no item: where it is, what it was matched by, and why it failed."""

    line: int = Field(ge=1)
    keys: dict[str, str | int] = Field(default_factory=dict)  # id key / title / year values of the row
    reason: str


class ItemRef(FrozenRecord):
    item_id: str
    title: str | None = None


class FieldCoverage(FrozenRecord):
    """How many dataset items carry a field: from this file, and in all (the source's own values too)."""

    from_file: int = Field(ge=0)
    filled: int = Field(ge=0)
    coverage: float = Field(ge=0.0, le=1.0)  # filled / dataset items


class MetadataSummary(FrozenRecord):
    """The manifest's short form of a :class:`MetadataMatch` (the full one is in ``metadata_match.json``)."""

    path: str
    key: str
    by_key: dict[str, int] = Field(default_factory=dict)
    rows: int = Field(ge=0)
    matched_rows: int = Field(ge=0)
    unmatched_rows: int = Field(ge=0)
    matched_items: int = Field(ge=0)
    dataset_items: int = Field(ge=0)
    item_coverage: float = Field(ge=0.0, le=1.0)
    row_coverage: float = Field(ge=0.0, le=1.0)
    field_coverage: dict[str, float] = Field(default_factory=dict)
    report: str = REPORT_NAME


class MetadataMatch(FrozenRecord):
    """How a metadata file's rows were joined onto a dataset's items."""

    schema_id: Literal["recworld.metadata-match/1"] = Field(default=REPORT_SCHEMA, alias="schema")
    path: str
    key: str  # the id column rows are matched by, or "title+year" when the file has none
    by_key: dict[str, int] = Field(default_factory=dict)  # matched rows per key actually used
    rows: int = Field(ge=0)
    matched_rows: int = Field(ge=0)
    unmatched_rows: int = Field(ge=0)
    matched_items: int = Field(ge=0)
    dataset_items: int = Field(ge=0)
    item_coverage: float = Field(ge=0.0, le=1.0)  # matched items / dataset items
    row_coverage: float = Field(ge=0.0, le=1.0)  # matched rows / metadata rows
    fields: list[str] = Field(default_factory=list)
    field_coverage: dict[str, FieldCoverage] = Field(default_factory=dict)
    unmatched: list[UnmatchedRow] = Field(default_factory=list)  # the first SHOWN_ROWS, in file order
    unmatched_more: int = Field(default=0, ge=0)
    items_without_metadata: int = Field(default=0, ge=0)
    items_without_metadata_examples: list[ItemRef] = Field(default_factory=list)

    def summary(self) -> MetadataSummary:
        return MetadataSummary(
            path=self.path,
            key=self.key,
            by_key=self.by_key,
            rows=self.rows,
            matched_rows=self.matched_rows,
            unmatched_rows=self.unmatched_rows,
            matched_items=self.matched_items,
            dataset_items=self.dataset_items,
            item_coverage=self.item_coverage,
            row_coverage=self.row_coverage,
            field_coverage={f: c.coverage for f, c in self.field_coverage.items()},
        )

    def summary_lines(self, shown: int = 5) -> list[str]:
        """The stderr summary, each line short enough for 80 columns: coverage, then unmatched rows."""
        keys = ", ".join(f"{n:,} by {k}" for k, n in self.by_key.items()) or "none"
        lines = [f"metadata: {self.matched_rows:,} of {self.rows:,} rows matched ({keys})"]
        cover = f"{self.matched_items:,} of {self.dataset_items:,} items ({_pct(self.item_coverage)})"
        fields = ", ".join(f"{f} {_pct(c.coverage)}" for f, c in self.field_coverage.items())
        lines.append(f"  coverage: {cover}" + (f"; {fields}" if fields else ""))
        if self.unmatched_rows:
            lines.append(f"  {self.unmatched_rows:,} unmatched rows in {Path(self.path).name}:")
        for row in self.unmatched[:shown]:
            values = " ".join(f"{k}={_short(v)}" for k, v in row.keys.items())
            lines.append(f"    line {row.line}: {values}: {row.reason}")
        rest = self.unmatched_rows - min(shown, len(self.unmatched))
        if rest > 0:
            lines.append(f"    … and {rest:,} more")
        return lines


def ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _short(value: str | int, width: int = 30) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def read_report(source: dict[str, Any]) -> MetadataMatch | None:
    """The report in a dataset's ``source``; None when there is none or it predates this schema."""
    raw = source.get("metadata")
    if not isinstance(raw, dict) or raw.get("schema") != REPORT_SCHEMA:
        return None
    try:
        return MetadataMatch.model_validate(raw)
    except ValidationError:
        return None
