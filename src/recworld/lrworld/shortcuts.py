"""The shortcut battery: how far each measure can be solved without any model, on its own questions.

A measure measures what it claims only if nothing on the page, and no prior a
model gets for free, points at the answer. At build time every suite runs
these baselines over its own questions (data and text, and three that learn
only from the measure's *other* questions, :mod:`recworld.lrworld.option_only`):

``popularity``
    the option with the most interactions (items: users who met it; users:
    items they met; attribute values: how often users met items carrying the
    value, the weight ``--distractors popularity`` draws with);
``least_popular``
    the option with the fewest: popularity-weighted negatives can make the
    answer the *least* popular option, a shortcut the other way round;
``history_majority``
    attribute questions: the value that the most shown history lines mention
    (folded, as a whole word), i.e. what a reader copies off the screen;
``title_overlap``
    item options: the option whose folded title is the target's or a shown
    item's (a variant of one product; the option guards should leave none);
``token_overlap``
    the option whose words overlap most (Jaccard over folded word sets) with
    what the question shows: the target, or the history;
``longest_option`` / ``shortest_option``
    the option with the most / fewest characters;
``answer_prior``
    the option most often the answer in the measure's other questions (leave one out);
``answer_rate``
    the option most often right where the other questions show it;
``option_model``
    a logistic regression over option-only features (popularity, answer count
    and rate, length, id, position), trained on half the questions and scored
    on the other half, both ways: the hypothesis-only baseline of NLI.

A tie among ``k`` top-scored options counts ``1/k`` when the answer is among
them, so a baseline with no information scores chance exactly. Each score
comes with a 95 % Wilson score interval over the measure's questions, and is
*flagged* when it beats chance by more than 2 standard errors of a chance
guesser (:func:`beats_chance`). A flag names the build option that works
against it where one exists (``--rules lift``, ``--negatives popularity``,
``--distractors popularity``, ``--history-text title``); the paper-faithful
defaults stay, and the flag travels with them into the manifest and the report.

Invariant: each measure's verdict (:class:`~recworld.lrworld.manifest.MeasureShortcuts`)
names its strongest row, which is at least every option-only row, the
leave-one-out answer prior included; its debiased subset holds exactly the
questions whose answer no flagged option-only shortcut picks.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from recworld.lrworld.catalogue import MEASURES_BY_ID
from recworld.lrworld.manifest import MeasureShortcuts, ShortcutReport, ShortcutScore
from recworld.lrworld.measure import Factor, Measure, OptionKind
from recworld.lrworld.option_only import answer_prior, answer_rate, option_model
from recworld.lrworld.options import fold
from recworld.lrworld.schema import Question
from recworld.seeding import rng
from recworld.stats import wilson

if TYPE_CHECKING:
    from recworld.lrworld.config import BuildConfig
    from recworld.lrworld.context import BuildContext

__all__ = ["SHORTCUTS", "run_battery", "shortcut_scores", "wilson_interval"]

SHORTCUTS = (
    "popularity",
    "least_popular",
    "history_majority",
    "title_overlap",
    "token_overlap",
    "longest_option",
    "shortest_option",
    "answer_prior",
    "answer_rate",
    "option_model",
)
# Shortcuts that learn from the measure's other questions (recworld.lrworld.option_only).
LEARNED = ("answer_prior", "answer_rate", "option_model")
# Shortcuts that read the options alone: what the debiased subset is free of.
OPTION_ONLY = frozenset({"popularity", "least_popular", "longest_option", "shortest_option", *LEARNED})
FLAG_Z = 2.0
DEBIASED_REMEDY = (
    "no build option; read the debiased score (questions no flagged option-only shortcut answers)"
)
_WORD = re.compile(r"\w+")

# Per option: a score (higher = picked), or None when the shortcut does not apply to the question.
Scorer = Callable[[Question], list[float] | None]


def wilson_interval(successes: float, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval (``successes`` may be fractional: tie credit); [0, 1] when n is 0."""
    return (0.0, 1.0) if n <= 0 else wilson(successes, n)


def hit(scores: Sequence[float], answer: int) -> float:
    """1/k when the answer is among the k top-scored options, else 0."""
    best = max(scores)
    top = [i for i, s in enumerate(scores) if s >= best - 1e-12]
    return 1.0 / len(top) if answer in top else 0.0


@cache
def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(fold(text)))


@cache
def _phrase(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(fold(value))}(?!\w)")


