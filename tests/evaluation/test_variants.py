"""Variants, option orders and rank mode: what each changes in the questions asked and the samples written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.runner_fakes import fake_answer, write_suite
from recworld.chat import AnswerMode, Request, Response
from recworld.evaluation import EvalConfig, evaluate_config
from recworld.evaluation.analyze import plan_runs
from recworld.evaluation.questions import load_questions
from recworld.evaluation.variants import Catalogue, few_shot_examples, noisy_history, permuted
from recworld.lrworld.prompts import render_prompt
from recworld.lrworld.schema import Entry, Question, Target
from recworld.models.scripted import ScriptedModel
from recworld.runner import RunnerConfig

COUNTS = {"kg_movie_genre": 6, "mem_item_item": 4}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", COUNTS)


def _config(suite: Path, **kwargs: object) -> EvalConfig:
    return EvalConfig(suite_dir=suite, model="scripted", runner=RunnerConfig(progress=False), **kwargs)  # type: ignore[arg-type]


def _samples(run: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


def test_orders_permute_options_and_keep_the_answer(suite: Path) -> None:
    def truthful(request: Request) -> str:
        assert request.question is not None
        return request.choices[fake_answer(request)]

    run = evaluate_config(_config(suite, orders=3), model=ScriptedModel(truthful)).run_dir
    samples = _samples(run)
    assert len(samples) == 3 * sum(COUNTS.values())
    assert {s["order"] for s in samples} == {0, 1, 2}
    assert all(s["correct"] for s in samples)  # the answer moved with its option
    by_base: dict[str, set[tuple[str, ...]]] = {}
    for s in samples:
        by_base.setdefault(str(s["question_id"]).split("#o")[0], set()).add(tuple(s["option_ids"]))  # type: ignore[arg-type]
    assert any(len(orders) > 1 for orders in by_base.values())  # options really were reordered
    assert run.name.endswith("__o3")


def test_permutation_is_seeded() -> None:
    q = load_questions_fake()
    assert permuted(q, 2, seed=1) == permuted(q, 2, seed=1)
    assert permuted(q, 0, seed=1) is q
    moved = permuted(q, 1, seed=1)
    assert moved.answer.id == q.answer.id and moved.id == f"{q.id}#o1"


def load_questions_fake() -> Question:
    return Question(
        id="x/mem_item_item/00001",
        dataset="x",
        domain="movie",
        measure="mem_item_item",
        scale="personalization",
        format="hit@1",
        target=Target(kind="item", id="t", text="T"),
        candidates=[Entry(id=f"c{j}", text=f"C{j}") for j in range(10)],
        answer_index=3,
        seed=0,
    )


def test_few_shot_examples_never_show_the_questions_own_items(suite: Path) -> None:
    pool = load_questions(suite, ["kg_movie_genre"])
    # Give question 0's answer to question 1 as an option: question 1 must not show question 0's example.
    shared = pool[0].answer
    q = pool[1].model_copy(update={"candidates": [shared, *pool[1].candidates[1:]], "answer_index": 1})
    examples = few_shot_examples(q, pool, 5, seed=0)
    assert examples and len(examples) <= 5
    assert all(e.id != q.id and e.target.id != q.target.id for e in examples)
    assert all(e.answer.id not in {c.id for c in q.candidates} for e in examples)
    assert pool[0] not in examples
    assert examples == few_shot_examples(q, pool, 5, seed=0)
    prompt = render_prompt(q, "few-shot-2", examples=examples[:2])
    assert [m.role for m in prompt.messages] == ["user", "assistant", "user", "assistant", "user"]
    assert prompt.messages[1].content == "ABCD"[examples[0].answer_index]


def test_noisy_history_swaps_one_item_for_one_the_user_never_had() -> None:
    q = load_questions_fake().model_copy(
        update={
            "target": Target(kind="user", id="u1", text="user u1"),
            "history": [Entry(id=f"h{i}", text=f"H{i}") for i in range(5)],
        }
    )
    catalogue = Catalogue(
        texts={f"h{i}": f"H{i}" for i in range(5)} | {"owned": "O", "new": "NEW", "c0": "C0"},
        owned={"u1": frozenset({"h0", "h1", "h2", "h3", "h4", "owned"})},
    )
    noisy = noisy_history(q, catalogue, seed=0)
    changed = [i for i, (a, b) in enumerate(zip(q.history, noisy.history, strict=True)) if a != b]
    assert len(changed) == 1
    assert noisy.history[changed[0]] == Entry(id="new", text="NEW")  # neither owned nor an option
    assert noisy.candidates == q.candidates and noisy.answer_index == q.answer_index


def test_cot_asks_for_reasoning_and_reads_the_last_answer(suite: Path) -> None:
    seen: list[Request] = []

    def reasoner(request: Request) -> str:
        seen.append(request)
        assert request.question is not None
        right = request.choices[fake_answer(request)]
        wrong = next(c for c in request.choices if c != right)
        return f"Maybe the answer is {wrong}. On reflection, Answer: {right}"

    run = evaluate_config(
        _config(suite, variant="cot", measures=("kg_movie_genre",)), model=ScriptedModel(reasoner)
    ).run_dir
    assert all(s["correct"] for s in _samples(run))
    assert seen[0].max_tokens == 512
    # The paper's CoT: the zero-shot prompt, unchanged, with "Let's think step by step." appended.
    assert seen[0].question is not None
    zero_shot = render_prompt(seen[0].question).messages[-1].content
    assert seen[0].messages[-1].content == zero_shot + "\n\nLet's think step by step."


def test_rank_mode_scores_texts_and_reports_ties(suite: Path) -> None:
    def scorer(request: Request) -> Response:
        assert request.question is not None and request.mode is AnswerMode.RANK
        assert request.choices == tuple(c.text for c in request.question.candidates)
        n = int(request.question.id.rsplit("/", 1)[1])
        if n == 0:  # every option equal: a tie, not "A"
            return Response(text="", choice_logprobs=tuple(0.0 for _ in request.choices))
        scores = [-float(i) for i in range(len(request.choices))]
        scores[fake_answer(request)] = 1.0 if n % 2 else -0.5  # odd: first; even: second
        return Response(text="", choice_logprobs=tuple(scores))

    run = evaluate_config(
        _config(suite, mode=AnswerMode.RANK, measures=("mem_item_item",)), model=ScriptedModel(scorer)
    ).run_dir
    samples = {str(s["question_id"]): s for s in _samples(run)}
    tied = samples["fake/mem_item_item/00000"]
    assert tied["tie"] is True and tied["parsed_index"] is None and tied["missed"] is True
    metrics = json.loads((run / "metrics.json").read_text())["ranking"]["mem_item_item"]
    # q0: tie of 10 -> rank 10; q1, q3: rank 1; q2: answer second (behind option 0) unless it is option 0.
    assert metrics["ties"] == 1 and metrics["n"] == 4
    assert metrics["hr_at_1"] == pytest.approx(
        2 / 4 + (0.25 if samples["fake/mem_item_item/00002"]["correct"] else 0)
    )
    assert metrics["hr_at_3"] == pytest.approx(3 / 4)
    assert "A." not in samples["fake/mem_item_item/00001"]["prompt"][-1]["content"]  # type: ignore[index]


def test_analyze_plans_every_variant_that_applies(suite: Path) -> None:
    base = _config(suite)
    plans = plan_runs(base, all_variants=True)
    names = [(p.variant, p.orders) for p in plans]
    assert ("zero-shot", 1) in names and ("cot", 1) in names and ("zero-shot", 5) in names
    assert {f"few-shot-{k}" for k in range(1, 6)} <= {v for v, _ in names}
    assert "noisy" not in {v for v, _ in names}  # the fake suite has no dataset to draw from
    ranked = plan_runs(base.model_copy(update={"mode": AnswerMode.RANK}), all_variants=True)
    assert "cot" not in {p.variant for p in ranked}
