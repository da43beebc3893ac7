"""Hours and weekdays in the user's local time: one helper, zones per user or per dataset."""

from __future__ import annotations

import logging
import re
import warnings
from pathlib import Path

import pytest

from helpers.lunar import CHICAGO_MONDAY
from recworld.errors import ConfigError, DataError
from recworld.lunar import localtime
from recworld.lunar.anchors import AnchorUser, load_anchor_files, with_default_zone
from recworld.lunar.quality.stats import distribution_counts
from recworld.lunar.schemas import BehaviourRecord, BehaviourType, Category, Demographic
from recworld.lunar.synth.trajectory import day_events, week_statistics

CHICAGO = localtime.zone("America/Chicago")
# ML-100K user 1's first rating, 1997-09-22 22:02:38 UTC: 17:02 in Chicago (CDT, UTC-5).
ML_TS = 874965758


def _rec(ts: int, user: str = "u") -> BehaviourRecord:
    return BehaviourRecord(
        record_id=f"r{ts}", user_id=user, timestamp=ts, domain=Category.MOVIES, type=BehaviourType.WATCH
    )


def test_local_hour_weekday_and_week_start() -> None:
    evening_utc = CHICAGO_MONDAY + 21 * 3600  # Monday 21:00 Chicago = Tuesday 03:00 UTC
    assert (localtime.hour(evening_utc), localtime.weekday(evening_utc)) == (3, 1)
    assert (localtime.hour(evening_utc, CHICAGO), localtime.weekday(evening_utc, CHICAGO)) == (21, 0)
    assert localtime.hour(ML_TS, CHICAGO) == 17
    assert localtime.week_start(evening_utc + 3 * 86400, CHICAGO) == CHICAGO_MONDAY
    assert localtime.week_start(evening_utc) == CHICAGO_MONDAY - 6 * 3600  # Monday 00:00 UTC


def test_day_start_follows_local_midnight_across_dst() -> None:
    # US DST began on Sunday 2020-03-08: that day has 23 hours in Chicago.
    week0 = localtime.week_start(1583280000, CHICAGO)  # a moment in the week of 2020-03-02
    monday_after = localtime.day_start(week0, 7, CHICAGO)
    assert localtime.hhmm(monday_after, CHICAGO) == "00:00"
    assert monday_after - week0 == 7 * 86400 - 3600


def test_unknown_zone_is_a_config_error_and_none_warns(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ConfigError, match="Mars/Olympus"):
        localtime.zone("Mars/Olympus")
    with caplog.at_level(logging.WARNING, logger="recworld.lunar"):
        assert localtime.default_zone(None) == "UTC"
    assert [r.levelno for r in caplog.records] == [logging.WARNING] and "UTC" in caplog.text
    caplog.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert localtime.default_zone("Europe/Berlin") == "Europe/Berlin"
    assert not caplog.records


def test_dataset_zone_fills_only_users_without_one(caplog: pytest.LogCaptureFixture) -> None:
    users = [
        AnchorUser(Demographic(user_id="a"), (_rec(ML_TS, "a"),)),
        AnchorUser(Demographic(user_id="b", timezone="Asia/Tokyo"), (_rec(ML_TS, "b"),)),
    ]
    filled = with_default_zone(users, "America/Chicago")
    assert [u.demographic.timezone for u in filled] == ["America/Chicago", "Asia/Tokyo"]
    with caplog.at_level(logging.WARNING, logger="recworld.lunar"):
        assert with_default_zone(users, None)[0].demographic.timezone == "UTC"
    assert "no time zone given" in caplog.text
    # Week 0 starts on the local Monday: Monday 1997-09-22 00:00 in Chicago.
    assert filled[0].start_ts() == localtime.week_start(ML_TS, CHICAGO)
    assert localtime.iso_date(filled[0].start_ts(), CHICAGO) == "1997-09-22"


def test_users_csv_timezone_column(tmp_path: Path) -> None:
    (tmp_path / "events.csv").write_text(f"user_id,timestamp,domain,type\n7,{ML_TS},movies,watch\n")
    (tmp_path / "users.csv").write_text("user_id,age,timezone\n7,30,America/Chicago\n")
    (user,) = load_anchor_files(tmp_path)
    assert user.demographic.timezone == "America/Chicago" and "timezone" not in user.demographic.extra
    (tmp_path / "users.csv").write_text("user_id,age,timezone\n7,30,Nowhere/Land\n")
    with pytest.raises(DataError) as info:
        load_anchor_files(tmp_path)
    assert f"{tmp_path / 'users.csv'}:2" in str(info.value) and "Nowhere/Land" in str(info.value)


def test_prompts_and_jsd_counts_use_local_time() -> None:
    evening = CHICAGO_MONDAY + 21 * 3600 + 15 * 60
    assert day_events([_rec(evening)], tz=CHICAGO).startswith("21:15 ")
    assert day_events([_rec(evening)]).startswith("03:15 ")
    assert "evening 1" in week_statistics([_rec(evening)], CHICAGO)
    assert "night 1" in week_statistics([_rec(evening)])
    counts = distribution_counts([_rec(evening)], {"u": CHICAGO})
    assert counts["hour"] == {"21": 1} and counts["weekday"] == {"0": 1}
    assert distribution_counts([_rec(evening)])["hour"] == {"3": 1}
    assert _rec(evening).to_line(CHICAGO).split()[1:4] == ["1998-03-02", "Mon", "21:15"]


def test_every_clock_reading_in_lunar_goes_through_localtime() -> None:
    """No module of recworld.lunar reads a wall clock from a timestamp except localtime."""
    root = Path(localtime.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "localtime.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"fromtimestamp|gmtime|localtime\(|utcfromtimestamp", line):
                offenders.append(f"{path.relative_to(root)}:{n}")
    assert offenders == []
