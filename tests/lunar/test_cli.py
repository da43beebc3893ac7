"""The stage commands end to end on real ML-100K anchors, and the library API with model objects.

Command-line runs go in-process (``helpers.cli.run_recworld``) to a local OpenAI-compatible server answering
with the scripted LUNAR responder, so the real backend, Runner and cache run; library runs hand
LUNAR the scripted models as objects. Nothing in recworld is patched.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.lunar import HashEmbedder, lunar_responder, scripted, session
from recworld import lunar
from recworld.chat import Request
from recworld.lunar.llm.config import EmbedderConfig, SessionConfig
from recworld.lunar.store.outputs import EvalRun, QueriesRun, SynthManifest
from recworld.testing.fake_server import FakeOpenAIServer

Server = Callable[[Callable[[Request], str]], FakeOpenAIServer]
pytestmark = pytest.mark.slow  # each test synthesises and evaluates a folder (several seconds)


def _synth_and_queries(anchors: Path, out: Path) -> Path:
    """A small folder with queries, made through the library API with a scripted model object."""
    llm = session(scripted(name="x"))
    options = lunar.SynthOptions(weeks=1, max_slots_per_day=1)
    lunar.synthesize(lunar.SynthConfig(anchors=str(anchors), out_dir=out, users=2, llm=llm, options=options))
    lunar.make_queries(lunar.QueriesConfig(root=out, llm=llm))
    return out


def test_synth_queries_eval_report(ml100k_saved: Path, tmp_path: Path, openai_server: Server) -> None:
    server = openai_server(lunar_responder())
    url = ["--base-url", server.base_url]
    out = tmp_path / "lunar"
    synth = ["lunar", "synth", "--anchors", str(ml100k_saved), "--users", "2", "--weeks", "1"]
    r = run_recworld(*synth, "--model", "openai:x", *url, "--out", str(out), "--max-slots", "1")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["schema"] == "recworld.lunar.manifest/4" and manifest["counts"]["users"] == 2
    r = run_recworld("lunar", "queries", str(out), "--model", "openai:x", *url, "--per-user", "2")
    assert r.returncode == 0, r.stderr
    queries = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines()]
    rubrics = [json.loads(x) for x in (out / "rubrics.jsonl").read_text().splitlines()]
    assert len(queries) == 4 and [q["query_id"] for q in queries] == [r["query_id"] for r in rubrics]
    # The model tags dining+movies, but the synthetic logs hold dining only (movie anchors were removed).
    assert all(q["domains"] == ["dining"] and not q["multi_domain"] for q in queries)
    assert all(r["evidence"]["record_ids"] and r["facts"] == ["likes ramen"] for r in rubrics)
    evaluate = ["lunar", "eval", str(out), "--model", "openai:a", *url, "--judge", "openai:j"]
    evaluate += ["--judge-base-url", server.base_url, "--context", "none,full,curated,rag"]
    evaluate += ["--embedder", "openai:e", "--embed-base-url", server.base_url]
    r = run_recworld(*evaluate)
    assert r.returncode == 0, r.stderr
    for ctx in ("none", "full", "curated", "rag"):
        judged = [
            json.loads(x)
            for x in (out / "eval" / "openai-a" / ctx / "judgments.jsonl").read_text().splitlines()
        ]
        assert len(judged) == 4 and sum(j["target_first"] for j in judged) == 2
    r = run_recworld("lunar", "report", str(out))
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader((out / "report.csv").open()))
    assert [(row["model"], row["context"]) for row in rows] == [
        ("openai:a", c) for c in ("none", "full", "curated", "rag")
    ]
    # The scripted judge prefers Response 1: (4, 3) first vs (2, 2) second, so the
    # target averages (3.5·2 + 2.0·2)/4 = 2.75 per context.
    assert all(float(row["avg"]) == pytest.approx(2.75) for row in rows)
    assert all((row["judged"], row["answer_errors"], row["judge_errors"]) == ("4", "0", "0") for row in rows)
    assert "| type | 1.000 |" in (out / "report.md").read_text()  # the JSD table, with-anchors column
    assert r.stdout.split() == [
        str(out / f) for f in ("report.html", "report.md", "report.csv", "privacy.csv", "quality.json")
    ]
    # Rerunning eval is served from the cache: no new model calls.
    before = len(server.chat)
    r = run_recworld(*evaluate[:9], "--judge-base-url", server.base_url, "--context", "full")
    assert r.returncode == 0 and len(server.chat) == before, r.stderr


def test_bad_anchor_file_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "events.jsonl"
    bad.write_text('{"user_id": "u", "timestamp": 1, "domain": "dining"}\n')
    args = ["lunar", "synth", "--anchors", str(bad), "--out", str(tmp_path / "o"), "--model", "scripted"]
    ran = run_recworld(*args)
    assert ran.returncode == 2 and ran.stderr.startswith("recworld: error: "), ran.stderr


def test_each_model_gets_its_own_server_key_and_options_and_the_configs_are_recorded(
    ml100k_saved: Path,
    tmp_path: Path,
    openai_server: Server,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Answer model and judge each get their own spec, server, key variable and backend options."""
    out = _synth_and_queries(ml100k_saved, tmp_path / "lunar")
    answers, judges = openai_server(lunar_responder()), openai_server(lunar_responder())
    monkeypatch.setenv("ANSWER_KEY", "answer-secret")
    monkeypatch.setenv("JUDGE_KEY", "judge-secret")
    args = ["lunar", "eval", str(out), "--model", "openai:a", "--judge", "openai:j", "--context", "none"]
    args += ["--base-url", answers.base_url, "--api-key-env", "ANSWER_KEY"]
    args += ["--judge-base-url", judges.base_url, "--judge-api-key-env", "JUDGE_KEY"]
    args += ["--model-option", "max_tokens_param=max_completion_tokens"]
    args += ["--compact", "--max-retries", "2", "--timeout", "7", "--fail-on-error", "0.5", "--seed", "3"]
    r = run_recworld(*args)
    assert r.returncode == 0, r.stderr
    assert answers.keys == {"Bearer answer-secret"} and judges.keys == {"Bearer judge-secret"}
    assert answers.chat and all("max_completion_tokens" in b and "max_tokens" not in b for b in answers.chat)
    assert judges.chat and all("max_tokens" in b for b in judges.chat)  # the option is --model's only
    run = EvalRun.read(out / "eval" / "openai-a" / "none" / "run.json")
    answer, judge = run.config.answer, run.config.judge
    assert (answer.model, answer.backend.api_key_env, answer.backend.base_url) == (
        "openai:a",
        "ANSWER_KEY",
        answers.base_url,
    )
    assert (judge.model, judge.backend.api_key_env, judge.backend.base_url) == (
        "openai:j",
        "JUDGE_KEY",
        judges.base_url,
    )
    assert (
        answer.backend.options == {"max_tokens_param": "max_completion_tokens"}
        and judge.backend.options == {}
    )
    # Shared settings reach both models; the seed seeds each model's sampling and backoff too.
    for s in (answer, judge):
        assert s.compact and (s.runner.max_retries, s.runner.timeout_s, s.runner.concurrency) == (2, 7, 4)
        assert (s.backend.seed, s.runner.seed) == (3, 3)
    assert run.config.fail_on_error == 0.5 and run.config.seed == 3 and run.counts.judged == 4
    assert "secret" not in (out / "eval" / "openai-a" / "none" / "run.json").read_text()


