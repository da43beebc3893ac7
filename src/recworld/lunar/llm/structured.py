"""Schema-validated LLM calls with bounded retries, on top of the shared Runner.

Everything LUNAR asks a model goes through :class:`StructuredLLM`: the request
carries the output's JSON schema (backends that can constrain decoding turn it
into a grammar or ``response_format``), the reply is parsed and validated, and
an invalid reply is retried with an attempt note appended to the prompt. The
note changes the request, so the runner's cache does not hand back the same
bad answer; a rerun of the whole pipeline still hits the cache for every
attempt it made before. After ``max_attempts`` the failure is recorded and the
caller carries on without that piece.

Failure policy (the same as ``recworld eval``): a request that failed after the
runner's retries, or a reply that never validated, is a :class:`FailureRecord`
counted against the piece it was for. A ``FatalModelError`` (bad key, no such
model, server unreachable) raised by the runner is never caught here: it stops
the stage. Anything else raised by the completer is a bug and propagates too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, Field, ValidationError

from recworld.chat import Message, Request, Response
from recworld.lunar.deid import Deidentifier
from recworld.lunar.llm import tracking
from recworld.lunar.llm.decoding import (
    compact_schema,
    fix_lengths,
    inline_schema,
    narrow_schema,
    parse_json_object,
)
from recworld.models import Model
from recworld.records import Record

T = TypeVar("T", bound=BaseModel)


class CompletionLike(Protocol):
    """The part of ``recworld.runner.Completion`` LUNAR reads."""

    @property
    def response(self) -> Response | None: ...

    @property
    def error(self) -> str | None: ...


# How much of a rejected reply failures.jsonl keeps (the console summary shows the first 200).
REPLY_CHARS = 2000
# The system prompt of every structured call unless a stage sets its own (with_system).
DATA_SYSTEM = "You are a careful data generator. Answer with JSON only."


class Completer(Protocol):
    """What LUNAR needs from ``recworld.runner.Runner``.

    ``refresh=True`` (asked only with ``retry_cached``) skips the cache read and
    stores the new reply over the cached one.
    """

    async def complete(self, request: Request, *, refresh: bool = False) -> CompletionLike: ...


@runtime_checkable
class HoldsModel(Protocol):
    """A completer that names the model it asks (a Runner)."""

    @property
    def model(self) -> Model: ...


FailureKind = Literal["request", "invalid"]


class FailureRecord(Record):
    """One piece of a stage given up on: a line of ``failures.jsonl`` (written and read with this class).

    ``kind`` separates a request that failed after the runner's retries (``request``:
    the server never answered) from replies that arrived but never validated
    (``invalid``), because only the first is worth a plain rerun.
    """

    schema_id: Literal["recworld.lunar.failure/1"] = Field(default="recworld.lunar.failure/1", alias="schema")
    stage: str
    key: str
    attempts: int = Field(ge=1)
    kind: FailureKind
    error: str
    # The last rejected reply, de-identified (recworld.lunar.deid), masked by the run's leak
    # scanner where one is set (StructuredLLM.redact_failures: no anchor string, source id or
    # real date) and cut at REPLY_CHARS: the evidence for "why did the model fail".
    reply: str | None = None


Check = Callable[[T], str | None]
Reshape = Callable[[dict[str, Any]], dict[str, Any]]
V = TypeVar("V")
# Reads a reply's text: (value, "") when usable, (None, why) when not.
Parse = Callable[[str], tuple[V | None, str]]


@dataclass(frozen=True)
class _Outcome(Generic[V]):
    """One attempt's result: a usable value, or why not (and the rejected reply, if one came)."""

    value: V | None
    error: str = ""
    kind: FailureKind = "invalid"
    reply: str | None = None


def _judge(completion: CompletionLike, parse: Parse[V]) -> _Outcome[V]:
    if completion.response is None:
        return _Outcome(None, completion.error or "no response", "request")
    value, error = parse(completion.response.text)
    return _Outcome(value, error, "invalid", completion.response.text)


