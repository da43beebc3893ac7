"""Anchors that anchor on real sources (issue 19, item 2): Amazon 2018's day-granular timestamps
anchor days, not slots, with no invented hours; users without demographics get profiles of their own."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path

from helpers.lunar import follow_real_days, lunar_responder, make_llm
from recworld.chat import Request
from recworld.lunar.anchors import DEMO, demo_path, load_anchors, with_default_zone
from recworld.lunar.anchors.user import pseudonymised
from recworld.lunar.config import SynthOptions
from recworld.lunar.synth.pipeline import real_stats, synthesize
from recworld.lunar.synth.profile import profile_prompt
from recworld.lunar.synth.trajectory import week_statistics


def test_shipped_fixture_is_in_the_real_amazon_2018_format() -> None:
    for path in sorted(demo_path().glob("*_5.json")):
        for line in path.read_text().splitlines():
            review = json.loads(line)
            stamp = datetime.fromtimestamp(review["unixReviewTime"], UTC)
            assert (stamp.hour, stamp.minute, stamp.second) == (0, 0, 0), path.name  # midnight UTC
            month, day, year = re.fullmatch(r"(\d\d) (\d{1,2}), (\d{4})", review["reviewTime"]).groups()  # type: ignore[union-attr]
            assert stamp.date().isoformat() == f"{year}-{month}-{int(day):02d}"


def test_day_granular_records_are_day_only_and_placed_at_local_noon() -> None:
    users = with_default_zone(load_anchors(DEMO, 3, min_domains=2), "America/Chicago")
    for user in users:
        assert user.records and set(user.day_only) == {r.record_id for r in user.records}
        for r in user.records:
            local = datetime.fromtimestamp(r.timestamp, user.zone)
            assert local.hour == 12 and local.date().isoformat() == user.day_only[r.record_id]
        assert user.timed() == [] and user.timed_within(0, 2**40) == []


def test_merging_keeps_day_only_marks_with_renumbered_ids(tmp_path: Path) -> None:
    events = tmp_path / "events.csv"
    events.write_text(
        "user_id,timestamp,domain,type,field.merchant\n"
        "AFIXTURE0004,1452600000,dining,order,Ramen Ya\nAFIXTURE0004,1452700000,dining,order,Pho 9\n"
    )
    merged = next(u for u in load_anchors(f"{DEMO},{events}", 4) if u.user_id == "AFIXTURE0004")
    timed = merged.timed()
    assert [r.fields["merchant"] for r in timed] == ["Ramen Ya", "Pho 9"]
    assert len(merged.day_only) == len(merged.records) - 2
    assert all(merged.is_day_only(r) for r in merged.records if r not in timed)


def _calls(model: object, title: str) -> list[str]:
    return [c.messages[-1].content for c in model.calls if c.json_schema and c.json_schema["title"] == title]  # type: ignore[attr-defined]


def test_day_only_anchors_give_no_slot_anchor_and_no_invented_hour(tmp_path: Path) -> None:
    users = with_default_zone(load_anchors(DEMO, 3, min_domains=2), "America/Chicago")
    llm, model = make_llm(follow_real_days(lunar_responder()), tmp_path)
    options = SynthOptions(weeks=2, max_slots_per_day=1, validate_weeks=False)
    result = asyncio.run(synthesize(llm, users, options))
    assert len(result.users) == 3
    assert not any("hard anchors" in p for p in _calls(model, "RecordsDraft"))  # days, not slots
    days = _calls(model, "DaysDraft")
    assert any("(time unknown) groceries/purchase" in p for p in days)
    assert not any(re.search(r"- \d{4}-\d\d-\d\d: [^\n]*\b\d\d:\d\d ", p) for p in days)  # no hour shown
    weeks = _calls(model, "WeekDraft")
    assert any("time of day unknown for" in p and "time of day:" not in p for p in weeks)
    stats = real_stats(result)
    assert stats.n > 0 and stats.hour == {} and stats.hour_n == 0 and stats.day_only == stats.n
    assert sum(stats.weekday.values()) == stats.n  # weekdays still count: the day is known


def test_week_statistics_time_of_day_skips_day_only_records() -> None:
    users = with_default_zone(load_anchors(DEMO, 1, min_domains=3), "UTC")
    user = users[0]
    text = week_statistics(user.records, user.zone, user.day_only)
    assert f"{len(user.records)} real events" in text and "time of day:" not in text
    assert f"time of day unknown for {len(user.records)}" in text
    assert "time of day: morning" in week_statistics(user.records, user.zone)  # without the marks it would


def _profile_from_prompt(request: Request) -> str:
    """A model whose profile follows its prompt (different prompts, different profiles)."""
    prompt = request.messages[-1].content
    about = re.findall(r"about ([^;\n]+)", prompt)
    digest = hashlib.sha256(prompt.encode()).hexdigest()[:6]
    base = json.loads(lunar_responder()(request))
    base["affinities"][0]["preferences"] = [a.strip() for a in about[:2]] or ["varied"]
    base["lifestyle"]["spending"] = f"budget style {digest}"
    return json.dumps(base)


def _amazon_folder(root: Path, *, twins: bool = False) -> Path:
    """Two reviewers active in the same two categories, in the real Amazon 2018 format.

    ``twins``: the second reviewer's reviews are the first's (identical record summaries).
    """
    root.mkdir()
    items = {
        "Grocery_and_Gourmet_Food": [("G1", "Coffee"), ("G2", "Tea"), ("G3", "Snacks")],
        "Movies_and_TV": [("M1", "Drama"), ("M2", "Comedy"), ("M3", "Horror")],
    }
    reviews = {  # reviewer -> (category, item, rating, date)
        "AREVIEWER1": [
            ("Grocery_and_Gourmet_Food", "G1", 5, (3, 4)),
            ("Grocery_and_Gourmet_Food", "G1", 5, (3, 6)),
            ("Movies_and_TV", "M1", 4, (3, 9)),
            ("Grocery_and_Gourmet_Food", "G3", 4, (3, 11)),
            ("Movies_and_TV", "M1", 5, (3, 12)),
        ],
        "AREVIEWER2": [
            ("Grocery_and_Gourmet_Food", "G2", 2, (3, 5)),
            ("Movies_and_TV", "M3", 3, (3, 7)),
            ("Movies_and_TV", "M2", 1, (3, 8)),
            ("Grocery_and_Gourmet_Food", "G2", 3, (3, 10)),
            ("Movies_and_TV", "M3", 2, (3, 14)),
        ],
    }
    if twins:
        reviews["AREVIEWER2"] = list(reviews["AREVIEWER1"])
    for category, products in items.items():
        meta = [{"asin": a, "title": f"Product {a}", "category": [category, leaf]} for a, leaf in products]
        (root / f"meta_{category}.json").write_text("\n".join(json.dumps(m) for m in meta) + "\n")
        lines = []
        for reviewer, rows in reviews.items():
            for cat, asin, rating, (month, day) in rows:
                if cat == category:
                    stamp = int(datetime(2018, month, day, tzinfo=UTC).timestamp())
                    lines.append(
                        {
                            "overall": float(rating),
                            "reviewerID": reviewer,
                            "asin": asin,
                            "reviewTime": f"{month:02d} {day}, 2018",
                            "unixReviewTime": stamp,
                        }
                    )
        (root / f"{category}_5.json").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return root


def test_users_without_demographics_get_profiles_of_their_own(tmp_path: Path) -> None:
    users = with_default_zone(load_anchors(str(_amazon_folder(tmp_path / "amazon")), 2), "UTC")
    assert all(u.demographic.describe() == "unknown" for u in users)  # Amazon has no demographics
    assert len({frozenset(r.domain for r in u.records) for u in users}) == 1  # the same domains
    assert all(len(u.day_only) == len(u.records) == 5 for u in users)
    pseudo, _ = pseudonymised(users)
    prompts = [profile_prompt(u, use_anchors=True) for u in pseudo]
    assert len(set(prompts)) == len(prompts)
    assert all("Their real records, summarised" in p and "mean rating" in p for p in prompts)
    assert "about Coffee 2" in prompts[0] and "about Tea 2" in prompts[1]
    for p, u in zip(prompts, users, strict=True):  # aggregates only: no title, no date, no source id
        assert u.user_id not in p and "Product" not in p and not re.search(r"\d{4}-\d\d-\d\d", p)

    def respond(request: Request) -> str:
        if request.json_schema is not None and request.json_schema.get("title") == "ProfileDraft":
            return _profile_from_prompt(request)
        return follow_real_days(lunar_responder())(request)

    llm, _ = make_llm(respond, tmp_path)
    result = asyncio.run(
        synthesize(llm, users, SynthOptions(weeks=1, max_slots_per_day=1, validate_weeks=False))
    )
    profiles = [u.profile.model_dump(exclude={"user_id", "demographic"}) for u in result.users]
    assert len(profiles) == 2 and profiles[0] != profiles[1]


def test_users_with_identical_summaries_get_one_well_defined_profile(tmp_path: Path) -> None:
    """U13: no pseudonym in the prompt, so distinctness comes only from the records.

    Identical summaries make identical prompts; the cache answering both with one profile
    is the intended behaviour, and each user still gets a complete, valid profile.
    """
    users = with_default_zone(load_anchors(str(_amazon_folder(tmp_path / "amazon", twins=True)), 2), "UTC")
    pseudo, _ = pseudonymised(users)
    prompts = [profile_prompt(u, use_anchors=True) for u in pseudo]
    assert prompts[0] == prompts[1] and "(person" not in prompts[0]
    assert all(u.user_id not in prompts[0] for u in [*users, *pseudo])

    def respond(request: Request) -> str:
        if request.json_schema is not None and request.json_schema.get("title") == "ProfileDraft":
            return _profile_from_prompt(request)
        return follow_real_days(lunar_responder())(request)

    llm, _ = make_llm(respond, tmp_path)
    result = asyncio.run(
        synthesize(llm, users, SynthOptions(weeks=1, max_slots_per_day=1, validate_weeks=False))
    )
    profiles = [u.profile.model_dump(exclude={"user_id", "demographic"}) for u in result.users]
    assert len(profiles) == 2 and profiles[0] == profiles[1] and profiles[0]["affinities"]
    assert len({u.profile.user_id for u in result.users}) == 2  # two users, one profile shape


def test_summary_names_the_time_of_day_only_where_the_source_has_one(ml100k_saved: Path) -> None:
    (user,) = with_default_zone(load_anchors(str(ml100k_saved), 1, seed=0), "America/Chicago")
    prompt = profile_prompt(pseudonymised([user])[0][0], use_anchors=True)
    assert "Time of day:" in prompt and "records only the date" not in prompt
    assert "Demographic record: age" in prompt  # the real record is still there
