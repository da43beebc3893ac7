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

from recworld.testing.fake_server.modes import MODES, letter_for
from recworld.testing.fake_server.server import FakeOpenAIServer
from recworld.testing.fake_server.wire import (
    HTTPStatusError,
    Mode,
    Received,
    Response,
    body_key,
    completion,
    refused_url,
    vector_for,
)

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
    "refused_url",
    "vector_for",
]
