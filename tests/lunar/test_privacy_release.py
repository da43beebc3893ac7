"""Issue 25: no identifier reaches a prompt, the release is scanned independently and attacked.

The copying model here (:func:`copier`, a test double) writes every planted anchor value it can
find in a prompt, in many forms (drawn by hypothesis), into every reply. The checks below fold
text with their own code (:func:`_fold`), not the product's scanner.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import unicodedata
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from helpers.lunar import lunar_responder, make_llm
from recworld.chat import Request
from recworld.lunar.anchors import load_anchor_files
from recworld.lunar.config import SynthConfig, SynthOptions
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.privacy import SafeUser, publish, sanitise
from recworld.lunar.privacy.safe import shift
from recworld.lunar.schemas import BehaviourRecord, BehaviourType, Category
from recworld.lunar.synth.pipeline import privacy_report, synthesize
from recworld.lunar.synth.release import release

CHICAGO = ZoneInfo("America/Chicago")
NAMES = ("John Smith", "Priya Raman", "Dave Miller", "Zoë Quill")
EMPLOYERS = ("Mercy Hospital", "Acme Widgets")
MERCHANTS = ("Golden Dragon", "Canarybistro Kowloon")
REFS = ("K7XQ2M", "PNR88213X")
PHONES = ("3125550147", "4155550199")


def _fold(text: str) -> str:
    """The test's own folding: diacritics, case, separators and spelled digits away."""
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    t = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).lower()
    t = re.sub(r"\b(" + "|".join(words) + r")\b", lambda m: str(words.index(m.group(1))), t)
    return re.sub(r"[^a-z0-9]", "", t)


FORMS: dict[str, Callable[[str], str]] = {
    "verbatim": lambda v: v,
    "upper": str.upper,
    "lower": str.lower,
    "spaced": lambda v: " ".join(v.replace(" ", "")),
    "dashed": lambda v: "-".join(v.replace(" ", "")),
    "reversed": lambda v: ", ".join(reversed(v.split())) if " " in v else v[::-1][::-1],
    "spelled": lambda v: " ".join(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"][int(c)]
        if c.isdigit()
        else c
        for c in v
    ),
}


def copier(planted: Sequence[str], forms: Sequence[str]) -> Callable[[Request], str]:
    """A model that copies every planted value a prompt shows (in any folded form) in ``forms``."""
    base = lunar_responder()

    def respond(request: Request) -> str:
        prompt = "\n".join(m.content for m in request.messages)
        folded = _fold(prompt)
        seen = [v for v in planted if _fold(v) in folded]
        seen += re.findall(r'"value": "([^"]+)"', prompt) + re.findall(r': "([^"]{3,40})"', prompt)
        copies = [FORMS[f](v) for v in seen for f in forms][:12]
        reply = base(request)
        if request.json_schema is None or not copies:
            return reply
        title = request.json_schema.get("title")
        data = json.loads(reply)
        if title == "RecordsDraft":
            for r in data["records"]:
                r["fields"] = [{"name": "memo", "value": c[:80]} for c in copies[:5]]
        elif title == "ProfileDraft":
            data["affinities"][0]["preferences"] = [c[:60] for c in copies[:4]]
        elif title == "WeekDraft":
            data["theme"] = "; ".join(copies)[:100]
        return json.dumps(data)

    return respond


