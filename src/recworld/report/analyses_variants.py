"""Runs set against other runs on the same questions: prompt variants, noisy profiles, text + image, size.

Every comparison here pairs two runs question by question
(:func:`recworld.scoring.paired_comparison`): a variant with the zero-shot run
of the same model, mode and dataset; a larger model with a smaller one. So a
``--limit 5`` variant is compared with zero-shot on those five questions, never
with the zero-shot run's thousand. Changes are relative, as in the paper
(Tables 4, 23 and 25): ``(variant - zero-shot) / zero-shot`` in %, with the n
of shared questions and the exact McNemar test in every cell.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from recworld.errors import DataError
from recworld.lrworld.catalogue import get_measure
from recworld.lrworld.noise import noisy_changes
from recworld.report.analysis import AnalysisOptions
from recworld.report.coverage import Role, role_of
from recworld.report.runs import RunData
from recworld.report.tables import fmt_score, labels, measure_table, ordered_measures
from recworld.reportkit import DASH, Cell, Figure, Section, Table
from recworld.reportkit.figures import bars
from recworld.scoring import PairedRecord, paired_comparison
from recworld.scoring.records import PairedMeasure
from recworld.scoring.thresholds import MIN_PAIRED_N, SIGNIFICANCE

__all__ = ["relative", "size_section", "variants_section"]

_TEST_NOTE = (
    f"* : exact McNemar test on the shared questions, p < {SIGNIFICANCE:g}; a cell on fewer than "
    f"{MIN_PAIRED_N} shared questions shows its n and is not tested; – for the change: the reference "
    "scored 0, so no relative change exists (hover a cell for both scores, the absolute change and p)."
)


def relative(new: float | None, old: float | None) -> float | None:
    """``(new - old) / old``: the paper's relative improvement (None when ``old`` is 0 or missing)."""
    return None if new is None or old is None or old == 0 else (new - old) / old


def _pct(x: float | None) -> str:
    if x is None:
        return DASH
    text = f"{100 * x:+.1f}%"
    return ("+0.0%" if text == "-0.0%" else text).replace("-", "−")


@dataclass(frozen=True)
class Pair:
    """A run compared with its reference run on the questions both answered."""

    run: RunData
    reference: RunData
    record: PairedRecord


def _compare(run: RunData, reference: RunData, seed: int = 0) -> Pair | None:
    try:
        return Pair(run, reference, paired_comparison(run.samples, reference.samples, seed=seed))
    except DataError:  # no shared question
        return None


def _zero_shot(run: RunData, runs: Sequence[RunData]) -> RunData | None:
    """The zero-shot run of the same model, mode and dataset sharing the most questions with ``run``."""
    asked = {s.question_id for s in run.samples}
    candidates = [
        r
        for r in runs
        if role_of(r) in (Role.MAIN, Role.CEILING)
        and (r.model, r.mode, r.dataset) == (run.model, run.mode, run.dataset)
    ]
    return max(candidates, key=lambda r: len(asked & {s.question_id for s in r.samples}), default=None)


def _change_cell(entry: PairedMeasure | None, reference: str, sign: int = 1) -> Cell:
    """``0.450 (+12.5%)``: the run's score and its relative change from ``reference`` on shared questions."""
    if entry is None:
        return Cell(DASH)
    change = relative(entry.score_a, entry.score_b)
    shown = None if change is None else sign * change
    title = (
        f"{reference} {entry.score_b:.3f} on the same {entry.n} questions; absolute change "
        f"{entry.score_a - entry.score_b:+.3f}; exact McNemar p = {entry.p_value:.3g}"
    )
    if not entry.tested:
        return Cell(f"{entry.score_a:.3f} ({_pct(shown)}, n={entry.n})", title=title)
    mark = " *" if entry.significant else ""
    return Cell(f"{entry.score_a:.3f} ({_pct(shown)}){mark}", bold=entry.significant, title=title)


