"""The sample viewer's entries: the questions behind each score cell of a main table.

Clicking a score cell opens its samples (prompt, reply, parsed choice, gold,
outcome, latency), filterable by outcome. The entries are a
:class:`recworld.reportkit.viewer.Viewer`, keyed like the cells' ``view``: the
kit's page embeds them as script-safe JSON (a prompt containing ``</script>``
cannot end the tag early) and shows them through ``textContent`` only, so the
report stays one file that works from disk, and text from a model or a suite
can never become markup. Each reply is cut to
:data:`MAX_REPLY_CHARS` (the page says so; ``samples.jsonl`` keeps it whole), so
the page stays small whatever a server sends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from recworld.report.runs import RunData
from recworld.reportkit import Table
from recworld.reportkit.viewer import Column, Viewer, cut
from recworld.scoring.records import SampleRecord

__all__ = [
    "COLUMNS",
    "MAX_PER_CELL",
    "MAX_PROMPT_CHARS",
    "MAX_REPLY_CHARS",
    "OUTCOMES",
    "add_views",
    "new_viewer",
    "shown",
]

# A cell holds at most this many samples: the page stays a few MB at 1,000 questions x 9 measures.
MAX_PER_CELL = 200
# A reply (or prompt) is shown up to this many characters; the rest stays in samples.jsonl. A server
# may send replies up to the 16 MiB cap: 12 of them once made a 189 MB report.html.
MAX_REPLY_CHARS = 4_000
MAX_PROMPT_CHARS = 20_000
OUTCOMES = ("correct", "wrong", "missed", "error")
COLUMNS: tuple[Column, ...] = (
    ("id", "question", "text"),
    ("prompt", "prompt", "fold"),
    ("reply", "reply", "text"),
    ("parsed", "parsed", "text"),
    ("gold", "gold", "text"),
    ("outcome", "outcome", "text"),
    ("latency", "latency (s)", "text"),
)


def new_viewer() -> Viewer:
    """The report's viewer, with no entry yet (:func:`add_views` adds a main table's)."""
    return Viewer(COLUMNS, OUTCOMES, good=("correct",))


def _label(sample: SampleRecord, index: int | None) -> str | None:
    if index is None or not 0 <= index < len(sample.labels):
        return None
    return sample.labels[index]


def _prompt(sample: SampleRecord) -> str:
    return "\n\n".join(f"[{m.role}]\n{m.content}" for m in sample.prompt)


def shown(text: str | None, limit: int) -> str | None:
    """``text`` cut to ``limit`` characters, saying how long it was and that samples.jsonl has it whole."""
    return None if text is None else cut(text, limit, "samples.jsonl")


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
        "latency": f"{sample.latency_s:.3f}",
    }


def add_views(viewer: Viewer, table: Table, runs: Sequence[RunData], measures: Sequence[str]) -> Table:
    """``table`` (a main table: a RANDOM row, then one row per run) with its score cells opening ``viewer``.

    Each run x measure with samples becomes the viewer entry ``"<table>|<run>|<measure>"``
    (row and column order), and its cell's ``view`` names it.
    """
    wanted = {m: j for j, m in enumerate(measures)}
    rows = [list(row) for row in table.rows]
    for i, run in enumerate(runs):
        by_measure: dict[str, list[SampleRecord]] = {}
        for sample in run.samples:
            if sample.measure in wanted:
                by_measure.setdefault(sample.measure, []).append(sample)
        for measure, samples in by_measure.items():
            key, j = f"{table.key}|{i}|{wanted[measure]}", wanted[measure]
            shown_rows = [_row(s) for s in samples[:MAX_PER_CELL]]
            viewer.add(key, f"{run.label} · {measure}", shown_rows, len(samples))
            rows[i + 1][j + 1] = replace(rows[i + 1][j + 1], view=key)
    return replace(table, rows=rows)
