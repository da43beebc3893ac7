"""De-identification gaps: identifier extras, bare phone and ID numbers, late names, names as keys."""

from __future__ import annotations

import json

from recworld.lunar.anchors import AnchorUser
from recworld.lunar.deid import Deidentifier
from recworld.lunar.schemas import (
    Affinity,
    BehaviourRecord,
    BehaviourType,
    Category,
    DayPlan,
    Demographic,
    Lifestyle,
    Profile,
    Trajectory,
    WeekPlan,
)
from recworld.lunar.synth.release import release
from recworld.lunar.synth.result import SynthResult, UserResult


def anonymise(result: SynthResult) -> tuple[list[Profile], list[Trajectory], list[BehaviourRecord]]:
    """The released form of every user, as typed records."""
    out = release(result)
    return (
        [Profile.model_validate(p) for p in out.profiles],
        [Trajectory.model_validate(t) for t in out.trajectories],
        [BehaviourRecord.model_validate(r) for r in out.records],
    )


LIFESTYLE = Lifestyle(clothing="casual", food="home", housing="flat", mobility="bus", spending="frugal")


def _user(uid: str, fields: list[dict[str, str | float]], extra: dict[str, str] | None = None) -> UserResult:
    demo = Demographic(user_id=uid, age=30, extra=extra or {})
    profile = Profile(
        user_id=uid,
        demographic=demo,
        affinities=[Affinity(category=Category.DINING, score=0.5, preferences=["ramen"])],
        lifestyle=LIFESTYLE,
    )
    day = DayPlan(date="2024-01-01", anchor_activities=["lunch"])
    week = WeekPlan(index=0, start_date="2024-01-01", theme="t", rhythm="r", days=[day] * 7)
    records = [
        BehaviourRecord(
            record_id=f"{uid}/w0/d0/s0/r{n}",
            user_id=uid,
            timestamp=1_704_067_200 + 3600 * n,
            domain=Category.DINING,
            type=BehaviourType.ORDER,
            fields=f,
        )
        for n, f in enumerate(fields)
    ]
    trajectory = Trajectory(user_id=uid, start_ts=1_704_067_200, weeks=[week])
    return UserResult(profile, trajectory, records, [])


def _release(*users: UserResult) -> str:
    result = SynthResult(users=list(users), anchors=[AnchorUser(u.profile.demographic, ()) for u in users])
    profiles, trajectories, records = anonymise(result)
    return "\n".join(json.dumps(x.to_json()) for x in [*profiles, *trajectories, *records])


def test_identifier_extras_become_tokens() -> None:
    d = Deidentifier()
    demo = Demographic(
        user_id="u",
        extra={"name": "Alice Jones", "phone": "4155550199", "Mobile": "13812345678", "city": "Leeds"},
    )
    extra = d.demographic(demo).extra
    assert extra == {"name": "<PERSON_1>", "phone": "<PHONE_1>", "Mobile": "<PHONE_2>", "city": "Leeds"}
    assert "Alice Jones" not in d.demographic(demo).describe()


def test_phone_without_separators_and_id_numbers_become_tokens() -> None:
    d = Deidentifier()
    text = "call 4155550199 or +8613812345678, id 11010519491231002X, ssn 078-05-1120"
    assert d.text(text) == "call <PHONE_1> or <PHONE_2>, id <ID_1>, ssn <ID_2>"
    # Dates, times, amounts, short numbers are left alone.
    assert d.text("2024-03-04 10:30 paid 1250.00 for 3 items, order 123456") == (
        "2024-03-04 10:30 paid 1250.00 for 3 items, order 123456"
    )


def test_name_seen_later_is_replaced_in_earlier_text() -> None:
    early = _user("src-a", [{"note": "met Bob Lee for lunch"}])
    late = _user("src-b", [{"guest_name": "Bob Lee", "merchant": "Noodle Bar"}])
    text = _release(early, late)
    assert "Bob Lee" not in text
    assert "met <PERSON_1> for lunch" in text and '"guest_name": "<PERSON_1>"' in text


def test_name_used_as_a_field_key_is_replaced() -> None:
    text = _release(_user("src-a", [{"Mike Brown": "Mike Brown", "merchant": "Cafe"}]))
    assert "Mike Brown" not in text
    assert '"<PERSON_1>": "<PERSON_1>"' in text


def test_name_in_demographic_extra_is_replaced_in_record_text() -> None:
    text = _release(_user("src-a", [{"note": "Dinner for Carol Wu"}], extra={"full_name": "Carol Wu"}))
    assert "Carol Wu" not in text
