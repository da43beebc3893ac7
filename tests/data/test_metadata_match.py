"""The metadata match report: which rows matched by which key, which did not (by line), and coverage.

Each fixture file is written from a list of (row, expected item) pairs, so the
expected line numbers, unmatched rows and coverage figures are computed here,
from the file and the joined items, not read back from the report.
"""

from __future__ import annotations

import functools
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from helpers.cli import run_in_process
from recworld.data import Dataset, load_source
from recworld.data.metadata_match import SHOWN_ROWS, MetadataMatch

# ml-100k fixture items: 1 Toy Story (1995), 2 Café au Lait (1993), 3 unknown,
# 4 Misérables, Les (1995), 5 Title Without Year (1997). Key column: item_id.
CSV_ROWS: list[tuple[str, str | None, str | None]] = [  # (CSV text, item it must reach, how)
    ('1,,,"Tom Hanks|Tim Allen","Toys,\nalive."\n', "1", "item_id"),  # a quoted newline: 2 lines
    ("\n", None, None),  # a blank line is skipped but still counted
    (",Cafe au Lait,1993,Someone,\n", "2", "title+year"),
    (",Toy Stroy,1995,Typo Person,\n", None, "no item has this title"),
    ("999,,,Nobody,\n", None, "no item has this item_id"),
    (',"Les Misérables",1995,,A musical.\n', "4", "title+year"),
    (",Title Without Year,1990,,Wrong year.\n", None, "the title's year is 1997"),
]
CSV_HEADER = "item_id,title,year,cast,logline\n"

# ml-25m fixture items carry imdb ids: 1 tt0114709, 2 tt0113228, 3 The American President (1995).
JSONL_ROWS: list[tuple[str, str | None, str | None]] = [
    (json.dumps({"imdb_id": "tt0114709", "cast": ["Tom Hanks"]}) + "\n", "1", "imdb_id"),
    (
        json.dumps({"title": "The American President", "year": 1995, "director": "Rob Reiner"}) + "\n",
        "3",
        "title+year",
    ),
    ("\n", None, None),
    (json.dumps({"title": "Title Without Yaer", "logline": "typo"}) + "\n", None, "no item has this title"),
    (json.dumps({"imdb_id": "tt9999999", "cast": ["Nobody"]}) + "\n", None, "no item has this imdb_id"),
    (
        json.dumps({"title": "Misérables", "year": 1996, "logline": "x"}) + "\n",
        None,
        "the title's year is 1995",
    ),
    (json.dumps({"imdb_id": "0113228", "logline": "A café."}) + "\n", "2", "imdb_id"),
]


def _write(path: Path, header: str, rows: list[tuple[str, str | None, str | None]]) -> list[dict[str, Any]]:
    """Write the file; return each record row with its first line, target item and how it matches."""
    text, expected = header, []
    for chunk, item, how in rows:
        line = text.count("\n") + 1
        text += chunk
        if chunk.strip():
            expected.append({"line": line, "item": item, "how": how})
    path.write_text(text, encoding="utf-8")
    return expected


def _filled(value: Any) -> bool:
    if isinstance(value, (list, np.ndarray)):
        return len(value) > 0
    return isinstance(value, str) and value != ""


def _check(
    report: MetadataMatch, dataset: Dataset, expected: list[dict[str, Any]], fields: list[str]
) -> None:
    matched = [e for e in expected if e["item"] is not None]
    missed = [e for e in expected if e["item"] is None]
    n_items = len(dataset.items)
    assert [r.line for r in report.unmatched] == [e["line"] for e in missed]
    for row, want in zip(report.unmatched, missed, strict=True):
        assert want["how"] in row.reason
    assert (report.rows, report.matched_rows, report.unmatched_rows) == (
        len(expected),
        len(matched),
        len(missed),
    )
    assert report.matched_items == len({e["item"] for e in matched})
    assert report.dataset_items == n_items
    assert report.item_coverage == pytest.approx(len(matched) / n_items)
    assert report.row_coverage == pytest.approx(len(matched) / len(expected))
    by_key: dict[str, int] = {}
    for e in matched:
        by_key[e["how"]] = by_key.get(e["how"], 0) + 1
    assert report.by_key == by_key
    for field in fields:
        filled = sum(_filled(v) for v in dataset.items[field])
        assert report.field_coverage[field].filled == filled, field
        assert report.field_coverage[field].coverage == pytest.approx(filled / n_items), field
    without = set(dataset.items["item_id"]) - {e["item"] for e in matched}
    assert report.items_without_metadata == len(without)
    assert {ref.item_id for ref in report.items_without_metadata_examples} <= without


def test_csv_report_names_unmatched_lines_and_coverage(ml100k_dir: Path, tmp_path: Path) -> None:
    meta = tmp_path / "movies.csv"
    expected = _write(meta, CSV_HEADER, CSV_ROWS)
    dataset = load_source(ml100k_dir, metadata=meta)
    report = MetadataMatch.model_validate(dataset.source["metadata"])
    assert [e["line"] for e in expected if e["item"] is None] == [6, 7, 9]  # the file as a person reads it
    _check(report, dataset, expected, ["cast", "logline"])
    cast = dict(zip(dataset.items["item_id"], dataset.items["cast"], strict=True))
    assert list(cast["2"]) == ["Someone"] and list(cast["1"]) == ["Tom Hanks", "Tim Allen"]
    typo = report.unmatched[0]
    assert typo.keys == {"title": "Toy Stroy", "year": 1995}
    assert report.unmatched[1].keys == {"item_id": "999"}
    assert report.field_coverage["cast"].from_file == 2  # items 1 and 2; the typo's cast reached nothing


