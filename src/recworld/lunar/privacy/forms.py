"""Normal forms for the independent scanner: one text, many ways of writing it, folded to one.

Nothing here is shared with the synthesis path's matching (:mod:`recworld.lunar.leaks`,
:mod:`recworld.lunar.datetext`, :mod:`recworld.lunar.deid`): the scanner must not inherit
their blind spots.

* :func:`squash`: diacritics, case, spacing and separators folded away, spelled numbers
  as digits, ``at``/``dot`` e-mail spellings dropped: ``G o l d e n - D R A G O N``,
  ``Golden Dragon`` and ``golden dragon`` are all ``goldendragon``;
* :func:`digit_runs`: the numbers a text spells, separators and spelled digits joined:
  ``three one two, 555-0147`` holds ``3125550147``;
* :func:`dates_in`: every calendar date a text writes, in the common formats, with and
  without a year (year-less ones as ``(None, month, day)``).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date

UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
TEENS = [
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_NUMBER_WORD = re.compile(
    r"\b(?:(?:" + "|".join(UNITS + TEENS + TENS[2:] + ["oh", "hundred", "thousand", "and"]) + r")\b[\s,-]*)+",
    re.I,
)
MONTHS = [
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
]
_MON = "|".join(m[:3] + (m[3:] and f"(?:{m[3:]})?") for m in MONTHS) + "|sept"
_EMAIL_WORDS = re.compile(r"[\[(]\s*(?:at|dot)\s*[\])]|\b(?:at|dot)\b", re.I)


def fold(text: str) -> str:
    """Diacritics stripped, case folded, spelled numbers written as digits."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _NUMBER_WORD.sub(lambda m: _spelled(m.group(0)) + " ", plain.casefold())


def _spelled(words: str) -> str:
    """``three one two`` -> 312; ``two thousand eighteen`` -> 2018; ``nineteen ninety seven`` -> 1997."""
    parts = [w for w in re.split(r"[\s,-]+", words.lower()) if w and w != "and"]
    if not parts:
        return words
    if all(p in UNITS or p == "oh" for p in parts):
        return "".join(str(UNITS.index(p)) if p in UNITS else "0" for p in parts)
    groups, value = [], 0
    for p in parts:
        if p == "thousand":
            value = max(value, 1) * 1000
        elif p == "hundred":
            value = max(value, 1) * 100
        else:
            n = (
                UNITS.index(p)
                if p in UNITS
                else 0
                if p == "oh"
                else TEENS.index(p) + 10
                if p in TEENS
                else TENS.index(p) * 10
            )
            if (value and value % 100 == 0) or (value % 10 == 0 and n < 10 and value % 100 >= 20):
                value += n
            elif value:
                groups.append(value)
                value = n
            else:
                value = n
    groups.append(value)
    return "".join(str(g) for g in groups)


def squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", _EMAIL_WORDS.sub(" ", fold(text)))


def words(text: str) -> list[str]:
    """Folded alphanumeric words, runs of single characters joined (``H e a t`` is ``heat``)."""
    out: list[str] = []
    single = ""
    for w in re.findall(r"[a-z0-9]+", fold(text)):
        if len(w) == 1:
            single += w
            continue
        if single:
            out.append(single)
            single = ""
        out.append(w)
    return out + ([single] if single else [])


def digit_runs(text: str) -> list[str]:
    """Digit strings of ``text``, joined across spaces, commas, dots, dashes, slashes, brackets, plus."""
    return [re.sub(r"\D", "", m) for m in re.findall(r"\d(?:[\s,.\-/()+]*\d)*", fold(text))]


def _year(text: str | None) -> int | None:
    if text is None:
        return None
    y = int(text)
    return y if y >= 100 else 2000 + y if y < 50 else 1900 + y


def _month(text: str) -> int:
    t = text.lower()[:3]
    return 9 if t == "sep" else [m[:3] for m in MONTHS].index(t) + 1


def _safe(y: int | None, m: int, d: int) -> tuple[int | None, int, int] | None:
    try:
        date(y or 2000, m, d)
    except ValueError:
        return None
    return (y, m, d)


def dates_in(text: str) -> set[tuple[int | None, int, int]]:
    """Every (year or None, month, day) ``text`` writes (module docstring)."""
    t = fold(text)
    found: set[tuple[int | None, int, int] | None] = set()
    for a, b, c in re.findall(r"(?<!\d)(\d{1,4})\s*[./-]\s*(\d{1,2})\s*[./-]\s*(\d{2,4})(?!\d)", t):
        if len(a) == 4:
            found.add(_safe(int(a), int(b), int(c)))
        else:
            y = _year(c)
            found |= {_safe(y, int(b), int(a)), _safe(y, int(a), int(b))}
    for run in re.findall(r"(?<!\d)(\d{8})(?!\d)", t):
        found |= {
            _safe(int(run[:4]), int(run[4:6]), int(run[6:])),
            _safe(int(run[4:]), int(run[2:4]), int(run[:2])),
        }
        found.add(_safe(int(run[4:]), int(run[:2]), int(run[2:4])))
    day = r"(\d{1,2})(?:st|nd|rd|th)?"
    year = r"(?:\s*[,./-]?\s*(?:of\s+)?(\d{4}|'?\d{2})(?!\d))?"
    for d, mon, y in re.findall(rf"(?<!\d){day}\s*(?:of\s+|[-/.\s])\s*({_MON})\b\.?{year}", t):
        found.add(_safe(_year(y.strip("'") or None), _month(mon), int(d)))
    for mon, d, y in re.findall(rf"\b({_MON})\b\.?[\s-]*{day}(?!\d){year}", t):
        found.add(_safe(_year(y.strip("'") or None), _month(mon), int(d)))
    return {f for f in found if f is not None}
