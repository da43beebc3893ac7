"""Chat types: what is asked of a model and what it answers. A leaf module.

A :class:`Request` carries the rendered chat messages (what an LLM sees) and,
for LRWorld questions, the public view of the question it was rendered from
(what a classic recommender baseline reads). A backend answers with a :class:`Response`.

Invariant: a request never carries a question's gold. Its ``question`` is a
:class:`PublicView` (LRWorld's :class:`~recworld.lrworld.schema.PublicQuestion`:
no answer index, no answer, no evidence), and :class:`Request` refuses any
other object there, so a backend of any kind (an LLM, a baseline, a plugin, a
model object, a Ray replica) cannot be handed the answer by mistake.
An :class:`EmbeddingRequest` is one text asked of an embedder.

This module imports nothing from recworld, so every layer (lrworld prompts,
models, the runner, LUNAR) can use these types without an upward import.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum, StrEnum
from typing import Any, Literal, Protocol


class AnswerMode(StrEnum):
    """How a multiple-choice answer is obtained from a model."""

    GENERATE = "generate"  # greedy decoding, then the choice is extracted from the text
    LOGLIK = "loglik"  # score each option's log-likelihood, pick the best
    # Score each choice's full text as a continuation, per token: a full ranking, no letters at all.
    RANK = "rank"


Role = Literal["system", "user", "assistant"]


class PublicView(Protocol):
    """The structured record a request was rendered from, as a model may see it.

    LRWorld passes :class:`~recworld.lrworld.schema.PublicQuestion`; classic
    baselines check the type they need. ``gold_free`` is the record's promise
    that it holds no answer (:class:`Request` checks it).
    """

    @property
    def id(self) -> str: ...

    @property
    def gold_free(self) -> Literal[True]: ...


# Attributes a gold-bearing record has (a suite Question): a request refuses an object with any of them.
_GOLD_ATTRIBUTES = ("answer_index", "answer", "evidence")


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
    # Sampling seed for backends that take one; part of the cache key like every field.
    seed: int = 0
    question: PublicView | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        question = self.question
        if question is None:
            return
        if getattr(question, "gold_free", None) is not True or any(
            hasattr(question, name) for name in _GOLD_ATTRIBUTES
        ):
            raise TypeError(
                f"Request.question takes a question's public view (Question.public), "
                f"not a {type(question).__name__}: a model is never handed the answer"
            )

    def cache_payload(self) -> dict[str, Any]:
        """Every field of the request, in plain JSON: what names it in the response cache.

        Derived from the dataclass fields, so a field added later is in the key
        without anyone remembering to add it (as inspect_ai's ``_cache_key``).
        Only the question object is replaced, by its id: baselines answer from
        the question itself, and its id names it. Timeouts, retries and
        concurrency are not request fields, so they never enter the key.
        """
        payload: dict[str, Any] = {}
        for name in _REQUEST_FIELDS:
            value = getattr(self, name)
            if name == "question":
                payload["question_id"] = None if value is None else value.id
            elif name == "messages":
                payload["messages"] = [_cache_message(m) for m in value]
            else:
                payload[name] = _plain(value)
        return payload


# Request's field names, looked up once: ``fields()`` on every request cost microseconds.
_REQUEST_FIELDS = tuple(spec.name for spec in fields(Request))


@dataclass(frozen=True)
class EmbeddingRequest:
    """One text an embedder is asked for: the embedding kind's request.

    Its :meth:`cache_payload` keys the response cache with the same recipe as a
    chat :class:`Request` (every field, plus ``kind`` so an embedding never
    shares a key with a chat request).
    """

    text: str

    def cache_payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"kind": "embedding"}
        for spec in fields(self):
            payload[spec.name] = _plain(getattr(self, spec.name))
        return payload


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """``value`` as plain JSON types (enums by value, tuples as lists), for the canonical key."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


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
