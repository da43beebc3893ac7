"""Anchor sources (dataset and user CSV/JSONL logs) and de-identification."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recworld.errors import DataError
from recworld.lunar.anchors import load_anchor_files, load_anchors
from recworld.lunar.deid import Deidentifier
from recworld.lunar.schemas import BehaviourType, Category


def test_movielens_anchor_has_real_demographics_and_sorted_watches(ml100k_saved: Path) -> None:
    (user,) = [a for a in load_anchors(str(ml100k_saved), 3, seed=0) if a.user_id == "1"]
    assert user.demographic.age == 24 and user.demographic.gender == "M"
    assert user.demographic.occupation == "technician" and user.demographic.location == "zip 85711"
    assert len(user.records) == 272
    stamps = [r.timestamp for r in user.records]
    assert stamps == sorted(stamps)
    assert {r.domain for r in user.records} == {Category.MOVIES} and {r.type for r in user.records} == {
        BehaviourType.WATCH
    }
    assert user.start_ts() % 86400 == 0 and user.start_ts() <= stamps[0] < user.start_ts() + 7 * 86400


def test_csv_and_jsonl_importers_agree(tmp_path: Path) -> None:
    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    (csv_dir / "events.csv").write_text(
        "user_id,timestamp,domain,type,field.merchant,field.amount\n"
        "u1,2024-03-04T08:15:00,dining,order,Cafe Uno,4.5\n"
        "u1,1709600000,local_transport,ride,,\n"
    )
    (csv_dir / "users.csv").write_text("user_id,age,gender,city\nu1,31,F,Lyon\n")
    jl_dir = tmp_path / "jl"
    jl_dir.mkdir()
    (jl_dir / "events.jsonl").write_text(
        json.dumps(
            {
                "user_id": "u1",
                "timestamp": "2024-03-04T08:15:00",
                "domain": "dining",
                "type": "order",
                "fields": {"merchant": "Cafe Uno", "amount": 4.5},
            }
        )
        + "\n"
        + json.dumps({"user_id": "u1", "timestamp": 1709600000, "domain": "local_transport", "type": "ride"})
        + "\n"
    )
    (jl_dir / "users.jsonl").write_text(
        json.dumps({"user_id": "u1", "age": 31, "gender": "F", "city": "Lyon"}) + "\n"
    )
    a, b = load_anchors(str(csv_dir), 1)[0], load_anchor_files(jl_dir)[0]
    assert a.demographic == b.demographic and a.demographic.extra == {"city": "Lyon"}
    assert [r.model_dump() for r in a.records] == [r.model_dump() for r in b.records]
    assert [r.timestamp for r in a.records] == [1709540100, 1709600000]  # 2024-03-04 08:15 UTC first
    assert a.records[0].fields == {"merchant": "Cafe Uno", "amount": 4.5}


def test_importer_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(
        json.dumps({"user_id": "u", "timestamp": 1, "domain": "dining", "type": "order"})
        + "\n"
        + json.dumps({"user_id": "u", "timestamp": 2, "domain": "spaceflight", "type": "order"})
        + "\n"
    )
    with pytest.raises(DataError, match=r"events.jsonl:2: field 'domain': unknown domain 'spaceflight'"):
        load_anchor_files(path)
    path.write_text("user_id,timestamp,domain\nu,1,dining\n")
    csv_path = path.with_suffix(".csv")
    path.rename(csv_path)
    with pytest.raises(DataError, match=r"events.csv:2: field 'type': missing column"):
        load_anchor_files(csv_path)


def test_deidentifier_is_consistent_and_thorough() -> None:
    d = Deidentifier()
    text = (
        "Call Mr. Smith at +1 415-555-0199 or 415.555.0199, mail john.smith@example.com, "
        "meet at 221 Baker Street."
    )
    out = d.text(text)
    assert out == "Call Mr. <PERSON_1> at <PHONE_1> or <PHONE_2>, mail <EMAIL_1>, meet at <ADDRESS_1>."
    assert d.text("Smith again: john.smith@example.com") == "<PERSON_1> again: <EMAIL_1>"
    fields = d.fields(
        {"guest_name": "Ana Lopez", "amount": 12.5, "when": "2024-03-04 10:30", "note": "for Ana Lopez"}
    )
    assert fields == {
        "guest_name": "<PERSON_2>",
        "amount": 12.5,
        "when": "2024-03-04 10:30",
        "note": "for <PERSON_2>",
    }
    # Dates, times, prices and ratings are not identifiers.
    assert (
        d.text("On 2024-03-04 at 10:30 paid 12.50, rated 4.5")
        == "On 2024-03-04 at 10:30 paid 12.50, rated 4.5"
    )
