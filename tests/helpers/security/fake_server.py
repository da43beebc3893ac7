"""The hostile modes of the one fake server: an OpenAI-compatible server that misbehaves on purpose.

:class:`FakeServer` is :class:`recworld.testing.fake_server.FakeOpenAIServer` (127.0.0.1, a free
port, daemon threads, the one handler) with :data:`MODES`: the shipped modes plus the review's
hostile ones. A hostile mode returns raw bytes, so it can send what no well-behaved framework
would: a gzip bomb, an endless chunked body, a header holding a control byte, a reply that
echoes the bearer token it was sent. Every request is seen as a :class:`Seen` (never the key
itself: only whether it came and whether it equals the key the test expects), like the review's
``logs/srv-PORT.jsonl``.

Modes (``mode``, ``arg``) as the review named them:

* ``ok``: a valid completion whose content is ``arg`` (default ``"A"``), with
  token logprobs when asked; ``content`` and ``xss`` are the same (X1/X2 pass a
  hostile reply as ``arg``); ``huge_ok``: a valid reply of ``arg`` MiB (E13);
  ``slow_ok``: ``"A"`` after ``arg`` seconds (the K cases' slow server);
* (every LUNAR schema, answered by ``helpers.lunar.lunar_responder``, is the shipped mode
  ``respond``: see ``commands.lunar_server``);
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
import gzip
import hashlib
import json
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from recworld.testing.fake_server import MODES as BASE_MODES
from recworld.testing.fake_server import FakeOpenAIServer, Mode, Received, Response, completion

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


# What a mode returns: the raw bytes to send, in pieces (a generator may sleep or run on).
Reply = Iterator[bytes]


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


def _ok(arg: str, request: Received) -> Reply:
    return json_reply(200, completion(arg or "A", logprobs=request.wants_logprobs))


def _slow_ok(arg: str, request: Received) -> Reply:
    # K5-K7: a valid "A" after ``arg`` seconds
    time.sleep(float(arg or 0.15))
    return json_reply(200, completion("A", logprobs=request.wants_logprobs))


def _huge_ok(arg: str, request: Received) -> Reply:
    # E13: a valid reply of ``arg`` MiB, under the cap
    return json_reply(200, completion("A " + "x" * (int(float(arg or 15) * MiB) - 64)))


def _echo_key_error(arg: str, request: Received) -> Reply:
    return json_reply(
        400, {"error": {"message": "x" * int(arg or 0) + request.token, "type": "invalid_request"}}
    )


def _echo_key_text(arg: str, request: Received) -> Reply:
    return iter([response(400, (" " * int(arg or 0) + request.token + " was refused").encode(), {})])


def _echo_key_200(arg: str, request: Received) -> Reply:
    return json_reply(
        200, completion(f"Authorization: Bearer {request.token} ... A", logprobs=request.wants_logprobs)
    )


def _echo_key_header(arg: str, request: Received) -> Reply:
    return json_reply(
        429, {"error": {"message": "slow down"}}, {"Retry-After": request.token, "X-Echo": request.token}
    )


def _proto_key(arg: str, request: Received) -> Reply:
    return iter([PROTOCOL_ERRORS[arg].format(token=request.token).encode("latin-1")])


def _gzip_bomb(arg: str, request: Received) -> Reply:
    body = gzip_bomb_bytes(int(arg or 1024))
    return iter([response(200, body, {"Content-Type": "application/json", "Content-Encoding": "gzip"})])


def _gzip_bomb_chunked(arg: str, request: Received) -> Reply:
    body = gzip_bomb_bytes(int(arg or 1024))
    head = _head(200, {"Content-Encoding": "gzip", "Transfer-Encoding": "chunked"})
    return iter([head, *_chunked(iter([body[i : i + 65536] for i in range(0, len(body), 65536)]))])


def _deep_json(arg: str, request: Received) -> Reply:
    return raw_json("[" * int(arg or 100_000))


def _usage_inf(arg: str, request: Received) -> Reply:
    text = json.dumps(completion("A")).replace('"prompt_tokens": 7', '"prompt_tokens": 1e400')
    return raw_json(text)


def _huge_int(arg: str, request: Received) -> Reply:
    return raw_json(
        json.dumps(completion("A")).replace('"prompt_tokens": 7', '"prompt_tokens": ' + "9" * 5000)
    )


def _wrong_types(arg: str, request: Received) -> Reply:
    return json_reply(200, {"choices": {"0": 1}, "usage": "x"})


def _wrong_types_inner(arg: str, request: Received) -> Reply:
    return json_reply(200, {"choices": [{"message": {"content": ["A"]}}], "usage": {"prompt_tokens": "x"}})


def _offsets_inf(arg: str, request: Received) -> Reply:
    choice = {"text": "", "logprobs": {"text_offset": [0, "1e400"], "token_logprobs": [None, -1.0]}}
    return raw_json(json.dumps({"choices": [choice]}).replace('"1e400"', "1e400"))


def _invalid_json(arg: str, request: Received) -> Reply:
    return raw_json("{not json")


def _error_no_choices(arg: str, request: Received) -> Reply:
    return json_reply(200, {"error": {"message": "no"}})


def _content_null(arg: str, request: Received) -> Reply:
    return json_reply(200, completion(None))


def _redirect(arg: str, request: Received) -> Reply:
    location = f"http://127.0.0.1:{arg}/v1/chat/completions"
    return iter([response(307, b"", {"Location": location})])


def _lone_surrogate(arg: str, request: Received) -> Reply:
    text = json.dumps(completion("Answer: A PLACEHOLDER tail", logprobs=request.wants_logprobs))
    return raw_json(text.replace("PLACEHOLDER", "\\ud800"))


def _lone_surrogate_error(arg: str, request: Received) -> Reply:
    return raw_json_status(400, '{"error":{"message":"bad \\udfff thing","type":"x"}}')


def _retry_after(arg: str, request: Received) -> Reply:
    return json_reply(429, {"error": {"message": "wait"}}, {"Retry-After": arg})


def _infinite_chunked(arg: str, request: Received) -> Reply:
    head = _head(200, {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
    return iter([head, *_chunked(iter([b" " * 65536] * (1024 * 4)))])  # 256 MiB at most


def _big_cl(arg: str, request: Received) -> Reply:
    size = int(arg or 100) * MiB
    return iter([_head(200, {"Content-Length": str(size)}), b" " * (2 * MiB)])


def _big_nocl(arg: str, request: Received) -> Reply:
    return iter([_head(200, {}), *([b" " * MiB] * int(arg or 100))])


def _slowloris(arg: str, request: Received) -> Reply:
    return _slow(int(arg or 30))


HOSTILE: dict[str, Callable[[str, Received], Reply]] = {
    "ok": _ok,
    "content": _ok,
    "xss": _ok,
    "slow_ok": _slow_ok,
    "huge_ok": _huge_ok,
    "echo_key_error": _echo_key_error,
    "echo_key_text": _echo_key_text,
    "echo_key_200": _echo_key_200,
    "echo_key_header": _echo_key_header,
    "proto_key": _proto_key,
    "gzip_bomb": _gzip_bomb,
    "gzip_bomb_chunked": _gzip_bomb_chunked,
    "deep_json": _deep_json,
    "usage_inf": _usage_inf,
    "huge_int": _huge_int,
    "wrong_types": _wrong_types,
    "wrong_types_inner": _wrong_types_inner,
    "offsets_inf": _offsets_inf,
    "invalid_json": _invalid_json,
    "error_no_choices": _error_no_choices,
    "content_null": _content_null,
    "redirect": _redirect,
    "lone_surrogate": _lone_surrogate,
    "lone_surrogate_error": _lone_surrogate_error,
    "retry_after": _retry_after,
    "infinite_chunked": _infinite_chunked,
    "big_cl": _big_cl,
    "big_nocl": _big_nocl,
    "slowloris": _slowloris,
}


def _slow(seconds: int) -> Reply:
    yield _head(200, {"Content-Type": "application/json", "Content-Length": str(seconds + 10)})
    for _ in range(seconds):
        time.sleep(1)
        yield b" "


def _as_mode(reply: Callable[[str, Received], Reply]) -> Mode:
    return lambda server, received: Response(raw=reply(server.arg, received))


MODES: dict[str, Mode] = {**BASE_MODES, **{name: _as_mode(reply) for name, reply in HOSTILE.items()}}
"""The one fake server's modes plus the hostile ones (``raw_body`` is the server's own)."""


class FakeServer(FakeOpenAIServer):
    """The one fake server in a hostile mode, which answers every request whatever its path or method.

    :attr:`seen` is the request log without the key itself.
    """

    def __init__(self, mode: str, arg: str = "", expect_key: str = "") -> None:
        super().__init__(mode, arg, modes=MODES)
        self.expect_key = expect_key

    @property
    def seen(self) -> list[Seen]:
        with self._lock:
            return [self._log(r) for r in self.requests]

    def _log(self, request: Received) -> Seen:
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


def serve(mode: str, arg: str = "", expect_key: str = "") -> FakeServer:
    """A started :class:`FakeServer` (stop it, or use it as a context manager)."""
    server = FakeServer(mode, arg, expect_key)
    return server.start()


def gunzip_size(data: bytes) -> int:
    return len(gzip.decompress(data))
