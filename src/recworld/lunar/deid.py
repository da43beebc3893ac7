"""De-identification: personal identifiers become stable anonymous tokens.

A :class:`Deidentifier` keeps one token map for a whole run, so the same
e-mail, phone number, street address or person's name becomes the same token
everywhere (``<EMAIL_1>``, ``<PHONE_2>``, ...) and cross-record reasoning
still works on the anonymised data. Names are found two ways: values of
person-name fields (``guest_name``, ``contact``, ...) and honorific patterns
(``Mr. Smith``); a name once seen is replaced wherever it appears later.
Exact postal codes in demographics are coarsened to their first three digits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

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
ADDRESS = re.compile(
    r"\b\d{1,5}\s+(?:[A-Z][\w'-]*\s+){1,3}"
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Way|Court|Ct|Place|Pl)\b"
)
HONORIFIC_NAME = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)")
NAME_FIELDS = frozenset(
    {
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
        "customer_name",
        "driver_name",
    }
)
ZIP = re.compile(r"\b(\d{3})\d{2}(?:-\d{4})?\b")


class Deidentifier:
    """Replace identifiers with tokens; one consistent map per instance."""

    def __init__(self) -> None:
        self.tokens: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}
        self._names: set[str] = set()

    def token(self, kind: str, value: str) -> str:
        key = (kind, value.strip())
        if key not in self.tokens:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            self.tokens[key] = f"<{kind}_{self._counts[kind]}>"
        return self.tokens[key]

    def add_name(self, name: str) -> None:
        if name.strip() and not name.startswith("<"):
            self._names.add(name.strip())

    def text(self, value: str) -> str:
        out = EMAIL.sub(lambda m: self.token("EMAIL", m.group(0)), value)
        out = ADDRESS.sub(lambda m: self.token("ADDRESS", m.group(0)), out)
        out = PHONE.sub(lambda m: self.token("PHONE", m.group(0)), out)
        for match in HONORIFIC_NAME.finditer(out):
            self.add_name(match.group(1))
        for name in sorted(self._names, key=len, reverse=True):
            out = re.sub(rf"\b{re.escape(name)}\b", self.token("PERSON", name), out)
        return out

    def fields(self, fields: Mapping[str, FieldValue]) -> dict[str, FieldValue]:
        for key, value in fields.items():
            if key.lower() in NAME_FIELDS and isinstance(value, str):
                self.add_name(value)
        return {k: self.text(v) if isinstance(v, str) else v for k, v in fields.items()}

    def record(self, record: BehaviourRecord) -> BehaviourRecord:
        return record.model_copy(update={"fields": self.fields(record.fields)})

    def demographic(self, demo: Demographic) -> Demographic:
        location = None if demo.location is None else ZIP.sub(r"\1xx", self.text(demo.location))
        return demo.model_copy(
            update={"location": location, "extra": {k: self.text(v) for k, v in demo.extra.items()}}
        )

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
