"""The scanner: every anchor string, distinctive number and real date of a run, found in any text."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date

from recworld.lunar import localtime
from recworld.lunar.datetext import find_dates
from recworld.lunar.leaks.kinds import (
    CUES,
    DIGIT_RUN,
    QUOTES,
    STOPWORDS,
    WORD,
    YEAR_AFTER,
    extra_kind,
    field_kind,
    fold_words,
)
from recworld.lunar.leaks.secrets import (
    Secret,
    add_dates,
    add_numbers,
    key_secrets,
    number_digits,
    string_secrets,
)
from recworld.lunar.schemas import BehaviourRecord, Demographic, FieldValue


@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    kind: str
    text: str


@dataclass
class LeakCounts:
    """Per kind of anchor string: how many the run had, and how often they were caught."""

    strings: Counter[str] = field(default_factory=Counter)
    redacted: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)


class Scanner:
    """Every anchor string of a run (see the module docstring); built with :meth:`of`."""

    def __init__(
        self,
        secrets: Iterable[Secret],
        numbers: Mapping[str, str],
        dates: Mapping[date, str],
    ) -> None:
        self._by_first: dict[str, list[Secret]] = {}
        seen: set[tuple[str, tuple[str, ...], bool, str | None]] = set()
        self.counts = LeakCounts()
        for s in secrets:
            if not s.words or (s.kind, s.words, s.anywhere, s.case) in seen:
                continue
            seen.add((s.kind, s.words, s.anywhere, s.case))
            self._by_first.setdefault(s.words[0], []).append(s)
        for bucket in self._by_first.values():
            bucket.sort(key=lambda s: -len(s.words))
        self.numbers = dict(numbers)  # digit string -> kind
        self.dates = dict(dates)  # real date -> "date" | "birthdate"
        strings = {(s.kind, s.text) for b in self._by_first.values() for s in b}
        self.counts.strings.update(kind for kind, _ in strings)
        self.counts.strings.update(self.numbers.values())
        self.counts.strings.update(self.dates.values())

    @classmethod
    def of(cls, users: Iterable[tuple[str, Demographic, Sequence[BehaviourRecord]]]) -> Scanner:
        """The scanner of a run's anchors: (source user id, demographic record, real records) per user."""
        secrets: list[Secret] = []
        numbers: dict[str, str] = {}
        dates: dict[date, str] = {}
        for user_id, demo, records in users:
            secrets += string_secrets("id", user_id)
            add_numbers(numbers, "id", user_id)
            zone = localtime.zone(demo.timezone)
            if demo.location:
                secrets += string_secrets("place", demo.location)
                add_numbers(numbers, "place", demo.location)
            for key, value in demo.extra.items():
                secrets += key_secrets("demographic", key)
                kind = extra_kind(key)
                secrets += string_secrets(kind, value)
                add_numbers(numbers, kind, value)
                add_dates(dates, "birthdate" if kind == "birthdate" else "date", value)
            for r in records:
                dates.setdefault(localtime.local(r.timestamp, zone).date(), "date")
                dates.setdefault(localtime.local(r.timestamp, UTC).date(), "date")
                numbers.setdefault(str(r.timestamp), "date")
                numbers.setdefault(str(r.timestamp - r.timestamp % 86400), "date")  # a day-only source's own
                values = {k: v for k, v in r.fields.items() if isinstance(v, str) and v.strip()}
                companions = {
                    fold_words(v)
                    for k, v in values.items()
                    if field_kind(k) is not None or len(fold_words(v)) > 1
                }
                for key, raw in r.fields.items():
                    secrets += key_secrets("field", key)
                    of_key = field_kind(key)
                    add_numbers(numbers, of_key or "number", raw)
                    if not isinstance(raw, str):
                        continue
                    add_dates(dates, "date", raw)
                    others = frozenset(c for c in companions if c != fold_words(raw))
                    secrets += string_secrets(of_key, raw, others)
        return cls(secrets, numbers, dates)

    # -- finding ---------------------------------------------------------------------------------

    def hits(self, text: str, *, slot: str | None = None, companions: Sequence[str] = ()) -> list[Hit]:
        """Every anchor string, distinctive number and real date in ``text``, none overlapping.

        ``slot`` is the kind of the field ``text`` fills (``title`` for a record's ``title``, a
        profile preference), ``companions`` the other texts of the same released unit (a record's
        fields, a scene's parts): they decide the ordinary-word matches.
        """
        found = self._string_hits(text, slot, companions)
        found += self._number_hits(text)
        found += self._date_hits(text)
        found.sort(key=lambda h: (h.start, -(h.end - h.start)))
        out: list[Hit] = []
        for h in found:
            if out and h.start < out[-1].end:
                continue
            out.append(h)
        return out

    def _string_hits(self, text: str, slot: str | None, companions: Sequence[str]) -> list[Hit]:
        tokens = list(WORD.finditer(text))
        folded = [t.group(0).lower() for t in tokens]
        context: tuple[str, ...] | None = None
        out: list[Hit] = []
        for i, word in enumerate(folded):
            for s in self._by_first.get(word, ()):
                n = len(s.words)
                if tuple(folded[i : i + n]) != s.words:
                    continue
                start, end = tokens[i].start(), tokens[i + n - 1].end()
                if context is None:
                    context = tuple(w for c in (text, *companions) for w in fold_words(c))
                if self._matches(s, text, start, end, folded, i, slot, context):
                    if text[start:end].count("(") > text[start:end].count(")") and text[end : end + 1] == ")":
                        end += 1  # 'Heat (1995)': the closing bracket goes with the title
                    out.append(Hit(start, end, s.kind, text[start:end]))
                    break
        return out

    def _matches(
        self,
        s: Secret,
        text: str,
        start: int,
        end: int,
        folded: Sequence[str],
        i: int,
        slot: str | None,
        context: Sequence[str],
    ) -> bool:
        span = text[start:end]
        if s.case is not None and not _same_case(span, s.case):
            return False
        if s.anywhere:
            return True
        if slot is not None and slot == s.kind and len(s.words) == len(folded):
            return True  # the whole value of a field of its kind
        if slot == s.kind == "title" and span[:1].isupper() and _title_slot_match(text, start, end):
            return True  # capitalised as the title of a title slot ('Heat: Director's Cut', 'Heat - DVD')
        before, after = text[start - 1 : start], text[end : end + 1]
        if before in QUOTES and after == QUOTES[before]:
            return True
        if YEAR_AFTER.match(text, end) and span[:1].isupper():
            return True
        if span[:1].isalpha() and not span[:1].isupper():
            return False
        if len(s.words) > 1 and _title_case(s.text) and _same_case(span, _bare(s.text)):
            return True  # 'Toy Story', 'Central Park': several words capitalised as in the anchor
        cues = CUES.get(s.kind, frozenset())
        previous = folded[max(0, i - 2) : i]
        if any(w in cues for w in previous) or (
            s.kind in ("id", "reference") and text[:start].rstrip().endswith("#")
        ):
            return True
        return any(_contains(context, c) for c in s.companions)

    def _number_hits(self, text: str) -> list[Hit]:
        out = []
        for m in DIGIT_RUN.finditer(text):
            digits = re.sub(r"\D", "", m.group(0))
            kind = self.numbers.get(digits)
            if kind is not None:
                out.append(Hit(m.start(), m.end(), kind, m.group(0)))
                continue
            for part in re.finditer(r"\d+", m.group(0)):  # '2019-03-04 1551726000' style runs
                kind = self.numbers.get(part.group(0))
                if kind is not None:
                    lo = m.start() + part.start()
                    out.append(Hit(lo, lo + len(part.group(0)), kind, part.group(0)))
        return out

    def _date_hits(self, text: str, kinds: frozenset[str] | None = None) -> list[Hit]:
        out = []
        for mention in find_dates(text):
            kind = next((self.dates[d] for d in mention.readings if d in self.dates), None)
            if kind is not None and (kinds is None or kind in kinds):
                out.append(Hit(mention.start, mention.end, kind, text[mention.start : mention.end]))
        return out

    def is_real_date(self, day: date) -> bool:
        return day in self.dates

    def number_kind(self, value: FieldValue) -> str | None:
        """The kind of a field's numeric value when it repeats a distinctive real number."""
        digits = number_digits(value)
        return None if digits is None else self.numbers.get(digits)

    # -- replacing -------------------------------------------------------------------------------

    def redact(
        self,
        text: str,
        token: Callable[[str, str], str],
        *,
        slot: str | None = None,
        companions: Sequence[str] = (),
        keep_dates: bool = False,
        count: bool = True,
    ) -> str:
        """``text`` with every hit replaced by ``token(KIND, matched text)``; each hit counted.

        ``keep_dates`` leaves real *event* dates in place (the release moves them with the
        timeline instead); birth dates and dates found in real values are replaced either way.
        """
        out, last = [], 0
        for h in self.hits(text, slot=slot, companions=companions):
            if keep_dates and h.kind == "date" and _is_date_mention(text, h):
                continue
            out += [text[last : h.start], token(h.kind.upper(), h.text)]
            last = h.end
            if count:
                self.counts.redacted[h.kind] += 1
        return "".join([*out, text[last:]])

    def mask(self, text: str) -> str:
        """``text`` fit to print or log: every hit becomes ``<KIND>`` (not counted)."""
        return self.redact(text, lambda kind, _: f"<{kind}>", count=False)


