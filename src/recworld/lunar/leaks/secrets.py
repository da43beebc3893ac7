"""What one anchor value gives the scanner: its strings (whole, rare words, pairs), numbers, dates."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from recworld.lunar.datetext import find_dates
from recworld.lunar.leaks.kinds import (
    COMMON_NAME_ZIPF,
    DIGIT_RUN,
    ID_DIGITS,
    PERSON_KINDS,
    WORD,
    distinctive,
    fold_words,
    is_rare,
    is_uncommon_pair,
    zipf,
)
from recworld.lunar.schemas import FieldValue


@dataclass(frozen=True)
class Secret:
    """One anchor string: its kind, its folded words, and how it may be matched."""

    kind: str
    text: str
    words: tuple[str, ...]
    anywhere: bool  # found in any context (else only in context: slot, quotes, year, cue, companions)
    case: str | None = None  # the capitalised form required (names, context matches)
    companions: frozenset[tuple[str, ...]] = frozenset()  # other values of the same real record


def string_secrets(
    kind: str | None, value: str, companions: frozenset[tuple[str, ...]] = frozenset()
) -> list[Secret]:
    """The secrets one anchor value gives: the whole string and each of its rare words."""
    words = fold_words(value)
    if not words:
        return []
    label = kind or "field"
    out: list[Secret] = []
    rare = [w for w in words if is_rare(w)]
    out += [Secret(label, value, (w,), anywhere=True) for w in rare]
    if len(words) >= 2:  # 'CanaryWharf' written without the space
        out.append(Secret(label, value, ("".join(words),), anywhere=True))
    if len(words) >= 3:  # 'Canary Wharf' out of 'Canary Wharf Pier 9': uncommon pairs identify alone
        pairs = {words[i : i + 2] for i in range(len(words) - 1)}
        out += [Secret(label, value, p, anywhere=True) for p in sorted(pairs) if is_uncommon_pair(p)]
    if kind is None:
        return out  # a descriptor: only its rare words identify
    year = re.match(r"^(.*?)\s*\((?:19|20)\d\d\)\s*$", value)
    if year and year.group(1).strip():  # 'Heat (1995)' is also the title 'Heat'
        out += string_secrets(kind, year.group(1).strip(), companions)
    if kind in PERSON_KINDS:
        if len(words) > 1 or distinctive(words):
            out.append(Secret(kind, value, words, anywhere=True))
        else:  # one ordinary word (Sunny, Will): capitalised, and anywhere only if not very common
            out.append(
                Secret(kind, value, words, anywhere=zipf(words[0]) < COMMON_NAME_ZIPF, case=value.strip())
            )
        if len(words) > 1:
            for part in WORD.findall(value):
                if len(part) >= 3 and part[:1].isupper() and zipf(part) < COMMON_NAME_ZIPF:
                    out.append(Secret(kind, value, (part.lower(),), anywhere=True, case=part))
        return out
    out.append(Secret(kind, value, words, anywhere=distinctive(words), companions=companions))
    return out


def number_digits(value: FieldValue) -> str | None:
    """The significant digits of a numeric value (1234.5 -> '12345'), None for text and booleans."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return repr(abs(value)).replace(".", "").lstrip("0")
    return str(abs(int(value)))


def key_secrets(kind: str, key: str) -> list[Secret]:
    """Words of a column name that no dictionary knows (a key is copied like a value)."""
    return [Secret(kind, key, (w,), anywhere=True) for w in fold_words(key) if len(w) >= 5 and zipf(w) == 0]


def add_numbers(numbers: dict[str, str], kind: str, value: FieldValue) -> None:
    """Distinctive digit runs of a value (ids, phones, booking numbers, zip codes, long amounts) by kind."""
    if isinstance(value, bool):
        return
    digits_of = number_digits(value)
    if digits_of is not None:
        if len(digits_of) >= ID_DIGITS:
            numbers.setdefault(digits_of, kind)
        return
    text = str(value)
    for m in DIGIT_RUN.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if len(digits) >= ID_DIGITS and not looks_like_date_or_time(m.group(0)):
            numbers.setdefault(digits, kind)
        for part in re.findall(r"\d+", m.group(0)):
            if len(part) >= ID_DIGITS:
                numbers.setdefault(part, kind)


def looks_like_date_or_time(run: str) -> bool:
    return bool(find_dates(run)) or bool(re.fullmatch(r"\d{1,2}[.:]\d{2}", run))


def add_dates(dates: dict[date, str], kind: str, value: str) -> None:
    for mention in find_dates(value):
        for day in mention.readings:
            if dates.get(day) != "birthdate":
                dates[day] = kind
