"""The sample viewer: the questions behind each cell of a main table, embedded in report.html.

Clicking a score cell opens its samples (prompt, reply, parsed choice, gold,
correct, latency), filterable by outcome. The data travel inside the page as
JSON in a ``<script type="application/json">`` tag, read with ``JSON.parse``
and shown through ``textContent`` only, so the report stays one file that
works from disk, and text from a model or a suite can never become markup.
Inside the tag, ``<``, ``>`` and ``&`` are written as ``\\u003c`` etc., so a
prompt containing ``</script>`` cannot end the tag early. Each reply is cut to
:data:`MAX_REPLY_CHARS` (the page says so; ``samples.jsonl`` keeps it whole), so
the page stays small whatever a server sends.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from recworld.report.runs import RunData
from recworld.scoring.records import SampleRecord

__all__ = ["MAX_PER_CELL", "MAX_PROMPT_CHARS", "MAX_REPLY_CHARS", "script_json", "shown", "viewer_data"]

# A cell holds at most this many samples: the page stays a few MB at 1,000 questions x 9 measures.
MAX_PER_CELL = 200
# A reply (or prompt) is shown up to this many characters; the rest stays in samples.jsonl. A server
# may send replies up to the 16 MiB cap: 12 of them once made a 189 MB report.html.
MAX_REPLY_CHARS = 4_000
MAX_PROMPT_CHARS = 20_000


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


def shown(text: str | None, limit: int) -> str | None:
    """``text`` cut to ``limit`` characters, saying how long it was and where the whole of it is."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}\n… [cut: {len(text):,} characters in all; the whole text is in samples.jsonl]"


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
        "prompt": shown(_prompt(sample), MAX_PROMPT_CHARS),
        "reply": shown(sample.response if sample.error is None else sample.error, MAX_REPLY_CHARS),
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
