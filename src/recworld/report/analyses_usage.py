"""Analyses of what answering cost: tokens (and dollars, given prices) and time, per measure.

As in the paper (Tables 16-18), the figures are totals per measure (tokens fed
to the model; inference time as H:MM:SS), with the mean per question beside
them, and each row says how many questions it counts: totals of runs with
different n are not comparable, their means are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from recworld.report.analysis import AnalysisOptions
from recworld.report.runs import RunData
from recworld.report.tables import labels, measure_table, ordered_measures
from recworld.reportkit import DASH, Cell, Figure, Section, Table
from recworld.reportkit.figures import bars
from recworld.scoring.prices import Price
from recworld.scoring.records import SampleRecord

__all__ = ["clock", "cost_section", "time_section"]


@dataclass(frozen=True)
class Usage:
    """One measure of one run: totals over its scored samples, and how many there were."""

    n: int
    prompt: float
    completion: float
    seconds: float

    @property
    def per_question(self) -> tuple[float, float, float]:
        return self.prompt / self.n, self.completion / self.n, self.seconds / self.n


def _usage(samples: Sequence[SampleRecord]) -> dict[str, Usage]:
    acc: dict[str, list[float]] = {}
    for s in samples:
        if not s.scored:
            continue
        row = acc.setdefault(s.measure, [0.0, 0.0, 0.0, 0.0])
        row[0] += 1
        row[3] += s.latency_s
        if s.usage is not None:
            row[1] += s.usage.prompt_tokens
            row[2] += s.usage.completion_tokens
    return {m: Usage(int(r[0]), r[1], r[2], r[3]) for m, r in acc.items() if r[0]}


def _has_tokens(samples: Sequence[SampleRecord]) -> bool:
    return any(s.usage is not None and s.usage.prompt_tokens > 0 for s in samples)


def clock(seconds: float) -> str:
    """``H:MM:SS`` (``M:SS`` under an hour), as the paper's Table 18."""
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _questions(usage: Mapping[str, Usage]) -> str:
    return str(sum(u.n for u in usage.values()))


def cost_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    prices = options.prices
    measures = ordered_measures(runs)
    rows: list[list[Cell]] = []
    completion_rows: list[list[Cell]] = []
    cost_rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    for run in runs:
        if not _has_tokens(run.samples):
            continue
        usage = _usage(run.samples)
        lead = [Cell(run.label), Cell(run.dataset), Cell(_questions(usage))]
        rows.append([*lead, *[_tokens(usage.get(m), prompt=True) for m in measures]])
        completion_rows.append([*lead, *[_tokens(usage.get(m), prompt=False) for m in measures]])
        series[run.label] = [None if m not in usage else usage[m].prompt for m in measures]
        price = prices.get(run.model)
        if price is not None:
            cost_rows.append([*lead, *_costs(usage, price, measures)])
    if not rows:
        return None
    tables = _token_tables(rows, completion_rows, cost_rows, measures)
    svg = bars("fig-tokens", "Prompt tokens per measure (total)", labels(measures), series, ylabel="tokens")
    return Section(
        key="cost",
        title="Tokens and cost",
        intro="Usage as the backend reported it.",
        tables=tables,
        figures=[Figure("cost", svg)],
    )


def _token_tables(
    rows: list[list[Cell]],
    completion_rows: list[list[Cell]],
    cost_rows: list[list[Cell]],
    measures: Sequence[str],
) -> list[Table]:
    columns = ["model", "dataset", "answered"]
    tables = [
        measure_table(
            "tokens",
            "Tokens fed to the model, per measure",
            "Total prompt tokens per measure as the backend counted them (paper Tables 16 and 17 give these "
            "totals, counted by GPT-3.5's tokenizer), with the mean per question in brackets. 'answered' "
            "counts the answered samples the totals are over (questions x orders for an orders run).",
            lead=columns,
            measures=measures,
            rows=rows,
            left=2,
        ),
        measure_table(
            "completion-tokens",
            "Tokens the model generated, per measure",
            "Total completion tokens per measure, with the mean per question in brackets.",
            lead=columns,
            measures=measures,
            rows=completion_rows,
            left=2,
        ),
    ]
    if cost_rows:
        tables.append(
            measure_table(
                "cost",
                "Cost per measure",
                "Total cost of the measure's answered samples from --prices (USD per 1M input and output "
                "tokens), with the cost per 1,000 questions in brackets. The paper gives no cost table; its "
                "Tables 16-17 give the token totals.",
                lead=columns,
                measures=measures,
                rows=cost_rows,
                left=2,
            )
        )
    return tables


def _tokens(usage: Usage | None, *, prompt: bool) -> Cell:
    if usage is None:
        return Cell(DASH)
    total = usage.prompt if prompt else usage.completion
    return Cell(f"{total:,.0f} ({total / usage.n:,.1f})", title=f"{usage.n} questions")


def _costs(usage: Mapping[str, Usage], price: Price, measures: Sequence[str]) -> list[Cell]:
    out: list[Cell] = []
    for m in measures:
        if m not in usage:
            out.append(Cell(DASH))
            continue
        u = usage[m]
        dollars = (u.prompt * price.input_per_m + u.completion * price.output_per_m) / 1e6
        out.append(Cell(f"${dollars:.4f} (${1000 * dollars / u.n:.4f})", title=f"{u.n} questions"))
    return out


def time_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    measures = ordered_measures(runs)
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    for run in runs:
        usage = _usage(run.samples)
        hits = sum(s.cache_hit for s in run.samples)
        rows.append(
            [
                Cell(run.label),
                Cell(run.dataset),
                Cell(_questions(usage)),
                Cell(str(hits)),
                *[_time(usage.get(m)) for m in measures],
            ]
        )
        series[run.label] = [None if m not in usage else usage[m].seconds for m in measures]
    table = measure_table(
        "time",
        "Inference time per measure",
        "Total time the model took per measure, H:MM:SS as the paper's Table 18, with the mean seconds per "
        "question in brackets; an answer served from the response cache counts the time its original send "
        "took, not 0. On a shared machine this also measures the neighbours.",
        lead=["model", "dataset", "answered", "cached"],
        measures=measures,
        rows=rows,
        left=2,  # "questions" and "cached" are counts: right-aligned like the numbers
    )
    svg = bars("fig-time", "Seconds per measure (total)", labels(measures), series, ylabel="seconds")
    return Section(
        key="time",
        title="Inference time",
        intro="Time in the model; waits and retries' backoff excluded.",
        tables=[table],
        figures=[Figure("time", svg)],
    )


def _time(usage: Usage | None) -> Cell:
    if usage is None:
        return Cell(DASH)
    return Cell(f"{clock(usage.seconds)} ({usage.seconds / usage.n:.3f} s)", title=f"{usage.n} questions")
