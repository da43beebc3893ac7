"""Context windows of API models: the dated table, and what a server's ``GET /models`` reports.

Read by :class:`~recworld.models.openai_compat.OpenAICompatModel.context_window`
(and through it by callers that budget prompts, such as LUNAR's Full context). A
server we were pointed at is asked first (vLLM's ``max_model_len``); the table is
for hosted models that report nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Prompt tokens an API model accepts, with the month the vendor's model page was read. A dated
# snapshot (gpt-4o-mini-2024-07-18) is looked up without its date. The gpt-5 family accepts
# 400k tokens in all, of which at most 272k of input.
KNOWN_CONTEXT_WINDOWS: dict[str, tuple[int, str]] = {
    "gpt-3.5-turbo": (16_385, "2024-01"),
    "gpt-4": (8_192, "2024-01"),
    "gpt-4-turbo": (128_000, "2024-04"),
    "gpt-4o": (128_000, "2024-05"),
    "gpt-4o-mini": (128_000, "2024-07"),
    "chatgpt-4o-latest": (128_000, "2024-08"),
    "gpt-4.1": (1_047_576, "2025-04"),
    "gpt-4.1-mini": (1_047_576, "2025-04"),
    "gpt-4.1-nano": (1_047_576, "2025-04"),
    "o1": (200_000, "2024-12"),
    "o1-mini": (128_000, "2024-09"),
    "o3": (200_000, "2025-04"),
    "o3-mini": (200_000, "2025-01"),
    "o4-mini": (200_000, "2025-04"),
    "gpt-5": (272_000, "2025-08"),
    "gpt-5-mini": (272_000, "2025-08"),
    "gpt-5-nano": (272_000, "2025-08"),
}
# Fields of a GET /models entry that hold the served window: vLLM, OpenRouter, LM Studio.
WINDOW_FIELDS = ("max_model_len", "context_length", "max_context_length")
_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def known_model(model: str) -> tuple[int, str] | None:
    """The table's (window, month checked) of an API model name (a dated snapshot by its undated name)."""
    return KNOWN_CONTEXT_WINDOWS.get(model) or KNOWN_CONTEXT_WINDOWS.get(_DATED.sub("", model))


def known_context_window(model: str) -> int | None:
    """The table's window of an API model name, else None."""
    found = known_model(model)
    return found[0] if found else None


MAX_SERVED_WINDOW = 1 << 24


@dataclass(frozen=True)
class ServedWindow:
    """A window a ``GET /models`` reply reports: from the entry of the model asked for, or not.

    ``exact`` is False when the reply lists one entry under another id (a llama.cpp server
    names its file): it is then only a guess, used after the known table and named so.
    """

    tokens: int
    entry: str
    exact: bool

    def note(self, model: str) -> str:
        """How the source is written when the entry is not the model's own (empty when it is)."""
        return "" if self.exact else f" (its only entry, {self.entry!r}, not {model!r})"


def served_window(listing: Any, model: str) -> ServedWindow | None:
    """The window a ``GET /models`` reply reports for ``model``: its own entry, else the only one.

    An entry whose id is not ``model`` is used only when it is the reply's one entry, and
    then marked ``exact=False`` (review U11: a stub's one entry sized gpt-4o-mini).
    """
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    rows = [e for e in entries if isinstance(e, dict)]
    own = [e for e in rows if e.get("id") == model]
    chosen = own or (rows if len(rows) == 1 else [])
    for entry in chosen:
        for name in WINDOW_FIELDS:
            value = entry.get(name)
            # A server's claim past 2**24 tokens is no window any model has: not believed.
            if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_SERVED_WINDOW:
                return ServedWindow(value, str(entry.get("id")), exact=bool(own))
    return None
