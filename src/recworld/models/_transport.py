"""How ``openai:`` requests travel: aiohttp for a server we talk to directly, httpx through a proxy.

Both transports POST the same JSON body and hand back ``(status, headers,
body)``; a failure to talk HTTP at all is raised here already classified:
:class:`ConnectionFailedError` when no connection could be opened (refused,
DNS, TLS), :class:`TransientModelError` for a dropped connection or a timeout.
What an HTTP status means is decided once, by the caller.

Why aiohttp and not httpx for the lean path: against a no-op local server at
concurrency 64 on the 2-core dev box, a bare ``httpx.AsyncClient`` cost about
9 ms per request (its pool scans every connection on each request) and
aiohttp about 0.3 to 0.6 ms (``docs/models.md`` has the figures). lm-eval uses
aiohttp for the same reason. The ``sdk`` transport is the openai SDK's httpx
client (or a caller's ``http_client``), used directly: the SDK itself reads
and inflates a whole body before anyone can count it.

Reply bodies are bounded while they stream: neither client decompresses
(``Accept-Encoding: identity`` is asked for, and a server that compresses anyway
is inflated here, chunk by chunk, with the output counted), so a body over
``max_response_bytes`` after decompression is refused with a :class:`ModelError`
before more than that is held. A gzip bomb costs at most the cap. Redirects are
never followed, so the API key cannot travel to another address. Error texts
pass the caller's ``redact`` before they are cut to length.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, NamedTuple

from recworld.chat import clean_text
from recworld.errors import ModelError
from recworld.models.base import ConnectionFailedError, TransientModelError

READ_CHUNK = 1 << 16
REASON_CHARS = 300
Redact = Callable[[str], str]


class HTTPReply(NamedTuple):
    status: int
    headers: Mapping[str, str]  # case-insensitive on both transports
    body: bytes


def _too_large(cap: int, size: int | None = None) -> ModelError:
    seen = f" ({size})" if size is not None else " once decompressed"
    return ModelError(f"the server's reply is larger than {cap} bytes{seen}; refused")


class Inflater:
    """A body as it arrives, decoded per ``Content-Encoding``, refused past ``cap`` decoded bytes.

    ``identity`` (or none), ``gzip`` and ``deflate`` are read; any other or a
    stacked encoding is a :class:`ModelError`, and so is a corrupt stream.
    Output is produced at most ``cap + 1`` bytes at a time, so memory never
    holds more than the cap plus one network chunk.
    """

    def __init__(self, encoding: str | None, cap: int) -> None:
        name = (encoding or "identity").strip().lower()
        if name not in ("identity", "gzip", "x-gzip", "deflate"):
            raise ModelError(f"the server's reply uses Content-Encoding {name!r}, which is not read; refused")
        self._name = name
        self._cap = cap
        self._buffer = bytearray()
        self._decoder: Any = None
        self._pending = b""

    def _new_decoder(self, first: bytes) -> Any:
        if self._name == "deflate" and not _zlib_header(first):
            return zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send
        return zlib.decompressobj(zlib.MAX_WBITS | (16 if self._name != "deflate" else 0))

    def _add(self, data: bytes) -> None:
        self._buffer += data
        if len(self._buffer) > self._cap:
            raise _too_large(self._cap, len(self._buffer) if self._name == "identity" else None)

    def feed(self, chunk: bytes) -> None:
        """Decode one chunk; output is asked for at most one byte past the cap, so a bomb stops there."""
        if self._name == "identity":
            self._add(chunk)
            return
        data = self._pending + chunk
        self._pending = b""
        try:
            while data:
                if self._decoder is None:
                    if self._name == "deflate" and len(data) < 2:  # zlib or raw: its first two bytes say
                        self._pending = data
                        return
                    self._decoder = self._new_decoder(data)
                self._add(self._decoder.decompress(data, self._cap + 1 - len(self._buffer)))
                if self._decoder.eof:  # what follows is the next gzip member (or junk, which fails)
                    data, self._decoder = self._decoder.unused_data, None
                else:
                    data = self._decoder.unconsumed_tail
        except zlib.error as exc:
            raise ModelError(f"the server's {self._name} reply is corrupt ({exc})") from None

    def finish(self) -> bytes:
        """The whole decoded body (a stream cut short gives what it held)."""
        if self._pending:
            raise ModelError(f"the server's {self._name} reply is corrupt (truncated)")
        if self._decoder is not None:
            try:
                self._add(self._decoder.flush(self._cap + 1 - len(self._buffer)))
            except zlib.error as exc:
                raise ModelError(f"the server's {self._name} reply is corrupt ({exc})") from None
        return bytes(self._buffer)


def _zlib_header(data: bytes) -> bool:
    return len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0


async def read_bounded(
    chunks: AsyncIterator[bytes], encoding: str | None, length: int | None, cap: int
) -> bytes:
    """Every chunk of a body, decoded, refused as soon as it passes ``cap`` (or its raw length does)."""
    if length is not None and length > cap:
        raise _too_large(cap, length)
    inflater = Inflater(encoding, cap)
    async for chunk in chunks:
        inflater.feed(chunk)
    return inflater.finish()


def request_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {
        "Accept": "application/json",
        "Accept-Encoding": "identity",
        "Content-Type": "application/json",
        **headers,
    }


def _body(args: dict[str, Any]) -> bytes:
    """The request as UTF-8 JSON; a lone surrogate in a prompt (a crafted suite) is sent as U+FFFD."""
    return clean_text(json.dumps(args, ensure_ascii=False, separators=(",", ":"))).encode("utf-8")


class AiohttpTransport:
    """POSTs JSON to paths under one base URL over a pooled keep-alive aiohttp session.

    A session belongs to one event loop; a call from another loop (a second
    ``asyncio.run``) opens a fresh one. It never reads proxy variables: it is
    only chosen for a base URL no proxy applies to.
    """

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        *,
        max_connections: int,
        max_response_bytes: int,
        connect_timeout_s: float,
        redact: Redact = str,
    ) -> None:
        import aiohttp  # imported here: only this transport needs it

        self._aiohttp = aiohttp
        self._base = base_url.rstrip("/")
        self._headers = request_headers(headers)
        self._limit = max_connections
        self._cap = max_response_bytes
        self._redact = redact
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
                auto_decompress=False,  # inflated here, counted as it goes
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
        return await self._send("POST", path, _body(args))

    async def get(self, path: str) -> HTTPReply:
        """``GET`` a path under the base URL (``/models``), bounded and classified like a POST."""
        return await self._send("GET", path, None)

    async def _send(self, method: str, path: str, body: bytes | None) -> HTTPReply:
        aiohttp = self._aiohttp
        session = self._session_here()
        try:
            async with session.request(
                method, self._base + path, data=body, allow_redirects=False
            ) as response:
                chunks = response.content.iter_chunked(READ_CHUNK)
                encoding = response.headers.get("Content-Encoding")
                data = await read_bounded(chunks, encoding, response.content_length, self._cap)
                return HTTPReply(response.status, response.headers, data)
        except aiohttp.ClientConnectorError as exc:
            raise ConnectionFailedError(f"cannot connect: {_reason(exc, self._redact)}") from None
        except (aiohttp.ClientError, ValueError) as exc:  # ValueError: a malformed header value
            reason = _reason(exc, self._redact)
            raise TransientModelError(f"connection error: {type(exc).__name__}: {reason}") from None

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            if self._loop is asyncio.get_running_loop():
                await session.close()
            else:
                self._session = session
                self._drop_session()


class SDKTransport:
    """The openai SDK's httpx client (its pool; the proxy given, or none), or a caller's ``http_client``.

    The body streams raw (``aiter_raw``: no decoding by httpx) into an
    :class:`Inflater`. A client made here never reads proxy variables itself:
    ``proxy`` is the one :func:`recworld.models._keys.proxy_for` chose.
    """

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        *,
        http_client: Any,
        max_response_bytes: int,
        proxy: str | None = None,
        redact: Redact = str,
    ) -> None:
        self._owned = http_client is None
        if http_client is None:
            import openai

            http_client = openai.DefaultAsyncHttpxClient(proxy=proxy, trust_env=False, follow_redirects=False)
        self._client = http_client
        self._base = base_url.rstrip("/")
        self._headers = request_headers(headers)
        self._cap = max_response_bytes
        self._redact = redact

    async def post(self, path: str, args: dict[str, Any]) -> HTTPReply:
        return await self._send("POST", path, _body(args))

    async def get(self, path: str) -> HTTPReply:
        """``GET`` a path under the base URL (``/models``), bounded and classified like a POST."""
        return await self._send("GET", path, None)

    async def _send(self, method: str, path: str, content: bytes | None) -> HTTPReply:
        request = self._client.stream(
            method, self._base + path, content=content, headers=self._headers, follow_redirects=False
        )
        try:
            async with request as response:
                if response.is_stream_consumed:  # an in-process transport answered with a read Response
                    data = await read_bounded(_once(response.content), None, None, self._cap)
                    return HTTPReply(response.status_code, response.headers, data)
                length = response.headers.get("Content-Length")
                size = int(length) if length and length.isdigit() else None
                encoding = response.headers.get("Content-Encoding")
                data = await read_bounded(response.aiter_raw(READ_CHUNK), encoding, size, self._cap)
                return HTTPReply(response.status_code, response.headers, data)
        except ModelError:
            raise
        except Exception as exc:
            raise _httpx_failure(exc, self._redact) from None

    async def aclose(self) -> None:
        if self._owned:
            await self._client.aclose()


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


def _httpx_failure(exc: Exception, redact: Redact) -> Exception:
    """What an httpx (or httpx2) exception means; anything that is not one is re-raised as a bug."""
    names = {kind.__name__ for kind in type(exc).__mro__}
    if "TimeoutException" in names:
        return TransientModelError("the request timed out")
    if "ConnectError" in names or isinstance(exc, ConnectionRefusedError):
        return ConnectionFailedError(f"cannot connect: {_reason(exc, redact)}")
    if "HTTPError" in names or "InvalidURL" in names or isinstance(exc, OSError | ValueError):
        return TransientModelError(f"connection error: {type(exc).__name__}: {_reason(exc, redact)}")
    raise exc


def _reason(exc: BaseException, redact: Redact) -> str:
    """One line saying why a connection failed, without request details: redacted, then cut."""
    text = clean_text(redact(" ".join(str(exc).split())))
    return text[:REASON_CHARS] or type(exc).__name__
