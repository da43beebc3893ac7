"""``recworld.testing.fake_server``: the one fake OpenAI-compatible server, as a backend author meets it."""

from __future__ import annotations

import asyncio
import socket

import pytest

from recworld.chat import Message, Request
from recworld.models import ModelConfig, TransientModelError, load_model
from recworld.testing.fake_server import MODES, FakeOpenAIServer, HTTPStatusError, Response, letter_for


def ask(url: str, text: str = "hi") -> str:
    async def go() -> str:
        model = load_model("openai:m", ModelConfig(base_url=url))
        try:
            return (await model.complete(Request(messages=(Message("user", text),), max_tokens=4))).text
        finally:
            await model.aclose()

    return asyncio.run(go())


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def test_it_binds_loopback_only_and_names_the_modes_it_knows() -> None:
    with FakeOpenAIServer() as server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        with socket.create_connection(("127.0.0.1", server.port), timeout=2):
            pass
    for wildcard in ("0.0.0.0", "::"):
        with pytest.raises(ValueError, match="never the wildcard"):
            FakeOpenAIServer(host=wildcard)
    with pytest.raises(ValueError, match="unknown fake-server mode 'nope'; known: echo, fixed"):
        FakeOpenAIServer("nope")


def test_modes_answer_as_named_and_the_log_sees_every_request() -> None:
    with FakeOpenAIServer("fixed", "B") as fixed:
        assert ask(fixed.base_url) == "B"
    assert [m["content"] for m in fixed.chat[0]["messages"]] == ["hi"]
    with FakeOpenAIServer("echo", "you said: ") as echo:
        assert ask(echo.base_url, "plums") == "you said: plums"
    with FakeOpenAIServer("letters") as letters:
        assert ask(letters.base_url) == letter_for(next(iter(letters.counts)))
    with FakeOpenAIServer("respond", respond=lambda r: r.messages[-1].content[::-1]) as respond:
        assert ask(respond.base_url, "abc") == "cba"


def test_a_status_and_a_planned_fault_reach_the_backend_as_errors() -> None:
    def refuse(request: Request) -> str:
        raise HTTPStatusError(503, "busy")

    with (
        FakeOpenAIServer("respond", respond=refuse) as server,
        pytest.raises(TransientModelError, match="503"),
    ):
        ask(server.base_url)
    with FakeOpenAIServer("fixed", "B", plan=lambda key: ["429"]) as planned:
        with pytest.raises(TransientModelError, match="429"):
            ask(planned.base_url)
        assert ask(planned.base_url) == "B"  # the plan covered the body's first receipt only
    (key,) = planned.counts
    assert planned.counts[key] == 2 and planned.answered[key] == 1  # a fault is not an answer


def test_a_mode_is_data_a_test_adds_without_touching_the_registry() -> None:
    before = dict(MODES)
    teapot = {**MODES, "teapot": lambda server, received: Response(raw=[b"HTTP/1.1 418 X\r\n\r\n"])}
    with FakeOpenAIServer("teapot", modes=teapot) as server, pytest.raises(Exception, match="418"):
        ask(server.base_url)
    assert dict(MODES) == before and len(server.requests) >= 1
