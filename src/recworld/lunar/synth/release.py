"""The release gate: what leaves the run, field by field, and the scan no anchor copy gets through.

``RUN/dataset/`` is the releasable folder. It holds exactly three files, built here
from the synthesis result:

* **An allowlist per record kind** (:data:`~recworld.lunar.synth.allowlist.ALLOWLIST`).
  Each released record is built from the allowed fields only, then projected onto the
  allowlist again, so a field added
  to a schema later stays in the run until it is listed here. Demographics keep only an
  age band, gender, occupation, a coarse region and the time zone
  (:func:`~recworld.lunar.deid.released_demographic`); every other column is dropped.
* **Pseudonyms**: synthesis already ran on ``user-NNN`` (``anchors.user.pseudonymised``),
  so ids, record ids and keys never carry a source id.
* **Every free text** goes through the gate (:meth:`Gate.text`): profile preferences and
  lifestyle, week themes and rhythms, day activities, every scene part, the week summary
  rebuilt by validation (``consistency.reconstructed``), record field names and values.
  In order: the run's leak scanner (:mod:`recworld.lunar.leaks`) replaces anchor strings
  with tokens of their kind, the de-identifier replaces e-mails, phones, ID numbers,
  addresses and names, every date written in the text moves with the timeline, and a
  second scan catches what moving made real.
* **Records that copy an anchor are dropped**: the same user's copies at synthesis
  (:mod:`~recworld.lunar.synth.copies`), and here any record whose fields hold anchor
  content of any user (a title, merchant, place, reference, id, a long number).
* **Dates move everywhere**: each user's timeline by whole weeks into :data:`RELEASE_YEAR`
  (or the nearest year whose moved span meets no real date of the run), so weekdays and
  hours are kept and the real dates are not; prose dates move by the same days.
* **A final scan** of every released string (keys included) must find nothing; what it
  finds is redacted and counted too, and ``released`` (what is left after it) is checked
  to be zero before anything is written.

Every hit is counted per kind (:class:`~recworld.lunar.store.outputs.LeakKind` in the
manifest): how many anchor strings the run had, how many occurrences were redacted,
how many were dropped with their record or field, and how many were released (0).
Working state (the response cache with raw replies, real statistics, the manifest) stays
in ``RUN/`` beside ``dataset/``; of it only ``cache.sqlite`` holds raw anchor content.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from recworld.lunar import localtime
from recworld.lunar.datetext import shift_dates
from recworld.lunar.deid import Deidentifier, released_demographic
from recworld.lunar.leaks import CONTENT_KINDS, Scanner, field_kind, string_leaves
from recworld.lunar.localtime import DAY_S, WEEK_S
from recworld.lunar.schemas import (
    Affinity,
    BehaviourRecord,
    Consistency,
    DayPlan,
    Lifestyle,
    Profile,
    Provenance,
    Scene,
    SlotPlan,
    Trajectory,
    WeekPlan,
)
from recworld.lunar.synth.allowlist import is_structural, project
from recworld.lunar.synth.result import SynthResult, UserResult
from recworld.records import Record

RELEASED = ("profiles.jsonl", "trajectories.jsonl", "records.jsonl")
RELEASE_YEAR = 2024
# Years tried after RELEASE_YEAR when a moved timeline would meet a real date of the run.
YEAR_TRIES = (2024, 2023, 2025, 2022, 2026, 2021, 2027, 2020, 2028, 2019, 2029)

_TOKEN = re.compile(r"^\s*(?:<[A-Z]+_\d+>[\s,;.]*)+$")


def _shift_date(iso: str, days: int) -> str:
    return (date.fromisoformat(iso) - timedelta(days=days)).isoformat()


def release_offset(
    start_ts: int, tz: Any = None, *, weeks: int = 1, real: Callable[[date], bool] | None = None
) -> int:
    """Seconds to subtract: whole weeks moving ``start_ts`` to the same time of year in the release year.

    The release year is :data:`RELEASE_YEAR` unless the moved span of ``weeks`` weeks would
    hold a real date of the run (``real``) or not move at all; then the next of
    :data:`YEAR_TRIES` that does neither.
    """
    zone = tz if tz is not None else localtime.zone(None)
    start = localtime.local(start_ts, zone)
    first = None
    for year in YEAR_TRIES:
        try:
            target = start.replace(year=year)
        except ValueError:  # 29 February
            target = start.replace(year=year, day=28)
        offset = round((start_ts - target.timestamp()) / WEEK_S) * WEEK_S
        first = offset if first is None else first
        moved = [localtime.local(start_ts - offset + d * DAY_S, zone).date() for d in range(weeks * 7)]
        if offset and not (real and any(real(d) for d in moved)):
            return offset
    assert first is not None
    return first


@dataclass
class Gate:
    """One release: the scanner, one token map, the counts; each user's time shift."""

    scanner: Scanner
    deid: Deidentifier = field(default_factory=Deidentifier)
    dropped_fields: Counter[str] = field(default_factory=Counter)
    dates_moved: int = 0

    def token(self, kind: str, value: str) -> str:
        return self.deid.token(kind, " ".join(value.lower().split()))

    def text(self, value: str, days: int, *, slot: str | None = None, companions: Sequence[str] = ()) -> str:
        """One released free text: anchor strings, identifiers and real dates out, dates moved."""
        out = self.scanner.redact(value, self.token, slot=slot, companions=companions, keep_dates=True)
        out = self.deid.text(out)
        moved = shift_dates(out, days)
        self.dates_moved += moved != out
        return self.scanner.redact(moved, self.token, slot=slot, companions=companions)

    # -- records ---------------------------------------------------------------------------------

    def copied_kinds(self, record: BehaviourRecord) -> list[str]:
        """The anchor content a synthetic record holds (empty: not a copy of any anchor)."""
        texts = [v for v in record.fields.values() if isinstance(v, str)]
        kinds = []
        for key, value in record.fields.items():
            kinds += [h.kind for h in self.scanner.hits(key)]
            if isinstance(value, str):
                others = [t for t in texts if t is not value]
                kinds += [h.kind for h in self.scanner.hits(value, slot=field_kind(key), companions=others)]
            elif (kind := self.scanner.number_kind(value)) is not None:
                kinds.append(kind)
        return [k for k in kinds if k in CONTENT_KINDS]

    def record(self, r: BehaviourRecord, anon: str, source: str, offset: int) -> BehaviourRecord | None:
        copied = self.copied_kinds(r)
        if copied:
            self.scanner.counts.dropped.update(copied)
            return None
        days = offset // DAY_S
        texts = [v for v in r.fields.values() if isinstance(v, str)]
        fields = {
            self.text(k, days): (
                self.text(v, days, slot=field_kind(k), companions=[t for t in texts if t is not v])
                if isinstance(v, str)
                else v
            )
            for k, v in r.fields.items()
        }
        return BehaviourRecord(
            record_id=_renamed(r.record_id, source, anon),
            user_id=anon,
            timestamp=r.timestamp - offset,
            domain=r.domain,
            type=r.type,
            fields=fields,
            provenance=Provenance.SYNTHETIC,
        )

    # -- profiles --------------------------------------------------------------------------------

    def profile(self, p: Profile, anon: str, offset: int) -> Profile:
        days = offset // DAY_S
        demo, _ = released_demographic(p.demographic, anon)  # what it drops is counted from the source
        coarse = {}
        for name in ("gender", "occupation", "region"):
            value = getattr(demo, name)
            kinds = [h.kind for h in self.scanner.hits(value)] if value else []
            if kinds:  # a coarse field that still names an anchor string: dropped
                self.scanner.counts.dropped.update(kinds)
                value = None
            coarse[name] = value
        demo = demo.model_copy(update=coarse)
        affinities = []
        for a in p.affinities:
            prefs = [self.text(x, days, slot="title", companions=a.preferences) for x in a.preferences]
            kept = [x for x in prefs if not _TOKEN.match(x)] or [a.category.value.replace("_", " ")]
            affinities.append(
                Affinity(category=a.category, score=a.score, preferences=list(dict.fromkeys(kept)))
            )
        ls = p.lifestyle
        parts = [ls.clothing, ls.food, ls.housing, ls.mobility, ls.spending]
        lifestyle = Lifestyle(**{k: self.text(v, days, companions=parts) for k, v in ls.model_dump().items()})
        return Profile(user_id=anon, demographic=demo, affinities=affinities, lifestyle=lifestyle)

    # -- trajectories ----------------------------------------------------------------------------

    def trajectory(self, t: Trajectory, anon: str, offset: int) -> Trajectory:
        days = offset // DAY_S
        weeks = []
        for w in t.weeks:
            plan = [w.theme, w.rhythm]
            day_plans = []
            for d in w.days:
                slots = []
                for s in d.slots:
                    scene = s.scene.model_dump()
                    parts = list(scene.values())
                    clean = {k: self.text(v, days, companions=parts) for k, v in scene.items()}
                    slots.append(
                        SlotPlan(
                            start=s.start,
                            end=s.end,
                            scene=Scene(**clean),
                            expected=s.expected,
                            domains=s.domains,
                        )
                    )
                acts = [self.text(a, days, companions=d.anchor_activities) for a in d.anchor_activities]
                day_plans.append(DayPlan(date=_shift_date(d.date, days), anchor_activities=acts, slots=slots))
            c = w.consistency
            rebuilt = None if c.reconstructed is None else self.text(c.reconstructed, days, companions=plan)
            consistency = Consistency(
                forward=c.forward,
                backward_llm=c.backward_llm,
                backward_embed=c.backward_embed,
                reconstructed=rebuilt,
                combined=c.combined,
                regenerations=c.regenerations,
            )
            weeks.append(
                WeekPlan(
                    index=w.index,
                    start_date=_shift_date(w.start_date, days),
                    theme=self.text(w.theme, days, companions=plan),
                    rhythm=self.text(w.rhythm, days, companions=plan),
                    days=day_plans,
                    consistency=consistency,
                )
            )
        return Trajectory(user_id=anon, start_ts=t.start_ts - offset, weeks=weeks)

    # -- the last look ---------------------------------------------------------------------------

    def final(self, item: Record, kind: str) -> dict[str, Any]:
        """The JSON that is written: projected on the allowlist, every text string scanned again."""
        data = project(item.to_json(), kind, self.dropped_fields)
        scrubbed: dict[str, Any] = _scrub(data, self)
        return scrubbed


