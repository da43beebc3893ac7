"""The four commands end to end on real ML-100K anchors, with the scripted model behind the real Runner."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lunar_helpers import lunar_responder
from typer.testing import CliRunner

from recworld import lunar
from recworld.cli import app
from recworld.data import Dataset
from recworld.lunar import embed, session
from recworld.lunar import store as lunar_store
from recworld.lunar.config import SessionConfig, SynthOptions
from recworld.lunar.outputs import EvalRun, QueriesRun
from recworld.models.scripted import ScriptedModel


class _HashEmbedder:
    identity = "test-hash"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 16), dtype=np.float32)
        for i, t in enumerate(texts):
            for word in t.lower().split():
                out[i, hash(word) % 16] += 1
        return embed.normalise(out)


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> list[ScriptedModel]:
    made: list[ScriptedModel] = []

    def fake_load(spec: str, config: Any) -> ScriptedModel:
        model = ScriptedModel(lunar_responder(), name=spec)
        made.append(model)
        return model

    monkeypatch.setattr(session, "load_model", fake_load)
    monkeypatch.setattr(embed, "load_embedder", lambda *a, **k: _HashEmbedder())
    return made


def test_synth_queries_eval_report(
    ml100k_small: Dataset, tmp_path: Path, scripted: list[ScriptedModel]
) -> None:
    anchors = ml100k_small.save(tmp_path / "ml")
    out = tmp_path / "lunar"
    cli = CliRunner()
    r = cli.invoke(
        app,
        [
            "lunar",
            "synth",
            "--anchors",
            str(anchors),
            "--users",
            "2",
            "--weeks",
            "1",
            "--model",
            "scripted:x",
            "--out",
            str(out),
            "--max-slots",
            "1",
        ],
    )
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["schema"] == "recworld.lunar.manifest/2" and manifest["counts"]["users"] == 2
    r = cli.invoke(app, ["lunar", "queries", str(out), "--model", "scripted:x", "--per-user", "2"])
    assert r.exit_code == 0, r.output
    queries = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines()]
    rubrics = [json.loads(x) for x in (out / "rubrics.jsonl").read_text().splitlines()]
    assert len(queries) == 4 and [q["query_id"] for q in queries] == [r["query_id"] for r in rubrics]
    # The model tags dining+movies, but the synthetic logs hold dining only (movie anchors were removed).
    assert all(q["domains"] == ["dining"] and not q["multi_domain"] for q in queries)
    assert all(r["evidence"]["record_ids"] and r["facts"] == ["likes ramen"] for r in rubrics)
    r = cli.invoke(
        app,
        [
            "lunar",
            "eval",
            str(out),
            "--model",
            "scripted:a",
            "--judge",
            "scripted:j",
            "--context",
            "none,full,curated,rag",
        ],
    )
    assert r.exit_code == 0, r.output
    for ctx in ("none", "full", "curated", "rag"):
        judged = [
            json.loads(x)
            for x in (out / "eval" / "scripted_a" / ctx / "judgments.jsonl").read_text().splitlines()
        ]
        assert len(judged) == 4 and sum(j["target_first"] for j in judged) == 2
    r = cli.invoke(app, ["lunar", "report", str(out)])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((out / "report.csv").open()))
    assert [row["context"] for row in rows] == ["none", "full", "curated", "rag"]
    # The scripted judge prefers Response 1: (4, 3) first vs (2, 2) second, so the
    # target averages (3.5·2 + 2.0·2)/4 = 2.75 per context.
    assert all(float(row["avg"]) == pytest.approx(2.75) for row in rows)
    md = (out / "report.md").read_text()
    assert "| scripted:a | rag | 4 / 4 | 0 | 0 |" in md and "JSD type vs real (with anchors)" in md
    # Rerunning eval is served from the cache: no new model calls.
    before = sum(len(m.calls) for m in scripted)
    r = cli.invoke(
        app,
        ["lunar", "eval", str(out), "--model", "scripted:a", "--judge", "scripted:j", "--context", "full"],
    )
    assert r.exit_code == 0 and sum(len(m.calls) for m in scripted) == before


def test_bad_anchor_file_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "events.jsonl"
    bad.write_text('{"user_id": "u", "timestamp": 1, "domain": "dining"}\n')
    from recworld.cli import main

    assert (
        main(["lunar", "synth", "--anchors", str(bad), "--out", str(tmp_path / "o"), "--model", "scripted"])
        == 2
    )


def test_cli_builds_one_session_per_model_with_its_own_key_and_records_the_configs(
    ml100k_small: Dataset, tmp_path: Path, scripted: list[ScriptedModel]
) -> None:
    """Each model (answer, judge) gets its own spec, server and key variable; the configs land in run.json."""
    out = _synth_and_queries(ml100k_small, tmp_path)
    args = ["lunar", "eval", str(out), "--model", "scripted:a", "--judge", "scripted:j", "--context", "none"]
    args += [
        "--api-key-env",
        "ANSWER_KEY",
        "--judge-api-key-env",
        "JUDGE_KEY",
        "--judge-base-url",
        "http://j",
    ]
    args += ["--compact", "--max-retries", "2", "--timeout", "7", "--fail-on-error", "0.5"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    run = EvalRun.model_validate_json((out / "eval" / "scripted_a" / "none" / "run.json").read_text())
    answer, judge = run.config.answer, run.config.judge
    assert (answer.model, answer.api_key_env, answer.base_url) == ("scripted:a", "ANSWER_KEY", None)
    assert (judge.model, judge.api_key_env, judge.base_url) == ("scripted:j", "JUDGE_KEY", "http://j")
    assert answer.compact and judge.compact and answer.max_retries == 2 and judge.timeout_s == 7
    assert run.config.fail_on_error == 0.5 and run.counts.judged == 4


def _synth_and_queries(ml100k_small: Dataset, tmp_path: Path) -> Path:
    """A small folder with queries, made through the library API (the scripted model behind the Runner)."""
    out = tmp_path / "lunar"
    llm = SessionConfig(model="scripted:x")
    options = SynthOptions(weeks=1, max_slots_per_day=1)
    anchors = str(ml100k_small.save(tmp_path / "ml"))
    lunar.synthesize(lunar.SynthConfig(anchors=anchors, out_dir=out, users=2, llm=llm, options=options))
    lunar.make_queries(lunar.QueriesConfig(root=out, llm=llm))
    return out


def test_compact_default_follows_the_model_spec() -> None:
    assert SessionConfig(model="llamacpp:m").compact_decoding
    assert not SessionConfig(model="openai:m").compact_decoding
    assert SessionConfig(model="openai:m", compact=True).compact_decoding
    assert not SessionConfig(model="llamacpp:m", compact=False).compact_decoding


def test_library_api_writes_configs_into_the_run(
    ml100k_small: Dataset, tmp_path: Path, scripted: list[ScriptedModel]
) -> None:
    out = _synth_and_queries(ml100k_small, tmp_path)
    manifest = lunar_store.manifest(out)
    assert manifest.config.llm.model == "scripted:x" and manifest.config.users == 2
    assert manifest.counts.users == 2 and manifest.counts.asked > 0 and manifest.counts.failures == 0
    qrun = QueriesRun.model_validate_json((out / "queries_run.json").read_text())
    assert qrun.counts.queries == 4 and qrun.config.root == out
    config = lunar.LunarEvalConfig(
        root=out,
        answer=SessionConfig(model="scripted:a"),
        judge=SessionConfig(model="scripted:j"),
        contexts=(lunar.ContextSetting.NONE, lunar.ContextSetting.CURATED),
    )
    runs = lunar.evaluate(config)
    assert [r.context for r in runs] == ["none", "curated"] and all(r.config == config for r in runs)
    assert all((r.counts.answered, r.counts.judged, r.counts.failures) == (4, 4, 0) for r in runs)
    result = lunar.write_report(lunar.ReportConfig(root=out))
    assert [row["judged"] for row in result["rows"]] == [4, 4]