def _variant_pairs(runs: Sequence[RunData]) -> list[Pair]:
    pairs = []
    for run in runs:
        if role_of(run) is not Role.VARIANT:
            continue
        base = _zero_shot(run, runs)
        pair = None if base is None else _compare(run, base)
        if pair is not None:
            pairs.append(pair)
    return pairs


def _changes_table(pairs: Sequence[Pair]) -> tuple[Table, str]:
    measures = ordered_measures([p.run for p in pairs])
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    for pair in pairs:
        entries = [pair.record.measures.get(m) for m in measures]
        rows.append(
            [
                Cell(pair.run.model),
                Cell(pair.run.variant),
                Cell(pair.run.dataset),
                Cell(str(pair.record.n_common)),
                *[_change_cell(e, "zero-shot") for e in entries],
            ]
        )
        series[f"{pair.run.model} {pair.run.variant}"] = [
            None if e is None or (r := relative(e.score_a, e.score_b)) is None else 100 * r for e in entries
        ]
    table = measure_table(
        "variants",
        "Prompt variants against zero-shot",
        "Score under each variant and, in brackets, its relative change from the same model's zero-shot "
        "run on the same questions ('shared'): (variant − zero-shot) / zero-shot. Chain of thought and "
        "few-shot: paper Fig. 5, 7, 9; noisy profiles: Fig. 6, 11 and Table 23 (below, as relative drops); "
        f"text + image: Table 4 (below). {_TEST_NOTE}",
        lead=["model", "variant", "dataset", "shared"],
        measures=measures,
        rows=rows,
        left=3,
    )
    svg = bars(
        "fig-variants",
        "Relative change from zero-shot (%)",
        labels(measures),
        series,
        ylabel="relative change (%)",
        reference=0.0,
    )
    return table, svg


def _against_table(
    pairs: Sequence[Pair],
    key: str,
    title: str,
    caption: str,
    names: tuple[str, str, str],
    sign: int,
    applies: Callable[[str], bool] = lambda _m: True,
) -> Table:
    """Paper Tables 4 and 23: per model, the reference row, the variant row, and the relative change.

    A measure the variant cannot change (``applies`` false) shows "n/a" for the change, never "+0.0%".
    """
    measures = ordered_measures([p.run for p in pairs])
    rows: list[list[Cell]] = []
    css: list[str] = []
    for pair in pairs:
        entries = [pair.record.measures.get(m) for m in measures]
        base = [Cell(DASH if e is None else fmt_score(e.score_b)) for e in entries]
        varied = [Cell(DASH if e is None else fmt_score(e.score_a)) for e in entries]
        change = [
            _relative_cell(e, sign) if applies(m) else Cell("n/a", title="the variant changes no prompt here")
            for m, e in zip(measures, entries, strict=True)
        ]
        rows += [
            [Cell(f"{pair.run.model} ({pair.run.dataset})"), Cell(names[0]), *base],
            [Cell(""), Cell(names[1]), *varied],
            [Cell(""), Cell(names[2]), *change],
        ]
        css += ["", "", "chance"]
    return measure_table(
        key, title, caption, lead=["model", "prompt"], measures=measures, rows=rows, row_css=css
    )


def _relative_cell(entry: PairedMeasure | None, sign: int) -> Cell:
    if entry is None:
        return Cell(DASH)
    change = relative(entry.score_a, entry.score_b)
    text = _pct(None if change is None else sign * change)
    title = f"n = {entry.n} shared questions; exact McNemar p = {entry.p_value:.3g}"
    if not entry.tested:
        return Cell(f"{text} (n={entry.n})", title=title)
    return Cell(text + (" *" if entry.significant else ""), bold=entry.significant, title=title)


