"""One fake OpenAI-compatible server for tests: one class, one handler, the reply chosen by a named mode.

Invariant: a :class:`FakeOpenAIServer` binds 127.0.0.1 on a free port (never a wildcard address),
serves each request on a daemon thread, keeps quiet about clients that hang up, and shuts down
within milliseconds. It logs every request it reads (:attr:`FakeOpenAIServer.requests`) and
answers it with its mode: a function ``(server, received) -> Reply`` looked up by name in
``modes`` (:data:`MODES` unless a test passes its own mapping, such as ``{**MODES, ...}``). A
mode is data, so a test suite adds hostile modes without subclassing the server or mutating
:data:`MODES`.

Around every mode, the server applies what a test asks of the transport: a per-body fault plan
(``plan``: 401, 429, 500, hang, malformed), a barrier (hold replies until N requests arrived),
``hold_after`` (answer N requests, then hold the rest unread until :meth:`release`) and a
``lifetime_s`` after which it stops itself. In the modes that answer chat, ``POST .../embeddings``
gets deterministic vectors (``embed``) and ``GET .../models`` the ``models`` list (404 without).

Modes of :data:`MODES`: ``fixed`` (``arg``, default ``"A"``, with logprobs when asked),
``echo`` (the last message's text), ``letters`` (a letter derived from the body: deterministic
and different between questions), ``respond`` (``respond(recworld.chat.Request) -> str``; an
:class:`HTTPStatusError` becomes that status), ``status`` (HTTP ``arg`` with an OpenAI error
body), ``slow`` (``"A"`` after ``arg`` seconds), ``vision`` (``"image SHA256"`` of the first
image sent), ``handler`` (``handler(received) -> Response``: any reply, built by the test) and
``raw_body`` (:attr:`FakeOpenAIServer.status` and :attr:`FakeOpenAIServer.body` as they are).

    from recworld.testing.fake_server import FakeOpenAIServer

    with FakeOpenAIServer("fixed", "B") as server:
        run_my_model(base_url=server.base_url)
    assert len(server.chat) == 1
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from recworld.chat import Message, Request

__all__ = [
    "MODES",
    "FakeOpenAIServer",
    "HTTPStatusError",
    "Mode",
    "Received",
    "Response",
    "body_key",
    "completion",
    "letter_for",
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


Mode = Callable[["FakeOpenAIServer", Received], Response]


class HTTPStatusError(Exception):
    """Raised by a ``respond`` function: the server answers with this status and message instead."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def body_key(body: bytes) -> str:
    return json.dumps(json.loads(body), sort_keys=True)


TOP_LOGPROBS = (("A", -0.1), ("B", -2.0), ("C", -3.0), ("D", -4.0))


def completion(content: Any, *, logprobs: bool = False, model: str = "fake-model") -> dict[str, Any]:
    """A chat completion whose one choice says ``content`` (with first-token logprobs when asked)."""
    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": "stop",
        "message": {"role": "assistant", "content": content},
    }
    if logprobs:
        top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in TOP_LOGPROBS]
        choice["logprobs"] = {"content": [{**top[0], "top_logprobs": top}]}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [choice],
        "usage": {"prompt_tokens": 11, "completion_tokens": 1, "total_tokens": 12},
    }


def vector_for(text: str, dim: int = 8) -> list[float]:
    """The default fake embedding of ``text``: ``dim`` numbers from its SHA-256, the same every time."""
    digest = hashlib.sha256(text.encode()).digest()
    return [(b - 127.5) / 127.5 for b in digest[:dim]]


