"""The personalisation rows of the report: one per (model, context), means over judged answers with CIs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from recworld.csvsafe import csv_dict_text
from recworld.lunar.contexts.base import report_order
from recworld.lunar.judges.personalization import Judgment
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import EvalRun
from recworld.records import FrozenRecord
from recworld.scoring import bootstrap_ci as shared_bootstrap_ci
from recworld.seeding import rng

METRICS = ("pc", "pd", "avg")


def bootstrap_ci(values: Sequence[float], *, seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean (the shared recworld.scoring helper)."""
    return shared_bootstrap_ci(values, rng(seed, "lunar", "bootstrap"))


class MetricCell(FrozenRecord):
    """A mean over judged answers and its 95% bootstrap interval (all None when nothing was judged)."""

    mean: float | None
    low: float | None
    high: float | None


class ScoreRow(FrozenRecord):
    """One row of report.md / report.csv: a model under one context, errors counted beside the means."""

    model: str
    context: str
    judge: str
    n: int
    judged: int
    answer_errors: int
    judge_errors: int
    pc: MetricCell
    pd: MetricCell
    avg: MetricCell

    def cell(self, metric: str) -> MetricCell:
        cell: MetricCell = getattr(self, metric)
        return cell

    def flat(self) -> dict[str, str | int | float | None]:
        """The row as report.csv and ``lunar report --json`` show it: ``pc``, ``pc_low``, ``pc_high``..."""
        out: dict[str, str | int | float | None] = {
            "model": self.model,
            "context": self.context,
            "judge": self.judge,
            "n": self.n,
            "judged": self.judged,
            "answer_errors": self.answer_errors,
            "judge_errors": self.judge_errors,
        }
        for m in METRICS:
            c = self.cell(m)
            out |= {m: c.mean, f"{m}_low": c.low, f"{m}_high": c.high}
        return out


def _cell(values: Sequence[float], seed: int) -> MetricCell:
    ci = bootstrap_ci(values, seed=seed)
    low, high = ci if ci is not None else (None, None)
    return MetricCell(mean=float(np.mean(values)) if values else None, low=low, high=high)


def score_rows(root: Path, seed: int = 0) -> list[ScoreRow]:
    """One row per (model, context), in report order (the registered settings' ``order``)."""
    rows = []
    for run_path in sorted((root / "eval").glob("*/*/run.json")):
        run = EvalRun.read(run_path)
        judged = [
            j for j in store.read_jsonl(run_path.parent / "judgments.jsonl", Judgment) if j.error is None
        ]
        cells = {m: _cell([float(getattr(j, m)) for j in judged], seed) for m in METRICS}
        rows.append(
            ScoreRow(
                model=run.model,
                context=run.context,
                judge=run.judge,
                n=run.counts.queries,
                judged=len(judged),
                answer_errors=run.counts.answer_errors,
                judge_errors=run.counts.judge_errors,
                **cells,
            )
        )
    return sorted(rows, key=lambda r: (r.model, report_order(r.context)))


def render_csv(rows: Sequence[ScoreRow]) -> str:
    """report.csv: the rows flat (:meth:`ScoreRow.flat`); empty cells for None."""
    columns = ["model", "context", "judge", "n", "judged", "answer_errors", "judge_errors"]
    columns += [f"{m}{s}" for m in METRICS for s in ("", "_low", "_high")]
    flat = [{k: "" if v is None else v for k, v in r.flat().items()} for r in rows]
    return csv_dict_text(columns, flat, extrasaction="ignore")  # every cell formula-escaped
