"""Calendar dates written inside prose: found, read and moved.

A model shown a day plan dated ``2019-03-04`` writes that date back into its scenes and
summaries, in whatever format it likes (``2019-03-04``, ``March 4, 2019``, ``4 Mar 2019``,
``03/04/2019``, Amazon's ``03 4, 2019``). The release moves every such mention by the
same whole number of days as the user's timeline (:func:`shift_dates`) and the leak
scanner looks each one up among the run's real dates (:func:`find_dates`).

Numeric dates are ambiguous (``03/04/2019``): a mention carries every reading that is a
valid date, month first, so a lookup matches either and a shift keeps the first.
Years alone (``1995``) and days without a year (``March 4``) are not dates here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = (
    r"(?P<month>Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DAY = r"(?P<d>\d{1,2})(?P<ord>st|nd|rd|th)?"

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ymd", re.compile(r"(?<![\d-])(?P<y>\d{4})(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})(?!\d)")),
    ("amazon", re.compile(r"(?<![\d/.-])(?P<m>\d{1,2}) (?P<d>\d{1,2}), (?P<y>\d{4})(?!\d)")),
    (
        "numeric",
        re.compile(r"(?<![\d/.-])(?P<a>\d{1,2})(?P<sep>[/.-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4})(?!\d)"),
    ),
    ("mdy", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+(?P<y>\d{{4}})(?!\d)", re.IGNORECASE)),
    ("dmy", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+(?P<y>\d{{4}})(?!\d)", re.IGNORECASE)),
    ("my", re.compile(rf"\b{_MONTH}\s+(?P<y>\d{{4}})(?!\d)", re.IGNORECASE)),
)


@dataclass(frozen=True)
class DateMention:
    """One date written in a text: where, every valid reading, and how to write a moved one."""

    start: int
    end: int
    readings: tuple[date, ...]
    write: Callable[[date], str]


def _month_number(name: str) -> int:
    return next(n for n, full in enumerate(MONTHS, 1) if full.startswith(name.lower().rstrip(".")[:3]))


def _valid(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _month_word(style: str, month: int) -> str:
    """Month ``month`` written like ``style`` (full or abbreviated, the same capitalisation)."""
    bare = style.rstrip(".")
    full = MONTHS[month - 1]
    word = full if len(bare) > 4 or bare.lower() in ("may", "june", "july") else full[:3]
    if bare.lower() == "sept":
        word = full[:4] if month == 9 else full[:3]
    if bare.isupper() and len(bare) > 1:
        word = word.upper()
    elif bare[:1].isupper():
        word = word.capitalize()
    return word + ("." if style.endswith(".") and len(word) < len(full) else "")


def _ordinal(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _rewriter(m: re.Match[str], parts: dict[str, Callable[[date], str]]) -> Callable[[date], str]:
    """Writes a date in the layout of match ``m``: each named group in ``parts`` rewritten, the rest kept."""
    spans = sorted((m.start(g), m.end(g), f) for g, f in parts.items() if m.start(g) >= 0)
    text, base = m.group(0), m.start()

    def write(x: date) -> str:
        out, last = [], 0
        for lo, hi, f in spans:
            out += [text[last : lo - base], f(x)]
            last = hi - base
        return "".join([*out, text[last:]])

    return write


def _mention(kind: str, m: re.Match[str]) -> DateMention | None:
    g = m.groupdict()
    y = int(g["y"])
    if kind == "numeric":
        a, b = int(g["a"]), int(g["b"])
        first, second = _valid(y, a, b), _valid(y, b, a)  # month first, then day first
        readings = tuple(dict.fromkeys(x for x in (first, second) if x is not None))
        if not readings:
            return None
        wa, wb = len(g["a"]), len(g["b"])
        if first is not None:
            month_of, day_of = (lambda x: f"{x.month:0{wa}d}"), (lambda x: f"{x.day:0{wb}d}")
            parts = {"a": month_of, "b": day_of}
        else:
            parts = {"a": lambda x: f"{x.day:0{wa}d}", "b": lambda x: f"{x.month:0{wb}d}"}
        parts["y"] = lambda x: f"{x.year:04d}"
        return DateMention(m.start(), m.end(), readings, _rewriter(m, parts))
    if kind in ("ymd", "amazon"):
        month, day = int(g["m"]), int(g["d"])
        wm, wd = len(g["m"]), len(g["d"])
        parts = {
            "y": lambda x: f"{x.year:04d}",
            "m": lambda x: f"{x.month:0{wm}d}",
            "d": lambda x: f"{x.day:0{wd}d}",
        }
    else:
        month = _month_number(g["month"])
        day = int(g["d"]) if kind != "my" else 15  # mid-month: a shift by weeks keeps the month mostly
        style = g["month"]
        parts = {"y": lambda x: f"{x.year:04d}", "month": lambda x: _month_word(style, x.month)}
        if kind != "my":
            parts["d"] = lambda x: str(x.day)
            if g.get("ord"):
                parts["ord"] = lambda x: _ordinal(x.day)
    found = _valid(y, month, day)
    return None if found is None else DateMention(m.start(), m.end(), (found,), _rewriter(m, parts))


def find_dates(text: str) -> list[DateMention]:
    """Every full date written in ``text``, left to right, none overlapping (the earliest pattern wins)."""
    found: list[DateMention] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < hi and lo < m.end() for lo, hi in taken):
                continue
            mention = _mention(kind, m)
            if mention is not None:
                found.append(mention)
                taken.append((m.start(), m.end()))
    return sorted(found, key=lambda x: x.start)


def replace_dates(text: str, new: Callable[[DateMention], str | None]) -> str:
    """``text`` with each date mention replaced by ``new(mention)`` (None keeps it as written)."""
    out, last = [], 0
    for mention in find_dates(text):
        replacement = new(mention)
        if replacement is None:
            continue
        out.append(text[last : mention.start])
        out.append(replacement)
        last = mention.end
    out.append(text[last:])
    return "".join(out)


def shift_dates(text: str, days: int) -> str:
    """Every date in ``text`` moved ``days`` days earlier, written in the format it had."""
    if not days:
        return text
    return replace_dates(text, lambda m: m.write(m.readings[0] - timedelta(days=days)))