class _Battery:
    """The shortcut scorers over one build's data."""

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self.item_rows = ctx.matrix.item_index()
        self.user_rows = ctx.matrix.user_index()
        self._value_weights: dict[str, Counter[str]] = {}

    def value_weights(self, field: str) -> Counter[str]:
        """Folded value -> how often users met items carrying it (anywhere in the field's list)."""
        if field not in self._value_weights:
            weights: Counter[str] = Counter()
            degree = self.ctx.item_degree
            for item, raw in enumerate(self.ctx.field_values(field)):
                values = [raw] if isinstance(raw, str) else list(raw) if raw is not None else []
                for value in {fold(str(v)) for v in values if v is not None and str(v)}:
                    weights[value] += int(degree[item])
            self._value_weights[field] = weights
        return self._value_weights[field]

    def popularity(self, question: Question, measure: Measure) -> list[float] | None:
        ids = [c.id for c in question.candidates]
        if measure.options is OptionKind.ITEM:
            degree = self.ctx.item_degree
            return [float(degree[self.item_rows[i]]) if i in self.item_rows else 0.0 for i in ids]
        if measure.options is OptionKind.USER:
            degree = self.ctx.user_degree
            return [float(degree[self.user_rows[i]]) if i in self.user_rows else 0.0 for i in ids]
        field = question.evidence.get("field")
        if not field:
            return None
        weights = self.value_weights(str(field))
        return [float(weights[fold(c.text)]) for c in question.candidates]

    def history_majority(self, question: Question, measure: Measure) -> list[float] | None:
        if measure.options is not OptionKind.ATTRIBUTE or not question.history:
            return None
        lines = [fold(e.text) for e in question.history]
        return [float(sum(bool(_phrase(c.text).search(line)) for line in lines)) for c in question.candidates]

    def title_overlap(self, question: Question, measure: Measure) -> list[float] | None:
        if measure.options is not OptionKind.ITEM:
            return None
        ctx = self.ctx
        shown = {ctx.identity_of_item_id(e.id, e.text) for e in question.history}
        if question.target.kind == "item":
            shown.add(ctx.identity_of_item_id(question.target.id, question.target.text))
        for item_id in question.evidence.get("shown_items", ()):
            shown.add(ctx.identity_of_item_id(str(item_id), ""))
        if not shown:
            return None
        return [float(ctx.identity_of_item_id(c.id, c.text) in shown) for c in question.candidates]

    def token_overlap(self, question: Question, measure: Measure) -> list[float] | None:
        shown = [question.target.text] if measure.shows_target else [e.text for e in question.history]
        context = frozenset().union(*(_words(text) for text in shown))
        if not context:
            return None
        scores = []
        for c in question.candidates:
            words = _words(c.text)
            union = len(words | context)
            scores.append(len(words & context) / union if union else 0.0)
        return scores

    def scorers(self, measure: Measure) -> dict[str, Scorer]:
        return {
            "popularity": lambda q: self.popularity(q, measure),
            "least_popular": lambda q: _negated(self.popularity(q, measure)),
            "history_majority": lambda q: self.history_majority(q, measure),
            "title_overlap": lambda q: self.title_overlap(q, measure),
            "token_overlap": lambda q: self.token_overlap(q, measure),
            "longest_option": lambda q: [float(len(c.text)) for c in q.candidates],
            "shortest_option": lambda q: [-float(len(c.text)) for c in q.candidates],
        }


def _negated(scores: list[float] | None) -> list[float] | None:
    return None if scores is None else [-s for s in scores]


def remedy(measure: Measure, shortcut: str, config: BuildConfig) -> str | None:
    """The build option that works against ``shortcut`` on ``measure`` (not already on), or None.

    Against, not always away: docs/lrworld.md gives what each option leaves on ML-100K.
    The learned option-only rows (answer priors, the option model) mostly ride
    on popularity, so they name popularity's options.
    """
    options: list[tuple[str, bool]] = []
    if shortcut in ("popularity", *LEARNED):
        if measure.factor is Factor.ASSOCIATION_RULES:
            options.append(("--rules lift", config.rules == "lift"))
        if measure.options is OptionKind.ATTRIBUTE:
            options.append(("--distractors popularity", config.distractors == "popularity"))
        else:
            options.append(("--negatives matched", config.negatives == "matched"))
    elif shortcut in ("history_majority", "token_overlap") and measure.options is OptionKind.ATTRIBUTE:
        options.append(("--history-text title", config.history_text == "title"))
    left = [name for name, active in options if not active]
    return " or ".join(left) if left else None


