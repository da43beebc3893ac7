"""A local OpenAI-compatible chat server for runner tests, with fault injection.

It answers ``POST /v1/chat/completions`` with a letter derived from the
request body (so answers are deterministic and differ between questions), and
counts every request body it reads, keyed by its canonical JSON, so tests can
assert that nothing was sent twice.

Faults are planned per body: ``faults[n]`` is what the n-th receipt (0-based)
of a body gets, one of ``"429"``, ``"500"``, ``"401"``, ``"hang"``, ``"malformed"``.

``barrier`` makes the server hold every reply until that many requests have
arrived (or ``barrier_s`` passed), so "all N concurrent requests were out
before the first reply" is exact, and what is sent after a reply is a second
wave that can be counted.

``POST /v1/embeddings`` answers one deterministic vector per input text
(:func:`vector_for`), in shuffled ``index`` order as servers may.

``hold_after`` makes the server answer that many requests and then hold every
further one *before reading its body* until :meth:`FakeOpenAI.release`; held
requests are then dropped unread. A client killed while requests are held has
therefore had exactly ``hold_after`` requests processed, which makes "nothing
answered is ever sent again" an exact, race-free assertion.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from helpers.fake_openai import LoopbackServer

Plan = Callable[[str], Sequence[str]]  # body key -> faults for its 1st, 2nd, ... receipt


def body_key(body: bytes) -> str:
    return json.dumps(json.loads(body), sort_keys=True)


def answer_for(key: str) -> str:
    return "ABCD"[hashlib.sha256(key.encode()).digest()[0] % 4]


class FakeOpenAI:
    def __init__(
        self,
        *,
        plan: Plan | None = None,
        hold_after: int | None = None,
        hang_s: float = 5.0,
        barrier: int | None = None,
        barrier_s: float = 5.0,
        host: str = "127.0.0.1",
    ) -> None:
        self.plan = plan or (lambda key: ())
        self.hold_after = hold_after
        self.hang_s = hang_s
        self.barrier = barrier
        self.barrier_s = barrier_s
        self._arrived = threading.Semaphore(0)
        self._all_in = threading.Event()
        self.counts: Counter[str] = Counter()  # receipts per body
        self.answered: Counter[str] = Counter()  # 200 OK replies per body
        self.headers_seen: list[dict[str, str]] = []
        self.bodies: list[bytes] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._admitted = 0
        self._loopback = LoopbackServer(self._handler(), host=host)

    @property
    def base_url(self) -> str:
        return self._loopback.base_url

    def __enter__(self) -> FakeOpenAI:
        self._loopback.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._released.set()
        self._loopback.stop()

    def release(self) -> None:
        """Drop held requests unread and serve everything from now on."""
        with self._lock:
            self.hold_after = None
        self._released.set()

    def _wait_for_barrier(self) -> None:
        if self.barrier is None:
            return
        with self._lock:
            arrived = sum(self.counts.values())
        if arrived >= self.barrier:
            self._all_in.set()
        self._all_in.wait(self.barrier_s)

    def _must_hold(self) -> bool:
        """Admit the first ``hold_after`` requests (atomically), hold the rest."""
        with self._lock:
            if self.hold_after is None:
                return False
            if self._admitted < self.hold_after:
                self._admitted += 1
                return False
            return True

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                if server._must_hold():
                    server._released.wait()
                    self.close_connection = True
                    return  # dropped unread: it never reached the "model"
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                key = body_key(body)
                with server._lock:
                    nth = server.counts[key]
                    server.counts[key] += 1
                    server.headers_seen.append({k.lower(): v for k, v in self.headers.items()})
                    server.bodies.append(body)
                server._wait_for_barrier()
                faults = server.plan(key)
                fault = faults[nth] if nth < len(faults) else None
                if fault == "401":
                    self._reply(401, b'{"error": {"message": "invalid api key"}}')
                elif fault == "429":
                    self._reply(429, b'{"error": {"message": "slow down"}}', {"Retry-After": "0"})
                elif fault == "500":
                    self._reply(500, b'{"error": {"message": "internal"}}')
                elif fault == "hang":
                    time.sleep(server.hang_s)
                    self.close_connection = True
                elif fault == "malformed":
                    self._reply(200, b'{"id": "x", "choices": [{"message": ')
                else:
                    with server._lock:
                        server.answered[key] += 1
                    if self.path.endswith("/embeddings"):
                        self._reply(200, json.dumps(embeddings(json.loads(body))).encode())
                    else:
                        self._reply(200, json.dumps(completion(answer_for(key))).encode())

            def _reply(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    self.close_connection = True

        return Handler


def completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 1, "total_tokens": 12},
    }


def vector_for(text: str, dim: int = 8) -> list[float]:
    """The fake embedding of ``text``: ``dim`` numbers from its sha256, the same every time."""
    digest = hashlib.sha256(text.encode()).digest()
    return [(b - 127.5) / 127.5 for b in digest[:dim]]


def embeddings(body: Mapping[str, Any]) -> dict[str, Any]:
    """An ``/embeddings`` reply for ``body["input"]``, its rows in reversed index order."""
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    rows = [{"object": "embedding", "index": i, "embedding": vector_for(t)} for i, t in enumerate(texts)]
    return {"object": "list", "data": rows[::-1], "model": body.get("model"), "usage": {"prompt_tokens": 1}}


def fake_answer(request: Any) -> int:
    """The index of the right option of a :func:`write_suite` question in ``request``, in any option order.

    A request carries no gold (``Request.question`` is a public view), so a test model that must
    answer right knows the fake suite's answer key itself: question ``i``'s answer is ``c{i}-{7i % n}``.
    """
    question = request.question
    assert question is not None
    number = int(question.id.split("#o", 1)[0].rsplit("/", 1)[1])
    ids = [c.id for c in question.candidates]
    return ids.index(f"c{number}-{(number * 7) % len(ids)}")


def write_suite(root: Path, counts: Mapping[str, int], *, fingerprint: str = "fake-fp") -> Path:
    """A tiny suite directory: a manifest and ``counts[measure]`` questions per measure."""
    from recworld.io import atomic_write_json
    from recworld.lrworld.catalogue import MEASURES
    from recworld.lrworld.manifest import SuiteManifest, UsersSkipped
    from recworld.lrworld.schema import Entry, Question, Target

    by_id = {m.id: m for m in MEASURES}
    (root / "questions").mkdir(parents=True, exist_ok=True)
    for measure, n in counts.items():
        meta = by_id[measure]
        n_options = meta.format.n_options
        lines = []
        for i in range(n):
            question = Question(
                id=f"fake/{measure}/{i:05d}",
                dataset="fake",
                domain="movie",
                measure=measure,
                scale=meta.scale.value,
                format=meta.format,
                target=Target(kind="item", id=f"t{i}", text=f"Target movie {i}"),
                history=[Entry(id=f"h{i}", text=f"History movie {i}")],
                candidates=[
                    Entry(id=f"c{i}-{j}", text=f"Option {j} of question {i}") for j in range(n_options)
                ],
                answer_index=(i * 7) % n_options,
                evidence={"field": "genres"} if meta.format.value == "mcq" else {},
                seed=0,
            )
            lines.append(json.dumps(question.to_json()) + "\n")
        (root / "questions" / f"{measure}.jsonl").write_text("".join(lines), encoding="utf-8")
    manifest = SuiteManifest(
        dataset="fake",
        domain="movie",
        fingerprint=fingerprint,
        config={},
        seed=0,
        counts=dict(counts),
        users_skipped=UsersSkipped(too_short_history=0, rule="fake suite"),
    )
    atomic_write_json(root / "manifest.json", manifest.to_json())
    return root
