"""Analyses from the runs alone: ranking, option orders, answer positions.

Comparisons of one run with another (variants, model size) are in
:mod:`recworld.report.analyses_variants`.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import pvariance

from recworld.report import figures
from recworld.report.analysis import AnalysisOptions
from recworld.report.coverage import Role, main_runs, role_of
from recworld.report.runs import RunData
from recworld.report.tables import fmt_score, label, labels, ordered_measures
from recworld.reportkit import DASH, Cell, Figure, Section, Table
from recworld.reportkit.figures import Bar, bars
from recworld.scoring.records import SampleRecord

__all__ = ["answer_distribution_section", "orders_section", "ranking_section"]


def _score(run: RunData, measure: str) -> float | None:
    entry = run.metrics.measures.get(measure)
    return None if entry is None else entry.score


def ranking_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    ranked = [r for r in runs if r.metrics.ranking]
    if not ranked:
        return None
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    measures = ordered_measures(ranked)
    for run in ranked:
        ranking = run.metrics.ranking
        for m in measures:
            if m in ranking:
                r = ranking[m]
                rows.append(
                    [
                        Cell(run.label),
                        Cell(label(m)),
                        Cell(fmt_score(_score(run, m))),
                        Cell(fmt_score(r.hr_at_1)),
                        Cell(fmt_score(r.hr_at_3)),
                        Cell(fmt_score(r.ndcg_at_10)),
                        Cell(str(r.ties)),
                        Cell(str(r.n)),
                    ]
                )
        series[run.label] = [ranking[m].ndcg_at_10 if m in ranking else None for m in measures]
    table = Table(
        key="ranking",
        title="Rank mode: full candidate ranking",
        caption="Each option's text scored as a continuation of the prompt, per token. Score: the top-ranked "
        "option (a tie at the top is a miss, never option A). HR@k counts every option scored at least "
        "as high as the answer, so ties earn nothing.",
        columns=["model", "measure", "score", "HR@1", "HR@3", "NDCG@10", "ties", "n"],
        rows=rows,
        left=2,
    )
    svg = bars("fig-ranking", "NDCG@10 per measure", labels(measures), series, ylabel="NDCG@10")
    return Section(
        key="ranking",
        title="Rank mode",
        intro="HR@1, HR@3 and NDCG@10 next to the single-pick score.",
        tables=[table],
        figures=[Figure("ranking", svg)],
    )


def _order_scores(samples: Sequence[SampleRecord]) -> dict[str, dict[int, float]]:
    hits: dict[str, dict[int, list[bool]]] = {}
    for s in samples:
        if s.scored:
            hits.setdefault(s.measure, {}).setdefault(s.order, []).append(s.hit)
    return {m: {o: sum(v) / len(v) for o, v in by.items()} for m, by in hits.items()}


def _x100(x: float | None) -> str:
    return DASH if x is None else f"{100 * x:.2f}"


def _order_rows(
    run: RunData, measures: Sequence[str]
) -> tuple[list[list[Cell]], list[float | None], list[float | None]]:
    """One row per measure of an orders run, and its means and standard deviations (x100) for the figure."""
    by = _order_scores(run.samples)
    rows: list[list[Cell]] = []
    means: list[float | None] = []
    sds: list[float | None] = []
    for m in measures:
        entry = run.metrics.measures.get(m)
        scores = list(by.get(m, {}).values())
        var = pvariance(scores) if len(scores) > 1 else None
        means.append(None if entry is None or entry.score is None else 100 * entry.score)
        sds.append(None if var is None else 100 * var**0.5)
        if entry is None:
            continue
        ci = (
            DASH
            if entry.ci_low is None or entry.ci_high is None
            else f"[{_x100(entry.ci_low)}, {_x100(entry.ci_high)}]"
        )
        rows.append(
            [
                Cell(run.label),
                Cell(label(m)),
                Cell(str(len(scores))),
                Cell(str(entry.questions)),
                Cell(_x100(entry.score)),
                Cell(ci),
                Cell(DASH if var is None else f"{100 * var:.3f}"),
                Cell(DASH if not scores else f"{100 * min(scores):.2f}–{100 * max(scores):.2f}"),
            ]
        )
    return rows, means, sds


def orders_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    multi = [r for r in runs if role_of(r) is Role.ORDERS]
    if not multi:
        return None
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    errors: dict[str, list[float | None]] = {}
    measures = ordered_measures(multi)
    for run in multi:
        run_rows, series[run.label], errors[run.label] = _order_rows(run, measures)
        rows += run_rows
    table = Table(
        key="orders",
        title="Position bias over option orders",
        caption="Each question asked under N seeded permutations of its options (paper Tables 6 and 11; "
        "order 0 is the suite's own). As in the paper, scores are ×100: the mean over orders (every "
        "question in every order), and the variance of the N per-order scores, computed on the 0–1 scale "
        "and multiplied by 100 (population variance; the paper's values are below 0.1 except for Llama). "
        "The 95% interval treats a question as the unit (its mean over orders), not the N copies of it.",
        columns=[
            "model",
            "measure",
            "orders",
            "questions",
            "mean ×100",
            "95% CI ×100",
            "variance ×100",
            "range ×100",
        ],
        rows=rows,
        left=2,
    )
    svg = bars(
        "fig-orders",
        "Mean over option orders (×100, ±1 sd across orders)",
        labels(measures),
        {
            name: [Bar.spread(v, e) for v, e in zip(values, errors[name], strict=True)]
            for name, values in series.items()
        },
        ylabel="score ×100",
    )
    return Section(
        key="orders",
        title="Option orders",
        intro="A model without position bias scores the same in every order.",
        tables=[table],
        figures=[Figure("orders", svg)],
    )


def answer_distribution_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    runs = main_runs(runs)  # the main table's runs: a variant's positions are its own analysis
    rows: list[list[Cell]] = []
    panels: dict[str, tuple[list[str], list[str], list[list[float]]]] = {}
    width = max((len(m.labels) for r in runs for m in r.metrics.measures.values()), default=0)
    if not width:
        return None
    for run in runs:
        names, shares = [], []
        for measure, m in run.metrics.measures.items():
            gold, parsed = m.positions.gold, m.positions.parsed
            cells = [Cell(f"{g}/{p}") for g, p in zip(gold, parsed, strict=True)]
            cells += [Cell("")] * (width - len(cells))
            rows.append([Cell(run.label), Cell(run.dataset), Cell(label(measure)), *cells])
            total = sum(parsed) or 1
            names.append(label(measure))
            shares.append([p / total for p in parsed] + [0.0] * (width - len(parsed)))
        panels[f"{run.label} ({run.dataset})"] = (names, [chr(65 + i) for i in range(width)], shares)
    table = Table(
        key="answer-distribution",
        title="Answer positions per measure",
        caption="gold/model: how many correct answers sit at each position, and how many of the model's "
        "parsed answers chose it (paper Tables 12-14), per measure and dataset, not pooled.",
        columns=["model", "dataset", "measure", *[chr(65 + i) for i in range(width)]],
        rows=rows,
        left=3,
    )
    svg = figures.heatmaps("fig-answer-dist", "Share of the model's answers per position", panels)
    return Section(
        key="answer-distribution",
        title="Answer distribution",
        intro="Where answers are, and where models point.",
        tables=[table],
        figures=[Figure("answer-distribution", svg)],
    )
