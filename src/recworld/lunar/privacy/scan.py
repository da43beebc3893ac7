"""The independent release scanner: every anchor value, in every written form, anywhere it is released.

Invariant: a release is published only when this scanner, which shares no matching code
with the synthesis path (it reads the raw anchors itself and folds text with
:mod:`recworld.lunar.privacy.forms` only), finds no anchor value in any released file, the
failures file, the log, the manifest or the terminal text; a finding fails the release.

What counts as an anchor value, read from the anchors as loaded (source ids, raw fields):

* every string value of a record or a demographic column, except under the descriptive keys
  of :data:`DESCRIPTIVE` (a genre is behaviour, and is released on purpose); matched folded
  (:func:`~recworld.lunar.privacy.forms.squash`) as a substring when at least
  :data:`MIN_SQUASHED` characters long, else as a whole word sequence in a value of its own;
* person names also as ``Last First``, and as the words ``F Last`` and ``Last F``; e-mails
  also by local part;
  capitalised phrases and rare words of free text as values of their own;
* every number of :data:`ID_DIGITS` or more digits (in a numeric field, in a string, with any
  separators or spelled out), and every record time in seconds and milliseconds: equal in
  a numeric field, or as a digit run (containing it from :data:`CONTAINED_DIGITS` digits);
* every real calendar day (the records' local and UTC dates, dates written in values): as a
  date with its year in any common format, or a year-less month and day.

Presidio runs over the released free text too (each text holding an ``@`` or six or more
digits, which every kind it is asked for needs): a structured identifier it finds (e-mail,
phone, card, IBAN, SSN, IP) fails the release; a name Presidio finds that folds to an anchor
value is already a finding above.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from recworld.lunar import localtime
from recworld.lunar.anchors import AnchorUser
from recworld.lunar.privacy import forms

MIN_SQUASHED = 6
# A single ordinary word ("Contact", "Casino") is found anywhere only from this length;
# a shorter one as a whole value.
MIN_ONE_WORD = 8
# Keys of free text: the capitalised phrases inside their values are values of their own.
TEXT_KEYS = frozenset(
    [
        "notes",
        "note",
        "comment",
        "comments",
        "bio",
        "about",
        "description",
        "review",
        "review_text",
        "text",
        "message",
        "memo",
        "summary",
    ]
)
# Keys the release writes itself (schema ids): not data.
STRUCTURAL = frozenset({"schema"})
ID_DIGITS = 5
CONTAINED_DIGITS = 7
DESCRIPTIVE = frozenset(
    [
        "genres",
        "genre",
        "category",
        "categories",
        "cuisine",
        "style",
        "format",
        "rating",
        "stars",
        "overall",
        "score",
        "quantity",
        "qty",
        "party_size",
        "nights",
        "duration",
        "distance",
        "mode",
        "class",
        "payment_method",
        "status",
        "timezone",
        "gender",
        "occupation",
        "age",
    ]
)
PERSON_KEYS = frozenset(
    [
        "name",
        "person",
        "full_name",
        "contact",
        "contact_name",
        "guest",
        "guest_name",
        "passenger",
        "passenger_name",
        "recipient",
        "companion",
        "friend",
        "with",
        "host",
        "driver",
        "driver_name",
        "customer_name",
        "reviewer_name",
        "nickname",
        "partner",
    ]
)
PII_DIGITS = 6  # the fewest digits a phone, card, IBAN, SSN or IP address is written with
STRUCTURED_PII = frozenset(
    {"EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "US_SSN", "IP_ADDRESS"}
)
_CAPITALISED = re.compile(r"\b[A-Z][\w'&.-]*(?:\s+(?:of\s+|the\s+|&\s+)?[A-Z][\w'&.-]*)+")


@dataclass(frozen=True)
class Finding:
    where: str  # file name and JSON path, or file:line
    kind: str  # "value", "number", "date", "presidio"
    what: str  # the kind of anchor value matched; never the value itself

    def __str__(self) -> str:
        return f"{self.where}: {self.kind} ({self.what})"


@dataclass
class Anchors:
    """What the scanner looks for (module docstring), folded."""

    squashed: dict[str, str] = field(default_factory=dict)  # squashed value -> kind of value
    short: dict[tuple[str, ...], str] = field(default_factory=dict)  # word sequence -> kind
    numbers: dict[str, str] = field(default_factory=dict)  # digit string -> kind
    days: set[date] = field(default_factory=set)
    phrases: dict[tuple[str, ...], str] = field(default_factory=dict)  # word sequences found anywhere

    def add_text(self, value: str, kind: str) -> None:
        s = forms.squash(value)
        if not s:
            return
        one_word = len(forms.words(value)) == 1 and not any(c.isdigit() for c in s)
        if len(s) >= (MIN_ONE_WORD if one_word else MIN_SQUASHED) and not s.isdigit():
            self.squashed.setdefault(s, kind)
        elif not s.isdigit():
            self.short.setdefault(tuple(forms.words(value)), kind)
        for run in forms.digit_runs(value):
            self.add_number(run, kind)
        for y, m, d in forms.dates_in(value):
            if y is not None:
                self.days.add(date(y, m, d))

    def add_number(self, digits: str, kind: str) -> None:
        digits = digits.lstrip("0") or "0"
        if len(digits) >= ID_DIGITS:
            self.numbers.setdefault(digits, kind)
        if len(digits) > CONTAINED_DIGITS:  # a phone without its country code
            for cut in range(1, 4):
                self.numbers.setdefault(digits[cut:], kind)

    def add_name(self, value: str) -> None:
        parts = forms.words(value)
        self.add_text(value, "name")
        if len(parts) >= 2:
            first, last = parts[0], parts[-1]
            self.add_text(f"{last} {first}", "name")
            for form in ((first[0], last), (last, first[0])):  # "J. Smith", "Smith J": as words
                self.phrases.setdefault(form, "name")


def anchors_of(users: Iterable[AnchorUser]) -> Anchors:
    """Every anchor value of the raw anchors (module docstring)."""
    out = Anchors()
    for u in users:
        zone = _zone(u.demographic.timezone)
        out.add_text(u.user_id, "source id")
        for key, value in u.demographic.extra.items():
            _add_value(out, key, value)
        if u.demographic.location:
            _add_value(out, "location", u.demographic.location)
        for r in u.records:
            out.add_number(str(r.timestamp), "timestamp")
            out.add_number(str(r.timestamp * 1000), "timestamp")
            out.days.add(localtime.local(r.timestamp, zone).date())
            out.days.add(localtime.local(r.timestamp, UTC).date())
            for name, field_value in r.fields.items():
                _add_value(out, name, field_value)
        out.days |= {date.fromisoformat(d) for d in u.day_only.values()}
    return out


def _zone(name: str | None) -> Any:
    try:
        return ZoneInfo(name) if name and name.upper() != "UTC" else UTC
    except (ValueError, KeyError, OSError):
        return UTC


def _add_value(out: Anchors, key: str, value: Any) -> None:
    k = re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        if value == int(value):
            out.add_number(str(abs(int(value))), f"number in {k}")
        return
    if k in DESCRIPTIVE:
        return
    text = str(value)
    if k in PERSON_KEYS:
        out.add_name(text)
    elif "@" in text:
        out.add_text(text, "e-mail")
        out.add_text(text.split("@", maxsplit=1)[0], "e-mail")
    else:
        out.add_text(text, f"value of {k}")
    if k in TEXT_KEYS or len(text.split()) > 6:  # free text: the names and places inside it, on their own
        for phrase in _CAPITALISED.findall(text):
            if len(phrase.split()) == 2:
                out.add_name(phrase)
            else:
                out.add_text(phrase, f"phrase in {k}")


def scan_value(anchors: Anchors, value: Any, where: str) -> Iterator[Finding]:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        if value == int(value) and (digits := str(abs(int(value)))) in anchors.numbers:
            yield Finding(where, "number", anchors.numbers[digits])
        return
    yield from scan_text(anchors, str(value), where, whole=True)


def scan_text(anchors: Anchors, text: str, where: str, *, whole: bool = False) -> Iterator[Finding]:
    squashed = forms.squash(text)
    for value, kind in anchors.squashed.items():
        if value in squashed:
            yield Finding(where, "value", kind)
    seq = tuple(forms.words(text))
    if whole and seq in anchors.short:
        yield Finding(where, "value", anchors.short[seq])
    for n in range(len(seq) - 1):
        if (phrase := anchors.phrases.get(seq[n : n + 2])) is not None:
            yield Finding(where, "value", phrase)
    for run in forms.digit_runs(text):
        run = run.lstrip("0") or "0"
        for digits, kind in anchors.numbers.items():
            if run == digits or (len(digits) >= CONTAINED_DIGITS and digits in run):
                yield Finding(where, "number", kind)
    month_days = {(d.month, d.day) for d in anchors.days}
    for y, m, d in forms.dates_in(text):
        real = (m, d) in month_days if y is None else _real(anchors.days, y, m, d)
        if real:
            yield Finding(where, "date", "real day" if y is not None else "real month and day")


def _real(days: set[date], y: int, m: int, d: int) -> bool:
    try:
        return date(y, m, d) in days
    except ValueError:
        return False


def scan_json(anchors: Anchors, doc: Any, where: str) -> Iterator[Finding]:
    """Every key and leaf of a JSON document."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from scan_text(anchors, str(k), f"{where}.{k}", whole=True)
            if k not in STRUCTURAL:
                yield from scan_json(anchors, v, f"{where}.{k}")
    elif isinstance(doc, list):
        for n, v in enumerate(doc):
            yield from scan_json(anchors, v, f"{where}[{n}]")
    else:
        yield from scan_value(anchors, doc, where)


