"""LUNAR against any OpenAI-compatible server: the four commands over real HTTP to a local fake.

The fake serves ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` on 127.0.0.1. A chat
request is turned back into a ``Request`` (messages + ``response_format.json_schema.schema``),
and the reply text comes from the same ``lunar_responder`` the scripted tests use: it picks the
stage by the schema's title and copies ids, times and domains out of the prompt, so every stage
check can pass. Nothing in recworld is patched: model loading, the OpenAI backend, the runner,
its cache and the OpenAI embedder all run as they would against vLLM or Ollama.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import run_recworld
from helpers.lunar import lunar_responder
from recworld.chat import Request
from recworld.testing.fake_server import FakeOpenAIServer


@pytest.fixture
def server(openai_server: Callable[[Callable[[Request], str]], FakeOpenAIServer]) -> FakeOpenAIServer:
    return openai_server(lunar_responder())


def _write_events(path: Path) -> None:
    """Two users with a week of real dining and movie logs."""
    base = 1_709_510_400  # Monday 2024-03-04 00:00 UTC
    rows = []
    for u in ("alice", "bob"):
        for day in range(5):
            rows.append(
                {
                    "user_id": u,
                    "timestamp": base + day * 86_400 + 9 * 3600,
                    "domain": "dining",
                    "type": "order",
                    "fields": {"merchant": f"Cafe {day}", "amount": 4.5 + day},
                }
            )
            rows.append(
                {
                    "user_id": u,
                    "timestamp": base + day * 86_400 + 21 * 3600,
                    "domain": "movies",
                    "type": "watch",
                    "fields": {"title": f"Film {u} {day}"},
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.mark.slow
def test_four_commands_against_an_openai_compatible_server(tmp_path: Path, server: FakeOpenAIServer) -> None:
    events = tmp_path / "events.jsonl"
    _write_events(events)
    out = tmp_path / "lunar"
    url = ["--base-url", server.base_url]
    synth = ["synth", "--anchors", str(events), "--users", "2", "--out", str(out), "--max-slots", "1"]
    synth += ["--active-days", "1", "--model", "openai:fake", *url]
    evaluate = ["eval", str(out), "--model", "openai:fake", "--judge", "openai:fake-judge", *url]
    evaluate += ["--judge-base-url", server.base_url, "--context", "none,full,curated,rag"]
    evaluate += ["--embedder", "openai:fake-embed", "--embed-base-url", server.base_url]
    steps = [
        synth,
        ["queries", str(out), "--model", "openai:fake", "--per-user", "2", *url],
        evaluate,
        ["report", str(out)],
    ]
    for step in steps:
        r = run_recworld("lunar", *step)
        assert r.returncode == 0, (step[0], r.stderr)

    # Every structured call went out as response_format with the full (non-compact) JSON schema.
    structured = [b for b in server.chat if "response_format" in b]
    titles = {b["response_format"]["json_schema"]["schema"]["title"] for b in structured}
    assert {"ProfileDraft", "RecordsDraft", "QueryDraft", "DecisionDraft", "PairDraft"} <= titles
    for body in structured:
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"]["type"] == "object"
        assert "$ref" not in json.dumps(fmt)
    assert {b["model"] for b in server.chat} == {"fake", "fake-judge"}
    # The decision step's record_ids were enumerated from the ids in its prompt.
    for body in structured:
        schema = body["response_format"]["json_schema"]["schema"]
        if schema["title"] == "DecisionDraft":
            shown = {
                line[1 : line.index("]")]
                for line in body["messages"][-1]["content"].splitlines()
                if line.startswith("[")
            }
            assert set(schema["properties"]["record_ids"]["items"]["enum"]) == shown and shown
    assert server.embeddings and all(b["model"] == "fake-embed" for b in server.embeddings)

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["users"] == 2 and manifest["counts"]["failures"] == 0
    records = _lines(out / "dataset" / "records.jsonl")
    assert records and all(r["schema"] == "recworld.lunar.record/1" for r in records)
    queries, rubrics = _lines(out / "queries.jsonl"), _lines(out / "rubrics.jsonl")
    assert len(queries) == 4 and len(rubrics) == 4
    assert all(r["evidence"]["record_ids"] for r in rubrics)
    assert _lines(out / "query_failures.jsonl") == []
    for ctx in ("none", "full", "curated", "rag"):
        folder = out / "eval" / "openai-fake" / ctx
        answers, judged = _lines(folder / "answers.jsonl"), _lines(folder / "judgments.jsonl")
        assert len(answers) == 4 and all(a["answer"] and a["error"] is None for a in answers)
        assert len(judged) == 4 and all(j["error"] is None for j in judged)
    rows = list(csv.DictReader((out / "report.csv").open()))
    assert [row["context"] for row in rows] == ["none", "full", "curated", "rag"]
    assert (out / "report.md").exists() and (out / "quality.json").exists()
