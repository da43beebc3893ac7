"""The openai backend's wire: aiohttp against byte-level loopback servers, key policy, transport choice."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from recworld.errors import ConfigError, ModelError
from recworld.models import Message, ModelConfig, Request, Response, TransientModelError
from recworld.models.base import ConnectionFailedError, FatalModelError
from recworld.models.openai_compat import OpenAICompatModel
from recworld.testing.fake_server import refused_url

try:  # the openai SDK ships on httpx2 in recent releases, httpx before
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

KEY = "sk-transport-key-0123456789"
OK_BODY = json.dumps(
    {"choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": {"prompt_tokens": 7}}
).encode()

Reply = Callable[[int, int], bytes | None]  # (connection index, request index on it) -> bytes; None: hang up


def _reply(body: bytes, *, status: str = "200 OK", extra: str = "") -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}"
    return head.encode() + b"\r\n" + body


async def _with_server(
    reply: Reply, body: Callable[[OpenAICompatModel], Any], **options: Any
) -> tuple[Any, list[int], list[bytes]]:
    """Run ``body(model)`` against a scripted server; also returns requests per connection and heads."""
    per_conn: list[int] = []
    heads: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = len(per_conn)
        per_conn.append(0)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                heads.append(head)
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
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    config = ModelConfig(
        base_url=f"http://127.0.0.1:{port}/v1",
        api_key_env="TRANSPORT_KEY",
        options={"transport": "aiohttp", **options},
    )
    model = OpenAICompatModel("m", config)
    try:
        return await body(model), per_conn, heads
    finally:
        await model.aclose()
        server.close()


async def _ask(model: OpenAICompatModel) -> Response:
    return await model.complete(Request((Message("user", "q"),)))


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRANSPORT_KEY", KEY)
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def test_keep_alive_connections_are_reused_and_the_key_goes_to_loopback() -> None:
    async def five(model: OpenAICompatModel) -> list[str]:
        return [(await _ask(model)).text for _ in range(5)]

    texts, per_conn, heads = asyncio.run(_with_server(lambda c, i: _reply(OK_BODY), five))
    assert texts == ["ok"] * 5
    assert per_conn == [5]  # one connection carried every request
    assert f"authorization: bearer {KEY}".encode() in heads[0].lower()
    assert heads[0].startswith(b"POST /v1/chat/completions HTTP/1.1")


def test_chunked_reply_over_the_cap_is_refused_before_it_is_read_whole() -> None:
    chunk = b"x" * 1500
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"".join(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" for _ in range(4))
        + b"0\r\n\r\n"
    )
    with pytest.raises(ModelError, match="larger than 2048 bytes"):
        asyncio.run(_with_server(lambda c, i: chunked, _ask, max_response_bytes=2048))


def test_redirects_are_not_followed() -> None:
    moved = _reply(b"", status="307 Temporary Redirect", extra="Location: http://elsewhere.example/\r\n")
    with pytest.raises(ModelError, match="HTTP 307"):
        asyncio.run(_with_server(lambda c, i: moved, _ask))


def test_dropped_connection_is_transient_not_a_connect_failure() -> None:
    with pytest.raises(TransientModelError) as info:
        asyncio.run(_with_server(lambda c, i: None, _ask))
    assert not isinstance(info.value, ConnectionFailedError)


def test_cancelled_request_never_leaks_its_reply_into_the_next() -> None:
    def reply(conn: int, index: int) -> bytes | None:
        return b"" if conn == 0 else _reply(OK_BODY)  # the first request gets nothing back

    async def timeout_then_ask(model: OpenAICompatModel) -> str:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(_ask(model), 0.2)
        return (await _ask(model)).text

    text, per_conn, _ = asyncio.run(_with_server(reply, timeout_then_ask))
    assert text == "ok"
    assert per_conn[0] == 1 and sum(per_conn[1:]) == 1  # the aborted connection was not reused


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
def test_refused_connection_is_a_connection_failure_naming_the_base_url(transport: str) -> None:
    url = refused_url()
    model = OpenAICompatModel("m", ModelConfig(base_url=url, options={"transport": transport}))
    with pytest.raises(ConnectionFailedError) as info:
        asyncio.run(_ask(model))
    assert url in str(info.value) and "\n" not in str(info.value)


def test_unknown_host_is_a_connection_failure() -> None:
    config = ModelConfig(base_url="http://no-such-host.invalid/v1", options={"transport": "aiohttp"})
    with pytest.raises(ConnectionFailedError):
        asyncio.run(asyncio.wait_for(_ask(OpenAICompatModel("m", config)), 20))


# --- keys -----------------------------------------------------------------------------------------


def _sdk_model(config: ModelConfig, seen: list[Any], status: int = 200) -> OpenAICompatModel:
    def record(request: Any) -> Any:
        seen.append(request)
        if status != 200:
            return httpx.Response(status, json={"error": {"message": "no"}})
        return httpx.Response(200, content=OK_BODY)

    client = httpx.AsyncClient(transport=httpx.MockTransport(record))
    return OpenAICompatModel("m", config, http_client=client)


@pytest.mark.parametrize(
    ("base_url", "insecure", "sent"),
    [
        ("https://api.example.com/v1", False, True),
        ("http://localhost:8000/v1", False, True),
        ("http://[::1]:8000/v1", False, True),
        ("http://10.0.0.5:8000/v1", False, False),
        ("http://gpu-box.lan:8000/v1", False, False),
        ("http://gpu-box.lan:8000/v1", True, True),
    ],
)
def test_key_goes_over_plain_http_only_to_loopback_unless_allowed(
    base_url: str, insecure: bool, sent: bool
) -> None:
    seen: list[Any] = []
    config = ModelConfig(base_url=base_url, api_key_env="TRANSPORT_KEY", allow_insecure_http=insecure)
    asyncio.run(_ask(_sdk_model(config, seen)))
    assert seen[0].headers["authorization"] == (f"Bearer {KEY}" if sent else "Bearer EMPTY")


def test_a_withheld_key_is_named_when_the_server_answers_401() -> None:
    seen: list[Any] = []
    config = ModelConfig(base_url="http://gpu-box.lan:8000/v1", api_key_env="TRANSPORT_KEY")
    with pytest.raises(FatalModelError, match="allow-insecure-http") as info:
        asyncio.run(_ask(_sdk_model(config, seen, status=401)))
    assert KEY not in str(info.value)


def test_each_model_reads_its_own_key_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTHER_KEY", "sk-other")
    seen: list[Any] = []
    config = ModelConfig(base_url="https://a.example/v1", api_key_env="OTHER_KEY")
    asyncio.run(_ask(_sdk_model(config, seen)))
    assert seen[0].headers["authorization"] == "Bearer sk-other"
    assert "sk-other" not in repr(config)  # the key is never stored in the config


def test_a_base_url_that_is_not_http_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not an http"):
        OpenAICompatModel("m", ModelConfig(base_url="file:///etc/passwd"))


# --- options and transport choice -----------------------------------------------------------------


def test_transport_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    local = ModelConfig(base_url="http://127.0.0.1:9/v1")
    assert OpenAICompatModel("m", local).transport == "aiohttp"
    assert OpenAICompatModel("m", ModelConfig(api_key_env="TRANSPORT_KEY")).transport == "sdk"
    sdk = local.model_copy(update={"options": {"transport": "sdk"}})
    assert OpenAICompatModel("m", sdk).transport == "sdk"
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    assert OpenAICompatModel("m", local, http_client=client).transport == "sdk"
    forced = local.model_copy(update={"options": {"transport": "aiohttp"}})
    with pytest.raises(ConfigError, match="transport"):
        OpenAICompatModel("m", forced, http_client=client)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy:3128")
    assert OpenAICompatModel("m", local).transport == "aiohttp"  # loopback is never proxied
    remote = ModelConfig(base_url="https://models.example/v1")
    assert OpenAICompatModel("m", remote).transport == "sdk"  # the sdk transport carries the proxy
    monkeypatch.setenv("NO_PROXY", "models.example")
    assert OpenAICompatModel("m", remote).transport == "aiohttp"


def test_option_typos_and_bad_values_name_the_option_and_backend() -> None:
    with pytest.raises(ConfigError, match=r"openai backend has no option 'transprot'.*transport"):
        OpenAICompatModel("m", ModelConfig(base_url="http://127.0.0.1:9/v1", options={"transprot": "sdk"}))
    with pytest.raises(ConfigError, match=r"openai backend's option 'transport'"):
        OpenAICompatModel("m", ModelConfig(base_url="http://127.0.0.1:9/v1", options={"transport": "raw"}))