def scan_file(anchors: Anchors, path: Path) -> list[Finding]:
    """A JSONL, JSON or text file, line by line."""
    out: list[Finding] = []
    if not path.exists():
        return out
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        where = f"{path.name}:{n}"
        try:
            doc = json.loads(line) if path.suffix in (".jsonl", ".json") else None
        except json.JSONDecodeError:
            doc = None
        out += scan_json(anchors, doc, where) if doc is not None else scan_text(anchors, line, where)
    if path.suffix == ".json" and not out:
        with contextlib.suppress(json.JSONDecodeError):
            out += scan_json(anchors, json.loads(path.read_text(encoding="utf-8")), path.name)
    return out


def presidio_findings(texts: Sequence[tuple[str, str]]) -> list[Finding]:
    """Structured identifiers Presidio finds in released free text ((where, text) pairs)."""
    from recworld.lunar.privacy import freetext

    # Each kind needs an "@" or several digits: other texts cannot hold one (and Presidio, whose
    # import alone takes seconds, is loaded only when some text could).
    texts = [(w, t) for w, t in texts if "@" in t or sum(c.isdigit() for c in t) >= PII_DIGITS]
    if not texts or not freetext.available():
        return []
    out = []
    for where, text in texts:
        for entity, _, score in freetext.findings(text):
            if entity in STRUCTURED_PII and score >= 0.5:
                out.append(Finding(where, "presidio", entity))
    return out


def free_texts(doc: Any, where: str) -> Iterator[tuple[str, str]]:
    """The string leaves of a JSON document that read as prose (a space and a letter)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from free_texts(v, f"{where}.{k}")
    elif isinstance(doc, list):
        for n, v in enumerate(doc):
            yield from free_texts(v, f"{where}[{n}]")
    elif isinstance(doc, str) and " " in doc.strip() and re.search(r"[A-Za-z]", doc):
        yield where, doc
