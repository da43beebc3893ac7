"""The one interface every model satisfies: LLM backends and classic baselines alike.

A :class:`Request` carries the rendered chat messages (what an LLM sees) and,
for LRWorld questions, the structured :class:`~recworld.lrworld.Question` (what
a classic recommender baseline reads). A backend answers with a
:class:`Response`. Everything else (caching, retries, concurrency, logging)
lives in :mod:`recworld.runner`, so a backend stays a small class.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from recworld.lrworld.schema import Question


class AnswerMode(StrEnum):
    """How a multiple-choice answer is obtained from a model."""

    GENERATE = "generate"  # greedy decoding, then the choice is extracted from the text
    LOGLIK = "loglik"  # score each option's log-likelihood, pick the best


Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat turn. ``images`` holds data URLs or local paths for vision backends."""

    role: Role
    content: str
    images: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.images:
            out["images"] = list(self.images)
        return out


@dataclass(frozen=True)
class Request:
    """What the runner asks of a model.

    ``choices`` are the continuations scored in :attr:`AnswerMode.LOGLIK` mode
    (for example ``("A", "B", "C", "D")``). ``json_schema`` asks a backend that
    can constrain decoding to emit JSON matching the schema.
    """

    messages: tuple[Message, ...]
    mode: AnswerMode = AnswerMode.GENERATE
    choices: tuple[str, ...] = ()
    max_tokens: int = 256
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    json_schema: Mapping[str, Any] | None = None
    question: Question | None = field(default=None, compare=False)

    def cache_payload(self) -> dict[str, Any]:
        """Everything in the request that changes a model's output."""
        payload: dict[str, Any] = {
            "messages": [_cache_message(m) for m in self.messages],
            "mode": self.mode.value,
            "choices": list(self.choices),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stop": list(self.stop),
            "json_schema": dict(self.json_schema) if self.json_schema is not None else None,
        }
        if self.question is not None:
            # Baselines answer from the question itself, not the prompt.
            payload["question_id"] = self.question.id
        return payload


def _cache_message(message: Message) -> dict[str, Any]:
    """A message as the cache sees it: a local image is named by its bytes, not its path.

    Otherwise an image rewritten under the same path would be answered from the cache.
    """
    out = message.to_json()
    if message.images:
        out["images"] = [_image_key(ref) for ref in message.images]
    return out


def _image_key(reference: str) -> str:
    if reference.startswith(("data:", "http://", "https://")):
        return reference
    import hashlib
    from pathlib import Path

    try:
        return "sha256:" + hashlib.sha256(Path(reference).expanduser().read_bytes()).hexdigest()
    except OSError:
        return reference  # the backend reports the unreadable file


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Response:
    """A model's answer.

    In generate mode ``text`` is the decoded output. In loglik mode
    ``choice_logprobs`` holds one log-probability per request choice and
    ``text`` the best choice.
    """

    text: str
    choice_logprobs: tuple[float, ...] | None = None
    usage: Usage = field(default_factory=Usage)
    raw: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "choice_logprobs": None if self.choice_logprobs is None else list(self.choice_logprobs),
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Response:
        usage = data.get("usage") or {}
        logprobs = data.get("choice_logprobs")
        return cls(
            text=str(data["text"]),
            choice_logprobs=None if logprobs is None else tuple(float(x) for x in logprobs),
            usage=Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
        )


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
