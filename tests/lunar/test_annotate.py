"""The blind rating sheet: opaque ids, the key kept apart, a form that renders, a sheet agreement reads."""

from __future__ import annotations

import csv
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.lunar import tiny_run
from recworld.io import atomic_write_jsonl
from recworld.lunar.quality.agreement import agreement_rows, read_ratings
from recworld.lunar.quality.annotate import KEY_FILE, export_sheet, read_key
from recworld.lunar.schemas import Category, Query


def _run(tmp_path: Path) -> Path:
    root = tiny_run(tmp_path / "run", users=4)
    queries = [
        Query(
            query_id=f"q{n}",
            user_id="user-000",
            text=f"Dinner idea {n}?",
            domains=[Category.DINING],
            multi_domain=False,
        )
        for n in range(5)
    ]
    atomic_write_jsonl(root / "queries.jsonl", [q.to_json() for q in queries])
    return root


def test_sheet_is_blind_and_complete(tmp_path: Path) -> None:
    root = _run(tmp_path)
    done = export_sheet(root, histories=3, queries=2, seed=1)
    out = root / "annotation"
    assert (done.histories, done.queries) == (3, 2)
    with (out / "sheet.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["item_id", "rater", "dimension", "score"]
    assert len(rows) == 3 * 7 + 2 * 2
    assert all(r["rater"] == "" and r["score"] == "" for r in rows)
    ids = {r["item_id"] for r in rows}
    assert len(ids) == 5 and all(re.fullmatch(r"i[0-9a-f]{10}", i) for i in ids)
    # The key lives in RUN, not in the folder handed to raters; nothing there names a user or query.
    assert not (out / KEY_FILE).exists() and (root / KEY_FILE).exists()
    handed_out = (out / "sheet.csv").read_text() + (out / "form.html").read_text()
    assert "user-00" not in handed_out and not re.search(r"\bq[0-4]\b", handed_out)
    key = read_key(root)
    assert {i.item_id for i in key.items} == ids
    assert sorted(i.kind for i in key.items) == ["history"] * 3 + ["query"] * 2


def test_sample_and_ids_are_seeded(tmp_path: Path) -> None:
    root = _run(tmp_path)
    export_sheet(root, histories=2, queries=2, seed=5)
    first = read_key(root).items
    export_sheet(root, histories=2, queries=2, seed=5)
    assert read_key(root).items == first
    export_sheet(root, histories=2, queries=2, seed=6)
    assert {i.item_id for i in read_key(root).items}.isdisjoint({i.item_id for i in first})


def test_filled_sheet_feeds_agreement(tmp_path: Path) -> None:
    root = _run(tmp_path)
    export_sheet(root, histories=2, queries=1, seed=0)
    text = (root / "annotation" / "sheet.csv").read_text().splitlines()
    filled = [text[0]]
    for rater, score in (("ann1", "5"), ("ann2", "4")):
        filled += [line.replace(",,", f",{rater},", 1) + score for line in text[1:]]
    path = tmp_path / "filled.csv"
    path.write_text("\n".join(filled) + "\n")
    rows = agreement_rows(read_ratings(path))
    assert {r.kind for r in rows} == {"human-human"}
    assert all(r.exact == 0.0 and r.within_one == 1.0 for r in rows)


def test_cli_annotate(tmp_path: Path) -> None:
    root = _run(tmp_path)
    result = run_recworld("lunar", "annotate", str(root), "--histories", "1", "--queries", "1")
    assert result.returncode == 0, result.stderr
    assert "1 histories, 1 queries" in result.stdout and (root / "annotation" / "form.html").exists()


@pytest.mark.browser
def test_form_renders_in_chromium(
    tmp_path: Path, chromium: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    root = _run(tmp_path)
    export_sheet(root, histories=2, queries=1, seed=0)
    form = root / "annotation" / "form.html"
    dom = chromium("--dump-dom", form.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.count('type="radio"') == (2 * 7 + 2) * 5
    assert html.count("<section") == 3 and "trajectory_profile_fit" in html and "human_likeness" in html
    assert "ramen" in html  # the history content is on the page
    assert not re.search(r"(src|href)=\"https?:", html)  # self-contained
