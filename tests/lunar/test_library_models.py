"""From Python: a model of one's own judged in LUNAR, and configs that read back typed from their runs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from helpers.lunar import HashEmbedder, lunar_responder, scripted, session
from recworld import lunar
from recworld.chat import AnswerMode, Request, Response, Usage
from recworld.evaluation.api import make_config
from recworld.lunar.config import LunarEvalConfig, QueriesConfig, SynthConfig
from recworld.lunar.contexts.rag import RagOptions
from recworld.lunar.llm.config import EmbedderConfig, SessionConfig
from recworld.lunar.store.outputs import (
    EvalCounts,
    EvalRun,
    QueriesCounts,
    QueriesRun,
    SynthCounts,
    SynthManifest,
)
from recworld.models import Model, ModelConfig, object_name
from recworld.runner import RunnerConfig


class MyRecommender:
    """A researcher's own model: not in the registry, not a ScriptedModel, just the Model protocol."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.closed = False

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": "mine", "model": "tallrec-lora"}

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return frozenset({AnswerMode.GENERATE})

    async def complete(self, request: Request) -> Response:
        self.requests.append(request)
        prompt = request.messages[-1].content
        shown = prompt.count("\n[")  # records in the context
        return Response(text=f"Based on {shown} of your records: try the noodle bar.", usage=Usage(1, 8))

    async def aclose(self) -> None:
        self.closed = True


@pytest.mark.slow
def test_a_custom_model_object_is_answered_and_judged_with_no_registry_edit(
    ml100k_saved: Path, tmp_path: Path
) -> None:
    out = tmp_path / "lunar"
    gen = session(scripted(name="gen"))
    options = lunar.SynthOptions(weeks=1, max_slots_per_day=1)
    lunar.synthesize(
        lunar.SynthConfig(anchors=str(ml100k_saved), out_dir=out, users=2, llm=gen, options=options)
    )
    lunar.make_queries(lunar.QueriesConfig(root=out, llm=gen))
    mine, judge = MyRecommender(), scripted(lunar_responder(), name="judge")
    assert isinstance(mine, Model)
    config = lunar.LunarEvalConfig(
        root=out, answer=SessionConfig(model=mine), judge=session(judge), contexts=("none", "curated")
    )
    runs = lunar.evaluate_contexts(config)
    assert [(r.model, r.context, r.counts.judged) for r in runs] == [
        ("mine:tallrec-lora", "none", 4),
        ("mine:tallrec-lora", "curated", 4),
    ]
    # Asked directly (identical prompts once, through the run's cache); its owner closes it, not LUNAR.
    assert mine.requests and not mine.closed
    assert all(r.counts.answered == 4 and r.counts.answer_errors == 0 for r in runs)
    answers = (out / "eval" / "mine-tallrec-lora" / "curated" / "answers.jsonl").read_text()
    assert "Based on" in answers and "Based on 0 of" not in answers  # curated showed it records
    judged = [c for c in judge.calls if c.json_schema and c.json_schema["title"] == "PairDraft"]
    assert any("try the noodle bar" in c.messages[-1].content for c in judged)
    (row, *_) = lunar.write_lunar_report(lunar.ReportConfig(root=out)).rows
    assert row.model == "mine:tallrec-lora" and row.judged == 4


def _session(model: str) -> SessionConfig:
    return SessionConfig(
        model=model,
        backend=ModelConfig(
            base_url="http://127.0.0.1:8000/v1", api_key_env="MY_KEY", n_ctx=8192, options={"a": "1"}
        ),
        runner={"timeout_s": 30.0, "seed": 7},
        max_attempts=5,
        compact=True,
    )


