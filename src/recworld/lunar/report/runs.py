"""What the report reads, once: every evaluation run of a folder with its answers and judgments.

An evaluation run is ``eval/<model>/<context>/`` (``run.json`` beside ``answers.jsonl``,
``judgments.jsonl`` and, when the privacy judge ran, ``privacy.jsonl``); an ablation
variant writes the same layout under ``ablate/<variant>/eval/``. Every table, figure
and viewer entry of the report is computed from these records, so the renderings
never read a file of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from recworld.lunar.contexts.base import report_order
from recworld.lunar.judges.personalization import Judgment
from recworld.lunar.judges.privacy import PrivacyJudgment
from recworld.lunar.schemas import Query, Rubric
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import AnswerRecord, EvalRun

__all__ = ["EvalData", "Inputs", "load_evals", "load_inputs"]


@dataclass(frozen=True)
class EvalData:
    """One evaluation run as written: the run record, its answers and its judgments."""

    folder: Path
    run: EvalRun
    answers: list[AnswerRecord]
    judgments: list[Judgment]
    privacy: list[PrivacyJudgment] | None  # None: the privacy judge did not run on this setting

    @property
    def model(self) -> str:
        return self.run.model

    @property
    def context(self) -> str:
        return self.run.context

    def scored(self) -> list[Judgment]:
        """Judgments with a score: judged answers and failed answers at the floor; judge errors left out."""
        return [j for j in self.judgments if j.error is None and j.avg is not None]

    def privacy_scored(self) -> list[PrivacyJudgment]:
        return [p for p in self.privacy or [] if p.score is not None]

    @property
    def all_answers_failed(self) -> bool:
        return bool(self.answers) and all(a.answer is None for a in self.answers)


def _read(run_path: Path) -> EvalData:
    folder = run_path.parent
    answers_path, privacy_path = folder / "answers.jsonl", folder / "privacy.jsonl"
    return EvalData(
        folder=folder,
        run=EvalRun.read(run_path),
        answers=store.read_jsonl(answers_path, AnswerRecord) if answers_path.exists() else [],
        judgments=store.read_jsonl(folder / "judgments.jsonl", Judgment),
        privacy=store.read_jsonl(privacy_path, PrivacyJudgment) if privacy_path.exists() else None,
    )


def load_evals(base: Path) -> list[EvalData]:
    """Every finished run under ``base/eval/`` (one with ``run.json``), by model then report order."""
    found = [_read(p) for p in sorted((base / "eval").glob("*/*/run.json"))]
    return sorted(found, key=lambda e: (e.model, report_order(e.context)))


@dataclass(frozen=True)
class Inputs:
    """The folder's queries and rubrics by query id (empty when ``lunar queries`` has not run)."""

    queries: dict[str, Query]
    rubrics: dict[str, Rubric]


def load_inputs(root: Path) -> Inputs:
    queries: Sequence[Query] = store.queries(root) if (root / "queries.jsonl").exists() else []
    rubrics: Sequence[Rubric] = store.rubrics(root) if (root / "rubrics.jsonl").exists() else []
    return Inputs({q.query_id: q for q in queries}, {r.query_id: r for r in rubrics})
