"""The named modes (:data:`MODES`): how a fake server answers a request, as data; and its planned faults."""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Mapping

from recworld.chat import Message, Request
from recworld.testing.fake_server.wire import (
    HTTPStatusError,
    Mode,
    Received,
    Response,
    Serving,
    completion,
    error,
)

__all__ = ["FAULTS", "MODES", "letter_for", "routed"]


def _text(received: Received) -> str:
    """The text of the last message (its first text part when it has parts)."""
    messages = received.json().get("messages") or [{}]
    content = messages[-1].get("content", "")
    if isinstance(content, list):
        return next((str(p.get("text", "")) for p in content if p.get("type") == "text"), "")
    return str(content)


def _images(received: Received) -> list[bytes]:
    """Every image a ``data:`` URL of the request carried, decoded."""
    out = []
    for message in received.json().get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            url = (part.get("image_url") or {}).get("url", "") if isinstance(part, dict) else ""
            if isinstance(url, str) and url.startswith("data:") and "," in url:
                out.append(base64.b64decode(url.split(",", 1)[1]))
    return out


def _fixed(server: Serving, received: Received) -> Response:
    return Response(200, completion(server.arg or "A", logprobs=received.wants_logprobs))


def _echo(server: Serving, received: Received) -> Response:
    return Response(200, completion(server.arg + _text(received)))


def letter_for(key: str) -> str:
    """Mode ``letters``' answer to the body whose canonical JSON is ``key``."""
    return "ABCD"[hashlib.sha256(key.encode()).digest()[0] % 4]


def _letters(server: Serving, received: Received) -> Response:
    return Response(200, completion(letter_for(received.key)))


def _respond(server: Serving, received: Received) -> Response:
    assert server.respond is not None, "mode 'respond' needs respond="
    body = received.json()
    fmt = body.get("response_format")
    request = Request(
        messages=tuple(Message(m["role"], m["content"]) for m in body["messages"]),
        max_tokens=int(body.get("max_completion_tokens") or body.get("max_tokens") or 1),
        json_schema=fmt["json_schema"]["schema"] if fmt else None,
    )
    try:
        text = server.respond(request)
    except HTTPStatusError as exc:
        return error(exc.status, str(exc))
    return Response(200, completion(text, model=str(body.get("model", "fake-model"))))


def _status(server: Serving, received: Received) -> Response:
    return error(int(server.arg or 500), server.message)


def _slow(server: Serving, received: Received) -> Response:
    time.sleep(float(server.arg or 0.15))
    return Response(200, completion("A", logprobs=received.wants_logprobs))


def _vision(server: Serving, received: Received) -> Response:
    images = _images(received)
    assert images, "mode 'vision' got a request without an image"
    return Response(200, completion(f"image {hashlib.sha256(images[0]).hexdigest()}"))


def _handler(server: Serving, received: Received) -> Response:
    assert server.handler is not None, "mode 'handler' needs handler="
    return server.handler(received)


def _raw_body(server: Serving, received: Received) -> Response:
    return Response(server.status, server.body, {"Content-Type": "application/json"})


def routed(chat: Mode) -> Mode:
    """``chat`` for chat requests, behind the routes a whole server has: models and embeddings."""

    def mode(server: Serving, received: Received) -> Response:
        if received.method == "GET":
            if received.path.endswith("/models") and server.models is not None:
                return Response(200, {"object": "list", "data": server.models})
            return error(404, f"no route {received.path}")
        if received.path.endswith("/embeddings"):
            return Response(200, server.embeddings_for(received.json()))
        return chat(server, received)

    return mode


MODES: Mapping[str, Mode] = {
    "fixed": routed(_fixed),
    "echo": routed(_echo),
    "letters": routed(_letters),
    "respond": routed(_respond),
    "vision": routed(_vision),
    "status": _status,
    "slow": _slow,
    "handler": _handler,
    "raw_body": _raw_body,
}
"""The named modes. Those that answer chat also list ``models`` and embed (:func:`routed`); ``status``,
``slow``, ``handler`` and ``raw_body`` answer every request alike. Pass ``modes={**MODES, ...}`` to
add one."""

FAULTS: Mapping[str, Response] = {
    "401": error(401, "invalid api key"),
    "429": error(429, "slow down", {"Retry-After": "0"}),
    "500": error(500, "internal"),
    "malformed": Response(200, b'{"id": "x", "choices": [{"message": '),
}
"""What a planned fault sends (``hang`` sleeps ``hang_s`` and hangs up instead)."""
