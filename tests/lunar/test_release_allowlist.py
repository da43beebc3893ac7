"""The release allowlist and the timeline move (issue 19, item 1): fields and dates that may leave."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime

from recworld.lunar.anchors import AnchorUser
from recworld.lunar.localtime import WEEK_S
from recworld.lunar.schemas import (
    Affinity,
    BehaviourRecord,
    BehaviourType,
    Category,
    Consistency,
    DayPlan,
    Demographic,
    Lifestyle,
    Profile,
    Trajectory,
    WeekPlan,
)
from recworld.lunar.synth.allowlist import ALLOWLIST, project
from recworld.lunar.synth.release import release, release_offset
from recworld.lunar.synth.result import SynthResult, UserResult

# Monday 2024-03-04 00:00 UTC: real data already in the release year.
MONDAY = int(datetime(2024, 3, 4, tzinfo=UTC).timestamp())


def _user(uid: str = "src-9") -> UserResult:
    demo = Demographic(
        user_id=uid, age=41, gender="F", occupation="nurse", location="zip 60614",
        extra={"nickname": "Zazzlecanary", "income": "50-75k"}, timezone="America/Chicago",
    )  # fmt: skip
    profile = Profile(
        user_id=uid,
        demographic=demo,
        affinities=[Affinity(category=Category.DINING, score=0.5, preferences=["ramen"])],
        lifestyle=Lifestyle(clothing="c", food="f", housing="h", mobility="m", spending="s"),
    )
    rebuilt = "Busy week from 2024-03-04 to March 10, 2024: ramen on 03/06/2024"
    days = [DayPlan(date=f"2024-03-{4 + d:02d}", anchor_activities=["work"]) for d in range(7)]
    week = WeekPlan(index=0, start_date="2024-03-04", theme="t", rhythm="r", days=days,
                    consistency=Consistency(reconstructed=rebuilt, combined=1.0))  # fmt: skip
    trajectory = Trajectory(user_id=uid, start_ts=MONDAY, weeks=[week])
    record = BehaviourRecord(
        record_id=f"{uid}/w0/d0/s0/r0", user_id=uid, timestamp=MONDAY + 3600, domain=Category.DINING,
        type=BehaviourType.ORDER, fields={"dish": "ramen", "when": "2024-03-04"},
    )  # fmt: skip
    anchor = record.model_copy(
        update={"record_id": "anchor-1", "fields": {"dish": "pho"}, "timestamp": MONDAY}
    )
    return UserResult(profile, trajectory, [record], [anchor])


def test_released_documents_hold_only_allowlisted_fields_and_coarse_demographics() -> None:
    user = _user()
    result = SynthResult(
        users=[user], sources=[AnchorUser(user.profile.demographic, tuple(user.anchors_used))]
    )
    done = release(result)
    (profile,) = done.profiles
    assert profile["demographic"] == {
        "schema": "recworld.lunar.demographic/2", "user_id": "user-000", "age_band": "35-44", "gender": "F",
        "occupation": "nurse", "region": "zip 606xx", "timezone": "America/Chicago",
    }  # fmt: skip
    assert set(profile) <= set(ALLOWLIST["profile"])
    for t in done.trajectories:
        assert set(t) <= set(ALLOWLIST["trajectory"]) and set(t["weeks"][0]) <= set(ALLOWLIST["week"])
    assert done.gate.scanner.counts.dropped["nickname"] == 1  # the extra never leaves
    assert "Zazzlecanary" not in str(done.profiles) and "50-75k" not in str(done.profiles)


def test_project_drops_and_counts_fields_off_the_allowlist() -> None:
    dropped: Counter[str] = Counter()
    data = {"schema": "s", "user_id": "u", "start_ts": 1, "weeks": [], "source_user": "SRC-1"}
    assert project(data, "trajectory", dropped) == {"schema": "s", "user_id": "u", "start_ts": 1, "weeks": []}
    assert dropped == Counter({"trajectory.source_user": 1})


def test_timelines_always_move_and_prose_dates_move_with_them() -> None:
    user = _user()
    anchors = (AnchorUser(user.profile.demographic, tuple(user.anchors_used)),)
    done = release(SynthResult(users=[user], sources=list(anchors)))
    (t,) = done.trajectories
    moved = MONDAY - t["start_ts"]
    assert moved != 0 and moved % WEEK_S == 0  # real 2024 data is moved too, by whole weeks
    start = date.fromisoformat(t["weeks"][0]["start_date"])
    assert start.weekday() == 0 and start.year != 2024
    rebuilt = t["weeks"][0]["consistency"]["reconstructed"]
    assert "2024" not in rebuilt and rebuilt.startswith(f"Busy week from {start.isoformat()} to ")
    (r,) = done.records
    assert r["fields"]["when"] == start.isoformat() and r["timestamp"] == MONDAY + 3600 - moved


def test_release_offset_skips_a_year_whose_span_meets_a_real_date() -> None:
    start = int(datetime(2019, 3, 4, tzinfo=UTC).timestamp())
    plain = release_offset(start, weeks=1)
    blocked = {datetime.fromtimestamp(start - plain, UTC).date()}
    other = release_offset(start, weeks=1, real=lambda d: d in blocked)
    assert plain != other and other % WEEK_S == 0
    assert datetime.fromtimestamp(start - plain, UTC).year == 2024
