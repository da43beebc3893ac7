"""Tables that qualify the scores: misses, failed requests, position bias, paired differences, runs.

Split from :mod:`recworld.report.tables` (which holds the score tables and the
shared cell and Markdown machinery) to keep each module small.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from recworld.lrworld.catalogue import MEASURES
from recworld.report.coverage import role_of
from recworld.report.runs import RunData
from recworld.report.tables import fmt_pct, fmt_score, fmt_signed, measure_table, ordered_measures
from recworld.reportkit import DASH, Cell, Table
from recworld.scoring.records import PairedDifference, PairedMeasure, PairedRecord
from recworld.scoring.thresholds import DEGENERATE_TV, MIN_PAIRED_N, SIGNIFICANCE

__all__ = ["details_table", "errors_table", "missed_table", "paired_table", "position_tables"]

_MEASURE_ORDER = {m.id: i for i, m in enumerate(MEASURES)}


def missed_table(dataset: str, key: str, runs: Sequence[RunData]) -> Table:
    measures = ordered_measures(runs)
    rows = []
    for run in runs:
        cells = [Cell(run.label)]
        for m in measures:
            entry = run.metrics.measures.get(m)
            if entry is None or entry.missed_rate is None:
                cells.append(Cell(DASH))
                continue
            low, high = entry.missed_ci
            cells.append(Cell(fmt_pct(entry.missed_rate), title=f"95% CI [{fmt_pct(low)}, {fmt_pct(high)}]"))
        cells.append(Cell(str(sum(e.ties for e in run.metrics.measures.values()))))
        cells.append(Cell(str(run.metrics.errors)))
        rows.append(cells)
    return measure_table(
        f"missed-{key}",
        f"Missed rate ({dataset})",
        "Share of answers from which no option could be read (counted as wrong in the scores above). "
        "'errors' counts requests that failed after all retries: they are not answers, so they are "
        "left out of every score and rate. 'ties' counts answers whose best score several options "
        "shared: loglik draws the pick among them with the run's seed, rank mode counts a miss; "
        "neither gives a tie to option A. The paper reports missed rates within 5%.",
        lead=["Model"],
        measures=measures,
        rows=rows,
        tail=["ties", "errors"],
    )


def errors_table(dataset: str, key: str, runs: Sequence[RunData]) -> Table | None:
    """Failed requests per model and measure; None when no run had any."""
    if not any(run.metrics.errors for run in runs):
        return None
    measures = ordered_measures(runs)
    rows = []
    for run in runs:
        cells = [Cell(run.label)]
        for m in measures:
            entry = run.metrics.measures.get(m)
            errors = 0 if entry is None else entry.errors
            asked = errors + (0 if entry is None else entry.n)
            text = DASH if entry is None else f"{errors}/{asked}"
            cells.append(Cell(text, css="warn" if errors else ""))
        cells.append(Cell(run.status, css="" if run.status == "finished" else "warn", title=run.reason))
        rows.append(cells)
    return measure_table(
        f"errors-{key}",
        f"Failed requests ({dataset})",
        "Samples whose request failed after all retries, out of the samples asked, per measure. They "
        "are not scored. 'run' is the run's status: stopped (a fatal failure such as a rejected key) "
        "or too_many_errors (above --fail-on-error); hover it for the cause.",
        lead=["Model"],
        measures=measures,
        rows=rows,
        tail=["run"],
    )


def _answer_key(runs: Sequence[RunData], fmt: str, n_options: int) -> list[int]:
    """Where the correct answers sit, over the distinct questions the runs asked (each counted once)."""
    seen: dict[tuple[str, str], int] = {}
    for run in runs:
        for s in run.samples:
            if s.format.value == fmt and s.scored:
                seen.setdefault((s.measure, s.question_id), s.answer_index)
    gold = [0] * n_options
    for index in seen.values():
        gold[index] += 1
    return gold


def position_tables(runs: Sequence[RunData]) -> list[Table]:
    """Where models point versus where answers are, per question format."""
    tables = []
    for fmt in ("mcq", "hit@1"):
        present = [r for r in runs if fmt in r.metrics.positions]
        if not present:
            continue
        labels = present[0].metrics.positions[fmt].labels
        rows: list[list[Cell]] = []
        for run in present:
            pos = run.metrics.positions[fmt]
            total = max(pos.n_parsed, 1)
            cells = [Cell(f"{run.label} — {run.dataset}")]
            cells += [
                Cell(fmt_pct(c / total, 0), bold=lab == pos.top_label)
                for lab, c in zip(labels, pos.parsed, strict=True)
            ]
            flag = "† degenerate" if pos.degenerate else ""
            cells += [
                Cell(str(pos.n_parsed)),
                Cell(fmt_score(pos.tv_distance)),
                Cell(flag, css="warn" if flag else ""),
            ]
            rows.append(cells)
        gold = _answer_key(present, fmt, len(labels))
        total_gold = max(sum(gold), 1)
        rows.insert(
            0,
            [
                Cell("answer key"),
                *[Cell(fmt_pct(g / total_gold, 0)) for g in gold],
                Cell(str(sum(gold))),
                Cell(DASH),
                Cell(""),
            ],
        )
        kind = "4-option MCQ" if fmt == "mcq" else "10-candidate HitRatio@1"
        tables.append(
            Table(
                key=f"positions-{fmt}",
                title=f"Position bias: {kind} questions",
                caption=(
                    "Share of parsed answers falling on each option position (most frequent in bold); the "
                    "'answer key' row shows where the correct answers are, over the distinct questions "
                    "asked. "
                    "TV = total variation distance between a run's parsed positions and the key of the "
                    "questions it asked: 0 means no position preference. n = parsed answers (answer key: "
                    f"questions). 'degenerate': TV above {DEGENERATE_TV} and the top position chosen "
                    "significantly more often than the key puts answers there (docs/report.md)."
                ),
                columns=["Model", *labels, "n", "TV", "flag"],
                rows=rows,
                row_css=["chance"] + [""] * len(present),
            )
        )
    return tables


def _paired_cell(entry: PairedMeasure | PairedDifference | None, test: str) -> Cell:
    if entry is None:
        return Cell(DASH)
    low, high = entry.ci_low, entry.ci_high
    n = entry.n if isinstance(entry, PairedMeasure) else entry.n_min
    bounds = f"[{DASH if low is None else fmt_signed(low)}, {DASH if high is None else fmt_signed(high)}]"
    p = "" if entry.p_value is None else f"; {test} p = {entry.p_value:.3g}"
    wins = (
        f"; only this model right: {entry.wins_a}, only the reference: {entry.wins_b}"
        if isinstance(entry, PairedMeasure)
        else ""
    )
    size = (
        f"n = {n} shared questions"
        if isinstance(entry, PairedMeasure)
        else f"fewest shared questions of a measure: {n}"
    )
    title = f"95% CI {bounds}{p}; {size}{wins}"
    if not entry.tested:
        return Cell(
            f"{fmt_signed(entry.diff)} (n={n})", title=title + f"; not tested below n = {MIN_PAIRED_N}"
        )
    return Cell(
        f"{fmt_signed(entry.diff)}{' *' if entry.significant else ''}", bold=entry.significant, title=title
    )


def paired_table(
    dataset: str, key: str, reference: RunData, others: Sequence[tuple[RunData, PairedRecord]]
) -> Table:
    measures = sorted({m for _, cmp in others for m in cmp.measures}, key=lambda m: _MEASURE_ORDER.get(m, 99))
    rows = [
        [
            Cell(run.label),
            Cell(str(cmp.n_common)),
            *[_paired_cell(cmp.measures.get(m), "exact McNemar") for m in measures],
            _paired_cell(cmp.overall, "stratified sign-flip"),
        ]
        for run, cmp in others
    ]
    return measure_table(
        f"paired-{key}",
        f"Paired differences against {reference.label} ({dataset})",
        f"Score of each model minus {reference.label} (the best model of the full runs on average, never the "
        "oracle) on the questions both answered ('shared'). * and bold: the paired test rejects no "
        f"difference at {SIGNIFICANCE:g} (exact McNemar test per measure; a stratified sign-flip test for "
        f"all measures). A difference on fewer than {MIN_PAIRED_N} shared questions (per measure, and on "
        "every measure for the average) shows its n and is not tested. Hover for the 95% interval and p.",
        lead=["Model", "shared"],
        measures=measures,
        rows=rows,
        tail=["all measures"],
        left=1,
    )


def iso_time(value: int | str | None) -> str:
    """A run.json time for people: ISO 8601 UTC. Older runs stored Unix seconds."""
    if value is None or value == "":
        return DASH
    if isinstance(value, int) or str(value).isdigit():
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(value)))
    return str(value)


def details_table(runs: Sequence[RunData], coverage: dict[int, str]) -> Table:
    """One row per run: its folder, its role in the report and what it covered."""
    rows = []
    for run in runs:
        limit = None if run.info is None else run.info.limit
        finished = None if run.info is None else run.info.finished
        rows.append(
            [
                Cell(run.label),
                Cell(run.settings_line or DASH),
                Cell(run.name, title=str(run.path)),
                Cell(run.dataset),
                Cell(role_of(run).value),
                Cell(str(run.metrics.n)),
                Cell(DASH if limit is None else str(limit)),
                Cell(coverage.get(id(run), DASH)),
                Cell(run.fingerprint[:12] or DASH, title=run.fingerprint),
                Cell(iso_time(finished)),
            ]
        )
    return Table(
        key="details",
        title="Runs",
        caption=(
            "settings: every setting that differs from the defaults (a system prompt as a hash of its text "
            "and its first words); role: main (a row of the main tables), ceiling (the oracle), variant or "
            "orders (their own sections); n = samples answered; limit = questions per measure in the last "
            "invocation; "
            "coverage 'partial' = the run asked fewer or other questions than the primary runs of its "
            "dataset (its averages are in their own tables); runs compared in one table must share a suite "
            "fingerprint."
        ),
        columns=[
            "Model",
            "settings",
            "folder",
            "dataset",
            "role",
            "n",
            "limit",
            "coverage",
            "suite",
            "finished (UTC)",
        ],
        rows=rows,
        left=5,
    )
