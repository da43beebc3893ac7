"""The sample viewer's data: JSON that is safe inside a ``<script>`` tag, and long texts cut to a limit.

The viewer (``templates/page.html.j2``) shows what is behind a table cell: the
cell's ``view`` key names an entry of one :class:`Viewer`, embedded in the page as
``<script type="application/json" id="viewer-data">`` and shown through
``textContent`` only, so text from a model can never become markup. Each entry
is ``{"title", "total", "rows"}``; a row is one sample, with one text per column
and an ``outcome`` the filters pick by.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Column", "Viewer", "cut", "script_json"]


def script_json(value: Any, *, sort_keys: bool = False) -> str:
    """JSON that is safe as the body of a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def cut(text: str, limit: int, where: str) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was and that ``where`` holds it whole."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… [cut: {len(text):,} characters in all; the whole text is in {where}]"


# One viewer column: (row field, header, how it shows: "text", or "fold" folded under its header).
Column = tuple[str, str, str]


@dataclass
class Viewer:
    """The page's sample viewer: its columns, its outcome filters, and the entry behind each cell's ``view``.

    ``good`` names the outcomes shown as good (green); the others are flagged.
    """

    columns: Sequence[Column]
    filters: Sequence[str]
    good: Sequence[str] = ()
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, key: str, title: str, rows: Sequence[Mapping[str, Any]], total: int) -> None:
        """The entry behind ``key``: its ``title`` and the ``rows`` shown, of ``total`` samples behind it."""
        self.cells[key] = {"title": title, "total": total, "rows": list(rows)}

    def __bool__(self) -> bool:
        return bool(self.cells)

    def to_script(self) -> str:
        spec = [{"field": f, "label": label, "show": show} for f, label, show in self.columns]
        return script_json({"columns": spec, "good": list(self.good), "cells": self.cells}, sort_keys=True)
