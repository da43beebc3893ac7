"""The one server and its one handler: reads a request, applies the transport plan, answers with the mode."""

from __future__ import annotations

import ipaddress
import json
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from recworld.chat import Request
from recworld.testing.fake_server.modes import FAULTS, MODES
from recworld.testing.fake_server.wire import Mode, Received, Response, vector_for

__all__ = ["FakeOpenAIServer"]


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
