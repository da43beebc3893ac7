"""Token counts and the Full context's budget, from the answer model's own tokenizer and real window.

The Full context should hold the whole profile and log, so its budget starts from
the answer model's real context window (:func:`window_for`), first found of:

1. what the model reports: a llama.cpp model its loaded ``n_ctx``, an in-process vLLM
   or hf model its ``max_model_len``, an ``openai:`` server its ``GET /models``
   (vLLM's ``max_model_len``; asked once, :func:`discover`);
2. ``--context-window`` (``SessionConfig.context_window``), for a model whose backend
   cannot say;
3. the models package's dated table of API models (``gpt-4o-mini``: 128k, ...);
4. ``--n-ctx`` (default 4096), labelled an assumption in the report.

Tokens are counted with the model's own tokenizer where one is at hand offline
(llama.cpp, hf, vLLM: :func:`recworld.models.token_counter`); otherwise with the
estimate of 4 characters per token (tiktoken is not a dependency), which undercounts
digits and punctuation-heavy record lines, so the budget keeps a margin and the
counter's identity (``estimate:chars/4``) says it is an estimate. The budget is the
window minus the answer's token cap, the system prompt, the longest request and a
margin for the chat template.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from recworld.lunar.llm.config import SessionConfig
from recworld.models import Model, context_window, token_counter

CHARS_PER_TOKEN = 4
# Chat-template tokens (role headers, BOS/EOS) that a plain count of the texts misses.
TEMPLATE_MARGIN = 64
ESTIMATE = "estimate:chars/4"


class TokenCounter(Protocol):
    @property
    def identity(self) -> str: ...

    @property
    def estimate(self) -> bool:
        """True when the count is an estimate, not the model's own tokenizer."""
        ...

    def count(self, text: str) -> int: ...


class CharEstimate:
    """ceil(characters / 4): the labelled estimate when no tokenizer of the model is at hand."""

    identity = ESTIMATE
    estimate = True

    def count(self, text: str) -> int:
        return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


class ModelTokenizer:
    """A model's own tokenizer (:func:`recworld.models.token_counter`)."""

    estimate = False

    def __init__(self, count: object, identity: str) -> None:
        if not callable(count):
            raise TypeError("a tokenizer counter must be callable")
        self._count = count
        self.identity = identity

    def count(self, text: str) -> int:
        return int(self._count(text))


@runtime_checkable
class DiscoversWindow(Protocol):
    """A backend that can ask its server for the served window (``openai:``'s ``GET /models``)."""

    async def discover_context_window(self) -> int | None: ...


@runtime_checkable
class NamesWindowSource(Protocol):
    """A backend that says where its window came from (``openai:``: the server, or the known-model table)."""

    @property
    def context_window_source(self) -> str | None: ...


@dataclass(frozen=True)
class Window:
    """A context window in tokens and where it came from (shown in the report's truncation table)."""

    tokens: int
    source: str


def counter_for(model: Model | None, spec: str) -> TokenCounter:
    """The model's own tokenizer when it has one, else the labelled estimate."""
    count = token_counter(model) if model is not None else None
    return ModelTokenizer(count, f"tokenizer:{spec}") if count is not None else CharEstimate()


async def discover(model: Model | None) -> None:
    """Let a backend that can ask its server for the window do so (once; best effort)."""
    if model is not None and isinstance(model, DiscoversWindow):
        await model.discover_context_window()


def window_for(model: Model | None, session: SessionConfig) -> Window:
    """The answer model's window (see the module docstring for the order)."""
    reported = context_window(model) if model is not None else None
    source = model.context_window_source if isinstance(model, NamesWindowSource) else None
    from_table = source is not None and not source.startswith("server")
    if reported and not from_table:  # loaded (llama.cpp n_ctx, vLLM max_model_len) or served: the truth
        return Window(int(reported), source or f"reported by {session.name}")
    if session.context_window is not None:
        return Window(session.context_window, "--context-window")
    if reported:
        return Window(int(reported), source or "known-model table")
    return Window(session.backend.n_ctx, "--n-ctx (assumed: the model reports no window)")


def full_budget(
    counter: TokenCounter,
    *,
    window: int,
    answer_tokens: int,
    system: str,
    requests: Sequence[str],
    cap: int | None = None,
) -> int:
    """Tokens left for the Full context once the answer, system prompt and longest request are reserved."""
    longest = max((counter.count(r) for r in requests), default=0)
    left = window - answer_tokens - counter.count(system) - longest - TEMPLATE_MARGIN
    left = max(left, 0)
    return left if cap is None else min(left, cap)
