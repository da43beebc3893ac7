"""Every reply is bounded, well-formed text (issue 23, item 4; review 3, D10 and group E).

The class: a reply body is the server's to choose, in every field (answer, model
name, role, finish reason, error message, usage, logprobs, keys), with lone
UTF-16 surrogates as JSON escapes, invalid UTF-8 bytes, ``NaN``/``Infinity``
tokens, out-of-range numbers, huge strings, deep nesting and wrong types, under
any status. Whatever it is, the request ends as a response or a sample error
(never an exception, never a hang), what is kept encodes as UTF-8, and the
response cache passes ``PRAGMA integrity_check`` with every row strict JSON.

The checkers share no code with what they check: ``sqlite3`` and ``json``
(with ``parse_constant`` raising) read the cache file, and ``str.encode``
judges the text.
"""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.cli import run_recworld
from helpers.security.common import eval_argv
from helpers.security.fake_server import FakeServer
from recworld.chat import AnswerMode, Message, Request
from recworld.models import ModelConfig
from recworld.models.base import FatalModelError
from recworld.models.openai_compat import OpenAICompatModel
from recworld.runner import ResponseCache, Runner, RunnerConfig
from recworld.testing.fake_server import completion

try:  # the openai SDK ships on httpx2 in recent releases, httpx before
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

HOLE = "\x00HOLE\x00"  # where a hostile fragment goes in a reply template

# Hostile JSON fragments, as the raw bytes a server sends in one value's place.
SURROGATES = [b'"x\\ud800y"', b'"\\udfff"', b'"\\udc00\\ud800"', b'"\\uD83D"', b'"a\\ud800\\u0041"']
BAD_UTF8 = [b'"\xff\xfe"', b'"\xed\xa0\x80"', b'"\xc0\xaf"', b'"ok\x80"']
CONSTANTS = [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b"1e-400", b"9" * 5000]
WRONG = [b"null", b"true", b"[]", b"{}", b"0", b"-1", b'"str"', b"[1,2,3]", b'{"a":{"b":[null]}}']
NESTED = [b"[" * 70 + b"]" * 70, b'{"a":' * 70 + b"1" + b"}" * 70, b"[" * 30 + b'"\\ud800"' + b"]" * 30]
HUGE = [b'"' + b"x" * 300_000 + b'"', b'"' + b"\\ud800" * 20_000 + b'"']
FRAGMENTS = SURROGATES + BAD_UTF8 + CONSTANTS + WRONG + NESTED + HUGE


def chat_template(logprobs: bool) -> dict[str, Any]:
    return completion("Answer: A", logprobs=logprobs)


ERROR_TEMPLATE: dict[str, Any] = {"error": {"message": "bad thing", "type": "invalid", "code": 1}}


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a template a value sits (containers included), as a path of keys and indices."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


def with_hole(template: Any, path: tuple[Any, ...], as_key: bool) -> Any:
    """A copy of ``template`` with HOLE at ``path`` (or, with ``as_key``, a HOLE key beside it)."""
    data = json.loads(json.dumps(template))
    node = data
    for step in path[:-1]:
        node = node[step]
    if as_key and isinstance(node, dict):
        node[HOLE] = 1
    else:
        node[path[-1]] = HOLE
    return data


@st.composite
def replies(draw: st.DrawFn) -> tuple[int, bytes, AnswerMode]:
    """(status, body, mode): a valid reply template with one hostile fragment in one place."""
    mode = draw(st.sampled_from([AnswerMode.GENERATE, AnswerMode.LOGLIK]))
    status = draw(st.sampled_from([200, 200, 200, 400, 429, 500, 503, 299]))
    template = chat_template(mode is AnswerMode.LOGLIK) if status < 300 else ERROR_TEMPLATE
    path = draw(st.sampled_from(paths(template)))
    data = with_hole(template, path, as_key=draw(st.booleans()))
    fragment = draw(st.sampled_from(FRAGMENTS))
    text = json.dumps(data, ensure_ascii=True).encode()
    return status, text.replace(json.dumps(HOLE).encode(), fragment), mode


def request(mode: AnswerMode, n: int) -> Request:
    choices = ("A", "B", "C", "D") if mode is not AnswerMode.GENERATE else ()
    # A new prompt per example: the shared cache must never answer one example with another's reply.
    message = Message("user", f"Which? A, B, C or D (#{n})")
    return Request(messages=(message,), mode=mode, choices=choices, max_tokens=4)


QUIET = RunnerConfig(max_retries=0, timeout_s=10, backoff_base_s=0, backoff_max_s=0, progress=False)


def strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"non-standard constant {name}")

    return json.loads(text, parse_constant=refuse)


def check_cache(path: Path) -> int:
    """The cache file is intact and every row is strict JSON text that encodes as UTF-8; returns the rows."""
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = db.execute("SELECT value FROM responses").fetchall()
    finally:
        db.close()
    for (value,) in rows:
        value.encode("utf-8")  # strict: a lone surrogate raises
        assert isinstance(strict_json(value), dict)
    return len(rows)


def check_completion(completion: Any) -> None:
    if completion.response is not None:
        completion.response.text.encode("utf-8")
        for score in completion.response.choice_logprobs or ():
            assert isinstance(score, float) and (math.isfinite(score) or score == -math.inf)
        usage = completion.response.usage
        assert usage.prompt_tokens >= 0 and usage.completion_tokens >= 0
    else:
        assert completion.error is not None
        completion.error.encode("utf-8")


