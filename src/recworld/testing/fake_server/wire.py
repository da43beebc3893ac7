"""What crosses the wire: the request a fake server read, the reply it sends, and OpenAI-shaped bodies."""

from __future__ import annotations

import hashlib
import json
import socket
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from recworld.chat import Request

__all__ = [
    "HTTPStatusError",
    "Mode",
    "Received",
    "Response",
    "Serving",
    "body_key",
    "completion",
    "error",
    "vector_for",
]


@dataclass(frozen=True)
class Received:
    """One request as the server read it: header names lower-cased, the body as bytes."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def token(self) -> str:
        return self.headers.get("authorization", "").removeprefix("Bearer ")

    def json(self) -> dict[str, Any]:
        """The body as a JSON object (``{}`` when it is not one)."""
        try:
            data = json.loads(self.body or b"{}")
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    @property
    def wants_logprobs(self) -> bool:
        """Whether the body asks for token log-probs (``"logprobs": true``)."""
        return bool(self.json().get("logprobs"))

    @property
    def key(self) -> str:
        """The body's canonical JSON (its own bytes when it is not JSON): what "the same request" means."""
        try:
            return body_key(self.body)
        except ValueError:
            return self.body.decode("latin-1")


@dataclass(frozen=True)
class Response:
    """A reply: ``status`` with ``body`` (JSON-encoded unless bytes), or ``raw`` bytes sent as they are.

    ``raw`` is written piece by piece (a generator may sleep between pieces) and the connection is
    then closed, so a mode can send what no well-behaved server would. ``hangup`` closes the
    connection without a reply.
    """

    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    raw: Iterable[bytes] | None = None
    hangup: bool = False


class Serving(Protocol):
    """What a mode may read of the server answering: a :class:`~recworld.testing.FakeOpenAIServer`."""

    arg: Any
    status: int
    body: bytes
    message: str
    models: list[dict[str, Any]] | None
    respond: Callable[[Request], str] | None
    handler: Callable[[Received], Response] | None

    def embeddings_for(self, body: Mapping[str, Any]) -> dict[str, Any]: ...


Mode = Callable[[Serving, Received], Response]


class HTTPStatusError(Exception):
    """Raised by a ``respond`` function: the server answers with this status and message instead."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def body_key(body: bytes) -> str:
    return json.dumps(json.loads(body), sort_keys=True)


TOP_LOGPROBS = (("A", -0.1), ("B", -2.0), ("C", -3.0), ("D", -4.0))


def completion(
    content: Any,
    *,
    logprobs: bool | Sequence[tuple[str, float]] = False,
    model: str = "fake-model",
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A chat completion whose one choice says ``content``: the one reply body every fake sends.

    ``logprobs`` adds first-token log-probs: ``True`` for :data:`TOP_LOGPROBS`, or the
    ``(token, logprob)`` pairs to list (the first is the sampled token). ``usage`` replaces the
    default counts (7 prompt tokens, 1 completion token).
    """
    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": "stop",
        "message": {"role": "assistant", "content": content},
    }
    if logprobs:
        pairs = TOP_LOGPROBS if logprobs is True else tuple(logprobs)
        top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in pairs]
        choice["logprobs"] = {"content": [{**top[0], "top_logprobs": top}]}
    counts = (
        dict(usage) if usage is not None else {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8}
    )
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [choice],
        "usage": counts,
    }


def vector_for(text: str, dim: int = 8) -> list[float]:
    """The default fake embedding of ``text``: ``dim`` numbers from its SHA-256, the same every time."""
    digest = hashlib.sha256(text.encode()).digest()
    return [(b - 127.5) / 127.5 for b in digest[:dim]]


def error(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    return Response(status, {"error": {"message": message}}, headers or {})


def refused_url(path: str = "/v1") -> str:
    """A loopback base URL where nothing listens (a port bound, then released): a refused connection."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    return f"http://127.0.0.1:{port}{path}"
