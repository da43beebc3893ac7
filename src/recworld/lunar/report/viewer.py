"""The sample viewer: the query, rubric, answer and judgments behind a cell of report.html.

Clicking a score opens the items behind it, filterable by outcome. The entries
are a :class:`recworld.reportkit.viewer.Viewer`: the kit's page embeds them as
script-safe JSON and shows them through ``textContent`` only, so text from a
model can never become markup. Long texts are cut at :data:`MAX_CHARS` with a pointer to the JSONL
file that holds them whole; a cell shows at most :data:`MAX_ROWS` items.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from recworld.lunar.judges.personalization import Judgment
from recworld.lunar.judges.privacy import SEVERITY, PrivacyJudgment
from recworld.lunar.report.runs import EvalData, Inputs
from recworld.lunar.schemas import Rubric
from recworld.reportkit.viewer import Column, Viewer, cut

__all__ = ["COLUMNS", "MAX_CHARS", "MAX_ROWS", "OUTCOMES", "ViewerData", "view_key"]

MAX_CHARS = 3000
MAX_ROWS = 200
OUTCOMES = ("judged", "answer failed", "judge error")
COLUMNS: tuple[Column, ...] = (
    ("id", "query", "text"),
    ("outcome", "outcome", "text"),
    ("query", "request", "text"),
    ("rubric", "rubric", "fold"),
    ("answer", "answer", "text"),
    ("judgment", "judgment", "text"),
    ("privacy", "privacy", "text"),
)


def view_key(prefix: str, model: str, context: str) -> str:
    """The viewer key of one evaluation run (``prefix``: an ablation variant, or empty)."""
    return f"{prefix}|{model}|{context}"


def cap(text: str, where: str) -> str:
    """``text``, cut at :data:`MAX_CHARS` with the file that holds it whole."""
    return cut(text, MAX_CHARS, where)


def _rubric(rubric: Rubric | None) -> str:
    if rubric is None:
        return "(no rubric in rubrics.jsonl)"
    evidence = ", ".join(rubric.evidence.record_ids) or "none"
    return f"{rubric.describe()}\nEvidence records: {evidence}\n\nGeneric answer:\n{rubric.generic_answer}"


def _judgment(j: Judgment | None) -> str:
    if j is None:
        return "(no judgment)"
    if j.error is not None:
        return f"judge error: {j.error}"
    if j.answer_failed:
        return f"PC {j.pc}, PD {j.pd}, Avg {j.avg} (the floor: the answer failed)"
    order = "answer shown first" if j.target_first else "generic answer shown first"
    baseline = f"generic answer: PC {j.baseline_pc}, PD {j.baseline_pd}"
    return f"PC {j.pc}, PD {j.pd}, Avg {j.avg} ({order}; {baseline})\n{j.rationale}".rstrip()


def _privacy(p: PrivacyJudgment | None) -> str:
    if p is None:
        return "(not judged for privacy)"
    if p.score is None:
        return "no answer to judge" if p.answer_failed else f"privacy judge error: {p.error}"
    items = [f"- {o.kind} ({SEVERITY[o.kind]}): “{o.quote}” {o.analysis}".rstrip() for o in p.offences]
    return "\n".join([f"score {p.score} (5 = no offence)", *(items or ["no offence listed"])])


def _outcome(answer: str | None, j: Judgment | None) -> str:
    if answer is None:
        return "answer failed"
    return "judge error" if j is None or j.error is not None else "judged"


class ViewerData:
    """The viewer's entries, one per evaluation run, keyed like the table cells that open them."""

    def __init__(self, root: Path, inputs: Inputs) -> None:
        self.root, self.inputs = root, inputs
        self.viewer = Viewer(COLUMNS, OUTCOMES, good=("judged",))

    def add(self, key: str, title: str, data: EvalData) -> None:
        where = str(data.folder.relative_to(self.root)) if data.folder.is_relative_to(self.root) else ""
        judged = {j.query_id: j for j in data.judgments}
        privacy: Mapping[str, PrivacyJudgment] = {p.query_id: p for p in data.privacy or []}
        rows = [self._row(a.query_id, a.answer, a.error, judged, privacy, where) for a in data.answers]
        self.viewer.add(key, title, rows[:MAX_ROWS], len(rows))

    def _row(
        self,
        qid: str,
        answer: str | None,
        error: str | None,
        judged: Mapping[str, Judgment],
        privacy: Mapping[str, PrivacyJudgment],
        where: str,
    ) -> dict[str, str]:
        query = self.inputs.queries.get(qid)
        j = judged.get(qid)
        return {
            "id": qid,
            "query": cap(query.text, "queries.jsonl") if query is not None else "(not in queries.jsonl)",
            "rubric": cap(_rubric(self.inputs.rubrics.get(qid)), "rubrics.jsonl"),
            "answer": cap(answer, f"{where}/answers.jsonl") if answer is not None else f"(failed: {error})",
            "judgment": cap(_judgment(j), f"{where}/judgments.jsonl"),
            "privacy": cap(_privacy(privacy.get(qid)), f"{where}/privacy.jsonl"),
            "outcome": _outcome(answer, j),
        }

    def keys(self) -> Iterable[str]:
        return self.viewer.cells.keys()
