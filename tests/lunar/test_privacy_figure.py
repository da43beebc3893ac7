"""The paper's Fig. 4: one point per model from Full-context answers, the Pareto front over models.

Before, a point was a (model, context) pair and the front mixed contexts, so a ``none``
point joined it. Each model here answers with its own marker; the judges score by the
marker, so every model's two means are known in advance.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from helpers.lunar import eval_config, eval_pair, eval_user, make_llm
from recworld.chat import Request
from recworld.lunar.answering.run import evaluate_settings, series_dir
from recworld.lunar.contexts.base import ASSISTANT_PROMPTS
from recworld.lunar.judges.tradeoff import (
    PRIVACY_FIGURE_FILE,
    PrivacyFigure,
    privacy_figure,
    write_privacy_figure,
)
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.schemas import EvalInputs
from recworld.lunar.store.outputs import EvalRun

# model -> (personalisation Avg, privacy score) its Full-context answers get.
FULL = {"a": (4.0, 2.0), "b": (3.5, 3.5), "c": (2.0, 4.5), "d": (3.0, 3.0)}
NONE = (5.0, 5.0)  # a context-free answer that would dominate everything if it joined the front


def _judge(request: Request) -> str:
    prompt = request.messages[-1].content
    model = next((m for m in FULL if f"ANSWER-{m}-full" in prompt), None)
    pers, priv = FULL[model] if model else NONE
    assert request.json_schema is not None
    if request.json_schema["title"] == "PrivacyDraft":
        # A half mean is one score above it on question 0 and one below on question 1.
        score = round(priv + (0.5 if "question 0" in prompt else -0.5)) if priv % 1 else int(priv)
        kind = {4: "condescension", 3: "surveillance", 2: "profiling"}
        return json.dumps({"offences": [{"kind": kind[score]}] if score < 5 else [], "score": score})
    both = {"pc": round(pers + 0.25), "pd": round(pers - 0.25)}  # 3.5: 4 and 3
    return json.dumps({"response_1": both, "response_2": both, "rationale": "r"})


def _answers(model: str) -> Callable[[Request], str]:
    def respond(request: Request) -> str:
        full = "Behaviour records" in request.messages[-1].content
        return f"ANSWER-{model}-{'full' if full else 'none'}"

    return respond


def _run(root: Path, model: str, **update: object) -> None:
    answer_llm, _ = make_llm(_answers(model), root / "cache" / model)
    judge_llm, _ = make_llm(_judge, root / "cache" / f"j-{model}")
    inputs = EvalInputs(pairs=[eval_pair(0), eval_pair(1)], users={"u": eval_user()})
    config = eval_config(
        root, answer=SessionConfig(model=f"scripted:{model}"), privacy_contexts=("full", "none"), **update
    )
    asyncio.run(evaluate_settings(config, answer_llm, judge_llm, inputs, None))


def test_one_point_per_model_and_the_front_over_models(tmp_path: Path) -> None:
    for model in FULL:
        _run(tmp_path, model)
    figure = write_privacy_figure(tmp_path)
    assert figure.context == "full"
    points = {p.model: p for p in figure.points}
    assert sorted(points) == ["scripted:a", "scripted:b", "scripted:c", "scripted:d"]  # one per model
    for name, (pers, priv) in FULL.items():
        p = points[f"scripted:{name}"]
        assert (p.personalization, p.privacy, p.context, p.scored) == (pers, priv, "full", 2)
    # d (3.0, 3.0) is beaten by b (3.5, 3.5) on both axes; a, b and c are the front.
    assert {m for m, p in points.items() if p.on_front} == {"scripted:a", "scripted:b", "scripted:c"}
    assert [points[f"scripted:{m}"].quadrant for m in "abcd"] == [
        "aggressive",
        "balanced",
        "conservative",
        "balanced",
    ]
    # The none answers (5, 5) are listed apart and never join (or beat anyone on) the front.
    assert {p.context for p in figure.other_contexts} == {"none"} and len(figure.other_contexts) == 4
    assert not any(p.on_front for p in figure.other_contexts)
    assert PrivacyFigure.read(tmp_path / PRIVACY_FIGURE_FILE) == figure  # what the report reads
    assert points["scripted:a"].offences == {"profiling": 2}


def test_the_discreet_prompt_is_its_own_series_the_report_can_compare(tmp_path: Path) -> None:
    _run(tmp_path, "a")
    _run(tmp_path, "a", assistant_prompt="discreet")
    _run(tmp_path, "b")
    plain = EvalRun.read(tmp_path / "eval" / "scripted-a" / "full" / "run.json")
    discreet = EvalRun.read(tmp_path / "eval" / "scripted-a@discreet" / "full" / "run.json")
    assert (plain.assistant_prompt, discreet.assistant_prompt) == ("plain", "discreet")
    figure = privacy_figure(tmp_path)
    series = {(p.model, p.assistant_prompt) for p in figure.points}
    assert series == {("scripted:a", "plain"), ("scripted:a", "discreet"), ("scripted:b", "plain")}
    # The front is taken within a prompt variant: the discreet a has no rival and is on its own front.
    assert all(p.on_front for p in figure.points if p.assistant_prompt == "discreet")


def test_a_rerun_keeps_the_folder_an_earlier_slug_named(tmp_path: Path) -> None:
    _run(tmp_path, "a")
    earlier = tmp_path / "eval" / "scripted_a"  # LUNAR's own slug, before the suites shared one
    (tmp_path / "eval" / "scripted-a").rename(earlier)
    (earlier / "full" / "run.json").write_text("{}")  # stale: the rerun must write over it
    config = eval_config(tmp_path, answer=SessionConfig(model="scripted:a"))
    assert series_dir(config) == "scripted_a"
    assert series_dir(config.model_copy(update={"assistant_prompt": "discreet"})) == "scripted-a@discreet"
    _run(tmp_path, "a")
    assert not (tmp_path / "eval" / "scripted-a").exists()
    assert EvalRun.read(earlier / "full" / "run.json").model == "scripted:a"
    _run(tmp_path, "b")
    assert (tmp_path / "eval" / "scripted-b" / "full" / "run.json").exists()  # a new series: today's slug


def test_the_default_answer_prompt_carries_no_privacy_instruction(tmp_path: Path) -> None:
    answer_llm, model = make_llm(_answers("a"))
    judge_llm, _ = make_llm(_judge)
    inputs = EvalInputs(pairs=[eval_pair(0)], users={"u": eval_user()})
    asyncio.run(evaluate_settings(eval_config(tmp_path), answer_llm, judge_llm, inputs, None))
    systems = {c.messages[0].content for c in model.calls}
    assert systems == {ASSISTANT_PROMPTS["plain"]} and "recite" not in ASSISTANT_PROMPTS["plain"]
    answer_llm, model = make_llm(_answers("a"))
    config = eval_config(tmp_path / "d", assistant_prompt="discreet")
    asyncio.run(evaluate_settings(config, answer_llm, judge_llm, inputs, None))
    assert {c.messages[0].content for c in model.calls} == {ASSISTANT_PROMPTS["discreet"]}
    assert "do not recite it" in ASSISTANT_PROMPTS["discreet"]


def test_privacy_is_judged_on_full_answers_by_default(tmp_path: Path) -> None:
    answer_llm, _ = make_llm(_answers("a"))
    judge_llm, judge = make_llm(_judge)
    inputs = EvalInputs(pairs=[eval_pair(0), eval_pair(1)], users={"u": eval_user()})
    asyncio.run(evaluate_settings(eval_config(tmp_path), answer_llm, judge_llm, inputs, None))
    assert (tmp_path / "eval/scripted-a/full/privacy.jsonl").exists()
    assert not (tmp_path / "eval/scripted-a/none/privacy.jsonl").exists()
    privacy_calls = [c for c in judge.calls if c.json_schema and c.json_schema["title"] == "PrivacyDraft"]
    assert len(privacy_calls) == 2 and all("ANSWER-a-full" in c.messages[-1].content for c in privacy_calls)
