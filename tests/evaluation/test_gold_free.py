"""Issue 24.1: the gold never leaves the scorer.

Invariant (``recworld.lrworld.schema``, ``recworld.chat``, ``recworld.evaluation.samples``):
a request is a function of the question's public view: two questions that
differ only in their answer index and their builder evidence give equal
requests, and nothing in a request names or holds the answer.

* generated questions (hypothesis, every measure, every answer mode and the
  prompt variants without images): the request is unchanged when the answer
  moves and the evidence is replaced by decoys that name the new answer, and a
  model that searches the whole request finds no clue;
* every backend kind, on a built suite and on its copy with every label moved
  and decoy evidence: the requests each backend receives are the same, and so
  are the bytes an OpenAI-compatible server receives;
* a model object that searches its whole request scores at chance on every
  measure (one-sided binomial test), though the same search finds the answer
  at once when an object does hold it.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.gold_support import (
    CheatingModel,
    above_chance_p,
    build,
    cheat,
    leaves,
    movie_dataset,
    plant,
    shop_dataset,
)
from recworld.chat import AnswerMode, Message, Request, Response
from recworld.evaluation import EvalConfig, evaluate_config
from recworld.evaluation.samples import build_request
from recworld.lrworld.catalogue import MEASURES, OptionKind
from recworld.lrworld.measure import MemorySpec, NeuralSpec, RuleSpec
from recworld.lrworld.prompts import render_prompt
from recworld.lrworld.schema import Entry, PublicQuestion, Question, Target
from recworld.models.base import Model
from recworld.runner import RunnerConfig
from recworld.testing.fake_server import FakeOpenAIServer

GOLD_ATTRIBUTES = {"answer_index", "answer", "evidence", "next_item", "next_item_text", "position"}


# -- generated questions --------------------------------------------------------------------------------


@st.composite
def questions(draw: st.DrawFn) -> tuple[Question, int]:
    """A question of any measure with distinct texts everywhere, and another option to move the answer to."""
    measure = draw(st.sampled_from(MEASURES))
    n = measure.format.n_options
    words = st.text(alphabet="abcdefghij XYZ", min_size=1, max_size=12)
    texts = draw(
        st.lists(words, min_size=n + 7, max_size=n + 7, unique_by=lambda t: " ".join(t.casefold().split()))
    )
    texts = list(dict.fromkeys(" ".join(t.split()) or f"blank {i}" for i, t in enumerate(texts)))
    texts += [f"filler {i}" for i in range(n + 7 - len(texts))]
    spec = measure.builder
    kind = (
        spec.kind
        if isinstance(spec, MemorySpec | NeuralSpec)
        else "item"
        if isinstance(spec, RuleSpec)
        else "user"
    )
    prefix = "v" if measure.options is OptionKind.ATTRIBUTE else "c"
    candidates = [Entry(id=texts[i] if prefix == "v" else f"cand-{i}", text=texts[i]) for i in range(n)]
    history = (
        []
        if measure.shows_target
        else [Entry(id=f"hist-{k}", text=texts[n + k]) for k in range(draw(st.integers(1, 5)))]
    )
    answer = draw(st.integers(0, n - 1))
    moved = (answer + draw(st.integers(1, n - 1))) % n
    question = Question(
        id=f"gen/{measure.id}/{draw(st.integers(0, 99999)):05d}",
        dataset="gen",
        domain=draw(st.sampled_from(["movie", "product", "music"])),
        measure=measure.id,
        scale=measure.scale.value,
        format=measure.format,
        target=Target(kind=kind, id=f"tgt-{draw(st.integers(0, 50))}", text=texts[n + 5]),
        history=history,
        candidates=candidates,
        answer_index=answer,
        evidence={"next_item_text": candidates[answer].text, "field": "genres", "position": answer},
        seed=draw(st.integers(0, 2**31)),
    )
    return question, moved


def names_in(obj: object) -> set[str]:
    """Every attribute name and key on the way to any value reachable from ``obj``."""
    return {part.strip("'\"") for path, _ in leaves(obj) for part in re.split(r"[.\[\]]", path) if part}


def decoy_evidence(question: Question, index: int) -> dict[str, Any]:
    """Evidence that names option ``index`` every way a builder's would."""
    chosen = question.candidates[index]
    return {"next_item": chosen.id, "next_item_text": chosen.text, "position": index, "answer": index}


