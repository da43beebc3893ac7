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

This module imports nothing from recworld but :mod:`recworld.capped` (how a
local image is told from a URL and hashed for the cache key), so every layer
(lrworld prompts, models, the runner, LUNAR) can use these types without an upward import.

Invariant: every :class:`Response` is well-formed data, whatever backend or
server made it: its text is valid Unicode (a lone UTF-16 surrogate, which a JSON
reply can spell as ``\\ud800`` and no UTF-8 encoder accepts, becomes U+FFFD), and
each choice log-probability is a float that is finite or ``-inf`` (NaN and
``+inf`` become ``-inf``: that choice was not scored), and its usage counts are whole numbers
from 0 to 2**63 - 1 (anything else counts 0). :meth:`Response.to_json`
is strict JSON (``-inf`` is written ``null``, read back as ``-inf``), so the
cache, the journal and the samples can always encode what a model answered.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any, Literal, Protocol

from recworld.capped import is_remote, sha256_file
from recworld.errors import DataError


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
    if is_remote(reference):
        return reference
    try:
        return "sha256:" + sha256_file(Path(reference).expanduser())
    except (OSError, DataError):
        return reference  # the backend reports the unreadable file


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate replaced by U+FFFD, so it encodes as UTF-8.

    A Python string from ``json.loads`` holds a surrogate only when it was
    unpaired (``"\\ud800"``); a valid pair decodes to one character.
    """
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _count(value: object) -> int:
    """A token count a backend reported: a whole number from 0 to 2**63 - 1, else 0."""
    number: int | float
    if isinstance(value, bool):
        return 0
    if isinstance(value, int | float):
        number = value
    else:
        try:
            number = float(str(value))  # numpy numbers and the like
        except ValueError:
            return 0
    if isinstance(number, float) and not (math.isfinite(number) and number.is_integer()):
        return 0
    return int(number) if 0 <= number < 2**63 else 0


def _logprob(value: float) -> float:
    """A choice log-probability: finite or ``-inf``; NaN and ``+inf`` (never a probability) are ``-inf``."""
    number = float(value)
    return number if math.isfinite(number) else -math.inf


@dataclass(frozen=True)
class Usage:
    """Token counts: whole numbers from 0 to 2**63 - 1 (anything else a backend reports counts 0)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __post_init__(self) -> None:
        for name in ("prompt_tokens", "completion_tokens"):
            value = getattr(self, name)
            if type(value) is not int or not 0 <= value < 2**63:
                object.__setattr__(self, name, _count(value))


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

    def __post_init__(self) -> None:
        """Make the answer well-formed (see the module docstring), whoever built it."""
        if type(self.text) is not str or _SURROGATE.search(self.text):
            object.__setattr__(self, "text", clean_text(str(self.text)))
        scores = self.choice_logprobs
        if scores is not None and not all(type(x) is float and math.isfinite(x) for x in scores):
            object.__setattr__(self, "choice_logprobs", tuple(_logprob(x) for x in scores))

    def to_json(self) -> dict[str, Any]:
        """Strict JSON: a ``-inf`` log-probability is ``null`` (:meth:`from_json` reads it back)."""
        scores = self.choice_logprobs
        return {
            "text": self.text,
            "choice_logprobs": None if scores is None else [x if math.isfinite(x) else None for x in scores],
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
            choice_logprobs=None
            if logprobs is None
            else tuple(-math.inf if x is None else float(x) for x in logprobs),
            usage=Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
        )
