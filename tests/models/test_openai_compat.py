"""The OpenAI-compatible backend against in-process fake servers.

Every behaviour test runs on both transports: ``sdk`` (the openai SDK over an
httpx mock transport) and ``raw`` (the lean HTTP/1.1 client against a real
loopback server that hands each request to the same handler).
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import socket
import threading
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from recworld.errors import ConfigError, ModelError
from recworld.models import AnswerMode, Message, ModelConfig, Request, Response, TransientModelError
from recworld.models.openai_compat import OpenAICompatModel

try:  # the openai SDK ships on httpx2 in recent releases, httpx before
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

KEY = "sk-test-key-abcdef0123456789"
TOP = [("A", -0.5), (" A", -1.0), ("B", -1.5), ("C", -3.0), ("hello", -4.0)]

Handler = Callable[[Any], Any]


def completion(content: str, logprobs: list[tuple[str, float]] | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": "stop",
        "message": {"role": "assistant", "content": content},
    }
    if logprobs is not None:
        top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in logprobs]
        choice["logprobs"] = {"content": [{**top[0], "top_logprobs": top}]}
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [choice],
        "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8},
    }


def default_handler(request: Any) -> Any:
    body = json.loads(request.content)
    if body.get("logprobs"):
        return httpx.Response(200, json=completion("A", TOP))
    last = body["messages"][-1]["content"]
    text = last if isinstance(last, str) else last[0]["text"]
    return httpx.Response(200, json=completion(f"echo:{text[-2:]}"))


_SERVERS: list[ThreadingHTTPServer] = []


def loopback_server(handler: Handler) -> str:
    """A real HTTP/1.1 keep-alive server on 127.0.0.1 that answers with ``handler``; its base URL."""

    class Bridge(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            content = self.rfile.read(int(self.headers.get("content-length", 0)))
            request = httpx.Request(
                "POST",
                f"http://{self.headers['host']}{self.path}",
                headers=dict(self.headers),
                content=content,
            )
            try:
                response = handler(request)
            except httpx.ConnectError:  # the handler's way to refuse: hang up
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.send_response_only(response.status_code)
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(response.content)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Bridge)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _SERVERS.append(server)
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


@pytest.fixture(autouse=True)
def _stop_servers() -> Iterator[None]:
    yield
    while _SERVERS:
        server = _SERVERS.pop()
        server.shutdown()
        server.server_close()


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

    if transport == "raw":
        url = loopback_server(record)
        return OpenAICompatModel(
            "m", config.model_copy(update={"base_url": url, "extra": {"transport": "raw"}})
        )
    client = httpx.AsyncClient(transport=httpx.MockTransport(record))
    return OpenAICompatModel("m", config, http_client=client)


@pytest.fixture(params=["sdk", "raw"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> ModelConfig:
    monkeypatch.setenv("TEST_OPENAI_KEY", KEY)
    return ModelConfig(base_url="http://fake/v1", api_key_env="TEST_OPENAI_KEY", seed=3)


def run(model: OpenAICompatModel, request: Request) -> Any:
    return asyncio.run(model.complete(request))


def test_generate_sends_the_request_fields(keyed: ModelConfig, tmp_path: Path, transport: str) -> None:
    image = tmp_path / "poster.png"
    image.write_bytes(b"\x89PNG fake")
    seen: list[Any] = []
    model = fake_server_model(keyed, seen=seen, transport=transport)
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    request = Request(
        (Message("system", "sys"), Message("user", "hi", images=(str(image),))),
        max_tokens=0,
        stop=("\n",),
        json_schema=schema,
    )
    response = run(model, request)
    assert response.text == "echo:hi"
    assert response.usage.prompt_tokens == 7
    body = json.loads(seen[0].content)
    assert body["model"] == "m" and body["temperature"] == 0.0 and body["seed"] == 3
    assert body["max_tokens"] == 1  # never 0
    assert body["stop"] == ["\n"]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == schema
    parts = body["messages"][1]["content"]
    assert parts[0] == {"type": "text", "text": "hi"}
    url = parts[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == b"\x89PNG fake"
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert seen[0].url.path == "/v1/chat/completions"


def test_loglik_reads_top_logprobs(keyed: ModelConfig, transport: str) -> None:
    seen: list[Any] = []
    model = fake_server_model(keyed, seen=seen, transport=transport)
    response = run(model, Request((Message("user", "q"),), mode=AnswerMode.LOGLIK, choices=("A", "B", "D")))
    body = json.loads(seen[0].content)
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 20
    a, b, d = response.choice_logprobs
    assert a == pytest.approx(math.log(math.exp(-0.5) + math.exp(-1.0)))  # "A" and " A" both spell A
    assert b == pytest.approx(-1.5)
    assert d == -math.inf  # outside the top 20
    assert response.text == "A"


def status_handler(status: int, headers: dict[str, str] | None = None, message: str = "nope") -> Handler:
    def handler(request: Any) -> Any:
        return httpx.Response(status, headers=headers or {}, json={"error": {"message": message}})

    return handler


def test_rate_limit_is_transient_with_retry_after_and_sdk_retries_are_off(
    keyed: ModelConfig, transport: str
) -> None:
    seen: list[Any] = []
    model = fake_server_model(keyed, status_handler(429, {"retry-after": "3"}), seen, transport)
    with pytest.raises(TransientModelError) as info:
        run(model, Request((Message("user", "q"),)))
    assert info.value.retry_after == 3.0
    assert len(seen) == 1


@pytest.mark.parametrize(("status", "kind"), [(500, TransientModelError), (503, TransientModelError)])
def test_server_errors_are_transient(
    keyed: ModelConfig, status: int, kind: type[Exception], transport: str
) -> None:
    with pytest.raises(kind):
        run(
            fake_server_model(keyed, status_handler(status), transport=transport),
            Request((Message("user", "q"),)),
        )


def test_client_errors_are_final_and_never_show_the_key(keyed: ModelConfig, transport: str) -> None:
    model = fake_server_model(
        keyed, status_handler(401, message=f"Incorrect API key provided: {KEY}"), transport=transport
    )
    with pytest.raises(ModelError) as info:
        run(model, Request((Message("user", "q"),)))
    assert "401" in str(info.value) and KEY not in str(info.value)
    assert info.value.__cause__ is None  # the SDK error (with request headers) is not chained
    assert KEY not in repr(model) and KEY not in json.dumps(dict(model.identity))


def test_connection_errors_and_malformed_replies_are_transient(keyed: ModelConfig, transport: str) -> None:
    def refuse(request: Any) -> Any:
        raise httpx.ConnectError("refused", request=request)

    def garbage(request: Any) -> Any:
        return httpx.Response(200, content=b"{not json", headers={"content-type": "application/json"})

    def empty(request: Any) -> Any:
        return httpx.Response(200, json={**completion("x"), "choices": []})

    for handler in (refuse, garbage, empty):
        with pytest.raises(TransientModelError):
            run(fake_server_model(keyed, handler, transport=transport), Request((Message("user", "q"),)))


def test_keys_and_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError, match="NO_SUCH_KEY"):
        OpenAICompatModel("m", ModelConfig(api_key_env="NO_SUCH_KEY"))
    seen: list[Any] = []
    local = fake_server_model(
        ModelConfig(base_url="http://local:8000/v1", api_key_env="NO_SUCH_KEY"), seen=seen
    )
    run(local, Request((Message("user", "q"),)))
    assert seen[0].headers["authorization"] == "Bearer EMPTY"
    assert dict(local.identity) == {"backend": "openai", "model": "m", "base_url": "http://local:8000/v1"}


def test_unreadable_image_names_the_file(keyed: ModelConfig, tmp_path: Path, transport: str) -> None:
    missing = tmp_path / "gone.jpg"
    with pytest.raises(ConfigError, match=r"gone\.jpg"):
        run(
            fake_server_model(keyed, transport=transport),
            Request((Message("user", "q", images=(str(missing),)),)),
        )


# --- transport choice ------------------------------------------------------------------------


def test_transport_choice(monkeypatch: pytest.MonkeyPatch, keyed: ModelConfig) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert OpenAICompatModel("m", keyed).transport == "raw"  # a local server: lean client
    assert OpenAICompatModel("m", keyed.model_copy(update={"base_url": None})).transport == "sdk"
    sdk = keyed.model_copy(update={"extra": {"transport": "sdk"}})
    assert OpenAICompatModel("m", sdk).transport == "sdk"
    client = httpx.AsyncClient(transport=httpx.MockTransport(default_handler))
    assert OpenAICompatModel("m", keyed, http_client=client).transport == "sdk"
    with pytest.raises(ConfigError, match=r"extra\.transport"):
        OpenAICompatModel("m", keyed.model_copy(update={"extra": {"transport": "fast"}}))
    with pytest.raises(ConfigError, match=r"extra\.transport"):
        OpenAICompatModel("m", keyed.model_copy(update={"extra": {"transport": "raw"}}), http_client=client)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert OpenAICompatModel("m", keyed).transport == "sdk"  # only the SDK honours proxies


# --- the raw transport against a byte-level server -----------------------------------------

Reply = Callable[[int, int], bytes | None]  # (connection index, request index on it) -> bytes, None: hang up


def _reply(body: bytes, *, status: str = "200 OK", extra: str = "", length: bool = True) -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{extra}"
    if length:
        head += f"Content-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


OK_BODY = json.dumps(completion("ok")).encode()


async def _with_server(reply: Reply, body: Callable[[OpenAICompatModel], Any]) -> tuple[Any, list[int]]:
    """Run ``body(model)`` against a server scripted byte by byte; also returns requests per connection."""
    per_conn: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = len(per_conn)
        per_conn.append(0)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                await reader.readexactly(length)
                data = reply(conn, per_conn[conn])
                per_conn[conn] += 1
                if data is None:
                    break
                writer.write(data)
                await writer.drain()
                if data.startswith(b"HTTP/1.0"):
                    break  # an HTTP/1.0 reply without a length ends when the connection does
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    config = ModelConfig(base_url=f"http://127.0.0.1:{port}/v1", api_key_env="NO_SUCH_KEY_X")
    model = OpenAICompatModel("m", config.model_copy(update={"extra": {"transport": "raw"}}))
    try:
        return await body(model), per_conn
    finally:
        await model.aclose()
        server.close()


async def _ask(model: OpenAICompatModel) -> Response:
    return await model.complete(Request((Message("user", "q"),)))


def test_raw_reuses_keep_alive_connections() -> None:
    async def five(model: OpenAICompatModel) -> list[str]:
        return [(await _ask(model)).text for _ in range(5)]

    texts, per_conn = asyncio.run(_with_server(lambda c, i: _reply(OK_BODY), five))
    assert texts == ["ok"] * 5
    assert per_conn == [5]  # one connection carried every request


def test_raw_reads_chunked_close_delimited_and_gzip_bodies() -> None:
    half = len(OK_BODY) // 2
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + f"{half:x};ext=1\r\n".encode()
        + OK_BODY[:half]
        + f"\r\n{len(OK_BODY) - half:X}\r\n".encode()
        + OK_BODY[half:]
        + b"\r\n0\r\n\r\n"
    )
    close_delimited = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + OK_BODY
    gzip = zlib.compressobj(wbits=31)
    gzipped = _reply(gzip.compress(OK_BODY) + gzip.flush(), extra="Content-Encoding: gzip\r\n")
    informational = b"HTTP/1.1 100 Continue\r\n\r\n" + _reply(OK_BODY)
    for data in (chunked, close_delimited, gzipped, informational):

        def script(conn: int, index: int, data: bytes = data) -> bytes:
            return data

        response, _ = asyncio.run(_with_server(script, _ask))
        assert response.text == "ok"
        assert response.usage.prompt_tokens == 7


def test_raw_close_delimited_reply_is_not_reused() -> None:
    close_delimited = b"HTTP/1.0 200 OK\r\n\r\n" + OK_BODY

    async def two(model: OpenAICompatModel) -> list[str]:
        return [(await _ask(model)).text for _ in range(2)]

    texts, per_conn = asyncio.run(_with_server(lambda c, i: close_delimited, two))
    assert texts == ["ok", "ok"] and per_conn == [1, 1]


def test_raw_resends_once_when_a_kept_alive_connection_was_dropped() -> None:
    # The server drops the first connection after its first reply, unannounced, as an idle
    # timeout would; the second request goes out on it, finds it dead, and is sent once more.
    def reply(conn: int, index: int) -> bytes | None:
        return None if (conn, index) == (0, 1) else _reply(OK_BODY)

    async def two(model: OpenAICompatModel) -> list[str]:
        return [(await _ask(model)).text for _ in range(2)]

    texts, per_conn = asyncio.run(_with_server(reply, two))
    assert texts == ["ok", "ok"] and per_conn == [2, 1]


def test_raw_dropped_connection_truncated_and_non_http_replies_are_transient() -> None:
    # An HTTP/1.0 status line makes the test server hang up right after writing.
    truncated = f"HTTP/1.0 200 OK\r\nContent-Length: {len(OK_BODY)}\r\n\r\n".encode() + OK_BODY[:-5]
    scripts: list[tuple[Reply, str]] = [
        (lambda c, i: None, "closed before the reply"),  # hang up on a fresh connection
        (lambda c, i: truncated, "closed before the reply"),
        (lambda c, i: b"SPDY/3 200 OK\r\n\r\n", "HTTP/1.x"),
        (lambda c, i: _reply(b"x" * 10, extra="Content-Encoding: gzip\r\n"), "gzip"),
    ]
    for script, message in scripts:
        with pytest.raises(TransientModelError, match=message):
            asyncio.run(_with_server(script, _ask))


def test_raw_cancelled_request_never_leaks_its_reply_into_the_next() -> None:
    def reply(conn: int, index: int) -> bytes | None:
        if conn == 0:
            return b""  # the first request gets nothing back: it times out on the client
        return _reply(OK_BODY)

    async def timeout_then_ask(model: OpenAICompatModel) -> str:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(_ask(model), 0.2)
        return (await _ask(model)).text

    text, per_conn = asyncio.run(_with_server(reply, timeout_then_ask))
    assert text == "ok"
    assert per_conn[0] == 1 and sum(per_conn[1:]) == 1  # the aborted connection was not reused
