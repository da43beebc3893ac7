"""The prices file: a documented format, checked row by row, and a warning when no row prices a model."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.runner_fakes import write_suite
from recworld.errors import DataError
from recworld.scoring.prices import Price, read_prices


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "80")
    return write_suite(tmp_path / "suite", {"kg_movie_genre": 2})


def _dry_run(suite: Path, prices: Path, model: str) -> tuple[int, str, str]:
    ran = run_recworld("eval", str(suite), "--model", model, "--dry-run", "--prices", str(prices))
    return ran.returncode, ran.stdout, ran.stderr


def test_a_bare_model_name_prices_the_spec(suite: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.jsonl"
    prices.write_text('{"model": "gpt-4o-mini", "input": 0.15, "output": 0.6}\n')
    code, out, err = _dry_run(suite, prices, "openai:gpt-4o-mini")
    assert code == 0 and "total: 2 requests, at most $" in out and err == ""
    table = read_prices(prices)
    assert (
        table["openai:gpt-4o-mini"] == table.get("gpt-4o-mini") == Price(0.15, 0.6)
    )  # the report's lookup too
    assert "openai:gpt-4o" not in table and table.get("other:gpt-4o-mini") == Price(0.15, 0.6)


def test_a_model_no_row_prices_is_a_warning_naming_the_file(suite: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.jsonl"
    prices.write_text('{"model": "gpt-4o-mini", "input": 0.15, "output": 0.6}\n')
    code, out, err = _dry_run(suite, prices, "openai:gpt-4o")
    assert code == 0 and "no price" in out
    assert err == (
        f"recworld: warning: {prices}: no row for 'openai:gpt-4o' (nor for 'gpt-4o') (did you mean "
        "'gpt-4o-mini'?); its cost is not estimated; rows: gpt-4o-mini\n"
    )


def test_a_csv_with_its_header_reads_like_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text("model,input,output\nopenai:gpt-4o,2.5,10\n\ngpt-4o-mini,0.15,0.6\n")
    table = read_prices(path)
    assert dict(table) == {"openai:gpt-4o": Price(2.5, 10.0), "gpt-4o-mini": Price(0.15, 0.6)}


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        (
            "p.jsonl",
            '{"model": "m", "input_per_m": 1, "output": 2}\n',
            r"p\.jsonl:1: .*'input_per_m' \(did you mean 'input'",
        ),
        (
            "p.jsonl",
            '{"model": "m", "input": 1, "output": 2}\n{"model": "m", "input": -1, "output": 2}\n',
            r":2: .*input: -1 is not a price",
        ),
        (
            "p.jsonl",
            '{"model": "m", "input": "cheap", "output": 2}\n',
            r":1: .*input: 'cheap' is not a number",
        ),
        ("p.jsonl", '{"model": "m", "input": 1}\n', r":1: .*missing output"),
        (
            "p.jsonl",
            '{"model": "m", "input": 1, "output": 2}\n{"model": "m", "input": 1, "output": 2}\n',
            r":2: .*listed twice \(first on line 1\)",
        ),
        ("p.jsonl", '["m", 1, 2]\n', r":1: .*expected a JSON object"),
        ("p.jsonl", "", r"no prices"),
        ("p.csv", "gpt-4o-mini,0.15,0.6\n", r"p\.csv:1: .*expected the header model,input,output"),
        ("p.csv", "model,input,output\nm,1,2,3\n", r"p\.csv:2: .*4 cells, the header has 3"),
        ("p.csv", "model,input,output\nm,,2\n", r"p\.csv:2: .*missing input"),
    ],
)
def test_a_bad_row_names_the_file_and_line(tmp_path: Path, name: str, text: str, says: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DataError, match=says):
        read_prices(path)
