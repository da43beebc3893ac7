"""Analyses of what answering cost: tokens (and dollars, given prices) and time per question."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import mean

from recworld.report import figures
from recworld.report.analysis import AnalysisOptions, Section
from recworld.report.runs import RunData
from recworld.report.tables import DASH, Cell, labels, measure_table, ordered_measures
from recworld.scoring.prices import Price
from recworld.scoring.records import SampleRecord

__all__ = ["cost_section", "time_section"]


def _per_measure(samples: Sequence[SampleRecord], value: str) -> dict[str, float]:
    acc: dict[str, list[float]] = {}
    for s in samples:
        if not s.scored:
            continue
        if value == "latency":
            acc.setdefault(s.measure, []).append(s.latency_s)
        elif s.usage is not None:
            acc.setdefault(s.measure, []).append(float(getattr(s.usage, value)))
    return {m: mean(v) for m, v in acc.items() if v}


def cost_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    prices = options.prices
    measures = ordered_measures(runs)
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    cost_rows: list[list[Cell]] = []
    for run in runs:
        prompt, completion = (
            _per_measure(run.samples, "prompt_tokens"),
            _per_measure(run.samples, "completion_tokens"),
        )
        if not prompt:
            continue
        rows.append(
            [
                Cell(run.label),
                Cell(run.dataset),
                *[Cell(_tokens(prompt.get(m), completion.get(m))) for m in measures],
            ]
        )
        series[run.label] = [prompt.get(m) for m in measures]
        price = prices.get(run.model)
        if price is not None:
            cost_rows.append(
                [Cell(run.label), Cell(run.dataset), *_costs(prompt, completion, price, measures)]
            )
    if not rows:
        return None
    tables = [
        measure_table(
            "tokens",
            "Tokens per question",
            "Mean prompt + completion tokens per question, as the backend counted them (paper Table 16).",
            lead=["model", "dataset"],
            measures=measures,
            rows=rows,
        )
    ]
    if cost_rows:
        tables.append(
            measure_table(
                "cost",
                "Cost per 1,000 questions",
                "From --prices (USD per 1M input and output tokens; paper Table 17).",
                lead=["model", "dataset"],
                measures=measures,
                rows=cost_rows,
            )
        )
    svg = figures.grouped_bars(
        "fig-tokens", "Prompt tokens per question", labels(measures), series, ylabel="tokens"
    )
    return Section("cost", "Tokens and cost", "Usage as the backend reported it.", tables, [svg])


def _costs(
    prompt: Mapping[str, float], completion: Mapping[str, float], price: Price, measures: Sequence[str]
) -> list[Cell]:
    """Dollars per 1,000 questions: mean tokens x price per 1M tokens / 1,000."""
    out: list[Cell] = []
    for m in measures:
        if m not in prompt:
            out.append(Cell(DASH))
            continue
        dollars = (prompt[m] * price.input_per_m + completion.get(m, 0.0) * price.output_per_m) / 1000
        out.append(Cell(f"${dollars:.4f}"))
    return out


def _tokens(prompt: float | None, completion: float | None) -> str:
    return DASH if prompt is None else f"{prompt:.0f} + {completion or 0:.0f}"


def time_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    measures = ordered_measures(runs)
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    for run in runs:
        latency = _per_measure(run.samples, "latency")
        hits = sum(s.cache_hit for s in run.samples)
        rows.append(
            [
                Cell(run.label),
                Cell(run.dataset),
                Cell(str(hits)),
                *[Cell(DASH if m not in latency else f"{latency[m]:.3f}") for m in measures],
            ]
        )
        series[run.label] = [latency.get(m) for m in measures]
    table = measure_table(
        "time",
        "Inference time per question (s)",
        "Mean seconds the model took per question (paper Table 18); an answer served from the response "
        "cache counts the time its original send took, not 0.",
        lead=["model", "dataset", "cached"],
        measures=measures,
        rows=rows,
        left=2,  # "cached" is a count: right-aligned like the numbers
    )
    svg = figures.grouped_bars("fig-time", "Seconds per question", labels(measures), series, ylabel="seconds")
    return Section(
        "time", "Inference time", "Time in the model; waits and retries' backoff excluded.", [table], [svg]
    )
