"""Sample records for the scoring tests, shaped as the evaluation writes them."""

from __future__ import annotations

from typing import Any

from recworld.lrworld.catalogue import MEASURES_BY_ID
from recworld.lrworld.prompts import LETTERS
from recworld.scoring.records import SAMPLE_SCHEMA


def sample(measure: str, qid: int, answer: int, parsed: int | None, **extra: Any) -> dict[str, Any]:
    """A ``samples.jsonl`` line as the evaluation writes it; format and labels from the catalogue."""
    fmt = MEASURES_BY_ID[measure].format
    record: dict[str, Any] = {
        "schema": SAMPLE_SCHEMA,
        "question_id": f"ml-100k/{measure}/{qid:05d}",
        "measure": measure,
        "dataset": "ml-100k",
        "format": fmt.value,
        "model": "scripted:test",
        "mode": "generate",
        "variant": "zero-shot",
        "labels": list(LETTERS[: fmt.n_options]),
        "answer_index": answer,
        "parsed_index": parsed,
        "correct": parsed == answer,
        "missed": parsed is None,
        "error": None,
    }
    record.update(extra)
    return record
