"""A loopback fake of an OpenAI-compatible server that misbehaves on purpose: the review's modes, rebuilt.

Each server binds 127.0.0.1 on a free port, serves from daemon threads and
writes raw bytes, so a mode can send what no well-behaved framework would: a
gzip bomb, an endless chunked body, a header holding a control byte, a reply
that echoes the bearer token it was sent. Every request is logged as a
:class:`Seen` (never the key itself: only whether it came and whether it equals
the key the test expects), like the review's ``logs/srv-PORT.jsonl``.

Modes (``mode``, ``arg``) as the review named them:

* ``ok``: a valid completion whose content is ``arg`` (default ``"A"``), with
  token logprobs when asked; ``content`` and ``xss`` are the same (X1/X2 pass a
  hostile reply as ``arg``); ``huge_ok``: a valid reply of ``arg`` MiB (E13);
  ``slow_ok``: ``"A"`` after ``arg`` seconds (the K cases' slow server);
* ``lunar``: every LUNAR schema answered by the project's own test responder
  (``helpers.lunar.lunar_responder``; see ``commands.lunar_server``);
* ``echo_key_error``: HTTP 400 whose ``error.message`` is ``arg`` × ``x`` and then
  the token received; ``echo_key_text``: the same as a plain-text body, padded
  with ``arg`` spaces; ``echo_key_200``: HTTP 200 whose reply holds the
  ``Authorization`` value; ``echo_key_header``: HTTP 429 with the token in
  ``Retry-After`` and ``X-Echo``; ``proto_key``: a reply the client's HTTP
  parser refuses while quoting the token (``arg`` picks which: a header line
  without a colon, a bad name, status line, length, chunk size or encoding);
* ``gzip_bomb``: ``Content-Encoding: gzip``, ``arg`` MiB of zeros deflated to
  about a thousandth; ``gzip_bomb_chunked``: the same without ``Content-Length``;
* ``deep_json``: ``arg`` nested ``[``; ``usage_inf``: ``usage.prompt_tokens: 1e400``;
  ``huge_int``: a token count of 5,000 digits; ``wrong_types``: every field the
  wrong type; ``offsets_inf``: echoed logprobs whose offsets are ``1e400``;
* ``invalid_json``, ``error_no_choices``, ``content_null``: E5 to E7;
* ``redirect``: HTTP 307 to ``127.0.0.1:arg``;
* ``infinite_chunked``: chunks until the client hangs up; ``big_cl``: a
  ``Content-Length`` of ``arg`` MiB, then 2 MiB and a close; ``big_nocl``: ``arg``
  MiB with no length; ``slowloris``: headers, then one byte a second;
* ``retry_after``: HTTP 429 with ``Retry-After: arg``;
* ``lone_surrogate``: a valid completion whose content holds the JSON escape
  ``\\ud800`` (review 3, E1/E2); ``lone_surrogate_error``: HTTP 400 whose
  ``error.message`` holds ``\\udfff`` (E3);
* ``raw_body``: the server's ``status`` and ``body`` bytes as they are (set
  them between requests: a generator's replies).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import json
import socket
import socketserver
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

MiB = 1 << 20


@dataclass(frozen=True)
class Seen:
    """One request as the server saw it (the key itself is never kept)."""

    method: str
    path: str
    auth_present: bool
    auth_is_key: bool
    body_sha: str
    headers: dict[str, str]
    images: tuple[bytes, ...] = ()  # every image a data: URL carried, decoded (I1)

    @property
    def secret(self) -> bool:
        """Whether an image it was sent holds the review's ``SECRETMARKER`` (a file that must never leave)."""
        return any(b"SECRETMARKER" in image for image in self.images)


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def token(self) -> str:
        return self.headers.get("authorization", "").removeprefix("Bearer ")

    def json(self) -> dict[str, Any]:
        try:
            data = json.loads(self.body or b"{}")
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}


# What a mode returns: the raw bytes to send, in pieces (a generator may sleep or run on).
Reply = Iterator[bytes]


def completion(content: Any, *, usage: Any = None, logprobs: bool = False) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": "stop",
        "message": {"role": "assistant", "content": content},
    }
    if logprobs:
        top = [{"token": t, "logprob": lp} for t, lp in (("A", -0.1), ("B", -2.0), ("C", -3.0), ("D", -4.0))]
        choice["logprobs"] = {"content": [{**top[0], "top_logprobs": top}]}
    body: dict[str, Any] = {"id": "x", "object": "chat.completion", "model": "fake", "choices": [choice]}
    body["usage"] = usage if usage is not None else {"prompt_tokens": 7, "completion_tokens": 1}
    return body