def _scrub(data: Any, gate: Gate, path: tuple[str, ...] = ()) -> Any:
    if isinstance(data, str):
        if is_structural(path):
            return data
        return gate.scanner.redact(data, gate.token)
    if isinstance(data, Mapping):
        return {_scrub(k, gate, (*path, "{key}")): _scrub(v, gate, (*path, k)) for k, v in data.items()}
    if isinstance(data, list):
        return [_scrub(v, gate, (*path, "[]")) for v in data]
    return data


def _renamed(record_id: str, source: str, anon: str) -> str:
    return record_id.replace(source, anon, 1) if source != anon else record_id


@dataclass
class Release:
    """The released documents and what the gate did."""

    profiles: list[dict[str, Any]]
    trajectories: list[dict[str, Any]]
    records: list[dict[str, Any]]
    gate: Gate
    released: Counter[str]


def _pseudonyms(result: SynthResult) -> dict[str, str]:
    """Source (or pseudonymous) id -> released id; users are already pseudonymous after synthesis."""
    ids = [u.profile.user_id for u in result.users]
    if all(re.fullmatch(r"(?:lunar-)?user-\d{3,}", i) for i in ids):
        return {i: i for i in ids}
    return {uid: f"user-{n:03d}" for n, uid in enumerate(ids)}


