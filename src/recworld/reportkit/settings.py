"""A run's settings as a reader scans them, and the row labels that tell runs apart.

Invariant: within one report, two runs of one dataset never share a row
label, and a label names what tells its run apart from the others shown
(model, mode, variant, option orders, then each setting whose value differs
between the runs: the system prompt as a short hash and its first words, max
tokens, temperature, model options). A folder name is added only when two
runs are alike in all of that (the same settings, written to two folders).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["describe_setting", "describe_settings", "distinguishing_keys", "system_tag"]

_WORDS = 4  # first words of a system prompt shown in a label
_KEY_NAMES = {"max_tokens": "max tokens", "model_options": "options"}


def system_tag(text: str) -> str:
    """``#1a2b3c 'You are a movie…'``: the prompt's sha256 (6 hex) and its first words."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]
    words = text.split()
    head = " ".join(words[:_WORDS]) + ("…" if len(words) > _WORDS else "")
    return f"#{digest} {head!r}"


def _value(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_value(v)}" for k, v in sorted(value.items())) or "none"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return "default" if value is None else str(value)


def describe_setting(key: str, value: Any) -> str:
    """One setting: ``system #1a2b3c 'Be brief.'``, ``max tokens 8``, ``options fallback=first``."""
    if key == "system":
        return "no system prompt" if not value else f"system {system_tag(str(value))}"
    return f"{_KEY_NAMES.get(key, key.replace('_', ' '))} {_value(value)}"


def describe_settings(settings: Mapping[str, Any], keys: Sequence[str] | None = None) -> str:
    """The settings (only ``keys`` when given, in that order) as one line; empty for none."""
    chosen = list(settings) if keys is None else list(keys)
    return "; ".join(describe_setting(k, settings.get(k)) for k in chosen)


def distinguishing_keys(settings: Sequence[Mapping[str, Any]]) -> list[str]:
    """The setting keys whose value is not the same in every one of ``settings`` (absent = default).

    ``model_options`` counts as one key; keys are in first-seen order.
    """
    keys: list[str] = []
    for entry in settings:
        keys += [k for k in entry if k not in keys]
    return [k for k in keys if len({_canonical(s.get(k)) for s in settings}) > 1]


def _canonical(value: Any) -> str:
    import json

    if value == {}:  # no model options is the default, like an absent key
        value = None
    return json.dumps(value, sort_keys=True, default=str)