def response(
    status: int, body: bytes, headers: dict[str, str] | None = None, *, reason: str = "X", length: bool = True
) -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if length:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def json_reply(status: int, data: Any, headers: dict[str, str] | None = None) -> Reply:
    yield response(status, json.dumps(data).encode(), {"Content-Type": "application/json", **(headers or {})})


def raw_json(text: str) -> Reply:
    yield response(200, text.encode(), {"Content-Type": "application/json"})


def raw_json_status(status: int, text: str) -> Reply:
    yield response(status, text.encode(), {"Content-Type": "application/json"})


@cache
def gzip_bomb_bytes(mib: int) -> bytes:
    """``mib`` MiB of zeros, gzip-compressed (about 1 KiB per MiB)."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(MiB)
    parts = [squeeze.compress(zeros) for _ in range(mib)]
    parts.append(squeeze.flush())
    return b"".join(parts)


def _chunked(pieces: Iterator[bytes]) -> Reply:
    for piece in pieces:
        yield f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    yield b"0\r\n\r\n"


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} OK", "Connection: close", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


# Replies an HTTP parser refuses, each quoting the token in the line it refuses (both clients say so).
PROTOCOL_ERRORS = {
    "nocolon": "HTTP/1.1 200 OK\r\n{token}\r\nContent-Length: 2\r\n\r\n{{}}",
    "badname": "HTTP/1.1 200 OK\r\nX {token}: v\r\nContent-Length: 2\r\n\r\n{{}}",
    "badstatus": "HTTP/1.1 2x0 {token}\r\nContent-Length: 2\r\n\r\n{{}}",
    "badcl": "HTTP/1.1 200 OK\r\nContent-Length: {token}\r\n\r\n{{}}",
    "badchunk": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{token}\r\n",
    "badenc": "HTTP/1.1 200 OK\r\nContent-Encoding: {token}\r\nContent-Length: 2\r\n\r\n{{}}",
}


def mode_reply(mode: str, arg: str, request: Request) -> Reply:
    token = request.token
    wants_logprobs = bool(request.json().get("logprobs"))
    if mode in ("ok", "content", "xss"):
        return json_reply(200, completion(arg or "A", logprobs=wants_logprobs))
    if mode == "slow_ok":  # K5-K7: a valid "A" after ``arg`` seconds
        time.sleep(float(arg or 0.15))
        return json_reply(200, completion("A", logprobs=wants_logprobs))
    if mode == "huge_ok":  # E13: a valid reply of ``arg`` MiB, under the cap
        return json_reply(200, completion("A " + "x" * (int(float(arg or 15) * MiB) - 64)))
    if mode == "echo_key_error":
        return json_reply(400, {"error": {"message": "x" * int(arg or 0) + token, "type": "invalid_request"}})
    if mode == "echo_key_text":
        return iter([response(400, (" " * int(arg or 0) + token + " was refused").encode(), {})])
    if mode == "echo_key_200":
        return json_reply(200, completion(f"Authorization: Bearer {token} ... A", logprobs=wants_logprobs))
    if mode == "echo_key_header":
        return json_reply(429, {"error": {"message": "slow down"}}, {"Retry-After": token, "X-Echo": token})
    if mode == "proto_key":
        return iter([PROTOCOL_ERRORS[arg].format(token=token).encode("latin-1")])
    if mode == "gzip_bomb":
        body = gzip_bomb_bytes(int(arg or 1024))
        return iter([response(200, body, {"Content-Type": "application/json", "Content-Encoding": "gzip"})])
    if mode == "gzip_bomb_chunked":
        body = gzip_bomb_bytes(int(arg or 1024))
        head = _head(200, {"Content-Encoding": "gzip", "Transfer-Encoding": "chunked"})
        return iter([head, *_chunked(iter([body[i : i + 65536] for i in range(0, len(body), 65536)]))])
    if mode == "deep_json":
        return raw_json("[" * int(arg or 100_000))
    if mode == "usage_inf":
        text = json.dumps(completion("A")).replace('"prompt_tokens": 7', '"prompt_tokens": 1e400')
        return raw_json(text)
    if mode == "huge_int":
        return raw_json(
            json.dumps(completion("A")).replace('"prompt_tokens": 7', '"prompt_tokens": ' + "9" * 5000)
        )
    if mode == "wrong_types":
        return json_reply(200, {"choices": {"0": 1}, "usage": "x"})
    if mode == "wrong_types_inner":
        return json_reply(
            200, {"choices": [{"message": {"content": ["A"]}}], "usage": {"prompt_tokens": "x"}}
        )
    if mode == "offsets_inf":
        choice = {"text": "", "logprobs": {"text_offset": [0, "1e400"], "token_logprobs": [None, -1.0]}}
        return raw_json(json.dumps({"choices": [choice]}).replace('"1e400"', "1e400"))
    if mode == "invalid_json":
        return raw_json("{not json")
    if mode == "error_no_choices":
        return json_reply(200, {"error": {"message": "no"}})
    if mode == "content_null":
        return json_reply(200, completion(None))
    if mode == "redirect":
        location = f"http://127.0.0.1:{arg}/v1/chat/completions"
        return iter([response(307, b"", {"Location": location})])
    if mode == "lone_surrogate":
        text = json.dumps(completion("Answer: A PLACEHOLDER tail", logprobs=wants_logprobs))
        return raw_json(text.replace("PLACEHOLDER", "\\ud800"))
    if mode == "lone_surrogate_error":
        return raw_json_status(400, '{"error":{"message":"bad \\udfff thing","type":"x"}}')
    if mode == "retry_after":
        return json_reply(429, {"error": {"message": "wait"}}, {"Retry-After": arg})
    if mode == "infinite_chunked":
        head = _head(200, {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        return iter([head, *_chunked(iter([b" " * 65536] * (1024 * 4)))])  # 256 MiB at most
    if mode == "big_cl":
        size = int(arg or 100) * MiB
        return iter([_head(200, {"Content-Length": str(size)}), b" " * (2 * MiB)])
    if mode == "big_nocl":
        return iter([_head(200, {}), *([b" " * MiB] * int(arg or 100))])
    if mode == "slowloris":
        return _slow(int(arg or 30))
    raise ValueError(f"unknown fake-server mode {mode!r}")


def _slow(seconds: int) -> Reply:
    yield _head(200, {"Content-Type": "application/json", "Content-Length": str(seconds + 10)})
    for _ in range(seconds):
        time.sleep(1)
        yield b" "


@dataclass
class FakeServer:
    """``mode`` served on 127.0.0.1; ``url`` is the base URL (``.../v1``), ``seen`` the request log."""

    mode: str
    arg: str = ""
    expect_key: str = ""
    seen: list[Seen] = field(default_factory=list)
    status: int = 200  # mode raw_body: what every request gets
    body: bytes = b"{}"
    _server: socketserver.ThreadingTCPServer | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeServer:
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                owner._serve(self.request)

        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        server.daemon_threads = True
        server.allow_reuse_address = True
        server.server_bind()
        server.server_activate()
        # serve_forever's default poll_interval (0.5 s) is how long shutdown() waits: poll faster.
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        self._server = server
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(30)
        try:
            request = _read_request(conn)
            if request is None:
                return
            self.seen.append(self._log(request))
            if self.mode == "raw_body":
                conn.sendall(response(self.status, self.body, {"Content-Type": "application/json"}))
                return
            for piece in mode_reply(self.mode, self.arg, request):
                conn.sendall(piece)
        except OSError:
            return  # the client hung up: what a capped read does
        finally:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def _log(self, request: Request) -> Seen:
        auth = request.headers.get("authorization")
        return Seen(
            method=request.method,
            path=request.path,
            auth_present=auth is not None,
            auth_is_key=bool(self.expect_key) and auth == f"Bearer {self.expect_key}",
            body_sha=hashlib.sha256(request.body).hexdigest(),
            headers={k: v for k, v in request.headers.items() if k != "authorization"},
            images=tuple(_images(request.json())),
        )


def _images(body: dict[str, Any]) -> Iterator[bytes]:
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            url = (part.get("image_url") or {}).get("url", "") if isinstance(part, dict) else ""
            if isinstance(url, str) and url.startswith("data:") and "," in url:
                yield base64.b64decode(url.split(",", 1)[1])


def _read_request(conn: socket.socket) -> Request | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = [*lines[0].split(" ", 2), "", ""][:3]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return Request(method, path, headers, body)


def serve(mode: str, arg: str = "", expect_key: str = "") -> FakeServer:
    """A started :class:`FakeServer` (stop it, or use it as a context manager)."""
    return FakeServer(mode, arg, expect_key).start()


def gunzip_size(data: bytes) -> int:
    return len(gzip.decompress(data))


Mode = Callable[[str, str, Request], Reply]
