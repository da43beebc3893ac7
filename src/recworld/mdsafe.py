"""Markdown text that renders as typed: data never becomes HTML, a link, an image or a table cell break.

Invariant: whatever a name holds (a model, measure, option or dataset name, at
any length, in any Unicode), :func:`md_text` and :func:`md_cell` make Markdown
that a CommonMark or GitHub renderer shows as that text: no tag, no link, no
image, no autolink and no extra table column comes from data.

``report.md`` once carried a model named ``openai:<svg onload=alert(9)>`` raw
(review case X2), and later ``![p](http://evil.example/pixel.png)``, which a
viewer fetches when the report is opened (review 3, D9). Every piece of data
that goes into a Markdown file goes through :func:`md_text` (or :func:`md_cell`
inside a table):

* ``&``, ``<`` and ``>`` become entities, so no tag, comment or ``<...>``
  autolink can start, and an entity a name holds is shown as typed;
* a backslash, ``*`` and ``|`` are backslash-escaped, so data adds no
  emphasis, escapes none of ours and makes no extra table column;
* ``[``, ``]`` and ``!`` are backslash-escaped whenever the text holds a link,
  image or reference-definition shape (``](``, ``][``, ``]:``), so ``[x](url)``
  and ``![p](url)`` are no link and no image, while a bracketed interval such as
  ``[0.166, 0.465]`` (no definition can exist for it) stays as written;
* ``://`` and ``www.`` are broken by an escape (``\\://``, ``www\\.``), and so is
  each dot of an ``@domain``, so a renderer that links bare URLs and addresses
  (GitHub's autolinks, markdown-it's linkify) finds none in data;
* backticks stay: a code span shows its content literally, so it can hold no
  link or tag;
* control characters (an ANSI escape in a title) are dropped, since
  ``lunar report`` prints its Markdown to a terminal, and so are the bidi
  controls that reorder what a reader sees (U+202A-U+202E, U+2066-U+2069).

``md_cell`` also turns line breaks into spaces, which a table row cannot hold.
"""

from __future__ import annotations

import re

__all__ = ["md_cell", "md_text"]

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_SPECIAL = re.compile(r"[&<>\\*|]|:(?=//)|(?<=www)\.", re.IGNORECASE)
_SPECIAL_LINK = re.compile(r"[&<>\\*|\[\]!]|:(?=//)|(?<=www)\.", re.IGNORECASE)
# What a link, an image or a link reference definition needs: a closing bracket and then ( [ or :.
_LINK_SHAPE = re.compile(r"\][(\[:]")
_DOMAIN = re.compile(r"@[\w.-]*\.[\w.-]*")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ENTITIES.get(char, "\\" + char)


def md_text(value: object) -> str:
    """``value`` as Markdown inline text that renders exactly as typed."""
    text = _CONTROL.sub("", str(value))
    text = (_SPECIAL_LINK if _LINK_SHAPE.search(text) else _SPECIAL).sub(_escape, text)
    return _DOMAIN.sub(lambda m: m.group().replace(".", "\\."), text) if "@" in text else text


def md_cell(value: object) -> str:
    """:func:`md_text` for a table cell: line breaks become spaces."""
    return md_text(re.sub(r"\r\n|\r|\n", " ", str(value)))
