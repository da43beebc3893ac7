"""Token counts and the Full context's budget, from the answer model's own tokenizer and window.

The Full context should hold the whole profile and log. When it cannot, what fits
is decided in the answer model's tokens, not characters: a llama.cpp model counts
with its own tokenizer and reports its loaded window (``n_ctx``, set by ``--n-ctx``);
an ``openai:`` model counts with tiktoken when it is installed; anything else (and
openai without tiktoken) uses the documented estimate of 4 characters per token,
which undercounts digits and punctuation-heavy record lines, so the budget keeps a
margin. The budget is the window minus the answer's token cap, the system prompt,
the longest request and a margin for the chat template.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

CHARS_PER_TOKEN = 4
# Chat-template tokens (role headers, BOS/EOS) that a plain count of the texts misses.
TEMPLATE_MARGIN = 64


class TokenCounter(Protocol):
    @property
    def identity(self) -> str: ...

    def count(self, text: str) -> int: ...


class CharEstimate:
    """ceil(characters / 4): the fallback when no tokenizer of the model is at hand."""

    identity = "estimate:chars/4"

    def count(self, text: str) -> int:
        return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


class FunctionCounter:
    """A backend's own tokenizer (``count_tokens`` on the model)."""

    def __init__(self, count: Callable[[str], int], identity: str) -> None:
        self._count = count
        self.identity = identity

    def count(self, text: str) -> int:
        return int(self._count(text))


def _tiktoken_counter(model: str) -> TokenCounter | None:
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        encoding = tiktoken.encoding_for_model(model)
    except KeyError:
        encoding = tiktoken.get_encoding("o200k_base")
    return FunctionCounter(
        lambda text: len(encoding.encode(text, disallowed_special=())), f"tiktoken:{encoding.name}"
    )


def backend_of(completer: Any) -> Any:
    """The model behind a StructuredLLM's completer (a Runner holds it as ``.model``), or None."""
    return getattr(completer, "model", None)


def counter_for(completer: Any, spec: str) -> TokenCounter:
    """The best counter for the model ``spec`` behind ``completer`` (see the module docstring)."""
    model = backend_of(completer)
    count = getattr(model, "count_tokens", None)
    if callable(count):
        return FunctionCounter(count, f"tokenizer:{spec}")
    if spec.startswith("openai:"):
        found = _tiktoken_counter(spec.split(":", 1)[1])
        if found is not None:
            return found
    return CharEstimate()


def window_of(completer: Any, configured: int) -> int:
    """The model's context window in tokens: what the backend reports, else the configured ``n_ctx``."""
    window = getattr(backend_of(completer), "context_window", None)
    return int(window) if isinstance(window, int) and window > 0 else configured


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
