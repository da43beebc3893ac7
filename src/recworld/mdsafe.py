"""Markdown text that renders as typed: data never becomes HTML, a link or a table cell break.

``report.md`` once carried a model named ``openai:<svg onload=alert(9)>`` and
titles like ``<img src=x onerror=alert(1)>`` raw; a Markdown renderer passes
inline HTML through, so the page ran them (review case X2). Every piece of
data that goes into a Markdown file goes through :func:`md_text` (or
:func:`md_cell` inside a table):

* ``&``, ``<`` and ``>`` become entities, so no tag, comment or autolink can
  start, and an entity a name holds is shown as typed;
* a backslash, ``*`` and ``|`` are backslash-escaped, so data adds no
  emphasis, escapes none of ours and makes no extra table column (brackets and
  backticks stay: with no HTML a link or code span can only show text, and a
  renderer refuses ``javascript:`` links);
* control characters (an ANSI escape in a title) are dropped, since
  ``lunar report`` prints its Markdown to a terminal.

``md_cell`` also turns line breaks into spaces, which a table row cannot hold.
"""

from __future__ import annotations

import re

__all__ = ["md_cell", "md_text"]

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_SPECIAL = re.compile(r"[&<>\\*|]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ENTITIES.get(char, "\\" + char)


def md_text(value: object) -> str:
    """``value`` as Markdown inline text that renders exactly as typed."""
    return _SPECIAL.sub(_escape, _CONTROL.sub("", str(value)))


def md_cell(value: object) -> str:
    """:func:`md_text` for a table cell: line breaks become spaces."""
    return md_text(re.sub(r"\r\n|\r|\n", " ", str(value)))