def test_configs_round_trip_typed_through_manifest_and_run_json(tmp_path: Path) -> None:
    synth = SynthConfig(anchors="lunar-demo", out_dir=tmp_path, users=3, llm=_session("openai:gen"))
    counts = SynthCounts(
        users=3,
        dropped_users=0,
        weeks=3,
        slots=9,
        records=20,
        anchors_used=5,
        asked=9,
        failures=0,
        llm_calls=9,
    )
    SynthManifest(config=synth, counts=counts, timings={"synth_s": 1.0}).write(tmp_path / "manifest.json")
    back = SynthManifest.of(tmp_path).config
    assert back == synth and isinstance(back.llm.runner, RunnerConfig) and back.llm.runner.concurrency == 4
    assert back.llm.backend.options == {"a": "1"} and back.llm.runner.timeout_s == 30.0
    queries = QueriesConfig(root=tmp_path, llm=_session("openai:gen"), per_user=3)
    qcounts = QueriesCounts(queries=1, dropped=0, asked=1, failures=0, llm_calls=1)
    QueriesRun(config=queries, counts=qcounts).write(tmp_path / "queries_run.json")
    assert QueriesRun.read(tmp_path / "queries_run.json").config == queries
    evaluation = LunarEvalConfig(
        root=tmp_path,
        answer=_session("openai:a"),
        judge=_session("openai:j"),
        embedder=EmbedderConfig(model="st:BAAI/bge-m3"),
        contexts=("none", "rag", "memory"),
        options={"rag": RagOptions(k=7), "memory": {"k": 9, "qdrant_url": "http://q:6333"}},
    )
    ecounts = EvalCounts(
        queries=1, answered=1, answer_errors=0, judged=1, judge_errors=0, asked=3, failures=0, llm_calls=3
    )
    run = EvalRun(
        model="openai:a", judge="openai:j", context="rag", config=evaluation, counts=ecounts, failures=[]
    )
    run.write(tmp_path / "run.json")
    again = EvalRun.read(tmp_path / "run.json").config
    assert again == evaluation and again.options_of("rag") == RagOptions(k=7)
    assert type(again.options_of("memory")).__name__ == "MemoryOptions"
    assert json.loads((tmp_path / "run.json").read_text())["config"]["options"]["memory"]["k"] == 9


def test_a_model_object_is_recorded_by_its_identity(tmp_path: Path) -> None:
    config = QueriesConfig(root=tmp_path, llm=SessionConfig(model=MyRecommender()))
    written = json.loads(config.model_dump_json())
    assert written["llm"]["model"] == "mine:tallrec-lora"
    assert QueriesConfig.model_validate(written).llm.model == "mine:tallrec-lora"
    with pytest.raises(ValueError, match="expected a model spec string or an object"):
        SessionConfig(model=42)  # type: ignore[arg-type]


class Checkpoint(MyRecommender):
    """A model object whose identity names no backend: its checkpoint is part of its name."""

    @property
    def identity(self) -> Mapping[str, str]:
        return {"model": "tallrec", "checkpoint": "lora-7"}


def test_a_model_object_has_one_name_in_both_suites(tmp_path: Path) -> None:
    """LRWorld used to call this object ``tallrec`` and LUNAR ``tallrec:lora-7``: now both say the latter."""
    obj = Checkpoint()
    lrworld, _ = make_config(tmp_path, obj, {})
    assert object_name(obj) == lrworld.model == SessionConfig(model=obj).name == "tallrec:lora-7"
    assert object_name(MyRecommender()) == "mine:tallrec-lora"
    assert EmbedderConfig(model=HashEmbedder()).name == object_name(HashEmbedder()) == "test:hash"


def test_runs_written_before_the_nested_session_configs_read_back_migrated(tmp_path: Path) -> None:
    """eval/2 (flat session settings, flat context knobs) reads as eval/3, typed."""
    flat = {"model": "openai:a", "base_url": "http://s", "api_key_env": "K", "allow_insecure_http": False}
    flat |= {"n_ctx": 2048, "concurrency": 2, "timeout_s": 60.0, "max_retries": 1, "max_attempts": 3}
    flat |= {"max_tokens": 512, "seed": 5, "compact": None, "retry_failures": False}
    old = {
        "schema": "recworld.lunar.eval/2",
        "model": "openai:a",
        "judge": "openai:a",
        "context": "rag",
        "config": {
            "root": str(tmp_path),
            "answer": flat,
            "judge": flat,
            "contexts": ["none", "rag"],
            "budget_tokens": None,
            "rag_k": 12,
            "memory_k": 50,
            "qdrant_url": None,
            "answer_max_tokens": 256,
            "seed": 0,
            "fail_on_error": 0.05,
            "privacy": True,
        },
        "counts": {"queries": 0, "answered": 0, "answer_errors": 0, "judged": 0, "judge_errors": 0}
        | {"asked": 0, "failures": 0, "llm_calls": 0},
        "failures": [],
    }
    (tmp_path / "run.json").write_text(json.dumps(old))
    run = EvalRun.read(tmp_path / "run.json")
    assert run.schema_id == "recworld.lunar.eval/3"
    answer = run.config.answer
    assert (answer.backend.base_url, answer.backend.n_ctx, answer.backend.seed) == ("http://s", 2048, 5)
    assert (answer.runner.concurrency, answer.runner.timeout_s, answer.runner.seed) == (2, 60.0, 5)
    assert not answer.runner.progress  # LUNAR's runner defaults, not the Runner's class defaults
    assert run.config.options_of("rag") == RagOptions(k=12)
