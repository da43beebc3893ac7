"""The personalisation rows of the report (Table 4): one per (model, context), PC, PD and Avg.

A failed answer scores the scale's floor (1 on PC and PD) and stays in the mean; a
failed judgment is left out and counted. Each mean carries its interval
(:mod:`.estimates`). The rows are the one computation behind the HTML table, the
Markdown table, ``report.csv`` and ``lunar report --json``.
"""

from __future__ import annotations

from collections.abc import Sequence

from recworld.csvsafe import csv_text
from recworld.lunar.report.estimates import MIN_N, MetricCell, mean_cell
from recworld.lunar.report.runs import EvalData
from recworld.lunar.report.viewer import view_key
from recworld.records import FrozenRecord
from recworld.reportkit import Cell, Figure, Section, Table
from recworld.reportkit.figures import Bar, bars

__all__ = ["CSV_COLUMNS", "METRICS", "MetricCell", "ScoreRow", "render_csv", "score_rows", "scores_section"]

METRICS = ("pc", "pd", "avg")
LABELS = {"pc": "PC", "pd": "PD", "avg": "Avg"}


class ScoreRow(FrozenRecord):
    """One row of the personalisation table: a model under one context, errors counted beside the means."""

    model: str
    context: str
    judge: str
    n: int
    judged: int  # scored rows: judged answers plus failed answers at the floor
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


def score_row(data: EvalData, seed: int) -> ScoreRow:
    scored = data.scored()
    run = data.run
    cells = {
        m: mean_cell([float(getattr(j, m)) for j in scored], seed, run.model, run.context, m) for m in METRICS
    }
    return ScoreRow(
        model=run.model,
        context=run.context,
        judge=run.judge,
        n=run.counts.queries,
        judged=len(scored),
        answer_errors=run.counts.answer_errors,
        judge_errors=run.counts.judge_errors,
        **cells,
    )


def score_rows(evals: Sequence[EvalData], seed: int = 0) -> list[ScoreRow]:
    """One row per evaluation run, in the order :func:`~.runs.load_evals` gives (model, report order)."""
    return [score_row(e, seed) for e in evals]


CSV_COLUMNS = ["model", "context", "judge", "n", "judged", "answer_errors", "judge_errors"]
CSV_COLUMNS += [f"{m}{s}" for m in METRICS for s in ("", "_low", "_high")]


def render_csv(rows: Sequence[ScoreRow]) -> str:
    """report.csv: the rows flat (:meth:`ScoreRow.flat`); empty cells for None (no interval below min n)."""
    return csv_text([CSV_COLUMNS, *([r.flat()[c] for c in CSV_COLUMNS] for r in rows)])


def _table(rows: Sequence[ScoreRow], prefix: str = "") -> Table:
    out = []
    for r in rows:
        view = view_key(prefix, r.model, r.context)
        scores = [Cell(r.cell(m).text(), view=view) for m in METRICS]
        out.append(
            [
                Cell(r.model),
                Cell(r.context),
                Cell(r.judge),
                Cell(f"{r.judged} / {r.n}"),
                Cell(str(r.answer_errors), css="warn" if r.answer_errors else ""),
                Cell(str(r.judge_errors), css="warn" if r.judge_errors else ""),
                *scores,
            ]
        )
    return Table(
        key="personalisation",
        title="Personalisation against the generic answer (Table 4)",
        columns=[
            "model",
            "context",
            "judge",
            "scored / n",
            "answer errors",
            "judge errors",
            "PC",
            "PD",
            "Avg",
        ],
        rows=out,
        caption=f"Mean judge score 1–5 with a 95% interval (below {MIN_N} scored answers: n too small); "
        "click a score to read the answers behind it.",
        left=3,
    )


def _figure(rows: Sequence[ScoreRow]) -> Figure | None:
    contexts = list(dict.fromkeys(r.context for r in rows))
    models = list(dict.fromkeys(r.model for r in rows))
    if all(r.avg.mean is None for r in rows):
        return None
    by = {(r.model, r.context): r.avg for r in rows}
    series = {
        m: [
            Bar(c.mean, c.low, c.high) if (c := by.get((m, ctx))) is not None else Bar(None)
            for ctx in contexts
        ]
        for m in models
    }
    svg = bars(
        "avg-by-context",
        "Personalisation (Avg) by context",
        contexts,
        series,
        ylabel="mean Avg (1–5)",
        ylim=(1, 5),
        reference=2.0,
    )
    caption = (
        "Mean Avg per model and context; whiskers: 95% intervals (none below the minimum n). "
        "Dashed: 2, the score of a generic answer."
    )
    return Figure("avg-by-context", svg, caption)


def _notes(evals: Sequence[EvalData], rows: Sequence[ScoreRow]) -> list[str]:
    notes = []
    for e, r in zip(evals, rows, strict=True):
        if e.all_answers_failed:
            notes.append(
                f"{e.model} / {e.context}: every answer failed ({len(e.answers)} of {len(e.answers)}); "
                "its scores are the floor (1), not a judge's opinion. The errors are in run.json."
            )
        elif r.judged == 0:
            notes.append(f"{r.model} / {r.context}: no judgment succeeded (judge errors: {r.judge_errors}).")
    return notes


def scores_section(evals: Sequence[EvalData], rows: Sequence[ScoreRow]) -> Section:
    if not rows:
        return Section(
            key="personalisation",
            title="Personalisation",
            empty="No evaluations yet: run `recworld lunar eval ROOT --model M --judge J` "
            "(it writes eval/<model>/<context>/).",
        )
    figure = _figure(rows)
    return Section(
        key="personalisation",
        title="Personalisation",
        intro=(
            "Each answer is judged pairwise against the query's generic answer on personalisation coverage "
            "(PC) and depth (PD); Avg = (PC + PD) / 2. A failed answer scores 1 on both (wrong or missing) "
            "and stays in the mean; a failed judgment is left out and counted."
        ),
        notes=_notes(evals, rows),
        tables=[_table(rows)],
        figures=[figure] if figure is not None else [],
    )
