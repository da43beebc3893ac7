"""Fake OpenAI-compatible endpoints for the openai backend's tests: an httpx mock and the one loopback server.

Both hand every request to the same handler (an ``httpx.Request -> httpx.Response``
function), so each behaviour test runs on both transports. :func:`echo_handler`
is a legacy completions server that echoes per-token prompt logprobs (rank mode).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from recworld.models import ModelConfig
from recworld.models.openai_compat import OpenAICompatModel
from recworld.testing.fake_server import FakeOpenAIServer, Received, Response
from recworld.testing.fake_server import completion as fake_completion

try:  # the openai SDK ships on httpx2 in recent releases, httpx before
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

KEY = "sk-test-key-abcdef0123456789"
TOP = [("A", -0.5), (" A", -1.0), ("B", -1.5), ("C", -3.0), ("hello", -4.0)]

Handler = Callable[[Any], Any]


def completion(content: str, logprobs: list[tuple[str, float]] | None = None) -> dict[str, Any]:
    """The shipped fake's reply body for model ``m`` (the name these tests configure)."""
    return fake_completion(content, logprobs=logprobs or False, model="m")


def default_handler(request: Any) -> Any:
    body = json.loads(request.content)
    if body.get("logprobs"):
        return httpx.Response(200, json=completion("A", TOP))
    last = body["messages"][-1]["content"]
    text = last if isinstance(last, str) else last[0]["text"]
    return httpx.Response(200, json=completion(f"echo:{text[-2:]}"))


_SERVERS: list[FakeOpenAIServer] = []


def loopback_server(handler: Handler) -> str:
    """The one fake server (mode ``handler``, HTTP/1.1 keep-alive) answering with ``handler``; its base URL.

    Each request is handed over as an ``httpx.Request`` and the ``httpx.Response`` sent back, so the
    same handler serves the mock transport and the socket; ``httpx.ConnectError`` hangs up.
    """

    def bridge(received: Received) -> Response:
        headers = {k: v for k, v in received.headers.items() if k != "host"}
        url = f"http://{received.headers.get('host', '127.0.0.1')}{received.path}"
        request = httpx.Request(received.method, url, headers=headers, content=received.body)
        try:
            response = handler(request)
        except httpx.ConnectError:  # the handler's way to refuse: hang up
            return Response(hangup=True)
        kept = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        return Response(response.status_code, response.content, kept)

    server = FakeOpenAIServer("handler", handler=bridge).start()
    _SERVERS.append(server)
    return server.base_url


def stop_servers() -> None:
    """Shut down every loopback server started so far (the folder's conftest calls it after each test)."""
    while _SERVERS:
        _SERVERS.pop().stop()


def fake_server_model(
    config: ModelConfig,
    handler: Handler = default_handler,
    seen: list[Any] | None = None,
    transport: str = "sdk",
) -> OpenAICompatModel:
    def record(request: Any) -> Any:
        if seen is not None:
            seen.append(request)
        return handler(request)

    if transport == "aiohttp":
        url = loopback_server(record)
        return OpenAICompatModel(
            "m",
            config.model_copy(
                update={"base_url": url, "options": {**config.options, "transport": "aiohttp"}}
            ),
        )
    client = httpx.AsyncClient(transport=httpx.MockTransport(record))
    return OpenAICompatModel("m", config, http_client=client)


TOKEN = re.compile(r"\s*\S+")


def token_logprob(token: str) -> float:
    """Deterministic per-token logprob of the fake server: longer words are less likely."""
    return -0.25 * len(token.strip()) - (0.5 if token.strip() == "horror" else 0.0)


def echo_handler(request: Any) -> Any:
    """A completions server that echoes the prompt's tokens (whitespace words) with their logprobs."""
    body = json.loads(request.content)
    text = str(body["prompt"])
    tokens = [(m.start(), m.group()) for m in TOKEN.finditer(text)] + [(len(text), " x")]
    logprobs = {
        "tokens": [t for _, t in tokens],
        "text_offset": [o for o, _ in tokens],
        "token_logprobs": [None] + [token_logprob(t) for _, t in tokens[1:]],
        "top_logprobs": None,
    }
    choice = {"index": 0, "text": text + " x", "logprobs": logprobs, "finish_reason": "length"}
    usage = {"prompt_tokens": len(tokens) - 1, "completion_tokens": 1}
    return httpx.Response(200, json={"object": "text_completion", "choices": [choice], "usage": usage})


def contract_handler(request: Any) -> Any:
    """Chat completions and logprobs (:func:`default_handler`) plus rank's echoing completions endpoint."""
    return (
        echo_handler(request)
        if request.url.path.endswith("/completions") and not request.url.path.endswith("/chat/completions")
        else default_handler(request)
    )
