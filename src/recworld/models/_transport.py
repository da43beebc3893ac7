"""How ``openai:`` requests travel: aiohttp for a server we talk to directly, the openai SDK otherwise.

Both transports POST the same JSON body and hand back ``(status, headers,
body)``; a failure to talk HTTP at all is raised here already classified:
:class:`ConnectionFailedError` when no connection could be opened (refused,
DNS, TLS), :class:`TransientModelError` for a dropped connection or a timeout.
What an HTTP status means is decided once, by the caller.

Why aiohttp and not httpx for the lean path: against a no-op local server at
concurrency 64 on the 2-core dev box, a bare ``httpx.AsyncClient`` cost about
9 ms per request (its pool scans every connection on each request) and
aiohttp about 0.3 to 0.6 ms (``docs/models.md`` has the figures). lm-eval uses
aiohttp for the same reason.

Reply bodies are bounded: a body over ``max_response_bytes`` is refused with a
:class:`ModelError` before it is held in memory whole (aiohttp path), or as soon
as it is read (SDK path, which reads whole bodies itself). Redirects are never
followed, so the API key cannot travel to another address.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from recworld.errors import ModelError
from recworld.models.base import ConnectionFailedError, TransientModelError

READ_CHUNK = 1 << 16


class HTTPReply(NamedTuple):
    status: int
    headers: Mapping[str, str]  # case-insensitive on both transports
    body: bytes


def _too_large(size: int, cap: int) -> ModelError:
    return ModelError(f"the server's reply is larger than {cap} bytes ({size}); refused")


class AiohttpTransport:
    """POSTs JSON to paths under one base URL over a pooled keep-alive aiohttp session.

    A session belongs to one event loop; a call from another loop (a second
    ``asyncio.run``) opens a fresh one.
    """

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        *,
        max_connections: int,
        max_response_bytes: int,
        connect_timeout_s: float,
    ) -> None:
        import aiohttp  # imported here: only this transport needs it

        self._aiohttp = aiohttp
        self._base = base_url.rstrip("/")
        self._headers = {
            "Accept": "application/json",
            "Accept-Encoding": "identity",
            "Content-Type": "application/json",
            **headers,
        }
        self._limit = max_connections
        self._cap = max_response_bytes
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout_s)
        self._session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _session_here(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop:
            self._drop_session()
            aiohttp = self._aiohttp
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._limit, ttl_dns_cache=300),
                headers=self._headers,
                timeout=self._timeout,
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
                skip_auto_headers=("User-Agent",),
            )
            self._loop = loop
        return self._session

    def _drop_session(self) -> None:
        """Forget a session of an earlier event loop without awaiting on that (closed) loop."""
        session, self._session = self._session, None
        if session is None or session.closed:
            return
        connector = session.connector
        session.detach()
        if connector is not None:
            pending = connector.close()
            close = getattr(pending, "close", None)
            if asyncio.iscoroutine(pending) and close is not None:
                close()

    async def post(self, path: str, args: dict[str, Any]) -> HTTPReply:
        aiohttp = self._aiohttp
        session = self._session_here()
        body = json.dumps(args, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        try:
            async with session.post(self._base + path, data=body, allow_redirects=False) as response:
                data = await self._read(response)
                return HTTPReply(response.status, response.headers, data)
        except aiohttp.ClientConnectorError as exc:
            raise ConnectionFailedError(f"cannot connect: {_reason(exc)}") from None
        except aiohttp.ClientError as exc:
            raise TransientModelError(f"connection error: {type(exc).__name__}: {_reason(exc)}") from None

    async def _read(self, response: Any) -> bytes:
        length = response.content_length
        if length is not None and length > self._cap:
            raise _too_large(length, self._cap)
        if length is not None:
            data = bytes(await response.read())
        else:
            buffer = bytearray()
            async for chunk in response.content.iter_chunked(READ_CHUNK):
                buffer += chunk
                if len(buffer) > self._cap:
                    raise _too_large(len(buffer), self._cap)
            data = bytes(buffer)
        if len(data) > self._cap:  # a server that compressed anyway
            raise _too_large(len(data), self._cap)
        return data

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            if self._loop is asyncio.get_running_loop():
                await session.close()
            else:
                self._session = session
                self._drop_session()


class SDKTransport:
    """The openai SDK's client (its httpx pool, proxies, headers), with its retries off."""

    def __init__(self, base_url: str, key: str, *, http_client: Any, max_response_bytes: int) -> None:
        import openai

        self._client = openai.AsyncOpenAI(
            api_key=key, base_url=base_url, max_retries=0, http_client=http_client
        )
        self._cap = max_response_bytes

    async def post(self, path: str, args: dict[str, Any]) -> HTTPReply:
        import openai

        try:
            # The HTTP response type skips the SDK's request transform and pydantic reply model.
            response = await self._client.post(path, body=args, cast_to=_sdk_response_type())
        except openai.APIStatusError as exc:
            return HTTPReply(exc.status_code, exc.response.headers, self._bounded(exc.response.content))
        except openai.APITimeoutError:
            raise TransientModelError("the request timed out") from None
        except openai.APIConnectionError as exc:
            if _connect_failure(exc):
                raise ConnectionFailedError(f"cannot connect: {_reason(exc.__cause__ or exc)}") from None
            raise TransientModelError(f"connection error: {_reason(exc.__cause__ or exc)}") from None
        return HTTPReply(response.status_code, response.headers, self._bounded(response.content))

    def _bounded(self, body: bytes) -> bytes:
        if len(body) > self._cap:
            raise _too_large(len(body), self._cap)
        return bytes(body)

    async def aclose(self) -> None:
        await self._client.close()


def _connect_failure(exc: BaseException) -> bool:
    """True when the SDK's connection error began as a failure to connect (not a dropped reply)."""
    cause = exc.__cause__
    while cause is not None:
        if type(cause).__name__ == "ConnectError" or isinstance(cause, ConnectionRefusedError):
            return True
        cause = cause.__cause__
    return False


def _reason(exc: BaseException) -> str:
    """One line saying why a connection failed, without request details."""
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__


def _sdk_response_type() -> Any:
    """The HTTP response class the SDK is built on (httpx2 in recent releases, httpx before)."""
    try:
        import httpx2

        return httpx2.Response
    except ImportError:  # pragma: no cover - older SDKs
        import httpx

        return httpx.Response
