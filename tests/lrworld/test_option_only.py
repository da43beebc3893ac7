"""Issue 24.5: every option-only shortcut is measured (recworld.lrworld.option_only, shortcuts).

* The leave-one-out answer prior is recomputed here from the suite's question
  files by a loop that shares no code with the battery; the strongest
  shortcut each measure's verdict reports is at least it.
* Leave-one-out and cross-fitting are attacked as a class: moving one
  question's answer to another option never changes that question's own
  option scores (it is never trained or counted on itself).
* The flag rule and the debiased subset are re-derived from the rows.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.lrworld.datasets import make_movie_dataset
from recworld.io import iter_json_lines
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.manifest import read_manifest
from recworld.lrworld.option_only import answer_prior, answer_rate, option_model
from recworld.lrworld.schema import Entry, Question, QuestionFormat, Target
from recworld.lrworld.suite import build_suite


def independent_prior(rows: list[dict]) -> float:
    """Mean hit of 'pick the option most often the answer in the other questions' (ties: 1/k)."""
    answers = [row["candidates"][row["answer_index"]]["id"] for row in rows]
    total = Counter(answers)
    credit = 0.0
    for row, own in zip(rows, answers, strict=True):
        counts = [total[c["id"]] - (1 if c["id"] == own else 0) for c in row["candidates"]]
        best = max(counts)
        top = [i for i, c in enumerate(counts) if c == best]
        credit += (1.0 / len(top)) if row["answer_index"] in top else 0.0
    return credit / len(rows)


MEASURES = ("assoc_rule", "mem_item_item", "mem_user_user", "kg_movie_genre", "text_logline")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("opt") / "suite"
    build_suite(make_movie_dataset(), BuildConfig(per_measure=60, measures=MEASURES), out)
    return out


def test_strongest_shortcut_is_at_least_the_independent_prior(suite: Path) -> None:
    manifest = read_manifest(suite)
    assert manifest.shortcuts is not None
    verdicts = manifest.shortcuts.measures
    files = sorted((suite / "questions").glob("*.jsonl"))
    assert files and {f.stem for f in files} == set(verdicts)
    for path in files:
        rows = [row for _, row in iter_json_lines(path)]
        mine = independent_prior(rows)
        verdict = verdicts[path.stem]
        assert verdict.strongest_score >= mine, (path.stem, verdict.strongest_score, mine)
        assert verdict.strongest_score >= independent_prior(list(reversed(rows)))  # any summation order
        prior = next(
            r for r in manifest.shortcuts.rows if r.measure == path.stem and r.shortcut == "answer_prior"
        )
        assert prior.score == pytest.approx(mine, abs=1e-6)


def test_flags_and_debiased_subset_follow_the_rows(suite: Path) -> None:
    manifest = read_manifest(suite)
    assert manifest.shortcuts is not None
    for measure, verdict in manifest.shortcuts.measures.items():
        rows = [r for r in manifest.shortcuts.rows if r.measure == measure]
        assert verdict.strongest_score == max(r.score for r in rows)
        for r in rows:
            se = math.sqrt(r.chance * (1 - r.chance) / r.n)
            if abs(r.score - r.chance - 2 * se) > 1e-6:  # off the boundary the rounded score may cross
                assert r.flagged == (r.score - r.chance > 2 * se), r
        assert verdict.flagged == any(r.flagged for r in rows)
        assert verdict.flagged_shortcuts == [r.shortcut for r in rows if r.flagged]
        assert verdict.debiased_n == verdict.n - len(verdict.solved)
        if verdict.flagged:
            assert verdict.remedy
        if not any(r.flagged and r.option_only for r in rows):
            assert verdict.solved == []


# -- leave-one-out and cross-fitting, as a class ----------------------------------------------------


def question(i: int, ids: list[str], answer: int) -> Question:
    return Question(
        id=f"d/m/{i:05d}",
        dataset="d",
        domain="movie",
        measure="mem_item_item",
        scale="personalization",
        format=QuestionFormat.MCQ,
        target=Target(kind="item", id="t", text="t"),
        candidates=[Entry(id=x, text=f"text {x}" * (1 + int(x) % 3)) for x in ids],
        answer_index=answer,
        seed=0,
    )


@st.composite
def question_sets(draw: st.DrawFn) -> list[Question]:
    n = draw(st.integers(20, 40))
    vocab = draw(st.integers(5, 12))
    skew = draw(st.floats(0.0, 3.0))
    gen = np.random.default_rng(draw(st.integers(0, 2**31)))
    weights = np.exp(-skew * np.arange(vocab))
    weights /= weights.sum()
    out = []
    for i in range(n):
        ids = [str(x) for x in gen.choice(vocab, size=4, replace=False)]
        answer = int(np.argmax([weights[int(x)] * gen.random() for x in ids]))
        out.append(question(i, ids, answer))
    return out


def moved(questions: list[Question], i: int) -> list[Question]:
    q = questions[i]
    other = (q.answer_index + 1) % len(q.candidates)
    return [*questions[:i], q.model_copy(update={"answer_index": other}), *questions[i + 1 :]]


def by_id(q: Question, scores: list[float]) -> dict[str, float]:
    return {c.id: s for c, s in zip(q.candidates, scores, strict=True)}


@settings(max_examples=15, deadline=None)
@given(questions=question_sets(), pick=st.integers(0, 10_000))
def test_a_question_never_scores_its_own_answer(questions: list[Question], pick: int) -> None:
    i = pick % len(questions)
    other = moved(questions, i)
    for shortcut in (answer_prior, answer_rate):
        assert by_id(questions[i], shortcut(questions)[i]) == by_id(other[i], shortcut(other)[i])

    def popularity(qs: list[Question]) -> list[list[float] | None]:
        return [[float(int(c.id)) for c in q.candidates] for q in qs]

    first = option_model(questions, popularity(questions), np.random.default_rng(7))
    second = option_model(other, popularity(other), np.random.default_rng(7))
    assert first is not None and second is not None
    assert by_id(questions[i], first[i]) == pytest.approx(by_id(other[i], second[i]))


def test_option_model_finds_a_planted_option_and_not_noise() -> None:
    gen = np.random.default_rng(0)
    planted, noise = [], []
    for i in range(200):
        ids = [str(x) for x in gen.choice(30, size=4, replace=False)]
        planted.append(question(i, ids, int(np.argmin([int(x) for x in ids]))))  # lowest id always right
        noise.append(question(i, ids, int(gen.integers(4))))

    def hits(qs: list[Question]) -> float:
        scores = option_model(qs, [None] * len(qs), np.random.default_rng(1))
        assert scores is not None
        return float(np.mean([int(np.argmax(s)) == q.answer_index for s, q in zip(scores, qs, strict=True)]))

    assert hits(planted) > 0.9
    assert hits(noise) < 0.25 + 3 * math.sqrt(0.25 * 0.75 / 200)


def test_report_sets_faithful_beside_debiased(suite: Path, tmp_path: Path) -> None:
    """A run right exactly on the questions an option-only shortcut solves scores 0 once debiased."""
    from recworld.evaluation.records import RunHeader
    from recworld.report.analysis import AnalysisOptions
    from recworld.report.runs import RunData
    from recworld.report.shortcuts_section import shortcuts_section
    from recworld.scoring.records import MetricsRecord, SampleRecord

    manifest = read_manifest(suite)
    assert manifest.shortcuts is not None
    samples = []
    expected = {}
    for path in sorted((suite / "questions").glob("*.jsonl")):
        solved = set(manifest.shortcuts.measures[path.stem].solved)
        rows = [row for _, row in iter_json_lines(path)]
        for i, row in enumerate(rows):
            samples.append(
                SampleRecord.model_construct(question_id=row["id"], measure=path.stem, correct=i in solved)
            )
        deb = len(rows) - len(solved)
        expected[path.stem] = (
            f"{len(solved) / len(rows):.3f}",
            "0.000" if deb else "–",
            f"{deb} of {len(rows)}",
        )
    run = RunData(
        path=tmp_path,
        info=RunHeader.model_construct(suite=str(suite)),
        samples=samples,
        metrics=MetricsRecord.model_construct(),
        label="planted",
    )
    section = shortcuts_section([run], AnalysisOptions())
    assert section is not None
    table = next(t for t in section.tables if t.key == "debiased")
    got = {row[1].title: (row[2].text, row[3].text, row[4].text) for row in table.rows}
    assert got == expected