class StructuredLLM:
    """Ask for schema-valid JSON (or free text) through a runner; count pieces and record give-ups.

    ``asked`` counts pieces (one ``structured`` or ``text`` call, however many attempts
    it took) and ``failures`` the pieces given up on, so a stage's error fraction is
    ``len(failures) / asked``. Siblings made by :meth:`with_system` share both.

    ``retry_cached`` (``--retry-failures``): the runner's cache keeps every reply that
    arrived, valid or not, so a plain rerun replays a rejected reply. With this set, a
    rejected reply that came from the cache is asked again past the cache (the completer's
    ``complete(request, refresh=True)``), and the new reply replaces it.
    """

    def __init__(
        self,
        completer: Completer,
        *,
        max_attempts: int = 3,
        max_tokens: int = 512,
        temperature: float = 0.0,
        system: str = DATA_SYSTEM,
        compact: bool = False,
        retry_cached: bool = False,
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
        self.retry_cached = retry_cached
        self._log = _Log()

    @property
    def failures(self) -> list[FailureRecord]:
        return self._log.failures

    @property
    def model(self) -> Model | None:
        """The model behind the completer (for its capabilities: tokenizer, window), when it names one."""
        return self.completer.model if isinstance(self.completer, HoldsModel) else None

    @property
    def asked(self) -> int:
        return self._log.asked

    @property
    def calls(self) -> int:
        """Requests handed to the runner (attempts included; cache hits count too)."""
        return self._log.calls

    def error_of(self, stage: str, key: str) -> str | None:
        """Why the piece ``(stage, key)`` was given up on, or None if it was not."""
        return self._log.errors.get((stage, key))

    def _request(self, prompt: str, schema: Mapping[str, Any] | None, max_tokens: int | None) -> Request:
        return Request(
            messages=(Message("system", self.system), Message("user", prompt)),
            max_tokens=max_tokens or self.max_tokens,
            temperature=self.temperature,
            json_schema=schema,
        )

    async def _complete(
        self, prompt: str, schema: Mapping[str, Any] | None, max_tokens: int | None, *, fresh: bool = False
    ) -> CompletionLike:
        # FatalModelError and bugs propagate from here on purpose (see the module docstring).
        self._log.calls += 1
        request = self._request(prompt, schema, max_tokens)
        # refresh only when asked: a completer that never refreshes may take the request alone.
        if fresh:
            completion = await self.completer.complete(request, refresh=True)
        else:
            completion = await self.completer.complete(request)
        if (tracker := tracking.current()) is not None:  # the measured speed of the cost estimate
            latency = float(getattr(completion, "latency_s", 0.0) or 0.0)
            tracker.completed(latency, cache_hit=bool(getattr(completion, "cache_hit", False)))
        return completion

    def _can_refresh(self, completion: CompletionLike) -> bool:
        return self.retry_cached and bool(getattr(completion, "cache_hit", False))

    async def _attempt(
        self, prompt: str, schema: Mapping[str, Any] | None, max_tokens: int | None, parse: Parse[V]
    ) -> _Outcome[V]:
        completion = await self._complete(prompt, schema, max_tokens)
        outcome = _judge(completion, parse)
        if outcome.value is None and outcome.reply is not None and self._can_refresh(completion):
            outcome = _judge(await self._complete(prompt, schema, max_tokens, fresh=True), parse)
        return outcome

    def _decoding_schema(
        self,
        output: type[BaseModel],
        enums: Mapping[str, Sequence[str]] | None,
        lengths: Mapping[str, int] | None,
        grammar: Reshape | None,
    ) -> Any:
        full = inline_schema(output, for_decoding=not self.compact)
        if enums:
            full = narrow_schema(full, enums)
        if lengths:
            full = fix_lengths(full, lengths)
        if not self.compact:
            return full
        return compact_schema(grammar(full) if grammar is not None else full)

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
        lengths: Mapping[str, int] | None = None,
        grammar: Reshape | None = None,
    ) -> T | None:
        """A validated ``output`` instance, or None after ``max_attempts`` failed tries.

        What a grammar can enforce goes into the decoding schema; the reply is still
        validated against ``output`` and ``check`` whatever the backend did with it:

        * ``enums`` narrows string fields to per-call values (:func:`narrow_schema`);
        * ``lengths`` fixes arrays to a per-call item count (:func:`fix_lengths`);
        * ``grammar`` reshapes the compact decoding schema (local grammar decoding only,
          where e.g. a root ``anyOf`` that servers' ``response_format`` refuses is fine).
        """

        def parse(text: str) -> tuple[T | None, str]:
            try:
                value = output.model_validate(parse_json_object(text))
            except (ValueError, ValidationError) as exc:
                return None, _short_error(exc)
            problem = check(value) if check is not None else None
            return (value, "") if problem is None else (None, problem)

        self._begin(stage)
        schema = self._decoding_schema(output, enums, lengths, grammar)
        last: _Outcome[T] = _Outcome(None)
        for attempt in range(1, self.max_attempts + 1):
            text = prompt
            if attempt > 1:
                text += (
                    f"\n\nAttempt {attempt}: the previous reply was rejected ({last.error[:300]}). "
                    "Reply with one JSON object that follows the schema exactly."
                )
            last = await self._attempt(text, schema, max_tokens, parse)
            if last.value is not None:
                self._end(stage, failed=False)
                return last.value
        self._give_up(stage, key, last)
        return None

    async def text(self, prompt: str, *, stage: str, key: str, max_tokens: int | None = None) -> str | None:
        """Free text (answers); retried only when the reply is empty or missing."""

        def parse(text: str) -> tuple[str | None, str]:
            return (text.strip(), "") if text.strip() else (None, "empty reply")

        self._begin(stage)
        last: _Outcome[str] = _Outcome(None)
        for attempt in range(1, self.max_attempts + 1):
            body = prompt if attempt == 1 else f"{prompt}\n\n(Attempt {attempt}.)"
            last = await self._attempt(body, None, max_tokens, parse)
            if last.value is not None:
                self._end(stage, failed=False)
                return last.value
        self._give_up(stage, key, last)
        return None

    def _begin(self, stage: str) -> None:
        self._log.asked += 1
        tracker = tracking.current()
        if tracker is not None:
            tracker.asked(stage)

    def _end(self, stage: str, *, failed: bool) -> None:
        tracker = tracking.current()
        if tracker is not None:
            tracker.answered(stage, failed=failed)

    def redact_failures(self, mask: Callable[[str], str]) -> None:
        """Pass every failure's key, error and rejected reply through ``mask`` before it is kept.

        Synthesis sets the run's leak scanner here, so ``failures.jsonl``, the failure summary
        on the terminal and ``recworld.log`` carry no anchor content (siblings share it).
        """
        self._log.mask = mask

    def _give_up(self, stage: str, key: str, last: _Outcome[Any]) -> None:
        mask = self._log.mask
        reply = None if last.reply is None else Deidentifier().text(mask(last.reply))[:REPLY_CHARS]
        self._log.fail(
            FailureRecord(
                stage=stage,
                key=mask(key),
                attempts=self.max_attempts,
                kind=last.kind,
                error=mask(last.error),
                reply=reply,
            ),
            key,
        )
        self._end(stage, failed=True)

    def with_system(self, system: str) -> StructuredLLM:
        """A sibling sharing runner, counters and failure log, with another system prompt."""
        sibling = StructuredLLM(
            self.completer,
            max_attempts=self.max_attempts,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            system=system,
            compact=self.compact,
            retry_cached=self.retry_cached,
        )
        sibling._log = self._log
        return sibling


class _Log:
    """Counters and give-ups shared by an LLM and its :meth:`StructuredLLM.with_system` siblings."""

    def __init__(self) -> None:
        self.asked = 0
        self.calls = 0
        self.failures: list[FailureRecord] = []
        self.errors: dict[tuple[str, str], str] = {}
        self.mask: Callable[[str], str] = _unchanged

    def fail(self, record: FailureRecord, key: str | None = None) -> None:
        self.failures.append(record)
        self.errors[(record.stage, key if key is not None else record.key)] = record.error


def _unchanged(text: str) -> str:
    return text


def _short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        return f"{loc}: {first['msg']}" if loc else str(first["msg"])
    return str(exc)


def failures_json(failures: Sequence[FailureRecord]) -> list[dict[str, Any]]:
    return [f.to_json() for f in failures]


R = TypeVar("R")


async def gather_or_cancel(jobs: Sequence[Awaitable[R]]) -> list[R]:
    """Await every job; on the first exception cancel the others, then re-raise it.

    ``asyncio.gather`` leaves siblings running after a failure, so a 401 from one
    piece would let hundreds of others keep sending; this stops them at once.
    """
    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