class Harness:
    """One event loop, one model and one cache file for many examples (each example is a few ms)."""

    def __init__(self, model_for: Any) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.path = Path(self.folder.name) / "cache.sqlite"
        self.loop = asyncio.new_event_loop()
        self.reply: tuple[int, bytes] = (200, b"{}")
        self.model = model_for(self)
        self.cache = ResponseCache(self.path)
        self.asked = 0

    async def _answer(self, mode: AnswerMode) -> Any:
        runner = Runner(self.model, QUIET, self.cache, owns_model=False)
        self.asked += 1
        try:
            return await asyncio.wait_for(runner.complete(request(mode, self.asked)), 20)
        except FatalModelError as exc:  # 401/403/404 are fatal by design: still a classified outcome
            return exc
        finally:
            await runner.aclose()

    def answer(self, status: int, body: bytes, mode: AnswerMode) -> None:
        """One reply, end to end; checks the outcome and the cache file after it."""
        self.reply = (status, body)
        before = check_cache(self.path)
        outcome = self.loop.run_until_complete(self._answer(mode))
        if not isinstance(outcome, FatalModelError):
            check_completion(outcome)
        ok = getattr(outcome, "response", None) is not None
        assert not self.cache._db.in_transaction  # the batch committed or rolled back whole
        assert check_cache(self.path) == before + (1 if ok else 0)

    def close(self) -> None:
        self.loop.run_until_complete(self.model.aclose())
        self.loop.close()
        self.cache.close()
        check_cache(self.path)
        self.folder.cleanup()


def sdk_model(harness: Harness) -> OpenAICompatModel:
    def handler(_request: Any) -> Any:
        status, body = harness.reply
        return httpx.Response(status, content=body)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    config = ModelConfig(base_url="http://127.0.0.1:9/v1", options={"transport": "sdk"})
    return OpenAICompatModel("fake", config, http_client=client)


@pytest.fixture(scope="module")
def sdk_harness() -> Any:
    harness = Harness(sdk_model)
    yield harness
    harness.close()


@pytest.fixture(scope="module")
def aiohttp_harness() -> Any:
    with FakeServer("raw_body") as server:

        def model(harness: Harness) -> OpenAICompatModel:
            server.status, server.body = harness.reply
            config = ModelConfig(base_url=server.url, options={"transport": "aiohttp"})
            return OpenAICompatModel("fake", config)

        harness = Harness(model)
        harness.server = server  # type: ignore[attr-defined]
        yield harness
        harness.close()


BASE = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings(BASE, max_examples=120)
@given(reply=replies())
def test_any_reply_is_a_response_or_a_sample_error_sdk(
    reply: tuple[int, bytes, AnswerMode], sdk_harness: Harness
) -> None:
    sdk_harness.answer(*reply)


@settings(BASE, max_examples=60)
@given(reply=replies())
def test_any_reply_is_a_response_or_a_sample_error_aiohttp(
    reply: tuple[int, bytes, AnswerMode], aiohttp_harness: Harness
) -> None:
    """The same class over a real loopback socket and the aiohttp transport."""
    server = aiohttp_harness.server  # type: ignore[attr-defined]
    server.status, server.body = reply[0], reply[1]
    aiohttp_harness.answer(*reply)


def _samples(out: Path) -> list[dict[str, Any]]:
    return [strict_json(line) for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(
    ("mode", "transport", "extra"),
    [
        ("lone_surrogate", "aiohttp", ()),  # E1: hung for 10 minutes
        ("lone_surrogate", "sdk", ()),  # E2: hung
        ("lone_surrogate", "aiohttp", ("--mode", "loglik")),
        ("lone_surrogate_error", "aiohttp", ("--max-retries", "0")),  # E3: a Journal.append traceback
        ("lone_surrogate_error", "sdk", ("--max-retries", "0")),
    ],
)
def test_d10_a_lone_surrogate_in_a_reply_is_data_not_a_hang(
    evil_suite: Path,
    work: Path,
    mode: str,
    transport: str,
    extra: tuple[str, ...],
) -> None:
    import shutil

    suite = work / "suite"
    shutil.copytree(evil_suite, suite, symlinks=True)
    out = work / "run"
    with FakeServer(mode) as server:
        argv = eval_argv(suite, server.url, out, "--model-option", f"transport={transport}", *extra)
        ran = run_recworld(*argv)
    assert ran.returncode in (0, 3), ran.stderr
    assert "Traceback" not in ran.stderr
    header = strict_json((out / "run.json").read_text(encoding="utf-8"))
    assert header["status"] != "running"
    (sample,) = _samples(out)
    if mode == "lone_surrogate":  # scored: generate mode keeps the text, U+FFFD for the surrogate
        assert sample["error"] is None and ("\ufffd" in sample["response"] or "--mode" in extra)
    else:
        assert "bad \ufffd thing" in sample["error"]
    check_cache(out / "cache.sqlite")


ANY_TEXT = (
    st.text() | st.text(st.characters(categories=["Cs", "Cc"])) | st.sampled_from(["\ud800", "a\udfff"])
)
ANY_COUNT = (
    st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.none()
    | st.text(max_size=3)
)


@settings(max_examples=200, deadline=None)
@given(
    ANY_TEXT,
    st.none() | st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 5), max_size=5),
    ANY_COUNT,
    ANY_COUNT,
)
def test_any_backend_response_is_well_formed(text: str, scores: Any, prompt: Any, completion: Any) -> None:
    """Whatever a backend or plugin builds (not only the openai one), the Response is well-formed data."""
    from recworld.chat import Response, Usage

    made = Response(
        text=text, choice_logprobs=None if scores is None else tuple(scores), usage=Usage(prompt, completion)
    )
    check_completion(type("C", (), {"response": made, "error": None})())
    assert all(
        type(n) is int and 0 <= n < 2**63 for n in (made.usage.prompt_tokens, made.usage.completion_tokens)
    )
    strict_json(json.dumps(made.to_json(), ensure_ascii=False, allow_nan=False)).keys()
