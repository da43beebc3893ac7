"""Where RecWorld keeps fetched datasets and caches, and how a name becomes a folder name."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

_SLUG_MAX = 120  # a run folder adds the mode, variant and a hash: all under a 255-byte name


def home() -> Path:
    """Root of RecWorld's files: ``$RECWORLD_HOME`` or ``~/.cache/recworld``."""
    env = os.environ.get("RECWORLD_HOME")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "recworld"


def datasets_dir() -> Path:
    """Where ``recworld data fetch`` puts datasets, one folder each."""
    return home() / "datasets"


def models_dir() -> Path:
    """Where assembled model files (such as the Gemma GGUF) are kept."""
    return home() / "models"


def slug(name: str, *, empty: str = "model") -> str:
    """A file-name-safe form of a name, such as a model spec: ``openai:gpt-4o`` -> ``openai-gpt-4o``.

    Both suites name a model's folders with it (LRWorld's ``runs/<slug>__…``,
    LUNAR's ``eval/<slug>/…``). A slug over 120 characters keeps its first 100
    and a hash of the whole name, so a 300-character model name still names one
    folder, and two long names that share a prefix still name two. A name with
    nothing file-name-safe in it slugs to ``empty``.
    """
    short = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or empty
    if len(short) <= _SLUG_MAX:
        return short
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{short[:100].rstrip('-.')}-{digest}"


def unique_slugs(names: Iterable[str]) -> dict[str, str]:
    """Each distinct name's :func:`slug`, unique among them: a later name whose slug is taken gets ``-2``...

    The ids of one page (a report's ``ml.100k`` and ``ml 100k`` sections, tables
    and charts) are built on these, so two names that slug alike still get two ids.
    """
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        if name in out:
            continue
        base = slug(name)
        key, n = base, 1
        while key in taken:
            n += 1
            key = f"{base}-{n}"
        taken.add(key)
        out[name] = key
    return out
