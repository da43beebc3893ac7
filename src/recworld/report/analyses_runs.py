"""Analyses from the runs alone: ranking, variants, option orders, answer positions, model size."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import mean, pvariance

from recworld.report import figures
from recworld.report.analysis import AnalysisOptions, Section
from recworld.report.runs import RunData
from recworld.report.tables import (
    DASH,
    Cell,
    Table,
    fmt_score,
    label,
    labels,
    measure_table,
    ordered_measures,
)
from recworld.scoring.records import SampleRecord

__all__ = [
    "answer_distribution_section",
    "orders_section",
    "ranking_section",
    "size_section",
    "variants_section",
]


def _score(run: RunData, measure: str) -> float | None:
    entry = run.metrics.measures.get(measure)
    return None if entry is None else entry.score


def _signed(x: float | None) -> str:
    return DASH if x is None else f"{x:+.3f}".replace("-", "−")


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
        "ranking",
        "Rank mode: full candidate ranking",
        "Each option's text scored as a continuation of the prompt, per token. Score: the top-ranked "
        "option (a tie at the top is a miss, never option A). HR@k counts every option scored at least "
        "as high as the answer, so ties earn nothing.",
        ["model", "measure", "score", "HR@1", "HR@3", "NDCG@10", "ties", "n"],
        rows,
        left=2,
    )
    svg = figures.grouped_bars(
        "fig-ranking", "NDCG@10 per measure", labels(measures), series, ylabel="NDCG@10"
    )
    return Section(
        "ranking", "Rank mode", "HR@1, HR@3 and NDCG@10 next to the single-pick score.", [table], [svg]
    )


def _baseline(run: RunData, runs: Sequence[RunData]) -> RunData | None:
    """The zero-shot run of the same model, mode and dataset, asked in one order."""
    for other in runs:
        if (other.model, other.mode, other.dataset, other.variant) == (
            run.model,
            run.mode,
            run.dataset,
            "zero-shot",
        ):
            return other
    return None


def variants_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    pairs = [(r, b) for r in runs if r.variant != "zero-shot" and (b := _baseline(r, runs)) is not None]
    if not pairs:
        return None
    measures = ordered_measures([r for r, _ in pairs])
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    for run, base in pairs:
        deltas = [_delta(_score(run, m), _score(base, m)) for m in measures]
        rows.append(
            [
                Cell(run.model),
                Cell(run.variant),
                Cell(run.dataset),
                *[
                    Cell(f"{fmt_score(_score(run, m))} ({_signed(d)})")
                    for m, d in zip(measures, deltas, strict=True)
                ],
            ]
        )
        series[f"{run.model} {run.variant}"] = deltas
    table = measure_table(
        "variants",
        "Prompt variants against zero-shot",
        "Score under each variant, with the change from the same model's zero-shot run in brackets: "
        "chain-of-thought and few-shot (paper Fig. 5, 7, 9), noisy profiles (Fig. 6, 11, Table 23: a "
        "negative change is the drop), text+image (Table 4's improvement row).",
        lead=["model", "variant", "dataset"],
        measures=measures,
        rows=rows,
    )
    svg = figures.grouped_bars(
        "fig-variants",
        "Change from zero-shot",
        labels(measures),
        series,
        ylabel="score change",
        zero_line=True,
    )
    return Section(
        "variants",
        "Prompt variants",
        "Each variant is its own run; the change is per measure.",
        [table],
        [svg],
    )


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _order_scores(samples: Sequence[SampleRecord]) -> dict[str, dict[int, float]]:
    hits: dict[str, dict[int, list[bool]]] = {}
    for s in samples:
        if s.scored:
            hits.setdefault(s.measure, {}).setdefault(s.order, []).append(s.hit)
    return {m: {o: sum(v) / len(v) for o, v in by.items()} for m, by in hits.items()}


def orders_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    multi = [r for r in runs if len({s.order for s in r.samples}) > 1]
    if not multi:
        return None
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    errors: dict[str, list[float | None]] = {}
    measures = ordered_measures(multi)
    for run in multi:
        by = _order_scores(run.samples)
        means, sds = [], []
        for m in measures:
            scores = list(by.get(m, {}).values())
            avg = mean(scores) if scores else None
            var = pvariance(scores) if len(scores) > 1 else None
            means.append(avg)
            sds.append(None if var is None else var**0.5)
            rows.append(
                [
                    Cell(run.label),
                    Cell(label(m)),
                    Cell(str(len(scores))),
                    Cell(fmt_score(avg)),
                    Cell(DASH if var is None else f"{var:.5f}"),
                    Cell(DASH if not scores else f"{min(scores):.3f}–{max(scores):.3f}"),
                ]
            )
        series[run.label], errors[run.label] = means, sds
    table = Table(
        "orders",
        "Position bias over option orders",
        "Each question asked under N seeded permutations of its options (paper Tables 6 and 11): the "
        "mean score over orders and its variance across orders.",
        ["model", "measure", "orders", "mean", "variance", "range"],
        rows,
        left=2,
    )
    svg = figures.grouped_bars(
        "fig-orders",
        "Mean over option orders (±1 sd)",
        labels(measures),
        series,
        errors=errors,
        ylabel="score",
    )
    return Section(
        "orders",
        "Option orders",
        "A model without position bias scores the same in every order.",
        [table],
        [svg],
    )


def answer_distribution_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
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
        "answer-distribution",
        "Answer positions per measure",
        "gold/model: how many correct answers sit at each position, and how many of the model's parsed "
        "answers chose it (paper Tables 12-14), per measure and dataset, not pooled.",
        ["model", "dataset", "measure", *[chr(65 + i) for i in range(width)]],
        rows,
        left=3,
    )
    svg = figures.heatmaps("fig-answer-dist", "Share of the model's answers per position", panels)
    return Section(
        "answer-distribution",
        "Answer distribution",
        "Where answers are, and where models point.",
        [table],
        [svg],
    )


def size_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    pairs = options.pairs
    if not pairs:
        return None
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    measures = ordered_measures(runs)
    for small, large in pairs:
        for s_run in [r for r in runs if r.model == small]:
            l_run = next(
                (
                    r
                    for r in runs
                    if r.model == large
                    and (r.mode, r.variant, r.dataset) == (s_run.mode, s_run.variant, s_run.dataset)
                ),
                None,
            )
            if l_run is None:
                continue
            rel = [_relative(_score(l_run, m), _score(s_run, m)) for m in measures]
            rows.append(
                [
                    Cell(f"{small} → {large}"),
                    Cell(s_run.variant),
                    Cell(s_run.dataset),
                    *[Cell(DASH if x is None else f"{100 * x:+.1f}%") for x in rel],
                ]
            )
            series[f"{small} → {large} ({s_run.variant})"] = rel
    if not rows:
        return Section(
            "size", "Model size", "", note="No --pair found both models on one dataset, mode and variant."
        )
    table = measure_table(
        "size",
        "Relative improvement of the larger model",
        "(large − small) / small per measure (paper Fig. 5, Table 25).",
        lead=["pair", "variant", "dataset"],
        measures=measures,
        rows=rows,
    )
    svg = figures.grouped_bars(
        "fig-size",
        "Relative improvement from scale",
        labels(measures),
        series,
        ylabel="relative improvement",
        zero_line=True,
    )
    return Section("size", "Model size", "Pairs given with --pair SMALL=LARGE.", [table], [svg])


def _relative(large: float | None, small: float | None) -> float | None:
    return None if large is None or not small else (large - small) / small
