"""Issue 24.6: the analyses apply where they mean something.

* loglik ties (``recworld.evaluation.samples``): a best score shared by several
  options is drawn uniformly among them, seeded by the run's seed and the
  question id, and counted; a unique best is taken as it is;
* the noisy variant (``recworld.lrworld.noise.noisy_changes``) runs only on the
  measures whose prompts it changes, checked against the transform itself on
  built questions, and ``analyze`` names the others;
* the popularity-bias table reads user options by user activity, never as item ids.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.gold_support import build, movie_dataset, shop_dataset
from recworld.chat import AnswerMode, Response
from recworld.evaluation import EvalConfig
from recworld.evaluation.analyze import plan_runs, skipped_by_noisy
from recworld.evaluation.questions import load_questions
from recworld.evaluation.samples import build_sample, parse_answer
from recworld.evaluation.variants import Catalogue, noisy_history
from recworld.lrworld.catalogue import MEASURES, OptionKind, get_measure
from recworld.lrworld.noise import noisy_changes
from recworld.lrworld.prompts import RenderedPrompt
from recworld.report.analyses_suite import _popularity
from recworld.runner import Completion
from recworld.scoring import score_samples
from recworld.scoring.records import SampleRecord

LETTERS = "ABCDEFGHIJ"


def prompt(n: int) -> RenderedPrompt:
    return RenderedPrompt(
        messages=(), labels=tuple(LETTERS[:n]), option_texts=tuple(f"o{i}" for i in range(n))
    )


# -- loglik ties -----------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    n=st.sampled_from([4, 10]),
    top=st.floats(-20, 0),
    tied=st.sets(st.integers(0, 9), min_size=1, max_size=10),
    seed=st.integers(0, 2**31),
    qid=st.text(min_size=1, max_size=20),
)
def test_a_loglik_tie_is_drawn_among_the_tied_options(
    n: int, top: float, tied: set[int], seed: int, qid: str
) -> None:
    tied = {t % n for t in tied}
    scores = tuple(top if i in tied else top - 1.0 - i for i in range(n))
    picks = {
        parse_answer(
            Response("", choice_logprobs=scores), prompt(n), AnswerMode.LOGLIK, seed=seed, question_id=qid
        )
        for _ in range(3)
    }
    assert len(picks) == 1  # the same seed and question give the same pick
    (pick,) = picks
    assert pick in tied


def test_loglik_ties_are_uniform_over_questions_and_counted(tmp_path: Path) -> None:
    n, tied = 4, (0, 2, 3)
    scores = (0.0, -3.0, 0.0, 0.0)
    picks = Counter(
        parse_answer(
            Response("", choice_logprobs=scores), prompt(n), AnswerMode.LOGLIK, seed=5, question_id=f"q{i}"
        )
        for i in range(3000)
    )
    assert set(picks) == set(tied)
    assert all(abs(picks[t] / 3000 - 1 / 3) < 0.04 for t in tied), picks  # not option A
    assert (
        parse_answer(Response("", choice_logprobs=(-1.0, 0.0, -2.0, -3.0)), prompt(n), AnswerMode.LOGLIK) == 1
    )
    # Through a sample and the metrics: the tie is marked and counted per measure.
    suite = build(movie_dataset(), tmp_path / "suite", per_measure=4)
    config = EvalConfig(suite_dir=suite, model="scripted", mode=AnswerMode.LOGLIK)
    samples = []
    for i, q in enumerate(load_questions(suite, ["kg_movie_genre"])):
        flat = (
            tuple(0.0 for _ in q.candidates)
            if i % 2 == 0
            else tuple(-float(k) for k in range(len(q.candidates)))
        )
        done = Completion(
            Response("", choice_logprobs=flat), None, cache_hit=False, latency_s=0.0, attempts=1
        )
        samples.append(build_sample(q, prompt(len(q.candidates)), done, spec="scripted", config=config))
    assert [s.tie for s in samples] == [i % 2 == 0 for i in range(len(samples))]
    metrics = score_samples(samples)
    assert metrics.measures["kg_movie_genre"].ties == (len(samples) + 1) // 2


# -- the noisy variant, only where it changes something ---------------------------------------------------


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("noisy")
    return [
        build(movie_dataset(), root / "movie", per_measure=15),
        build(shop_dataset(), root / "shop", per_measure=15),
    ]


def test_noisy_changes_exactly_the_measures_it_is_said_to(suites: list[Path]) -> None:
    seen = set()
    for suite in suites:
        catalogue = Catalogue.of_suite(suite)
        for q in load_questions(suite):
            changed = noisy_history(q, catalogue, seed=1).model_dump(exclude={"evidence"}) != q.model_dump(
                exclude={"evidence"}
            )
            seen.add((q.measure, changed))
    by_measure: dict[str, set[bool]] = {}
    for measure, changed in seen:
        by_measure.setdefault(measure, set()).add(changed)
    for measure, outcomes in by_measure.items():
        if noisy_changes(get_measure(measure)):
            assert True in outcomes, measure  # it changes (nearly) every such question
        else:
            assert outcomes == {False}, measure
    assert {m.id for m in MEASURES if not noisy_changes(m)} == {
        "assoc_rule",
        "mem_item_item",
        "neu_item2users",
    }


def test_analyze_runs_noisy_only_where_it_changes_prompts(suites: list[Path]) -> None:
    suite = suites[0]
    base = EvalConfig(suite_dir=suite, model="random")
    (noisy,) = [p for p in plan_runs(base, all_variants=True) if p.variant == "noisy"]
    assert (
        noisy.measures is not None
        and "assoc_rule" not in noisy.measures
        and "kg_movie_genre" in noisy.measures
    )
    assert set(skipped_by_noisy(base)) == {"assoc_rule", "mem_item_item"}
    given = base.model_copy(update={"measures": ("assoc_rule", "kg_movie_genre")})
    (asked,) = [p for p in plan_runs(given, variants=["noisy"], all_variants=False) if p.variant == "noisy"]
    assert asked.measures == ("kg_movie_genre",)
    only_items = base.model_copy(update={"measures": ("assoc_rule",)})
    assert not [
        p for p in plan_runs(only_items, variants=["noisy"], all_variants=False) if p.variant == "noisy"
    ]


# -- popularity of user options ------------------------------------------------------------------------


def test_user_options_are_split_by_user_activity_not_as_item_ids() -> None:
    """Ids 1..10 name both users and items: a user option must be read as the user."""
    measure = next(m for m in MEASURES if m.options is OptionKind.USER and m.format.n_options == 10)
    item_logs = {str(i): 5.0 for i in range(1, 11)}  # as items, every option is popular
    user_logs = {str(i): (0.0 if i <= 5 else 5.0) for i in range(1, 11)}  # users 6-10 active
    samples = [
        SampleRecord.model_validate(
            {
                "question_id": f"x/{measure.id}/{k:05d}",
                "measure": measure.id,
                "format": measure.format.value,
                "labels": list(LETTERS),
                "answer_index": k % 10,
                "parsed_index": k % 10,
                "correct": True,
                "option_ids": [str(i) for i in range(1, 11)],
            }
        )
        for k in range(10)
    ]
    scales = {OptionKind.ITEM: (item_logs, 2.5), OptionKind.USER: (user_logs, 2.5)}
    stats = _popularity(SimpleNamespace(samples=samples), scales)[measure.id]  # type: ignore[arg-type]
    assert stats["n"] == 10 and stats["nonpop_correct"] == 0.5
    # Answers 1..5 are inactive users: read as items they would all have been popular (no NON-POP).
    assert stats["acc_pop"] == 1.0 and stats["acc_nonpop"] == 1.0
    attribute = next(m for m in MEASURES if m.options is OptionKind.ATTRIBUTE)
    assert attribute.id not in _popularity(SimpleNamespace(samples=[]), scales)  # type: ignore[arg-type]
