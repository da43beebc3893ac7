"""The one interface every model satisfies: LLM backends and classic baselines alike.

The request and response types live in the leaf module :mod:`recworld.chat`.
Everything else (caching, retries, concurrency, logging) lives in
:mod:`recworld.runner`, so a backend stays a small class.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import ClassVar, Protocol, runtime_checkable

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


class ModelBase(ABC):
    """A backend in a few lines: everything beyond :meth:`complete` has a default here.

    Subclass it, set ``self._identity`` in ``__init__`` (or override
    :attr:`identity`), list the answer modes in ``modes`` and write
    :meth:`complete`. Override what the backend can do better than the default:

    * :attr:`max_concurrency`: requests it serves at once (None: no limit; the
      runner's ``concurrency`` alone decides);
    * :attr:`context_window`: the loaded context size in tokens (None: unknown),
      for callers that budget prompts (LUNAR's full context);
    * ``count_tokens(text) -> int``: define it when the backend holds a
      tokenizer (:class:`CountsTokens`); :func:`token_counter` finds it, and
      says None for a backend without one;
    * :meth:`aclose`: release what the model holds.

    Deriving from this class is optional: any object with ``identity``,
    ``supports``, ``complete`` and ``aclose`` is a :class:`Model`; the
    capability functions below give such an object the defaults.
    """

    modes: ClassVar[frozenset[AnswerMode]] = frozenset({AnswerMode.GENERATE})
    _identity: Mapping[str, str]

    @property
    def identity(self) -> Mapping[str, str]:
        return self._identity

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return self.modes

    @property
    def max_concurrency(self) -> int | None:
        return None

    @property
    def context_window(self) -> int | None:
        return None

    @abstractmethod
    async def complete(self, request: Request) -> Response:
        """Answer one request (see :class:`Model`)."""

    async def aclose(self) -> None:
        return None


def max_concurrency(model: Model) -> int | None:
    """Requests ``model`` serves at once: its declared bound, None when it has none."""
    if isinstance(model, ModelBase):
        return model.max_concurrency
    if isinstance(model, BoundedModel):
        bound = model.max_concurrency
        return None if bound is None else int(bound)
    return None


def context_window(model: Model) -> int | None:
    """The model's loaded context window in tokens, when it declares one."""
    return model.context_window if isinstance(model, ModelBase) else None


@runtime_checkable
class CountsTokens(Protocol):
    """A model that counts tokens with its own tokenizer (llama.cpp, hf, hf-vision, vLLM)."""

    def count_tokens(self, text: str) -> int: ...


def token_counter(model: Model) -> Callable[[str], int] | None:
    """``model``'s own token counter, or None when it has no tokenizer (callers then estimate)."""
    return model.count_tokens if isinstance(model, CountsTokens) else None


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