def request_of(
    question: Question, mode: AnswerMode, variant: str, examples: tuple[Question, ...], suite: Path
) -> Request:
    config = EvalConfig(suite_dir=suite, model="scripted", mode=mode, variant=variant, seed=3)
    prompt = render_prompt(question, variant, examples=examples, rank=mode is AnswerMode.RANK)
    return build_request(question, prompt, config)


def same_request(a: Request, b: Request) -> bool:
    assert a.question is not None and b.question is not None
    return a == b and a.question == b.question and a.cache_payload() == b.cache_payload()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pair=questions(),
    example=questions(),
    mode=st.sampled_from(list(AnswerMode)),
    variant=st.sampled_from(["zero-shot", "cot", "few-shot-1", "noisy"]),
)
def test_a_request_does_not_change_when_the_answer_moves(
    pair: tuple[Question, int], example: tuple[Question, int], mode: AnswerMode, variant: str, tmp_path: Path
) -> None:
    question, moved = pair
    examples = (example[0],) if variant.startswith("few-shot") else ()
    if mode is AnswerMode.RANK and variant == "cot":
        variant = "zero-shot"
    planted = question.model_copy(update={"answer_index": moved, "evidence": decoy_evidence(question, moved)})
    first = request_of(question, mode, variant, examples, tmp_path)
    second = request_of(planted, mode, variant, examples, tmp_path)
    assert same_request(first, second)
    # Nothing in the request is named like a gold field, and no clue points at an option.
    assert not names_in(first) & GOLD_ATTRIBUTES, names_in(first) & GOLD_ATTRIBUTES
    assert "seed" not in names_in(first.question)
    assert cheat(first)[1] == "guess"
    assert isinstance(first.question, PublicQuestion)
    assert pickle.loads(pickle.dumps(first)).question == first.question  # what a Ray replica is sent


def test_a_request_refuses_a_question_with_its_gold(tmp_path: Path) -> None:
    q = Question(
        id="x/mem_item_item/00000", dataset="x", domain="movie", measure="mem_item_item",
        scale="personalization", format=MEASURES[1].format, target=Target(kind="item", id="t", text="T"),
        candidates=[Entry(id=f"c{i}", text=f"C{i}") for i in range(10)], answer_index=4, seed=0,
    )  # fmt: skip
    with pytest.raises(TypeError, match="public view"):
        Request((Message("user", "hi"),), question=q)  # type: ignore[arg-type]

    class Sneaky:
        id = "x"
        gold_free = True
        answer_index = 4

    with pytest.raises(TypeError, match="public view"):
        Request((Message("user", "hi"),), question=Sneaky())  # type: ignore[arg-type]
    assert Request((Message("user", "hi"),), question=q.public).question == q.public


# -- every backend kind, on a built suite and on its copy with every label moved -----------------------


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gold")
    movie = build(movie_dataset(), root / "movie", per_measure=30)
    moved = plant(
        movie,
        root / "moved",
        seed=7,
        share=1.0,
        evidence=lambda row: {
            "decoy": row["candidates"][row["answer_index"]]["text"],
            "next_item_text": row["candidates"][row["answer_index"]]["text"],
            "position": row["answer_index"],
        },
    )
    return {"movie": movie, "moved": moved.suite}


class Spy:
    """Wraps whatever model the run resolved and records each request it is handed."""

    def __init__(self, model: Model, seen: list[Request]) -> None:
        self._model, self._seen = model, seen

    @property
    def identity(self) -> Mapping[str, str]:
        return self._model.identity

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return self._model.supports

    async def complete(self, request: Request) -> Response:
        self._seen.append(request)
        return await self._model.complete(request)

    async def aclose(self) -> None:
        await self._model.aclose()


