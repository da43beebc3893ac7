"""A lean HTTP/1.1 keep-alive client for posting JSON to one OpenAI-compatible server.

Why it exists: against a fast local server (vLLM, llama.cpp server, SGLang) the
openai SDK's own work dominates. Its httpx connection pool scans and polls
every pooled socket on each request, and it builds, validates and parses
pydantic objects around every call; that is 5 to 10 ms of CPU per request on
a small machine. This client does only what a chat-completions POST needs:

* one host, fixed headers, ``Content-Length`` request bodies;
* replies framed by ``Content-Length``, ``Transfer-Encoding: chunked`` or the
  connection closing (HTTP/1.0 servers); ``gzip``/``deflate`` bodies are
  decoded, though ``Accept-Encoding: identity`` is asked for;
* idle keep-alive connections are reused; a request whose reused connection
  turns out dead before any reply byte arrives is sent once more on a fresh
  connection (the server never saw it answered, the usual keep-alive race);
* no redirects, cookies or proxies (``openai_compat`` uses the SDK transport
  when a proxy is configured).

Cancellation (the runner's per-attempt timeout) aborts the connection, so a
late reply can never be read by the next request.
"""

from __future__ import annotations

import asyncio
import ssl
import zlib
from collections.abc import Mapping
from typing import NamedTuple
from urllib.parse import urlsplit

MAX_IDLE = 512


class HTTPTransportError(Exception):
    """The connection failed or the server sent something that is not HTTP/1.x."""


class HTTPReply(NamedTuple):  # a tuple: built once per request, so cheap beats a frozen dataclass
    status: int
    headers: Mapping[str, str]  # names lower-cased; a repeated header keeps its last value
    body: bytes