def error(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    return Response(status, {"error": {"message": message}}, headers or {})


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


def _wants_logprobs(received: Received) -> bool:
    return bool(received.json().get("logprobs"))


def _fixed(server: FakeOpenAIServer, received: Received) -> Response:
    return Response(200, completion(server.arg or "A", logprobs=_wants_logprobs(received)))


def _echo(server: FakeOpenAIServer, received: Received) -> Response:
    return Response(200, completion(server.arg + _text(received)))


def letter_for(key: str) -> str:
    """Mode ``letters``' answer to the body whose canonical JSON is ``key``."""
    return "ABCD"[hashlib.sha256(key.encode()).digest()[0] % 4]


def _letters(server: FakeOpenAIServer, received: Received) -> Response:
    return Response(200, completion(letter_for(received.key)))


def _respond(server: FakeOpenAIServer, received: Received) -> Response:
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


def _status(server: FakeOpenAIServer, received: Received) -> Response:
    return error(int(server.arg or 500), server.message)


def _slow(server: FakeOpenAIServer, received: Received) -> Response:
    time.sleep(float(server.arg or 0.15))
    return Response(200, completion("A", logprobs=_wants_logprobs(received)))


def _vision(server: FakeOpenAIServer, received: Received) -> Response:
    images = _images(received)
    assert images, "mode 'vision' got a request without an image"
    return Response(200, completion(f"image {hashlib.sha256(images[0]).hexdigest()}"))


def _handler(server: FakeOpenAIServer, received: Received) -> Response:
    assert server.handler is not None, "mode 'handler' needs handler="
    return server.handler(received)


def _raw_body(server: FakeOpenAIServer, received: Received) -> Response:
    return Response(server.status, server.body, {"Content-Type": "application/json"})


def routed(chat: Mode) -> Mode:
    """``chat`` for chat requests, behind the routes a whole server has: models and embeddings."""

    def mode(server: FakeOpenAIServer, received: Received) -> Response:
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


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: FakeOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return  # the client hung up first (a stopped run, a cancelled request): not news
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """The one handler: reads the request, hands it to its server, writes what comes back."""

    protocol_version = "HTTP/1.1"
    timeout = 30
    server: _QuietServer

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        owner = self.server.owner
        if method == "POST" and owner._must_hold():
            owner._released.wait()
            self.close_connection = True
            return  # dropped unread: it never reached the "model"
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        self._write(owner._answer(Received(method, self.path, headers, body)))

    def _write(self, reply: Response) -> None:
        try:
            if reply.hangup:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            elif reply.raw is not None:
                self.close_connection = True
                for piece in reply.raw:
                    self.wfile.write(piece)
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
            else:
                body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                headers = dict(reply.headers)
                if not any(name.lower() == "content-type" for name in headers):
                    headers["Content-Type"] = "application/json"
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
        except OSError:
            self.close_connection = True  # the client hung up: what a capped read does


class FakeOpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1 answering in ``mode``; a context manager.

    ``base_url`` (alias ``url``) ends in ``/v1``. ``arg`` is the mode's argument (a reply text, a
    status, seconds); ``respond`` and ``handler`` are the functions the modes of those names call.
    """

    def __init__(
        self,
        mode: str = "fixed",
        arg: str = "",
        *,
        modes: Mapping[str, Mode] = MODES,
        respond: Callable[[Request], str] | None = None,
        handler: Callable[[Received], Response] | None = None,
        message: str = "refused",
        embed: Callable[[str], list[float]] = vector_for,
        models: list[dict[str, Any]] | None = None,
        plan: Callable[[str], Sequence[str]] | None = None,
        hang_s: float = 5.0,
        barrier: int | None = None,
        barrier_s: float = 5.0,
        hold_after: int | None = None,
        lifetime_s: float | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        if mode not in modes:
            raise ValueError(f"unknown fake-server mode {mode!r}; known: {', '.join(sorted(modes))}")
        if ipaddress.ip_address(host).is_unspecified:
            raise ValueError(f"a fake server binds one address, never the wildcard {host!r}")
        self.mode, self.arg, self.modes = mode, arg, modes
        self.respond, self.handler, self.message, self.embed = respond, handler, message, embed
        self.models = models  # GET .../models answers with these entries; None: 404
        self.plan = plan or (lambda key: ())  # body key -> faults for its 1st, 2nd, ... receipt
        self.hang_s, self.barrier, self.barrier_s, self.hold_after = hang_s, barrier, barrier_s, hold_after
        self.status, self.body = 200, b"{}"  # mode raw_body: what every request gets
        self.requests: list[Received] = []
        self.replied: list[int] = []  # the status each request got, in order (-1: none)
        self._lock = threading.Lock()
        self._all_in = threading.Event()
        self._released = threading.Event()
        self._admitted = 0
        self._server = _QuietServer((host, 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._timer = threading.Timer(lifetime_s, self._server.shutdown) if lifetime_s else None

    # -- the address and the lifecycle --------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        host = self._server.server_address[0]
        return f"http://{host if isinstance(host, str) else host.decode()}:{self.port}/v1"

    url = base_url

    def start(self) -> FakeOpenAIServer:
        """Serve from now on; a started server is left as it is (``with serve(...)`` starts once)."""
        if self._thread.is_alive():
            return self
        self._thread.start()
        if self._timer is not None:
            self._timer.daemon = True
            self._timer.start()
        return self

    def stop(self) -> None:
        self._released.set()
        if self._timer is not None:
            self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def release(self) -> None:
        """Drop held requests unread and serve everything from now on."""
        with self._lock:
            self.hold_after = None
        self._released.set()

    # -- what it saw ------------------------------------------------------------------------

    def _posts(self, suffix: str) -> list[dict[str, Any]]:
        with self._lock:
            return [r.json() for r in self.requests if r.method == "POST" and r.path.endswith(suffix)]

    @property
    def chat(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat requests, in arrival order."""
        return self._posts("/chat/completions")

    @property
    def embeddings(self) -> list[dict[str, Any]]:
        return self._posts("/embeddings")

    @property
    def bodies(self) -> list[bytes]:
        """Every POST body as it came."""
        with self._lock:
            return [r.body for r in self.requests if r.method == "POST"]

    @property
    def gets(self) -> list[str]:
        with self._lock:
            return [r.path for r in self.requests if r.method == "GET"]

    @property
    def keys(self) -> set[str]:
        """Every ``Authorization`` header that reached this server (``""``: none)."""
        with self._lock:
            return {r.headers.get("authorization", "") for r in self.requests}

    @property
    def headers_seen(self) -> list[dict[str, str]]:
        with self._lock:
            return [r.headers for r in self.requests]

    @property
    def counts(self) -> Counter[str]:
        """Receipts per POST body (its canonical JSON): a body counted twice was sent twice."""
        with self._lock:
            return Counter(r.key for r in self.requests if r.method == "POST")

    @property
    def answered(self) -> Counter[str]:
        """200 OK replies per POST body."""
        with self._lock:
            pairs = zip(self.requests, self.replied, strict=False)
            return Counter(r.key for r, status in pairs if r.method == "POST" and status == 200)

    # -- answering --------------------------------------------------------------------------

    def _must_hold(self) -> bool:
        """Admit the first ``hold_after`` requests (atomically), hold the rest."""
        with self._lock:
            if self.hold_after is None:
                return False
            if self._admitted < self.hold_after:
                self._admitted += 1
                return False
            return True

    def _wait_for_barrier(self) -> None:
        if self.barrier is None:
            return
        with self._lock:
            arrived = sum(1 for r in self.requests if r.method == "POST")
        if arrived >= self.barrier:
            self._all_in.set()
        self._all_in.wait(self.barrier_s)

    def _answer(self, received: Received) -> Response:
        with self._lock:
            nth = sum(1 for r in self.requests if r.method == received.method and r.key == received.key)
            self.requests.append(received)
            self.replied.append(-1)
            index = len(self.requests) - 1
        fault = self._fault(received, nth)
        reply = self.modes[self.mode](self, received) if fault is None else fault
        answered = fault is None and reply.raw is None and not reply.hangup
        with self._lock:
            self.replied[index] = reply.status if answered else -1  # a planned fault is no answer
        return reply

    def _fault(self, received: Received, nth: int) -> Response | None:
        """What the plan sends the ``nth`` receipt of this body (after the barrier); None: no fault."""
        if received.method != "POST":
            return None
        self._wait_for_barrier()
        faults = self.plan(received.key)
        fault = faults[nth] if nth < len(faults) else None
        if fault == "hang":
            time.sleep(self.hang_s)
            return Response(hangup=True)
        return None if fault is None else FAULTS[fault]

    def embeddings_for(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """An ``/embeddings`` reply for ``body["input"]``, rows in reversed index order (as servers may)."""
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        rows = [{"object": "embedding", "index": i, "embedding": self.embed(t)} for i, t in enumerate(texts)]
        usage = {"prompt_tokens": 1, "total_tokens": 1}
        return {"object": "list", "data": rows[::-1], "model": body.get("model"), "usage": usage}
