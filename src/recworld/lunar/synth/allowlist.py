"""The release allowlist: per record kind, the fields that may leave the run.

:func:`project` keeps only these (recursively) and counts what it drops, so a field added
to a schema later stays in the run until it is listed here; :func:`is_structural` names the
released strings that are structure (ids, computed dates, vocabularies), not free text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

# Spec per record kind: field -> None (a value), a kind name (a nested record), [kind] (a list of them).
Spec = Mapping[str, "str | list[str] | None"]
ALLOWLIST: Mapping[str, Spec] = {
    "profile": {
        "schema": None,
        "user_id": None,
        "demographic": "demographic",
        "affinities": ["affinity"],
        "lifestyle": "lifestyle",
    },
    "demographic": {
        "schema": None,
        "user_id": None,
        "age_band": None,
        "gender": None,
        "occupation": None,
        "region": None,
        "timezone": None,
    },
    "affinity": {"category": None, "score": None, "preferences": None},
    "lifestyle": {"clothing": None, "food": None, "housing": None, "mobility": None, "spending": None},
    "trajectory": {"schema": None, "user_id": None, "start_ts": None, "weeks": ["week"]},
    "week": {
        "index": None,
        "start_date": None,
        "theme": None,
        "rhythm": None,
        "days": ["day"],
        "consistency": "consistency",
    },
    "day": {"date": None, "anchor_activities": None, "slots": ["slot"]},
    "slot": {"start": None, "end": None, "scene": "scene", "expected": None, "domains": None},
    "scene": {"who": None, "what": None, "when": None, "where": None, "why": None, "how": None},
    "consistency": {
        "forward": None,
        "backward_llm": None,
        "backward_embed": None,
        "reconstructed": None,
        "combined": None,
        "regenerations": None,
    },
    "record": {
        "schema": None,
        "record_id": None,
        "user_id": None,
        "timestamp": None,
        "domain": None,
        "type": None,
        "fields": None,
        "provenance": None,
    },
}
# Released strings that are structure, not text (ids, dates the gate computed, vocabularies).
STRUCTURAL = frozenset(
    {
        "schema",
        "user_id",
        "record_id",
        "start_date",
        "date",
        "start",
        "end",
        "domain",
        "type",
        "provenance",
        "category",
        "expected",
        "domains",
        "timezone",
        "age_band",
    }
)


def project(data: Mapping[str, Any], kind: str, dropped: Counter[str]) -> dict[str, Any]:
    """``data`` keeping only the allowlisted fields of ``kind`` (recursively); what goes is counted."""
    spec = ALLOWLIST[kind]
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in spec:
            dropped[f"{kind}.{key}"] += 1
            continue
        sub = spec[key]
        if isinstance(sub, str) and isinstance(value, Mapping):
            out[key] = project(value, sub, dropped)
        elif isinstance(sub, list) and isinstance(value, list):
            out[key] = [project(v, sub[0], dropped) for v in value]
        else:
            out[key] = value
    return out


def is_structural(path: tuple[str, ...]) -> bool:
    last = next((p for p in reversed(path) if p not in ("[]", "{key}")), "")
    return last in STRUCTURAL and path[-1] != "{key}" and "fields" not in path