def release(result: SynthResult) -> Release:
    """Run the gate over a synthesis result (module docstring); nothing is written here."""
    scanner = result.scanner or Scanner.of(
        (a.user_id, a.demographic, a.records) for a in (result.sources or result.anchors)
    )
    gate = Gate(scanner)
    for user in result.users:  # pass 1: names anywhere in the run
        for r in user.records:
            gate.deid.learn_record(r)
        gate.deid.learn_profile(user.profile)
        gate.deid.learn_trajectory(user.trajectory)
    names = _pseudonyms(result)
    for demo in [a.demographic for a in result.sources] or [u.profile.demographic for u in result.users]:
        _, dropped = released_demographic(demo, demo.user_id)  # never released: extras, exact values
        scanner.counts.dropped.update(dropped)
    profiles, trajectories, records = [], [], []
    for user in result.users:  # pass 2: replace
        _count_copies(user, scanner)
        source = user.profile.user_id
        anon = names[source]
        zone = localtime.zone(user.profile.demographic.timezone)
        offset = (
            0
            if result.shifted
            else release_offset(  # shifted runs moved in secret already
                user.trajectory.start_ts,
                zone,
                weeks=max(1, len(user.trajectory.weeks)),
                real=scanner.is_real_date,
            )
        )
        for r in user.records:
            clean = gate.record(r, anon, source, offset)
            if clean is not None:
                records.append(gate.final(clean, "record"))
        profiles.append(gate.final(gate.profile(user.profile, anon, offset), "profile"))
        trajectories.append(gate.final(gate.trajectory(user.trajectory, anon, offset), "trajectory"))
    released: Counter[str] = Counter()
    for doc in (*profiles, *trajectories, *records):
        for path, s in string_leaves(doc):
            if not is_structural(path):
                released.update(h.kind for h in scanner.hits(s))
    if released:
        raise AssertionError(f"the release gate left anchor strings in the release: {dict(released)}")
    return Release(profiles, trajectories, records, gate, released)


def _count_copies(user: UserResult, scanner: Scanner) -> None:
    """Copies removed at synthesis count as dropped, by the kinds of anchor string they held."""
    for record, why in user.copies:
        texts = [v for v in record.fields.values() if isinstance(v, str)]
        kinds = [
            h.kind
            for k, v in record.fields.items()
            if isinstance(v, str)
            for h in scanner.hits(v, slot=field_kind(k), companions=[t for t in texts if t is not v])
        ]
        scanner.counts.dropped.update(kinds or [why])
