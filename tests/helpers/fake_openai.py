"""The one loopback HTTP server the fake OpenAI-compatible endpoints run on.

Invariant: a fake server in the tests binds 127.0.0.1 (or ``host``) on a free port, serves each
request on a daemon thread, keeps quiet about clients that hang up, and shuts down within
milliseconds (``serve_forever`` polls every 10 ms instead of 500). What it answers is the
handler's: :mod:`helpers.runner_fakes` (fault plans, barriers, held requests),
:mod:`helpers.lunar` (a responder per request), :mod:`helpers.openai_fakes` (an httpx handler
bridged to a socket), :mod:`helpers.multimodal` (image digests) and the failure-policy 401s.

Deliberately apart: :mod:`helpers.security.fake_server` writes raw bytes on a plain TCP server
(a gzip bomb, a bad status line, an endless chunked body), which an ``http.server`` handler
cannot send. Not yet done: one set of named reply modes shared by all the handlers above (they
still each decide their replies; issue 26, item 8). Kept under ``tests/``: plugin authors test
against ``recworld.testing``'s contracts, which need no server.
"""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return  # the client hung up first (a stopped run, a cancelled request): not news
        super().handle_error(request, client_address)


class LoopbackServer:
    """``handler`` served on ``host``; a context manager; ``base_url`` ends in ``/v1``."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, host: str = "127.0.0.1") -> None:
        self.server = _QuietServer((host, 0), handler)
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self.server.server_address[0]}:{self.port}/v1"  # 0.0.0.0 as bound

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
