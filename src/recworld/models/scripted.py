"""Scripted models for tests and dry runs, registered like any real backend.

:class:`ScriptedModel` answers from a Python callable (tests) or a JSON script
file mapping a substring of the last user message to a reply
(``scripted:path/to/script.json``). It counts its calls so tests can assert
that nothing was sent twice. Options (:class:`~recworld.models.options.ScriptedOptions`):
``delay_s`` (seconds per answer, to make a run slow enough to interrupt) and
``calls_log`` (a file that gets one line per call, readable across processes
and Ray replicas).

:class:`ScriptedEmbedder` is the embedding twin (the ``scripted`` embedder
spec): a hashed bag of words by default, so texts that share words have a
positive cosine and everything is deterministic and offline.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from recworld.capped import SETTINGS_LIMIT, read_capped
from recworld.chat import AnswerMode, Request, Response, Usage
from recworld.errors import ConfigError, DataError
from recworld.io import parse_json
from recworld.models.base import ModelBase
from recworld.models.embedding import EmbedderBase, Vectors
from recworld.models.options import ScriptedOptions, parse_options
from recworld.models.registry import ModelConfig, ModelSpec

Responder = Callable[[Request], "str | Response"]
EmbedFunction = Callable[[Sequence[str]], "np.ndarray | Sequence[Sequence[float]]"]

BAG_DIM = 64
_WORD = re.compile(r"\w+")


class ScriptedModel(ModelBase):
    """Answers each request by calling ``responder``; thread- and task-safe."""

    def __init__(
        self,
        responder: Responder,
        *,
        name: str = "scripted",
        supports: frozenset[AnswerMode] = frozenset(AnswerMode),
        delay_s: float = 0.0,
        calls_log: Path | None = None,
    ) -> None:
        self._responder = responder
        self._identity = {"backend": "scripted", "model": name}
        self._supports = supports
        self._delay_s = delay_s
        self._calls_log = calls_log
        self.calls: list[Request] = []

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return self._supports

    async def complete(self, request: Request) -> Response:
        self.calls.append(request)
        if self._calls_log is not None:
            with self._calls_log.open("a", encoding="utf-8") as log:
                log.write(_call_line(request) + "\n")
        if self._delay_s:
            await asyncio.sleep(self._delay_s)
        reply = self._responder(request)
        if isinstance(reply, Response):
            return reply
        if request.mode is not AnswerMode.GENERATE and request.choices:
            scores = tuple(0.0 if choice == reply else -10.0 for choice in request.choices)
            return Response(text=reply, choice_logprobs=scores, usage=Usage(1, 0))
        return Response(text=reply, usage=Usage(len(request.messages), len(reply.split())))


def _call_line(request: Request) -> str:
    if request.question is not None:
        return request.question.id
    last = request.messages[-1].content if request.messages else ""
    return " ".join(last.split())


def _from_script(path: Path) -> Responder:
    try:
        rules = parse_json(
            read_capped(path, limit=SETTINGS_LIMIT, missing="script file not found"), path=path
        )
    except DataError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(rules, dict) or not all(isinstance(v, str) for v in rules.values()):
        raise ConfigError(f"{path}: a script is a JSON object of substring -> reply")
    default: str = rules.get("*", "")
    table: dict[str, str] = {str(k): str(v) for k, v in rules.items() if k != "*"}

    def respond(request: Request) -> str:
        last = request.messages[-1].content if request.messages else ""
        for needle, reply in table.items():
            if needle in last:
                return reply
        return default

    return respond


def create(spec: ModelSpec, config: ModelConfig) -> ScriptedModel:
    """``scripted`` answers the first choice; ``scripted:FILE.json`` follows a script."""
    options = parse_options(ScriptedOptions, config.options, "scripted")
    if spec.name:
        responder, name = _from_script(Path(spec.name)), spec.name
    else:
        responder, name = _first_choice, "scripted"
    return ScriptedModel(responder, name=name, delay_s=options.delay_s, calls_log=options.calls_log)


def _first_choice(request: Request) -> str:
    return request.choices[0] if request.choices else "A"


def bag_of_words(texts: Sequence[str], dim: int = BAG_DIM) -> Vectors:
    """Each word hashed into one of ``dim`` signed buckets: shared words give a positive cosine."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in _WORD.findall(text.lower()):
            digest = hashlib.sha256(word.encode("utf-8")).digest()
            out[row, digest[0] % dim] += 1.0 if digest[1] % 2 else -1.0
    return out


class ScriptedEmbedder(EmbedderBase):
    """Embeds with a Python function (default :func:`bag_of_words`); counts its calls."""

    def __init__(self, function: EmbedFunction = bag_of_words, *, name: str = "bag-of-words") -> None:
        self._function = function
        self._identity = {"backend": "scripted", "model": name}
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        vectors: Vectors = np.asarray(self._function(texts), dtype=np.float32).reshape(len(texts), -1)
        return vectors


def create_embedder(spec: ModelSpec, config: ModelConfig) -> ScriptedEmbedder:
    """The ``scripted`` embedder spec: the bag-of-words test double."""
    if spec.name:
        raise ConfigError(f"the scripted embedder takes no name, got {str(spec)!r}")
    return ScriptedEmbedder()
