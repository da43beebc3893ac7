"""A scripted model for tests and dry runs, registered like any real backend.

It answers from a Python callable (tests) or a JSON script file mapping a
substring of the last user message to a reply (``scripted:path/to/script.json``).
It counts its calls so tests can assert that nothing was sent twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path

from recworld.capped import SETTINGS_LIMIT, read_capped
from recworld.chat import AnswerMode, Request, Response, Usage
from recworld.errors import ConfigError, DataError
from recworld.io import parse_json
from recworld.models.registry import ModelConfig, ModelSpec

Responder = Callable[[Request], "str | Response"]


class ScriptedModel:
    """Answers each request by calling ``responder``; thread- and task-safe."""

    def __init__(
        self,
        responder: Responder,
        *,
        name: str = "scripted",
        supports: frozenset[AnswerMode] = frozenset(AnswerMode),
        delay_s: float = 0.0,
    ) -> None:
        self._responder = responder
        self._name = name
        self._supports = supports
        self._delay_s = delay_s
        self.calls: list[Request] = []

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": "scripted", "model": self._name}

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return self._supports

    async def complete(self, request: Request) -> Response:
        self.calls.append(request)
        if self._delay_s:
            await asyncio.sleep(self._delay_s)
        reply = self._responder(request)
        if isinstance(reply, Response):
            return reply
        if request.mode is AnswerMode.LOGLIK and request.choices:
            scores = tuple(0.0 if choice == reply else -10.0 for choice in request.choices)
            return Response(text=reply, choice_logprobs=scores, usage=Usage(1, 0))
        return Response(text=reply, usage=Usage(len(request.messages), len(reply.split())))

    async def aclose(self) -> None:
        return None


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
    if spec.name:
        return ScriptedModel(_from_script(Path(spec.name)), name=spec.name)

    def first_choice(request: Request) -> str:
        return request.choices[0] if request.choices else "A"

    return ScriptedModel(first_choice)
