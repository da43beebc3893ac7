"""The sample viewer: the questions behind each cell of a main table, embedded in report.html.

Clicking a score cell opens its samples (prompt, reply, parsed choice, gold,
correct, latency), filterable by outcome. The data travel inside the page as
JSON in a ``<script type="application/json">`` tag, read with ``JSON.parse``
and shown through ``textContent`` only, so the report stays one file that
works from disk, and text from a model or a suite can never become markup.
Inside the tag, ``<``, ``>`` and ``&`` are written as ``\\u003c`` etc., so a
prompt containing ``</script>`` cannot end the tag early.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from recworld.report.runs import RunData
from recworld.scoring.records import SampleRecord

__all__ = ["MAX_PER_CELL", "script_json", "viewer_data"]

# A cell holds at most this many samples: the page stays a few MB at 1,000 questions x 9 measures.
MAX_PER_CELL = 200


def script_json(value: Any) -> str:
    """JSON that is safe as the body of a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _label(sample: SampleRecord, index: int | None) -> str | None:
    if index is None or not 0 <= index < len(sample.labels):
        return None
    return sample.labels[index]


def _prompt(sample: SampleRecord) -> str:
    return "\n\n".join(f"[{m.role}]\n{m.content}" for m in sample.prompt)


def _row(sample: SampleRecord) -> dict[str, Any]:
    outcome = (
        "error"
        if sample.error is not None
        else "missed"
        if sample.missed
        else "correct"
        if sample.correct
        else "wrong"
    )
    return {
        "id": sample.question_id,
        "prompt": _prompt(sample),
        "reply": sample.response if sample.error is None else sample.error,
        "parsed": _label(sample, sample.parsed_index),
        "gold": _label(sample, sample.answer_index),
        "correct": sample.correct,
        "outcome": outcome,
        "latency": sample.latency_s,
    }


def viewer_data(table_key: str, runs: Sequence[RunData], measures: Sequence[str]) -> str:
    """The viewer's JSON for one main table: cell ``"run|measure"`` (row and column order) -> samples."""
    cells: dict[str, dict[str, Any]] = {}
    wanted = {m: j for j, m in enumerate(measures)}
    for i, run in enumerate(runs):
        by_measure: dict[str, list[SampleRecord]] = {}
        for sample in run.samples:
            if sample.measure in wanted:
                by_measure.setdefault(sample.measure, []).append(sample)
        for measure, samples in by_measure.items():
            cells[f"{i}|{wanted[measure]}"] = {
                "title": f"{run.label} · {measure}",
                "total": len(samples),
                "rows": [_row(s) for s in samples[:MAX_PER_CELL]],
            }
    return script_json({"table": table_key, "cells": cells})
