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
import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from lunar_helpers import lunar_responder
from typer.testing import CliRunner

from recworld.chat import Message, Request
from recworld.cli import app

EMBED_DIM = 16


def fake_embedding(text: str) -> list[float]:
    """A deterministic bag-of-words vector (hashlib, so it does not vary with PYTHONHASHSEED)."""
    out = [0.0] * EMBED_DIM
    for word in text.lower().split():
        out[hashlib.sha256(word.encode()).digest()[0] % EMBED_DIM] += 1.0
    return out


class FakeOpenAIServer:
    """Chat completions answered by ``respond(Request)``; every request body is kept."""

    def __init__(self, respond: Callable[[Request], str]) -> None:
        self.respond = respond
        self.chat: list[dict[str, Any]] = []
        self.embeddings: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply_for(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.chat.append(body)
        fmt = body.get("response_format")
        schema = fmt["json_schema"]["schema"] if fmt else None
        request = Request(
            messages=tuple(Message(m["role"], m["content"]) for m in body["messages"]),
            max_tokens=int(body.get("max_completion_tokens") or body.get("max_tokens") or 1),
            json_schema=schema,
        )
        text = self.respond(request)
        return {
            "id": f"chatcmpl-{len(self.chat)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def embed_for(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.embeddings.append(body)
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        return {
            "object": "list",
            "model": body["model"],
            "data": [
                {"object": "embedding", "index": i, "embedding": fake_embedding(t)}
                for i, t in enumerate(texts)
            ],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                if self.path == "/v1/chat/completions":
                    self._send(200, server.reply_for(body))
                elif self.path == "/v1/embeddings":
                    self._send(200, server.embed_for(body))
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, obj: dict[str, Any]) -> None:
                payload = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    # A proxy variable would route 127.0.0.1 through the proxy (and switch the backend transport).
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(lunar_responder()) as fake:
        yield fake


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


def test_four_commands_against_an_openai_compatible_server(tmp_path: Path, server: FakeOpenAIServer) -> None:
    events = tmp_path / "events.jsonl"
    _write_events(events)
    out = tmp_path / "lunar"
    url = ["--base-url", server.base_url]
    cli = CliRunner()
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
        r = cli.invoke(app, ["lunar", *step])
        assert r.exit_code == 0, (step[0], r.output, r.exception)

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
        folder = out / "eval" / "openai_fake" / ctx
        answers, judged = _lines(folder / "answers.jsonl"), _lines(folder / "judgments.jsonl")
        assert len(answers) == 4 and all(a["answer"] and a["error"] is None for a in answers)
        assert len(judged) == 4 and all(j["error"] is None for j in judged)
    rows = list(csv.DictReader((out / "report.csv").open()))
    assert [row["context"] for row in rows] == ["none", "full", "curated", "rag"]
    assert (out / "report.md").exists() and (out / "quality.json").exists()