def variants_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    pairs = _variant_pairs(runs)
    orphans = [r for r in runs if role_of(r) is Role.VARIANT and not any(p.run is r for p in pairs)]
    if not pairs and not orphans:
        return None
    note = (
        "Variant runs without a zero-shot run of the same model, mode and dataset (run zero-shot too): "
        + ", ".join(r.label for r in orphans)
        if orphans
        else None
    )
    if not pairs:
        return Section(key="variants", title="Prompt variants", empty=note or "")
    table, svg = _changes_table(pairs)
    tables = [table]
    noisy = [p for p in pairs if p.run.variant == "noisy"]
    if noisy:
        tables.append(
            _against_table(
                noisy,
                "noisy",
                "Robustness to noisy and fake profiles",
                "As the paper's Table 23: each model's zero-shot score, its score with one history item "
                "replaced (-noise), and the relative drop (zero-shot − noisy) / zero-shot, on the questions "
                "both runs answered. A positive drop means the noise hurt. The variant runs only where a "
                "user's history or profile is on screen; it is not run on "
                f"{_unchanged(noisy)}, and 'n/a' marks such a measure in an older run. {_TEST_NOTE}",
                ("zero-shot", "-noise", "relative drop"),
                sign=-1,
                applies=lambda m: noisy_changes(get_measure(m)),
            )
        )
    image = [p for p in pairs if p.run.variant == "describe+image"]
    if image:
        tables.append(
            _against_table(
                image,
                "image",
                "Textual and visual multi-modality",
                "As the paper's Table 4: the image's text description only (zero-shot), the description "
                "plus the image, and the relative improvement (with − without) / without, on shared "
                f"questions. {_TEST_NOTE}",
                ("text description only", "description + image", "improvement"),
                sign=1,
            )
        )
    intro = "Each variant is its own run, compared with zero-shot on the questions both answered."
    return Section(
        key="variants",
        title="Prompt variants",
        intro=f"{intro} {note}" if note else intro,
        tables=tables,
        figures=[Figure("variants", svg)],
    )


def _unchanged(pairs: Sequence[Pair]) -> str:
    """The suites' measures the noisy variant leaves unchanged, by label ("none" when there are none)."""
    present = ordered_measures([p.reference for p in pairs])
    skipped = [get_measure(m).label for m in present if not noisy_changes(get_measure(m))]
    return ", ".join(skipped) if skipped else "no measure of these runs"


def size_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    if not options.pairs:
        return None
    pairs: list[Pair] = []
    main = [r for r in runs if role_of(r) is Role.MAIN]  # the pair compares zero-shot runs in one order
    for small, large in options.pairs:
        for s_run in [r for r in main if r.model == small]:
            l_run = next(
                (r for r in main if r.model == large and (r.mode, r.dataset) == (s_run.mode, s_run.dataset)),
                None,
            )
            pair = None if l_run is None else _compare(l_run, s_run)
            if pair is not None:
                pairs.append(pair)
    if not pairs:
        note = "No --pair found zero-shot runs of both models on one dataset and mode."
        return Section(key="size", title="Model size", empty=note)
    measures = ordered_measures([p.run for p in pairs])
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    for pair in pairs:
        entries = [pair.record.measures.get(m) for m in measures]
        name = f"{pair.reference.model} → {pair.run.model}"
        rows.append(
            [
                Cell(name),
                Cell(pair.run.variant),
                Cell(pair.run.dataset),
                Cell(str(pair.record.n_common)),
                *[_relative_cell(e, 1) for e in entries],
            ]
        )
        series[f"{name} ({pair.run.variant})"] = [
            None if e is None or (r := relative(e.score_a, e.score_b)) is None else 100 * r for e in entries
        ]
    table = measure_table(
        "size",
        "Relative improvement of the larger model",
        "(large − small) / small per measure, on the questions both answered (paper Fig. 5, Table 25). "
        + _TEST_NOTE,
        lead=["pair", "variant", "dataset", "shared"],
        measures=measures,
        rows=rows,
        left=3,
    )
    svg = bars(
        "fig-size",
        "Relative improvement from scale (%)",
        labels(measures),
        series,
        ylabel="relative improvement (%)",
        reference=0.0,
    )
    return Section(
        key="size",
        title="Model size",
        intro="Pairs given with --pair SMALL=LARGE.",
        tables=[table],
        figures=[Figure("size", svg)],
    )