_TITLE_TAIL = re.compile(r"\s*(?:$|[:(\[|,;]|\s[-\u2013\u2014]\s)")


def _title_slot_match(text: str, start: int, end: int) -> bool:
    """The title opens its slot (after quotes or spaces) and ends it or a separator follows."""
    return not text[:start].strip(" \"'\u201c\u2018") and _TITLE_TAIL.match(text, end) is not None


def _is_date_mention(text: str, hit: Hit) -> bool:
    return any(m.start == hit.start and m.end == hit.end for m in find_dates(text))


def _bare(text: str) -> str:
    """A title without its year suffix ('Heat (1995)' -> 'Heat')."""
    return re.sub(r"\s*\((?:19|20)\d\d\)\s*$", "", text).strip()


def _title_case(text: str) -> bool:
    words = [w for w in WORD.findall(_bare(text)) if w.isalpha() and w.lower() not in STOPWORDS]
    return len(words) >= 2 and all(w[:1].isupper() for w in words)


def _same_case(span: str, form: str) -> bool:
    return fold_words(span) == fold_words(form) and [w for w in WORD.findall(span)] == [
        w for w in WORD.findall(form)
    ]


def _contains(context: Sequence[str], words: tuple[str, ...]) -> bool:
    n = len(words)
    return any(tuple(context[i : i + n]) == words for i in range(len(context) - n + 1))