def upper_mean(hits: Sequence[float]) -> float:
    """The mean hit, computed exactly and reported 0.5e-9 to 1.5e-9 above it.

    Hits are 0 or 1/k, so the exact mean is a fraction; a float sum of the same
    hits in another order (an independent check) differs from it by far less
    than 1e-9, so it never exceeds the reported score.
    """
    counts = Counter(hits)  # few distinct values: 0, 1, 1/2, ...
    exact = sum((Fraction(h).limit_denominator(1000) * c for h, c in counts.items()), Fraction(0)) / len(hits)
    return (math.floor(exact * 10**9 + Fraction(1, 2)) + 1) / 10**9


def chance_se(chance: float, n: int) -> float:
    """Standard error of a chance guesser's mean hit over ``n`` questions."""
    return math.sqrt(chance * (1.0 - chance) / n) if n > 0 else math.inf


def beats_chance(score: float, chance: float, n: int) -> bool:
    """The flag rule: the score beats chance by more than 2 standard errors of a chance guesser."""
    return n > 0 and score - chance > FLAG_Z * chance_se(chance, n)


def _score_row(measure: Measure, name: str, hits: list[float], config: BuildConfig) -> ShortcutScore:
    n, total = len(hits), float(np.sum(hits))
    low, high = wilson_interval(total, n)
    chance = measure.format.chance
    score = upper_mean(hits)
    flagged = beats_chance(score, chance, n)
    return ShortcutScore(
        measure=measure.id,
        shortcut=name,
        n=n,
        score=score,
        chance=round(chance, 6),
        ci_low=round(low, 6),
        ci_high=round(high, 6),
        flagged=flagged,
        remedy=remedy(measure, name, config) if flagged else None,
        se=round(chance_se(chance, n), 6),
        option_only=name in OPTION_ONLY,
    )


def question_hits(
    battery: _Battery, measure: Measure, questions: Sequence[Question]
) -> dict[str, list[float | None]]:
    """Per shortcut, each question's hit (None where the shortcut does not apply to it)."""
    table: dict[str, list[list[float] | None]] = {
        name: [scorer(q) for q in questions] for name, scorer in battery.scorers(measure).items()
    }
    table["answer_prior"] = list(answer_prior(questions))
    table["answer_rate"] = list(answer_rate(questions))
    seed = rng(battery.ctx.config.seed, "shortcuts", measure.id)
    model = option_model(questions, table["popularity"], seed)
    if model is not None:
        table["option_model"] = list(model)
    return {
        name: [None if s is None else hit(s, q.answer_index) for s, q in zip(scores, questions, strict=True)]
        for name, scores in table.items()
    }


def shortcut_scores(
    battery: _Battery, measure: Measure, questions: Sequence[Question], config: BuildConfig
) -> tuple[list[ShortcutScore], MeasureShortcuts]:
    """Every applicable shortcut's score on one measure's questions, and the measure's verdict."""
    hits = question_hits(battery, measure, questions)
    rows = [
        _score_row(measure, name, [h for h in per if h is not None], config)
        for name, per in hits.items()
        if any(h is not None for h in per)
    ]
    strongest = max(rows, key=lambda r: (r.score, -SHORTCUTS.index(r.shortcut)))
    flagged = [r for r in rows if r.flagged]
    solving = [r.shortcut for r in flagged if r.option_only]
    solved = [i for i in range(len(questions)) if any((hits[name][i] or 0.0) > 0 for name in solving)]
    remedies = sorted({r.remedy for r in flagged if r.remedy})
    verdict = MeasureShortcuts(
        measure=measure.id,
        n=len(questions),
        chance=round(measure.format.chance, 6),
        strongest=strongest.shortcut,
        strongest_score=strongest.score,
        flagged=bool(flagged),
        flagged_shortcuts=[r.shortcut for r in flagged],
        remedy=(" ; ".join(remedies) if remedies else DEBIASED_REMEDY) if flagged else None,
        solved=solved,
        debiased_n=len(questions) - len(solved),
    )
    return rows, verdict


def run_battery(ctx: BuildContext, built: dict[str, list[Question]]) -> ShortcutReport:
    """The battery over every built measure, in catalogue order of the built dict."""
    battery = _Battery(ctx)
    rows: list[ShortcutScore] = []
    measures: dict[str, MeasureShortcuts] = {}
    with ctx.stage("shortcuts"):
        for measure_id, questions in built.items():
            measure_rows, verdict = shortcut_scores(
                battery, MEASURES_BY_ID[measure_id], questions, ctx.config
            )
            rows += measure_rows
            measures[measure_id] = verdict
    return ShortcutReport(rows=rows, measures=measures)