class _Connection(asyncio.Protocol):
    """One TCP connection; parses one reply at a time as bytes arrive."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.received_any = False
        self._buffer = bytearray()
        self._waiter: asyncio.Future[HTTPReply] | None = None
        self._head: tuple[int, dict[str, str], bool] | None = None  # status, headers, keep-alive
        self._framing = ""  # "length", "chunked" or "close"
        self._length = 0
        self.reusable = False

    # --- asyncio.Protocol ---

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.received_any = True
        self._buffer += data
        if self._waiter is None or self._waiter.done():
            self.reusable = False  # bytes nobody asked for: this connection is out of step
            return
        try:
            self._parse()
        except HTTPTransportError as exc:
            self._fail(exc)

    def eof_received(self) -> bool | None:
        self._finish_on_close()
        return None  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._finish_on_close(exc)

    # --- request/reply ---

    def send(self, data: bytes, waiter: asyncio.Future[HTTPReply]) -> None:
        assert self.transport is not None
        self._waiter = waiter
        self._buffer.clear()
        self._head = None
        self.received_any = False
        self.reusable = False
        self.transport.write(data)

    def _finish_on_close(self, exc: Exception | None = None) -> None:
        self.closed = True
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._head is not None and self._framing == "close":
            status, headers, _ = self._head
            try:
                self._complete(status, headers, bytes(self._buffer))
            except HTTPTransportError as bad:
                self._fail(bad)
            return
        why = f": {exc}" if exc else ""
        self._fail(HTTPTransportError(f"connection closed before the reply was complete{why}"))

    def _fail(self, exc: Exception) -> None:
        self.closed = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(exc)
        if self.transport is not None:
            self.transport.abort()

    def _complete(self, status: int, headers: dict[str, str], body: bytes) -> None:
        encoding = headers.get("content-encoding", "").strip().lower()
        if encoding in ("gzip", "deflate"):
            try:
                body = zlib.decompress(body, 47)  # 47: accept a zlib or a gzip header
            except zlib.error as exc:
                raise HTTPTransportError(f"bad {encoding} body: {exc}") from None
        assert self._waiter is not None
        self._waiter.set_result(HTTPReply(status, headers, body))

    def _parse(self) -> None:
        buf = self._buffer
        while self._head is None:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > 65536:
                    raise HTTPTransportError("reply headers longer than 64 KiB")
                return
            lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
            del buf[: end + 4]
            parts = lines[0].split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
                raise HTTPTransportError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
            status = int(parts[1])
            headers: dict[str, str] = {}
            for line in lines[1:]:
                name, sep, value = line.partition(":")
                if sep:
                    headers[name.strip().lower()] = value.strip()
            if 100 <= status < 200:  # informational (100 Continue): the real reply follows
                continue
            connection = headers.get("connection", "").lower()
            keep_alive = "close" not in connection and (parts[0] != "HTTP/1.0" or "keep-alive" in connection)
            if "chunked" in headers.get("transfer-encoding", "").lower():
                self._framing = "chunked"
            elif "content-length" in headers:
                try:
                    self._length = int(headers["content-length"])
                except ValueError:
                    raise HTTPTransportError("bad Content-Length") from None
                self._framing = "length"
            else:
                self._framing = "close"
                keep_alive = False
            self._head = (status, headers, keep_alive)
        status, headers, keep_alive = self._head
        if self._framing == "length":
            if len(buf) < self._length:
                return
            body = bytes(buf[: self._length])
            del buf[: self._length]
        elif self._framing == "chunked":
            decoded = _dechunk(buf)
            if decoded is None:
                return
            body = decoded
        else:
            return  # read until the server closes
        self.reusable = keep_alive and not buf
        self._complete(status, headers, body)


def _dechunk(buf: bytearray) -> bytes | None:
    """The body of a complete chunked message in ``buf`` (consumed), or None if more is needed."""
    out = bytearray()
    pos = 0
    while True:
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            return None
        size_text = bytes(buf[pos:eol]).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise HTTPTransportError(f"bad chunk size {size_text[:20]!r}") from None
        pos = eol + 2
        if size == 0:
            end = buf.find(b"\r\n\r\n", pos - 2)  # trailers (usually none) end with a blank line
            if end < 0:
                return None
            del buf[: end + 4]
            return bytes(out)
        if len(buf) < pos + size + 2:
            return None
        out += buf[pos : pos + size]
        pos += size + 2


class LeanHTTPClient:
    """POSTs bodies to paths under ``base_url`` over pooled keep-alive connections."""

    def __init__(self, base_url: str, headers: Mapping[str, str], *, max_connections: int = 256) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._ssl: ssl.SSLContext | None = ssl.create_default_context() if parts.scheme == "https" else None
        self._prefix = parts.path.rstrip("/")
        default_port = self._port == (443 if parts.scheme == "https" else 80)
        host = parts.hostname if default_port else f"{parts.hostname}:{self._port}"
        if ":" in parts.hostname and not host.startswith("["):  # IPv6 literal
            host = f"[{parts.hostname}]" if default_port else f"[{parts.hostname}]:{self._port}"
        fixed = {
            "Host": host,
            "Accept": "application/json",
            "Accept-Encoding": "identity",
            "Content-Type": "application/json",
            "Connection": "keep-alive",
            **dict(headers),
        }
        self._header_bytes = "".join(f"{k}: {v}\r\n" for k, v in fixed.items()).encode("latin-1")
        self._max_connections = max_connections
        self._idle: list[_Connection] = []
        self._gate = asyncio.Semaphore(max_connections)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    async def post(self, path: str, body: bytes) -> HTTPReply:
        head = b"POST " + (self._prefix + path).encode("ascii") + b" HTTP/1.1\r\n" + self._header_bytes
        data = head + b"Content-Length: " + str(len(body)).encode("ascii") + b"\r\n\r\n" + body
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # connections and the gate belong to one event loop
            self._loop, self._idle = loop, []
            self._gate = asyncio.Semaphore(self._max_connections)
        async with self._gate:
            conn = self._take_idle()
            if conn is not None:
                try:
                    return await self._exchange(conn, data)
                except HTTPTransportError:
                    if conn.received_any:
                        raise
                    # A kept-alive connection the server had already dropped: send once more.
            return await self._exchange(await self._connect(), data)

    def _take_idle(self) -> _Connection | None:
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                return conn
        return None

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, conn = await loop.create_connection(_Connection, self._host, self._port, ssl=self._ssl)
        except (OSError, ssl.SSLError) as exc:
            raise HTTPTransportError(f"cannot connect to {self._host}:{self._port}: {exc}") from None
        return conn

    async def _exchange(self, conn: _Connection, data: bytes) -> HTTPReply:
        waiter: asyncio.Future[HTTPReply] = asyncio.get_running_loop().create_future()
        done = False
        try:
            conn.send(data, waiter)
            reply = await waiter
            done = True
        finally:
            if not done and conn.transport is not None:
                conn.transport.abort()  # cancelled or failed: a late reply must never be read
        if conn.reusable and not conn.closed and not self._closed and len(self._idle) < MAX_IDLE:
            self._idle.append(conn)
        elif conn.transport is not None:
            conn.transport.close()
        return reply

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            if conn.transport is not None:
                conn.transport.close()
