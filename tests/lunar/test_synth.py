"""The synthesis pipeline on real ML-100K anchors with a scripted model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from helpers.lunar import lunar_responder, make_llm
from recworld.lunar.anchors import load_anchors
from recworld.lunar.config import SynthConfig, SynthOptions
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.localtime import WEEK_S
from recworld.lunar.schemas import BehaviourRecord, BehaviourType, Category, Provenance
from recworld.lunar.synth.pipeline import synthesize, write_dataset
from recworld.lunar.synth.records import remove_anchors
from recworld.lunar.synth.validate import combine


def _anchor(ts: int, title: str = "Heat") -> BehaviourRecord:
    return BehaviourRecord(
        record_id=f"a{ts}",
        user_id="u",
        timestamp=ts,
        domain=Category.MOVIES,
        type=BehaviourType.WATCH,
        fields={"title": title, "rating": 4.0},
        provenance=Provenance.ANCHOR,
    )


def test_remove_anchors_drops_anchor_rows_and_copies() -> None:
    anchors = [_anchor(1000), _anchor(5000, "Alien")]
    copy_in_time = _anchor(1030, "Other").model_copy(
        update={"provenance": Provenance.SYNTHETIC, "record_id": "s1"}
    )
    copy_fields = _anchor(9999, "alien ").model_copy(
        update={"provenance": Provenance.SYNTHETIC, "record_id": "s2"}
    )
    copy_fields = copy_fields.model_copy(update={"fields": {"title": "alien ", "rating": 4.0}})
    fresh = _anchor(1200, "Heat").model_copy(
        update={
            "provenance": Provenance.SYNTHETIC,
            "record_id": "s3",
            "fields": {"title": "Heat", "rating": 5.0},
        }
    )
    other_type = _anchor(1000).model_copy(
        update={
            "provenance": Provenance.SYNTHETIC,
            "record_id": "s4",
            "type": BehaviourType.REVIEW,
            "fields": {"stars": 3},
        }
    )
    kept = remove_anchors([*anchors, copy_in_time, copy_fields, fresh, other_type], anchors)
    # By content (tests/lunar/test_anchor_removal.py): same time, other content stays; a repeated title goes.
    assert [r.record_id for r in kept] == ["s1", "s4"]


def test_combined_consistency_score() -> None:
    c = combine(5, 3, 0.2)
    assert c.combined == (1.0 + 0.5 + 0.2) / 3
    assert combine(None, None, None).combined is None
    assert combine(1, None, -0.4).combined == 0.0


def test_pipeline_end_to_end_removes_anchors_and_deidentifies(ml100k_saved: Path, tmp_path: Path) -> None:
    anchors = load_anchors(str(ml100k_saved), 2, seed=3)
    assert all(r.provenance is Provenance.ANCHOR for a in anchors for r in a.records)
    llm, _ = make_llm(lunar_responder(), tmp_path)
    options = SynthOptions(weeks=2, max_slots_per_day=1, max_records_per_slot=3)
    result = asyncio.run(synthesize(llm, anchors, options))
    assert not result.dropped_users and len(result.users) == 2
    config = SynthConfig(
        anchors="ml",
        out_dir=tmp_path / "out",
        llm=SessionConfig(model="scripted"),
        options=options,
        accept_risk=True,  # the scripted model copies anchor timing: the risks are high by design here
    )
    manifest = write_dataset(tmp_path / "out", result, llm, config, 0.0).to_json()
    out = tmp_path / "out"
    rows = [json.loads(line) for line in (out / "dataset" / "records.jsonl").read_text().splitlines()]
    assert rows and manifest["counts"]["records"] == len(rows)
    assert all(r["provenance"] == "synthetic" for r in rows)
    # The scripted model copies up to two anchors verbatim into each slot: none may survive.
    anchor_times = {(r.timestamp // 60) for a in anchors for r in a.records}
    assert manifest["counts"]["anchors_used"] > 0
    assert not any(r["timestamp"] // 60 in anchor_times and r["domain"] == "movies" for r in rows)
    anchor_titles = {str(r.fields["title"]) for a in anchors for r in a.records}
    assert not any(r["fields"].get("title") in anchor_titles for r in rows)
    # Source ids never leave the run; identifiers are tokens.
    text = (out / "dataset" / "records.jsonl").read_text() + (out / "dataset" / "profiles.jsonl").read_text()
    assert all(f'"user_id":"{a.user_id}"' not in text for a in anchors)
    assert "Alice Jones" not in text and "a@b.com" not in text and "555-123-4567" not in text
    assert "12 Oak Street" not in text and "Smith" not in text
    assert "<PERSON_1>" in text and "<EMAIL_1>" in text and "<PHONE_1>" in text and "<ADDRESS_1>" in text
    # Every week has 7 day plans, and records fall inside the trajectory span.
    trajectories = [
        json.loads(line) for line in (out / "dataset" / "trajectories.jsonl").read_text().splitlines()
    ]
    starts = {t["user_id"]: t["start_ts"] for t in trajectories}
    assert all(len(w["days"]) == 7 for t in trajectories for w in t["weeks"])
    assert all(starts[r["user_id"]] <= r["timestamp"] < starts[r["user_id"]] + 2 * WEEK_S for r in rows)
    assert json.loads((out / "real_stats.json").read_text())["type"] == {
        "watch": manifest["counts"]["anchors_used"]
    }


def test_day_and_slot_prompts_carry_real_anchors(ml100k_saved: Path) -> None:
    anchors = load_anchors(str(ml100k_saved), 1, seed=0)
    llm, model = make_llm(lunar_responder())
    asyncio.run(synthesize(llm, anchors, SynthOptions(weeks=1, max_slots_per_day=1)))
    week_prompt = next(
        c.messages[-1].content for c in model.calls if c.json_schema and c.json_schema["title"] == "WeekDraft"
    )
    assert "real events" in week_prompt and "movies/watch" in week_prompt
    records_prompts = [
        c.messages[-1].content
        for c in model.calls
        if c.json_schema and c.json_schema["title"] == "RecordsDraft"
    ]
    assert any("hard anchors" in p for p in records_prompts)
    llm2, model2 = make_llm(lunar_responder())
    asyncio.run(synthesize(llm2, anchors, SynthOptions(weeks=1, max_slots_per_day=1, use_anchors=False)))
    assert not any(
        "hard anchors" in c.messages[-1].content or "real events" in c.messages[-1].content
        for c in model2.calls
    )


def test_low_consistency_weeks_are_regenerated_within_bound(ml100k_saved: Path) -> None:
    anchors = load_anchors(str(ml100k_saved), 1, seed=0)
    llm, model = make_llm(lunar_responder(forward_score=1))
    config = SynthOptions(weeks=1, max_slots_per_day=1, consistency_threshold=0.9, max_regenerations=2)
    result = asyncio.run(synthesize(llm, anchors, config))
    week_calls = [c for c in model.calls if c.json_schema and c.json_schema["title"] == "WeekDraft"]
    assert len(week_calls) == 3  # first plan + 2 regenerations, then stop
    assert "Regeneration 2" in week_calls[-1].messages[-1].content
    week = result.users[0].trajectory.weeks[0]
    assert week.consistency.forward == 1 and week.consistency.combined == 0.5


def test_invalid_profile_output_is_retried(ml100k_saved: Path) -> None:
    anchors = load_anchors(str(ml100k_saved), 1, seed=0)
    llm, _ = make_llm(lunar_responder(bad_first={"ProfileDraft"}))
    result = asyncio.run(synthesize(llm, anchors, SynthOptions(weeks=1, max_slots_per_day=1)))
    assert len(result.users) == 1 and llm.failures == []
    profile = result.users[0].profile
    assert {a.category for a in profile.affinities} >= {Category.DINING, Category.MOVIES}