def received(
    suite: Path, spec: str | Model, monkeypatch: pytest.MonkeyPatch, out: Path, **options: Any
) -> list[Request]:
    """The requests the backend of ``spec`` is handed in an eval of ``suite`` (5 questions per measure)."""
    from recworld.evaluation import run

    seen: list[Request] = []
    real = run.resolve_model

    def spied(model: Any, config: Any = None) -> tuple[Model, bool]:
        resolved, owned = real(model, config)
        return Spy(resolved, seen), owned

    monkeypatch.setattr(run, "resolve_model", spied)
    config = EvalConfig(
        suite_dir=suite, model=spec if isinstance(spec, str) else "object", limit=5, out_dir=out,
        runner=RunnerConfig(progress=False, concurrency=2), **options,
    )  # fmt: skip
    evaluate_config(config, model=None if isinstance(spec, str) else spec)
    return sorted(seen, key=lambda r: r.question.id if r.question else "")


@pytest.mark.parametrize("spec", ["random", "popularity", "itemknn", "oracle", "scripted", "object"])
def test_every_backend_is_handed_the_same_requests_whatever_the_labels(
    spec: str, suites: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    got = {}
    for name in ("movie", "moved"):
        model = CheatingModel() if spec == "object" else spec
        got[name] = received(suites[name], model, monkeypatch, tmp_path / name)
    assert len(got["movie"]) >= 5 * 8
    assert all(same_request(a, b) for a, b in zip(got["movie"], got["moved"], strict=True))
    assert all(isinstance(r.question, PublicQuestion) for r in got["movie"])
    assert {cheat(r)[1] for r in got["movie"]} == {"guess"}


def test_an_openai_server_receives_the_same_bytes_whatever_the_labels(
    suites: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bodies = {}
    for name in ("movie", "moved"):
        with FakeOpenAIServer("letters") as server:
            seen = received(
                suites[name],
                "openai:fake-model",
                monkeypatch,
                tmp_path / name,
                backend={"base_url": server.base_url},
            )
            bodies[name] = sorted(server.bodies)
        assert seen and all(isinstance(r.question, PublicQuestion) for r in seen)
    assert bodies["movie"] == bodies["moved"]
    for body in bodies["movie"]:
        keys = {path.rsplit("[", 1)[-1] for path, _ in leaves(json.loads(body))}
        assert not any(g in k for k in keys for g in ("answer_index", "evidence", "next_item"))


# -- a cheater scores at chance ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shop_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(shop_dataset(), tmp_path_factory.mktemp("gold-shop") / "suite", per_measure=60)


@pytest.mark.parametrize("source", ["movie", "shop"])
def test_a_model_that_searches_its_request_scores_at_chance(
    source: str, suites: dict[str, Path], shop_suite: Path, tmp_path: Path
) -> None:
    suite = suites["movie"] if source == "movie" else shop_suite
    cheater = CheatingModel()
    config = EvalConfig(
        suite_dir=suite, model="object", out_dir=tmp_path / "run", runner=RunnerConfig(progress=False)
    )
    metrics = evaluate_config(config, model=cheater).metrics
    assert set(cheater.clues) == {"guess"}
    hits = n = 0
    chance_hits = 0.0
    for measure, entry in metrics.measures.items():
        assert above_chance_p(entry.correct, entry.n, entry.chance) > 1e-3, (measure, entry.correct, entry.n)
        hits, n, chance_hits = hits + entry.correct, n + entry.n, chance_hits + entry.n * entry.chance
    assert n >= 200 and hits <= chance_hits + 3 * (chance_hits**0.5) + 1


def test_the_same_search_finds_the_gold_where_an_object_holds_it(suites: dict[str, Path]) -> None:
    """The cheater is no straw man: handed an object that carries the suite's question, it is always right."""
    from recworld.evaluation.questions import load_questions

    class Leaky:  # what a request used to be: the question with its answer and evidence
        def __init__(self, question: Question) -> None:
            self.question, self.choices, self.messages = question, (), ()

    qs = load_questions(suites["movie"], limit=5)
    assert all(cheat(Leaky(q))[0] == q.answer_index for q in qs)
    stripped = [q.model_copy(update={"answer_index": 0, "evidence": {}}) for q in qs]
    assert sum(cheat(Leaky(q))[1] != "guess" for q in stripped) == len(qs)  # answer_index itself still reads
    assert asyncio.run(
        CheatingModel().complete(Request((), choices=tuple("ABCDEFGHIJ"), question=qs[0].public))
    ).text
