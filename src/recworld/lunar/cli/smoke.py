"""``--smoke``: a preset that makes a LUNAR command really small, to try the pipeline in minutes.

Each stage config has one preset: the settings that bound how many requests it sends.
A flag typed on the command line wins over the preset. With SmolLM2 on two cores a
structured call takes 5–20 s, so the preset aims at a handful of calls per command:

=========  =====================================================  ======================
command    preset                                                 requests
=========  =====================================================  ======================
synth      1 user, 1 week, 1 active day, 1 slot, 1 record,        5 (profile, week,
           no re-plans, no week validation                        days, slots, records)
queries    1 query per user                                       about 5
eval       the smoke context only (``ContextSetting.smoke``: the  3 per query (answer,
           profile and all records), answers capped at 96 tokens  judgment, privacy)
ablate     k_max = 1, answers capped at 96 tokens                 2 per variant query
rate       20 records shown per user                              2 per user + queries
=========  =====================================================  ======================

A smoke run's numbers are not results: one query, one context, n = 1 (the report says
"n too small"). It shows that every stage runs end to end on this machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from recworld.console.options import Flag, option_fields
from recworld.lunar.config import AblateConfig, LunarEvalConfig, QueriesConfig, RateConfig, SynthConfig
from recworld.lunar.contexts.base import smoke_contexts

__all__ = ["SMOKE", "described", "preset"]

SMOKE: dict[type[BaseModel], dict[str, Any]] = {
    SynthConfig: {
        "users": 1,
        "options.weeks": 1,
        "options.active_days": 1,
        "options.max_slots_per_day": 1,
        "options.max_records_per_slot": 1,
        "options.max_regenerations": 0,
        "options.validate_weeks": False,
    },
    QueriesConfig: {"per_user": 1},
    # The settings that declare themselves the smoke preset's (read when the preset is applied).
    LunarEvalConfig: {"contexts": smoke_contexts, "answer_max_tokens": 96},
    AblateConfig: {"k_max": 1, "answer_max_tokens": 96},
    RateConfig: {"max_records": 20},
}


def _value(value: Any) -> Any:
    return value() if callable(value) else value


def preset(config: type[BaseModel], typed: Mapping[tuple[str, ...], Any]) -> dict[str, Any]:
    """The preset of ``config`` as a nested dict, leaving out every setting the user typed."""
    out: dict[str, Any] = {}
    for dotted, value in SMOKE.get(config, {}).items():
        path = tuple(dotted.split("."))
        if path in typed:
            continue
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = _value(value)
    return out


def _shown(flag: str, negative: str | None, value: Any) -> str:
    if value is True:
        return flag
    if value is False:
        return negative or f"--no-{flag.removeprefix('--')}"
    if isinstance(value, tuple):
        return f"{flag} {','.join(str(v) for v in value)}"
    return f"{flag} {value}"


def described(
    config: type[BaseModel],
    typed: Mapping[tuple[str, ...], Any],
    flags: Mapping[str, Flag],
    exclude: Sequence[str] = (),
) -> str:
    """``--users 1 --weeks 1 ...``: the preset as the flags that would set it (typed flags left out)."""
    fields = {".".join(o.path): o for o in option_fields(config, flags=flags, exclude=exclude)}
    parts = []
    for dotted, value in SMOKE.get(config, {}).items():
        if tuple(dotted.split(".")) in typed:
            continue
        option = fields.get(dotted)
        value = _value(value)
        parts.append(_shown(option.flag, option.negative, value) if option else f"{dotted}={value}")
    return " ".join(parts)