def test_a_bad_backend_option_names_the_option_and_backend(tmp_path: Path, ml100k_saved: Path) -> None:
    out = _synth_and_queries(ml100k_saved, tmp_path / "lunar")
    args = ["lunar", "eval", str(out), "--model", "openai:a", "--judge", "openai:j", "--context", "none"]
    r = run_recworld(*args, "--model-option", "max_tokens_parm=1")
    assert r.returncode != 0 and "max_tokens_parm" in r.stderr and "openai" in r.stderr
    r = run_recworld(*args, "--model-option", "nokey")
    assert "invalid value for --model-option: 'nokey' is not KEY=VALUE" in r.stderr


def test_compact_default_follows_the_model_spec() -> None:
    assert SessionConfig(model="llamacpp:m").compact_decoding
    assert not SessionConfig(model="openai:m").compact_decoding
    assert SessionConfig(model="openai:m", compact=True).compact_decoding
    assert not SessionConfig(model="llamacpp:m", compact=False).compact_decoding


def test_library_api_with_model_objects_writes_configs_into_the_run(
    ml100k_saved: Path, tmp_path: Path
) -> None:
    out = _synth_and_queries(ml100k_saved, tmp_path / "lunar")
    manifest = SynthManifest.of(out)
    assert manifest.config.llm.model == "scripted:x" and manifest.config.users == 2
    assert manifest.counts.users == 2 and manifest.counts.asked > 0 and manifest.counts.failures == 0
    qrun = QueriesRun.read(out / "queries_run.json")
    assert qrun.counts.queries == 4 and qrun.config.root == out
    answer, judge = scripted(name="a"), scripted(name="j")
    config = lunar.LunarEvalConfig(
        root=out,
        answer=session(answer),
        judge=session(judge),
        embedder=EmbedderConfig.of(HashEmbedder()),
        contexts=("none", "curated", "rag"),
    )
    runs = lunar.evaluate_contexts(config)
    assert [r.context for r in runs] == ["none", "curated", "rag"] and all(r.config == config for r in runs)
    assert all((r.counts.answered, r.counts.judged, r.counts.failures) == (4, 4, 0) for r in runs)
    # The objects themselves were asked (repeated prompts come from the run's cache): answers, then judgments.
    assert answer.calls and all(c.json_schema is None for c in answer.calls)
    # Privacy is judged on Full-context answers only (none of these contexts): no PrivacyDraft.
    assert {c.json_schema["title"] for c in judge.calls if c.json_schema} == {"PairDraft"}
    written = EvalRun.read(out / "eval" / "scripted-a" / "rag" / "run.json")
    assert written.config.answer.model == "scripted:a" and written.config.embedder.name == "test:hash"
    result = lunar.write_lunar_report(lunar.ReportConfig(root=out))
    assert [(row.context, row.judged) for row in result.rows] == [("none", 4), ("curated", 4), ("rag", 4)]