def test_jsonl_report_by_imdb_id_and_title(ml25m_dir: Path, tmp_path: Path) -> None:
    meta = tmp_path / "movies.jsonl"
    expected = _write(meta, "", JSONL_ROWS)
    dataset = load_source(ml25m_dir, metadata=meta)
    report = MetadataMatch.model_validate(dataset.source["metadata"])
    assert [e["line"] for e in expected if e["item"] is None] == [4, 5, 6]
    _check(report, dataset, expected, ["cast", "director", "logline"])
    assert report.key == "imdb_id"
    assert report.unmatched[1].keys == {"imdb_id": "tt9999999"}


def test_only_the_first_unmatched_rows_are_listed(ml100k_dir: Path, tmp_path: Path) -> None:
    meta = tmp_path / "many.csv"
    typos = [(f",No Such Film {n},2001,X,\n", None, "no item has this title") for n in range(SHOWN_ROWS + 7)]
    expected = _write(meta, CSV_HEADER, [CSV_ROWS[0], *typos])
    report = MetadataMatch.model_validate(load_source(ml100k_dir, metadata=meta).source["metadata"])
    assert report.unmatched_rows == SHOWN_ROWS + 7 and report.unmatched_more == 7
    assert [r.line for r in report.unmatched] == [e["line"] for e in expected[1 : SHOWN_ROWS + 1]]
    assert report.summary_lines()[-1].endswith(f"and {SHOWN_ROWS + 7 - 5} more")


@pytest.fixture
def recworld(monkeypatch: pytest.MonkeyPatch) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``recworld(cwd, *args)``: the CLI in process at 80 columns (what the installed script runs)."""
    return functools.partial(run_in_process, monkeypatch)


def test_cli_info_prints_summary_and_json_report(
    ml100k_dir: Path, tmp_path: Path, recworld: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    meta = tmp_path / "movies.csv"
    _write(meta, CSV_HEADER, CSV_ROWS)
    done = recworld(tmp_path, "data", "info", str(ml100k_dir), "--metadata", str(meta))
    assert done.returncode == 0, done.stderr
    err = done.stderr.splitlines()
    assert err[:3] == [
        "metadata: 3 of 6 rows matched (1 by item_id, 2 by title+year)",
        "  coverage: 3 of 5 items (60.0%); cast 40.0%, logline 40.0%",
        "  3 unmatched rows in movies.csv:",
    ]
    assert err[3:6] == [
        "    line 6: title='Toy Stroy' year=1995: no item has this title",
        "    line 7: item_id='999': no item has this item_id",
        "    line 9: title='Title Without Year' year=1990: the title's year is 1997",
    ]
    assert max(len(line) for line in err) <= 80
    assert "metadata      3 items matched from 6 rows" in done.stdout  # stdout keeps its summary line
    done = recworld(tmp_path, "data", "info", str(ml100k_dir), "--metadata", str(meta), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["source"]["metadata"]
    assert [row["line"] for row in report["unmatched"]] == [6, 7, 9]
    assert report["item_coverage"] == pytest.approx(0.6)


def _toy_dataset(folder: Path) -> Dataset:
    """Users in two taste blocks over 30 titled items, enough for kg_movie_cast questions."""
    rows = []
    for u in range(40):
        block = range(0, 15) if u % 2 else range(15, 30)
        for t, item in enumerate(list(block)[u % 5 : u % 5 + 9]):
            rows.append({"user_id": f"u{u}", "item_id": f"i{item}", "timestamp": 1000 + 10 * t + u})
    items = pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(30)],
            "title": [f"Film {i}" for i in range(30)],
            "year": [1990 + i for i in range(30)],
        }
    )
    dataset = Dataset.from_frames("toy", "movie", pd.DataFrame(rows), items)
    dataset.save(folder)
    return dataset


def test_build_writes_report_beside_manifest(
    tmp_path: Path, recworld: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    _toy_dataset(tmp_path / "toy")
    meta = tmp_path / "cast.csv"
    lines = ["item_id,title,year,cast"]
    lines += [f"i{i},,,Actor {i % 6}|Actor {(i + 1) % 6}" for i in range(20)]  # by id: 20 items
    lines += [f",Film {i},{1990 + i},Actor {i % 6}" for i in range(20, 24)]  # by title+year: 4 items
    lines += [",Flim 25,2015,Actor 1", ",Film 26,1999,Actor 2"]  # typo (line 26), wrong year (line 27)
    meta.write_text("\n".join(lines) + "\n", encoding="utf-8")
    suite = tmp_path / "suite"
    done = recworld(
        tmp_path, "build", "--dataset", str(tmp_path / "toy"), "--out", str(suite), "--metadata", str(meta),
        "--measures", "kg_movie_cast", "--per-measure", "5", "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "metadata: 24 of 26 rows matched (20 by item_id, 4 by title+year)" in done.stderr
    assert "coverage: 24 of 30 items (80.0%); cast 80.0%" in done.stderr
    assert "line 26: title='Flim 25' year=2015: no item has this title" in done.stderr
    manifest = json.loads((suite / "manifest.json").read_text(encoding="utf-8"))
    summary = manifest["metadata"]
    assert (summary["matched_rows"], summary["unmatched_rows"], summary["dataset_items"]) == (24, 2, 30)
    assert summary["item_coverage"] == pytest.approx(24 / 30)
    assert summary["field_coverage"] == {"cast": pytest.approx(24 / 30)}
    full = json.loads((suite / summary["report"]).read_text(encoding="utf-8"))
    assert [(r["line"], r["keys"]) for r in full["unmatched"]] == [
        (26, {"title": "Flim 25", "year": 2015}),
        (27, {"title": "Film 26", "year": 1999}),
    ]
    assert full["items_without_metadata"] == 6