def _anchor_folder(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    users = [
        {
            "user_id": f"acct-{n}",
            "age": 34,
            "gender": "female",
            "occupation": "nurse",
            "timezone": "America/Chicago",
            "name": NAMES[n],
            "email": f"{NAMES[n].split()[0].lower()}.x1984@gmail.com",
            "phone": PHONES[n],
            "notes": f"Lives with partner {NAMES[n + 2]}; works at {EMPLOYERS[n]}.",
            "loyalty_tier": "gold",
        }
        for n in range(2)
    ]
    start = datetime(2018, 3, 5, tzinfo=CHICAGO)
    events = []
    for n in range(2):
        for d in range(14):
            for hour, minute in ((12, 15), (19, 7)):
                when = (start + timedelta(days=d)).replace(hour=hour, minute=minute)
                events.append(
                    {
                        "user_id": f"acct-{n}",
                        "timestamp": int(when.timestamp()),
                        "domain": "dining",
                        "type": "order",
                        "fields": {
                            "merchant": MERCHANTS[n],
                            "companion": NAMES[1 - n],
                            "order_number": REFS[n],
                            "phone": int(PHONES[n]),
                            "paid_at": int(when.timestamp()),
                            "cuisine": "cantonese",
                            "amount": 23.45,
                            "secret_code": "ZQ-991-KX",
                        },
                    }
                )
    (root / "users.jsonl").write_text("".join(json.dumps(u) + "\n" for u in users))
    (root / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return root


PLANTED = (*NAMES, *EMPLOYERS, *MERCHANTS, *REFS, *PHONES, "acct-0", "acct-1", "x1984", "ZQ-991-KX")


@pytest.fixture(scope="module")
def anchors(tmp_path_factory: pytest.TempPathFactory) -> list:
    return load_anchor_files(_anchor_folder(tmp_path_factory.mktemp("anchors")))


@pytest.mark.slow  # Presidio and spaCy load here (20-60 s), then 3 synth runs with the copier
@settings(
    max_examples=3,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # a failing run is slow to shrink: report it as drawn
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(forms=st.lists(st.sampled_from(sorted(FORMS)), min_size=2, max_size=4, unique=True))
def test_a_copying_model_sees_and_releases_no_identifier(
    anchors: list, tmp_path_factory, forms: list[str]
) -> None:
    tmp = tmp_path_factory.mktemp("copy")
    llm, model = make_llm(copier(PLANTED, forms), tmp)
    options = SynthOptions(weeks=1, max_slots_per_day=1, max_records_per_slot=2, active_days=2)
    result = asyncio.run(synthesize(llm, anchors, options, key=b"k" * 32))
    prompts = _fold("\n".join(m.content for c in model.calls for m in c.messages))
    assert not [v for v in PLANTED if _fold(v) in prompts]
    assert "1520" not in prompts  # no real Unix time (2018: 152...) reaches a prompt
    done = release(result)
    config = SynthConfig(anchors="x", out_dir=tmp, llm=SessionConfig(model="scripted"), options=options)
    report = privacy_report(tmp, result, done, [], config)
    released = _fold(json.dumps([done.profiles, done.trajectories, done.records]))
    assert not [v for v in PLANTED if _fold(v) in released]
    assert report.findings == []
    assert set(report.columns["unknown_dropped"]) == {"secret_code", "paid_at", "users.loyalty_tier"}


def test_the_scanner_finds_what_the_old_gate_missed(anchors: list) -> None:
    planted = [
        "Smith, John",
        "J. Smith",
        "GOLDEN DRAGON",
        "K-7-X-Q-2-M",
        "three one two five five five zero one four seven",
        "06/03/18",
        "20180306",
        "06-Mar-2018",
        "Tuesday 6 March",
        "Miller, Dave",
        "MercyHospital",
    ]
    for text in planted:
        found = publish.findings(anchors, {"records.jsonl": [{"fields": {"memo": text}}]}, [])
        assert found, text
    numbers = publish.findings(anchors, {"records.jsonl": [{"fields": {"memo": 1520273711}}]}, [])
    assert not numbers  # not a real time of these anchors
    real = anchors[0].records[0].timestamp
    assert publish.findings(anchors, {"r": [{"fields": {"paid": real}}, {"fields": {"ms": real * 1000}}]}, [])
    assert publish.findings(anchors, {"r": [{"fields": {"phone": 3125550147}}]}, [])
    invented = publish.findings(anchors, {"r": [{"fields": {"memo": "write to kim.lee77@example.org"}}]}, [])
    assert [f.what for f in invented] == ["EMAIL_ADDRESS"]  # Presidio over released free text
    assert not publish.findings(
        anchors, {"r": [{"fields": {"memo": "dinner at a noodle bar on 2031-07-09"}}]}, []
    )


def test_a_planted_near_copy_release_is_refused() -> None:
    draw = random.Random(7)
    records = [
        BehaviourRecord(
            record_id=f"a{n}",
            user_id="user-000",
            timestamp=1_900_000_000 + draw.randrange(0, 90 * 86400),
            domain=draw.choice(list(Category)),
            type=draw.choice(list(BehaviourType)),
        )
        for n in range(240)
    ]
    used, control = records[:120], records[120:]
    copies = [r.model_copy(update={"record_id": f"s{n}"}).to_json() for n, r in enumerate(used)]
    zones = {"user-000": CHICAGO}
    report = publish.risks(used, control, copies, zones, 0.05, seed=0)
    assert report.singling_out and report.linkability and report.inference
    verdict = publish.verdict([], report, accept_risk=False)
    assert verdict is not None and "columns" in verdict
    assert publish.verdict([], report, accept_risk=True) is None


def test_a_dst_week_keeps_hard_anchors_on_both_sides(anchors: list) -> None:
    slots = {
        "slots": [
            {
                "start": "12:00",
                "end": "12:30",
                "scene": {k: "x" for k in ("who", "what", "when", "where", "why", "how")},
                "expected": ["order"],
                "domains": ["dining"],
            },
            {
                "start": "19:00",
                "end": "19:30",
                "scene": {k: "x" for k in ("who", "what", "when", "where", "why", "how")},
                "expected": ["order"],
                "domains": ["dining"],
            },
        ]
    }
    base = lunar_responder(copy_anchors=False)

    def respond(request: Request) -> str:
        if request.json_schema and request.json_schema.get("title") == "SlotsDraft":
            return json.dumps(slots)
        return base(request)

    # A key whose secret shift lands the two weeks on a DST switch of Chicago (the real one is
    # always moved off it: no shifted month-day may equal a real one).
    key = next(k for k in (bytes([n]) * 32 for n in range(256)) if _crosses_dst(anchors[:1], k))
    llm, model = make_llm(respond)
    options = SynthOptions(weeks=2, max_slots_per_day=2, max_records_per_slot=1, validate_weeks=False)
    asyncio.run(synthesize(llm, anchors[:1], options, key=key))
    records = [
        c.messages[-1] for c in model.calls if c.json_schema and c.json_schema["title"] == "RecordsDraft"
    ]
    slots = {p.content.splitlines()[0]: "hard anchors" in p.content for p in records}  # "... Date D, slot S."
    assert len(slots) == 28 and all(slots.values())  # 14 days x 2 slots, on both sides of the switch


def _crosses_dst(anchors: list, key: bytes) -> bool:
    users, _, _ = sanitise(anchors, key)
    times = [r.timestamp for r in users[0].records]
    return len({datetime.fromtimestamp(t, CHICAGO).utcoffset() for t in times}) == 2


@settings(max_examples=60, deadline=None)
@given(
    ts=st.integers(min_value=946684800, max_value=1893456000),
    weeks=st.integers(min_value=260, max_value=1560),
    zone=st.sampled_from(["America/Chicago", "Europe/London", "Asia/Kolkata", "Australia/Sydney", "UTC"]),
)
def test_the_secret_shift_keeps_weekday_and_local_time(ts: int, weeks: int, zone: str) -> None:
    tz = ZoneInfo(zone) if zone != "UTC" else UTC
    wall = datetime.fromtimestamp(ts, tz).replace(tzinfo=None) + timedelta(weeks=weeks)
    after = datetime.fromtimestamp(shift(ts, weeks, tz), tz).replace(tzinfo=None)
    exists = datetime.fromtimestamp(wall.replace(tzinfo=tz).timestamp(), tz).replace(tzinfo=None) == wall
    assert after == wall or not exists  # the same wall clock, unless it falls in a spring-forward gap
    assert after.weekday() == wall.weekday()


def test_a_safe_user_is_made_only_by_sanitise(anchors: list) -> None:
    with pytest.raises(TypeError):
        SafeUser(anchors[0], object())
    users, _report, weeks = sanitise(anchors, b"k" * 32)
    assert isinstance(users[0], SafeUser) and 260 <= weeks <= 1560
    fields = {k for u in users for r in u.records for k in r.fields}
    assert fields == {"merchant", "companion", "cuisine", "amount"}
    assert all(r.fields["amount"] == 23 for u in users for r in u.records)
    assert "Presidio" not in str(users[0].demographic.extra) and "notes" in users[0].demographic.extra
    again, _, _ = sanitise(anchors, b"k" * 32)
    assert [u.records for u in again] == [u.records for u in users]  # consistent under one key
    assert {r.fields["companion"] for r in users[0].records} == {users[0].records[0].fields["companion"]}
    assert BehaviourType.ORDER and Category.DINING


@settings(max_examples=4, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**32 - 1), st.integers(12, 60))
def test_the_same_release_gets_the_same_risks(draw_seed: int, n: int) -> None:
    """Anonymeter's queries come from the data and the seed alone (polars' hash order fixed)."""
    draw = random.Random(draw_seed)
    records = [
        BehaviourRecord(
            record_id=f"a{k}",
            user_id=f"user-00{k % 3}",
            timestamp=1_900_000_000 + draw.randrange(0, 60 * 86400),
            domain=draw.choice(list(Category)),
            type=draw.choice(list(BehaviourType)),
        )
        for k in range(2 * n)
    ]
    released = [
        r.model_copy(update={"record_id": f"s{k}"}).to_json() for k, r in enumerate(records[: n // 2])
    ]
    zones = {f"user-00{k}": CHICAGO for k in range(3)}
    first = publish.risks(records[:n], records[n:], released, zones, 0.05, seed=draw_seed)
    again = publish.risks(records[:n], records[n:], released, zones, 0.05, seed=draw_seed)
    assert first.singling_out is not None and first == again


def test_too_few_singling_out_queries_are_said_on_the_card(caplog: pytest.LogCaptureFixture) -> None:
    """One category and one type: Anonymeter can write few distinct queries, and the card says so."""
    records = [
        BehaviourRecord(
            record_id=f"a{k}",
            user_id="user-000",
            timestamp=1_900_000_000 + 3600 * (k % 3),
            domain=Category.DINING,
            type=BehaviourType.ORDER,
        )
        for k in range(40)
    ]
    released = [r.model_copy(update={"record_id": f"s{k}"}).to_json() for k, r in enumerate(records[:10])]
    with caplog.at_level(logging.DEBUG):
        report = publish.risks(records[:20], records[20:], released, {"user-000": CHICAGO}, 0.05, seed=0)
    so = report.singling_out
    assert so is not None and so.queries is not None and so.queries < so.attacks
    (line,) = [x for x in report.lines() if x.startswith("singling out")]
    assert f"only {so.queries} distinct queries for {so.attacks} attacks" in line
    assert not [r for r in caplog.records if r.name.startswith("anonymeter") and r.levelno < logging.ERROR]


@given(st.integers(1, 400), st.none() | st.integers(0, 400), st.floats(0, 1))
def test_a_card_line_names_a_query_shortfall_exactly_when_there_is_one(
    attacks: int, queries: int | None, high: float
) -> None:
    from recworld.lunar.privacy.attack import Risk, RiskReport

    risk = Risk(value=0.0, low=0.0, high=high, attacks=attacks, drivers=[], queries=queries)
    (line,) = [x for x in RiskReport(singling_out=risk).lines() if x.startswith("singling out")]
    short = queries is not None and queries < attacks
    assert ("likely an underestimate" in line) is short, line
    assert (f"only {queries} distinct queries for {attacks} attacks" in line) is short, line
