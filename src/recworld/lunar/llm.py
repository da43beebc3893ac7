"""Schema-validated LLM calls with bounded retries, on top of the shared Runner.

Everything LUNAR asks a model goes through :class:`StructuredLLM`: the request
carries the output's JSON schema (backends that can constrain decoding turn it
into a grammar or ``response_format``), the reply is parsed and validated, and
an invalid reply is retried with an attempt note appended to the prompt. The
note changes the request, so the runner's cache does not hand back the same
bad answer; a rerun of the whole pipeline still hits the cache for every
attempt it made before. After ``max_attempts`` the failure is recorded and the
caller carries on without that piece.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from recworld.models.base import Message, Request, Response

T = TypeVar("T", bound=BaseModel)


class CompletionLike(Protocol):
    """The part of ``recworld.runner.Completion`` LUNAR reads."""

    @property
    def response(self) -> Response | None: ...

    @property
    def error(self) -> str | None: ...


class Completer(Protocol):
    """What LUNAR needs from ``recworld.runner.Runner``."""

    async def complete(self, request: Request) -> CompletionLike: ...


@dataclass(frozen=True)
class Failure:
    """One piece of the pipeline given up on after its retries."""

    stage: str
    key: str
    attempts: int
    error: str

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "key": self.key, "attempts": self.attempts, "error": self.error}


_DECODING_DROPS = ("minLength", "maxLength", "minItems", "maxItems")


def inline_schema(model: type[BaseModel], *, for_decoding: bool = False) -> dict[str, Any]:
    """The model's JSON schema with every ``$ref`` inlined (grammar converters like flat schemas).

    ``for_decoding`` drops string length bounds: llama.cpp expands ``{0,100}`` into a
    deep grammar that made one small call ~8x slower (153 s vs 19 s measured with
    SmolLM2-135M). Lengths are still enforced when the reply is validated.
    """
    schema = model.model_json_schema()
    defs: Mapping[str, Any] = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if for_decoding:
                node = {k: v for k, v in node.items() if k not in _DECODING_DROPS}
            if "$ref" in node:
                target = resolve(defs[node["$ref"].rsplit("/", 1)[-1]])
                rest = {k: resolve(v) for k, v in node.items() if k != "$ref"}
                return {**target, **rest}
            return {k: resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    out: dict[str, Any] = resolve(schema)
    return out


# One word of a compact string: letters, digits, apostrophes, slashes and hyphens (record ids
# such as ``user-000/w0/d0/s0/r0`` fit). Underscores are left out on purpose: greedy SmolLM2
# looped on identifiers like ``deli_restaurant_deli_...`` until the token cap.
COMPACT_WORD = r"[A-Za-z0-9'/-]+"
COMPACT_WORDS = 4
_BOUNDS = ("minLength", "maxLength", "minItems", "maxItems")
_CONSTRAINED = frozenset({"enum", "const", "pattern", "format"})


def compact_schema(schema: Any, *, words: int = COMPACT_WORDS) -> Any:
    """A decoding schema small models finish: short strings and arrays of a fixed length.

    Greedy decoding of a 135M model repeats itself inside an open string or array
    until the token cap. llama.cpp makes ranges expensive (``{0,60}`` nests a rule
    per step; 153 s vs 19 s measured), but exact counts and a few optional words
    stay flat and cheap. So every free string becomes at most ``words`` words of
    :data:`COMPACT_WORD` (the ``?`` groups are flat), and every array gets exactly
    ``max(minItems, 1)`` items, capped by ``maxItems``. The decoded language is a
    subset of what the pydantic model accepts; the reply is still validated
    against the full model.
    """
    if isinstance(schema, list):
        return [compact_schema(v, words=words) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: compact_schema(v, words=words) for k, v in schema.items() if k not in _BOUNDS}
    if schema.get("type") == "string" and not _CONSTRAINED & schema.keys():
        out["pattern"] = "^" + COMPACT_WORD + f"( {COMPACT_WORD})?" * (words - 1) + "$"
    if schema.get("type") == "array":
        n = max(int(schema.get("minItems", 0)), 1)
        if "maxItems" in schema:
            n = min(n, int(schema["maxItems"]))
        out["minItems"] = out["maxItems"] = n
    return out


def narrow_schema(schema: Mapping[str, Any], enums: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """A copy of ``schema`` whose string fields at the given paths may only take the listed values.

    A path is dotted property names from the root (``"record_ids"``, ``"effects.record_id"``);
    arrays are passed through to their items, so the enum lands on the strings themselves.
    This is a decoding aid only: small models invent ids that look right, and an enum of the
    ids actually shown in the prompt lets grammar/``response_format`` decoding emit only those.
    An empty value list is skipped (an empty enum would make the schema unsatisfiable).
    """
    out: dict[str, Any] = json.loads(json.dumps(schema))
    for path, values in enums.items():
        if not values:
            continue
        node: dict[str, Any] = out
        for name in path.split("."):
            while node.get("type") == "array":
                node = node["items"]
            props = node.get("properties", {})
            if name not in props:
                raise KeyError(f"schema {schema.get('title')!r} has no field {path!r}")
            node = props[name]
        while node.get("type") == "array":
            node = node["items"]
        if node.get("type") != "string":
            raise TypeError(f"field {path!r} is not a string or an array of strings")
        node["enum"] = list(dict.fromkeys(values))
    return out


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_json_object(text: str) -> Any:
    """The first JSON object in ``text`` (tolerates code fences and chatter around it)."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start = body.find("{")
    if start < 0:
        raise ValueError("no JSON object in the reply")
    obj, _ = json.JSONDecoder().raw_decode(body[start:])
    return obj


Check = Callable[[T], str | None]


class StructuredLLM:
    """Ask for schema-valid JSON (or free text) through a runner; record give-ups."""

    def __init__(
        self,
        completer: Completer,
        *,
        max_attempts: int = 3,
        max_tokens: int = 512,
        temperature: float = 0.0,
        system: str = "You are a careful data generator. Answer with JSON only.",
        compact: bool = False,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.completer = completer
        self.max_attempts = max_attempts
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.system = system
        # Decode with :func:`compact_schema` (tiny local models) instead of the full schema.
        self.compact = compact
        self.failures: list[Failure] = []
        self.calls = 0

    def _request(self, prompt: str, schema: Mapping[str, Any] | None, max_tokens: int | None) -> Request:
        return Request(
            messages=(Message("system", self.system), Message("user", prompt)),
            max_tokens=max_tokens or self.max_tokens,
            temperature=self.temperature,
            json_schema=schema,
        )

    async def structured(
        self,
        prompt: str,
        output: type[T],
        *,
        stage: str,
        key: str,
        check: Check[T] | None = None,
        max_tokens: int | None = None,
        enums: Mapping[str, Sequence[str]] | None = None,
    ) -> T | None:
        """A validated ``output`` instance, or None after ``max_attempts`` invalid replies.

        ``enums`` narrows string fields of the decoding schema to per-call values (see
        :func:`narrow_schema`); the reply is still validated against ``output`` and ``check``.
        """
        full = inline_schema(output, for_decoding=not self.compact)
        if enums:
            full = narrow_schema(full, enums)
        schema = compact_schema(full) if self.compact else full
        error = ""
        for attempt in range(1, self.max_attempts + 1):
            text = prompt
            if attempt > 1:
                text += (
                    f"\n\nAttempt {attempt}: the previous reply was rejected ({error[:300]}). "
                    "Reply with one JSON object that follows the schema exactly."
                )
            self.calls += 1
            completion = await self.completer.complete(self._request(text, schema, max_tokens))
            if completion.response is None:
                error = completion.error or "no response"
                continue
            try:
                value = output.model_validate(parse_json_object(completion.response.text))
            except (ValueError, ValidationError) as exc:
                error = _short_error(exc)
                continue
            problem = check(value) if check is not None else None
            if problem is None:
                return value
            error = problem
        self.failures.append(Failure(stage, key, self.max_attempts, error))
        return None

    async def text(self, prompt: str, *, stage: str, key: str, max_tokens: int | None = None) -> str | None:
        """Free text (answers); retried only when the reply is empty or missing."""
        error = ""
        for attempt in range(1, self.max_attempts + 1):
            body = prompt if attempt == 1 else f"{prompt}\n\n(Attempt {attempt}.)"
            self.calls += 1
            completion = await self.completer.complete(self._request(body, None, max_tokens))
            if completion.response is not None and completion.response.text.strip():
                return completion.response.text.strip()
            error = completion.error or "empty reply"
        self.failures.append(Failure(stage, key, self.max_attempts, error))
        return None

    def with_system(self, system: str) -> StructuredLLM:
        """A sibling sharing runner and failure log, with another system prompt."""
        sibling = StructuredLLM(
            self.completer,
            max_attempts=self.max_attempts,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            system=system,
            compact=self.compact,
        )
        sibling.failures = self.failures
        return sibling


def _short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        return f"{loc}: {first['msg']}" if loc else str(first["msg"])
    return str(exc)


def failures_json(failures: Sequence[Failure]) -> list[dict[str, Any]]:
    return [f.to_json() for f in failures]
