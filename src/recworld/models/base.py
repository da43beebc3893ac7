"""The one interface every model satisfies: LLM backends and classic baselines alike.

The request and response types live in the leaf module :mod:`recworld.chat`.
Everything else (caching, retries, concurrency, logging) lives in
:mod:`recworld.runner`, so a backend stays a small class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from recworld.chat import AnswerMode, Request, Response
from recworld.errors import RunError


@runtime_checkable
class Model(Protocol):
    """A model the runner can ask. Implementations must be safe to call concurrently."""

    @property
    def identity(self) -> Mapping[str, str]:
        """What names this model in the cache key: backend, model, base URL, quantisation.

        Never secrets, never settings that do not change outputs (timeouts, concurrency).
        """
        ...

    @property
    def supports(self) -> frozenset[AnswerMode]:
        """The answer modes this backend can serve."""
        ...

    async def complete(self, request: Request) -> Response:
        """Answer one request. Raise :class:`TransientModelError` for retryable failures."""
        ...

    async def aclose(self) -> None:
        """Release connections, processes and memory."""
        ...


@runtime_checkable
class BoundedModel(Protocol):
    """A model that serves at most ``max_concurrency`` requests at a time.

    Local backends run one request at a time on the CPU. The runner never sends
    them more than that at once, so a request's timeout measures the model's
    work and not its wait in the backend's queue.
    """

    @property
    def max_concurrency(self) -> int: ...


class TransientModelError(Exception):
    """A failure worth retrying (rate limit, 5xx, timeout, malformed reply).

    ``retry_after`` is the server's requested wait in seconds, when it gave one.
    """

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ConnectionFailedError(TransientModelError):
    """The server could not be reached at all (connection refused, DNS, TLS handshake).

    Retried like any transient error; when every attempt of a request ends this
    way the runner stops the whole run, since no later request will fare better.
    """


class FatalModelError(RunError):
    """A failure that no retry fixes and that every later request would hit too.

    The server rejected the key (401), refused permission (403), or has no such
    model (404). The runner stops the run at once (exit code 3) and names the cause.
    """
