"""A blind human rating sheet (paper Tables 2 and 10): sampled histories and queries, opaque ids.

``recworld lunar annotate RUN`` samples ``histories`` users and ``queries`` queries (seeded),
gives each a random item id that says nothing about the user, query or order, and writes:

* ``OUT/sheet.csv``: the long rating format ``item_id,rater,dimension,score`` with ``rater``
  and ``score`` left empty, one row per item and dimension (what ``lunar agreement`` reads);
* ``OUT/form.html``: one static, self-contained page with every item's content, the rubric and
  1-5 radio buttons; its inline script only turns the ticks into the same CSV for download;
* ``RUN/annotation_key.json``: the item id -> (kind, user or query) mapping, kept outside
  ``OUT`` (default ``RUN/annotation/``), so the folder handed to raters holds no key.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from pydantic import Field

from recworld.csvsafe import csv_text
from recworld.errors import DataError
from recworld.io import (
    atomic_write_text,
    check_output_dir,
    claim_output_dir,
    mark_output_dir,
    require_output,
)
from recworld.lunar.config import HISTORY_RECORDS, RUN_KIND
from recworld.lunar.localtime import user_zones
from recworld.lunar.quality import dims
from recworld.lunar.quality.agreement import COLUMNS
from recworld.lunar.quality.history import history_text
from recworld.lunar.quality.records import QualityRating
from recworld.lunar.store import dataset as store
from recworld.lunar.store.dataset import records_by_user
from recworld.records import Record
from recworld.seeding import rng

KEY_FILE = "annotation_key.json"
SHEET_KIND = "lunar-annotation"  # the output marker kind of a rating-sheet folder
ItemKind = Literal["history", "query"]
KIND_DIMENSIONS: dict[ItemKind, dict[str, str]] = {"history": dims.HISTORY, "query": dims.QUERY}
RATING_KIND: dict[ItemKind, tuple[str, ...]] = {"history": ("plausibility", "profile"), "query": ("query",)}


class KeyItem(Record):
    item_id: str
    kind: ItemKind
    subject: str


class AnnotationKey(Record):
    """``RUN/annotation_key.json``: which sheet item is which user or query (kept from the raters).

    ``max_records`` is how many records each history showed, so ``lunar rate`` shows the
    LLM the same (None in keys written before it was recorded).
    """

    schema_id: Literal["recworld.lunar.annotation_key/1"] = Field(
        default="recworld.lunar.annotation_key/1", alias="schema"
    )
    seed: int
    items: list[KeyItem]
    max_records: int | None = None
    timezone: str | None = None  # the fallback zone of users whose profile has none


@dataclass(frozen=True)
class SheetItem:
    """One item of the sheet: its opaque id, what it is, and the text the rater sees."""

    item_id: str
    kind: ItemKind
    subject: str  # user id or query id (only in the key)
    content: str


@dataclass(frozen=True)
class SheetExport:
    """Where the sheet, the form and the key went, and how many items of each kind."""

    out: Path
    key: Path
    histories: int
    queries: int


def _sample(ids: Sequence[str], n: int, seed: int, what: str) -> list[str]:
    gen = rng(seed, "lunar", "annotate", what)
    if not ids:
        return []
    picked = gen.choice(len(ids), size=min(n, len(ids)), replace=False)
    return [ids[int(i)] for i in picked.tolist()]


def _opaque_ids(n: int, seed: int) -> list[str]:
    gen = rng(seed, "lunar", "annotate", "ids")
    out: list[str] = []
    while len(out) < n:
        token = f"i{int(gen.integers(0, 2**40)):010x}"
        if token not in out:
            out.append(token)
    return out


def history_content(root: Path, *, max_records: int, timezone: str | None = None) -> dict[str, str]:
    """What a rater sees of every user with a trajectory: the same text for the human sheet and the LLM."""
    profiles = {p.user_id: p for p in store.profiles(root)}
    plans = {t.user_id: t for t in store.trajectories(root)}
    records = records_by_user(store.records(root))
    zones = user_zones(profiles.values(), timezone)
    return {
        u: history_text(p, plans[u], records.get(u, []), max_records=max_records, tz=zones[u])
        for u, p in sorted(profiles.items())
        if u in plans
    }


def query_content(text: str) -> str:
    """What a rater sees of a query (the same for the sheet and the LLM)."""
    return f"Request: {text}"


def build_items(
    root: Path, *, histories: int, queries: int, seed: int, max_records: int, timezone: str | None = None
) -> list[SheetItem]:
    """The sampled items in shuffled order, each with its opaque id, kind, subject and content."""
    content = history_content(root, max_records=max_records, timezone=timezone)
    users = _sample(sorted(content), histories, seed, "histories")
    items = [SheetItem("", "history", u, content[u]) for u in users]
    if queries and (root / "queries.jsonl").exists():
        by_id = {q.query_id: q for q in store.queries(root)}
        for qid in _sample(sorted(by_id), queries, seed, "queries"):
            items.append(SheetItem("", "query", qid, query_content(by_id[qid].text)))
    if not items:
        raise DataError("nothing to annotate (no users with trajectories, no queries)", path=root)
    order = rng(seed, "lunar", "annotate", "order").permutation(len(items))
    shuffled = [items[int(i)] for i in order]
    return [
        replace(item, item_id=i) for item, i in zip(shuffled, _opaque_ids(len(shuffled), seed), strict=True)
    ]


def rows_csv(rows: Sequence[Sequence[object]]) -> str:
    return csv_text([COLUMNS, *rows])  # every cell formula-escaped (recworld.csvsafe)


def export_sheet(
    root: Path,
    out: Path | None = None,
    *,
    histories: int = 30,
    queries: int = 100,
    seed: int = 0,
    max_records: int = HISTORY_RECORDS,
    timezone: str | None = None,
    force: bool = False,
) -> SheetExport:
    """Write the sheet, the form and the key; return where and how many.

    ``root`` must be a finished LUNAR run; ``out`` (default ``ROOT/annotation``) is
    new, empty or an earlier sheet, else ``force`` (:func:`recworld.io.claim_output_dir`).
    """
    root = require_output(root, RUN_KIND, made_by="lunar synth")
    out = check_output_dir(out or root / "annotation", SHEET_KIND, force=force)
    items = build_items(
        root, histories=histories, queries=queries, seed=seed, max_records=max_records, timezone=timezone
    )
    rows = [(it.item_id, "", dim, "") for it in items for dim in KIND_DIMENSIONS[it.kind]]
    claim_output_dir(out, SHEET_KIND, force=force)
    atomic_write_text(out / "sheet.csv", rows_csv(rows))
    atomic_write_text(out / "form.html", render_form(items))
    key = AnnotationKey(
        seed=seed,
        items=[KeyItem(item_id=it.item_id, kind=it.kind, subject=it.subject) for it in items],
        max_records=max_records,
        timezone=timezone,
    )
    key.write(root / KEY_FILE)
    mark_output_dir(out, SHEET_KIND)
    kinds = [it.kind for it in items]
    return SheetExport(out, root / KEY_FILE, kinds.count("history"), kinds.count("query"))


def read_key(root: Path) -> AnnotationKey:
    return AnnotationKey.read(root / KEY_FILE)


def llm_rating_rows(
    key: AnnotationKey, ratings: Sequence[QualityRating], rater: str
) -> list[tuple[str, str, str, int]]:
    """The LLM's scores on the sheet's items, in the long rating format."""
    scores: dict[tuple[str, str], dict[str, int]] = {
        (r.kind, r.subject): r.scores for r in ratings if r.scores is not None
    }
    rows = []
    for item in key.items:
        for kind in RATING_KIND[item.kind]:
            for dim, value in sorted(scores.get((kind, item.subject), {}).items()):
                rows.append((item.item_id, rater, dim, value))
    return rows


# -- the form ----------------------------------------------------------------------------------

_SCRIPT = """
function ratingsCsv() {
  const rater = document.getElementById('rater').value.trim().replaceAll('"', "'");
  const lines = ['item_id,rater,dimension,score'];
  for (const box of document.querySelectorAll('input[type=radio]:checked')) {
    const [item, dim] = box.name.split('|');
    lines.push(`${item},"${rater}",${dim},${box.value}`);
  }
  const blob = new Blob([lines.join('\\n') + '\\n'], {type: 'text/csv'});
  const link = document.getElementById('download');
  link.href = URL.createObjectURL(blob);
  link.download = 'ratings-' + (rater || 'rater') + '.csv';
}
"""

_STYLE = (
    "body{font-family:sans-serif;max-width:60rem;margin:auto;padding:1rem}"
    "section{border:1px solid #999;margin:1rem 0;padding:.5rem 1rem}"
    "pre{white-space:pre-wrap;background:#f4f4f4;padding:.5rem}fieldset{margin:.3rem 0}"
)


def _item_html(item: SheetItem) -> str:
    iid = html.escape(item.item_id)
    parts = [f'<section id="{iid}"><h2>Item {iid}</h2><pre>{html.escape(item.content)}</pre>']
    for dim, text in KIND_DIMENSIONS[item.kind].items():
        radios = "".join(
            f'<label><input type="radio" name="{iid}|{html.escape(dim)}" value="{v}"> {v}</label> '
            for v in range(1, 6)
        )
        parts.append(
            f"<fieldset><legend><b>{html.escape(dim)}</b>: {html.escape(text)}</legend>{radios}</fieldset>"
        )
    parts.append("</section>")
    return "".join(parts)


def render_form(items: Sequence[SheetItem]) -> str:
    body = "".join(_item_html(it) for it in items)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>LUNAR rating sheet</title>'
        f"<style>{_STYLE}</style><script>{_SCRIPT}</script></head><body>"
        "<h1>LUNAR rating sheet</h1>"
        f"<p>Rate every item on every dimension: {html.escape(dims.SCALE_TEXT)}. "
        "Items are in random order; their ids say nothing about who or what they are.</p>"
        '<p><label>Your rater name: <input id="rater" required></label></p>'
        f'<form id="sheet" onsubmit="return false">{body}</form>'
        '<p><a id="download" href="#" onclick="ratingsCsv()">Download my ratings (CSV)</a> '
        "or fill in sheet.csv instead.</p></body></html>\n"
    )
