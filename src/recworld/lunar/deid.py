"""De-identification: personal identifiers become stable anonymous tokens.

A :class:`Deidentifier` keeps one token map for a whole run, so the same
e-mail, phone number, street address or person's name becomes the same token
everywhere (``<EMAIL_1>``, ``<PHONE_2>``, ...) and cross-record reasoning
still works on the anonymised data. Names are found two ways: values of
person-name fields (``guest_name``, ``contact``, ...) and honorific patterns
(``Mr. Smith``), plus field keys shaped like a person's name. Names are learnt
over the whole run first and replaced in a second pass, so order does not matter.
Phone numbers (with or without separators), national ID numbers, e-mails and
street addresses become tokens; demographic extras such as ``name`` or
``phone`` become one token each.
Exact postal codes in demographics are coarsened to their first three digits.

What a released profile keeps of a demographic record is :func:`released_demographic`:
an age band, gender, occupation, a coarse region and the time zone, nothing else; what
the synthesis prompts see is :func:`prompt_demographic` (no identifying extras). Real
anchor strings (titles, merchants, places, references, ...) are the leak scanner's job
(:mod:`recworld.lunar.leaks`), which matches ordinary-word titles only in context.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from recworld.lunar.leaks import extra_kind, fold_key, fold_words, zipf
from recworld.lunar.schemas import (
    BehaviourRecord,
    Demographic,
    FieldValue,
    Profile,
    Trajectory,
)

EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
PHONE = re.compile(
    r"(?<![\w:.])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?)?\d{3,4}[\s.-]\d{3,4}(?:[\s.-]\d{2,4})?(?![\w:])"
)
# Phone numbers written without separators (4155550199, 13812345678, +8613812345678).
PHONE_PLAIN = re.compile(r"(?<![\w.+-])\+?\d{10,13}(?![\w.])")
# National ID numbers: 18-digit resident IDs (last character may be X) and US SSNs.
ID_NUMBER = re.compile(r"(?<![\w-])(?:\d{17}[\dXx]|\d{3}-\d{2}-\d{4})(?![\w-])")
ADDRESS = re.compile(
    r"\b\d{1,5}\s+(?:[A-Z][\w'-]*\s+){1,3}"
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Way|Court|Ct|Place|Pl)\b"
)
HONORIFIC_NAME = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)")
# A field KEY shaped like a person's name ("Mike Brown"): field names are never Title Case words.
NAME_KEY = re.compile(r"^[A-Z][a-z]+(?:[ .'-][A-Z][a-z]+){1,2}$")
NAME_FIELDS = frozenset(
    {
        "name",
        "person",
        "full_name",
        "first_name",
        "last_name",
        "given_name",
        "family_name",
        "surname",
        "contact",
        "contact_name",
        "guest",
        "guest_name",
        "passenger",
        "passenger_name",
        "recipient",
        "customer_name",
        "driver_name",
        "reviewer_name",
    }
)
# Demographic extras whose whole value is an identifier, by kind of token.
IDENTIFIER_FIELDS = {
    "PHONE": frozenset({"phone", "mobile", "cell", "tel", "telephone", "phone_number", "mobile_phone"}),
    "EMAIL": frozenset({"email", "e_mail", "mail"}),
    "ID": frozenset({"id_number", "id_card", "national_id", "ssn", "passport", "passport_number"}),
    "ADDRESS": frozenset({"address", "street", "street_address", "home_address"}),
}
ZIP = re.compile(r"\b(\d{3})\d{2}(?:-\d{4})?\b")


class Deidentifier:
    """Replace identifiers with tokens; one consistent map per instance.

    Use it in two passes over everything to be released: ``learn_*`` collects the
    names (so a name first seen in a later record is still replaced in text
    processed earlier), then ``record`` / ``profile`` / ``trajectory`` replace.
    :meth:`token` also numbers the leak scanner's tokens, so one map covers a release.
    """

    def __init__(self) -> None:
        self.tokens: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}
        self._names: set[str] = set()
        self._pattern: re.Pattern[str] | None = None

    def token(self, kind: str, value: str) -> str:
        key = (kind, value.strip())
        if key not in self.tokens:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            self.tokens[key] = f"<{kind}_{self._counts[kind]}>"
        return self.tokens[key]

    def add_name(self, name: str) -> None:
        if name.strip() and not name.startswith("<") and name.strip() not in self._names:
            self._names.add(name.strip())
            self._pattern = None

    # -- pass 1: learn -------------------------------------------------------------------------

    def learn_text(self, value: str) -> None:
        for match in HONORIFIC_NAME.finditer(value):
            self.add_name(match.group(1))

    def learn_fields(self, fields: Mapping[str, FieldValue]) -> None:
        for key, value in fields.items():
            if NAME_KEY.match(key.strip()):
                self.add_name(key)
            if isinstance(value, str):
                if fold_key(key) in NAME_FIELDS:
                    self.add_name(value)
                self.learn_text(value)

    def learn_record(self, record: BehaviourRecord) -> None:
        self.learn_fields(record.fields)

    def learn_profile(self, profile: Profile) -> None:
        self.learn_fields(profile.demographic.extra)
        for text in _profile_texts(profile):
            self.learn_text(text)

    def learn_trajectory(self, trajectory: Trajectory) -> None:
        for text in _trajectory_texts(trajectory):
            self.learn_text(text)

    # -- pass 2: replace -----------------------------------------------------------------------

    def _name_pattern(self) -> re.Pattern[str] | None:
        if self._pattern is None and self._names:
            alternatives = "|".join(re.escape(n) for n in sorted(self._names, key=len, reverse=True))
            self._pattern = re.compile(rf"\b(?:{alternatives})\b")
        return self._pattern

    def text(self, value: str) -> str:
        self.learn_text(value)
        out = EMAIL.sub(lambda m: self.token("EMAIL", m.group(0)), value)
        out = ADDRESS.sub(lambda m: self.token("ADDRESS", m.group(0)), out)
        out = ID_NUMBER.sub(lambda m: self.token("ID", m.group(0)), out)
        out = PHONE.sub(lambda m: self.token("PHONE", m.group(0)), out)
        out = PHONE_PLAIN.sub(lambda m: self.token("PHONE", m.group(0)), out)
        pattern = self._name_pattern()
        if pattern is not None:
            out = pattern.sub(lambda m: self.token("PERSON", m.group(0)), out)
        return out

    def fields(self, fields: Mapping[str, FieldValue]) -> dict[str, FieldValue]:
        self.learn_fields(fields)
        return {self.text(k): self.text(v) if isinstance(v, str) else v for k, v in fields.items()}

    def extra(self, extra: Mapping[str, str]) -> dict[str, str]:
        """Demographic extras: identifier columns become one token each, the rest is scrubbed text."""
        self.learn_fields(extra)
        out: dict[str, str] = {}
        for key, value in extra.items():
            kind = next((k for k, names in IDENTIFIER_FIELDS.items() if fold_key(key) in names), None)
            if fold_key(key) in NAME_FIELDS:
                kind = "PERSON"
            out[self.text(key)] = self.token(kind, value) if kind else self.text(value)
        return out

    def record(self, record: BehaviourRecord) -> BehaviourRecord:
        return record.model_copy(update={"fields": self.fields(record.fields)})

    def demographic(self, demo: Demographic) -> Demographic:
        location = None if demo.location is None else ZIP.sub(r"\1xx", self.text(demo.location))
        return demo.model_copy(update={"location": location, "extra": self.extra(demo.extra)})

    def profile(self, profile: Profile) -> Profile:
        affinities = [
            a.model_copy(update={"preferences": [self.text(p) for p in a.preferences]})
            for a in profile.affinities
        ]
        lifestyle = profile.lifestyle.model_copy(
            update={k: self.text(v) for k, v in profile.lifestyle.model_dump().items()}
        )
        return profile.model_copy(
            update={
                "demographic": self.demographic(profile.demographic),
                "affinities": affinities,
                "lifestyle": lifestyle,
            }
        )

    def trajectory(self, trajectory: Trajectory) -> Trajectory:
        weeks = []
        for week in trajectory.weeks:
            days = []
            for day in week.days:
                slots = [
                    s.model_copy(
                        update={
                            "scene": s.scene.model_copy(
                                update={k: self.text(v) for k, v in s.scene.model_dump().items()}
                            )
                        }
                    )
                    for s in day.slots
                ]
                days.append(
                    day.model_copy(
                        update={
                            "anchor_activities": [self.text(a) for a in day.anchor_activities],
                            "slots": slots,
                        }
                    )
                )
            weeks.append(
                week.model_copy(
                    update={"theme": self.text(week.theme), "rhythm": self.text(week.rhythm), "days": days}
                )
            )
        return trajectory.model_copy(update={"weeks": weeks})


def _profile_texts(profile: Profile) -> Iterator[str]:
    yield from (p for a in profile.affinities for p in a.preferences)
    yield from profile.lifestyle.model_dump().values()


def _trajectory_texts(trajectory: Trajectory) -> Iterator[str]:
    for week in trajectory.weeks:
        yield week.theme
        yield week.rhythm
        for day in week.days:
            yield from day.anchor_activities
            for slot in day.slots:
                yield from slot.scene.model_dump().values()


# -- demographics: what a prompt sees, what a release keeps -----------------------------------------

AGE_BANDS = ((17, "under 18"), (24, "18-24"), (34, "25-34"), (44, "35-44"), (54, "45-54"), (64, "55-64"))
# Kinds of demographic extras that identify a person: never in a prompt, never released.
IDENTIFYING_EXTRAS = frozenset(
    {"name", "nickname", "employer", "contact", "birthdate", "id", "reference", "place", "merchant"}
)
# A coarse value is a few known words: an invented or rare string is not coarse (Zipf > this).
KNOWN_ZIPF = 1.0


def age_band(age: int | None) -> str | None:
    if age is None:
        return None
    return next((band for top, band in AGE_BANDS if age <= top), "65+")


def coarse_text(value: str | None, max_words: int = 4) -> str | None:
    """``value`` when it is a few common words (a gender, an occupation, a region); else None."""
    if value is None or not value.strip() or any(c.isdigit() for c in value) or len(value) > 40:
        return None
    words = fold_words(value)
    if not words or len(words) > max_words or any(len(w) > 1 and zipf(w) <= KNOWN_ZIPF for w in words):
        return None
    return value.strip()


def region(location: str | None) -> str | None:
    """A coarse region of a location: a postal code's first three characters, else its last part.

    ``zip 85711`` -> ``zip 857xx``; ``Kowloon, Hong Kong`` -> ``Hong Kong``; ``12 Oak Street``
    -> None (no part of it is a few known words).
    """
    if location is None or not location.strip():
        return None
    code = re.fullmatch(
        r"\s*(?:zip|postcode|postal code)?\s*([A-Za-z0-9]{3})[A-Za-z0-9 -]{1,7}\s*", location, re.I
    )
    if code and any(c.isdigit() for c in location):
        return f"zip {code.group(1)}xx"
    return coarse_text(location.split(",")[-1])


def prompt_demographic(demo: Demographic) -> Demographic:
    """The record the synthesis prompts see: exact age, gender, occupation, region, harmless extras.

    Names, nicknames, employers, contacts, birth dates and ids are left out, and so are a
    gender or occupation that is not a few common words: a model shown them copies them
    into profiles and plans.
    """
    extra = {k: v for k, v in demo.extra.items() if extra_kind(k) not in IDENTIFYING_EXTRAS}
    return demo.model_copy(
        update={
            "location": region(demo.location),
            "gender": coarse_text(demo.gender, 3),
            "occupation": coarse_text(demo.occupation),
            "extra": extra,
        }
    )


def released_demographic(demo: Demographic, user_id: str) -> tuple[Demographic, list[str]]:
    """The released demographic (allowlist: age band, gender, occupation, region, time zone).

    Returns it and the kinds of what was dropped (every extra by its kind, and any coarse
    field that was not coarse).
    """
    dropped = [extra_kind(k) for k in demo.extra]
    gender, occupation = coarse_text(demo.gender, 3), coarse_text(demo.occupation)
    dropped += [
        "demographic"
        for raw, kept in ((demo.gender, gender), (demo.occupation, occupation))
        if raw and not kept
    ]
    area = region(demo.location)
    if demo.location and area is None:
        dropped.append("place")
    released = Demographic(
        user_id=user_id,
        age_band=demo.age_band or age_band(demo.age),
        gender=gender,
        occupation=occupation,
        region=demo.region or area,
        timezone=demo.timezone or "UTC",
    )
    return released, dropped
