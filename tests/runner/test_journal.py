"""SampleJournal: fsynced appends, torn-line repair, corruption reported with file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from recworld.errors import DataError
from recworld.runner.journal import SampleJournal


def test_append_and_reload_with_later_lines_winning(tmp_path: Path) -> None:
    journal = SampleJournal(tmp_path / "j.jsonl")
    journal.append({"question_id": "q1", "error": "boom"})
    journal.append({"question_id": "q2", "error": None})
    journal.append({"question_id": "q1", "error": None})
    journal.close()
    loaded = SampleJournal(tmp_path / "j.jsonl").load()
    assert loaded == {"q1": {"question_id": "q1", "error": None}, "q2": {"question_id": "q2", "error": None}}


def test_torn_last_line_is_dropped_and_cut(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = SampleJournal(path)
    journal.append({"question_id": "q1"})
    journal.close()
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"question_id": "q2", "resp')
    reopened = SampleJournal(path)
    assert reopened.load() == {"q1": {"question_id": "q1"}}
    assert path.read_bytes() == whole  # the torn bytes are gone, so appends start on a fresh line
    reopened.append({"question_id": "q2"})
    reopened.close()
    assert set(SampleJournal(path).load()) == {"q1", "q2"}


def test_corrupt_middle_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text('{"question_id": "q1"}\nnot json\n{"question_id": "q3"}\n')
    with pytest.raises(DataError, match=r"j\.jsonl:2: "):
        SampleJournal(path).load()


def test_missing_journal_is_empty(tmp_path: Path) -> None:
    assert SampleJournal(tmp_path / "none.jsonl").load() == {}
