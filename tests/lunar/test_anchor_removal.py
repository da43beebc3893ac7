"""Anchor removal works by content: copies go, records that only share an anchor's time stay."""

from __future__ import annotations

from recworld.lunar.schemas import BehaviourRecord, BehaviourType, Category, FieldValue, Provenance
from recworld.lunar.synth.records import remove_anchors

ANCHOR_TS = 1_000_000


def _record(
    rid: str,
    ts: int,
    fields: dict[str, FieldValue],
    *,
    provenance: Provenance = Provenance.SYNTHETIC,
    user: str = "u1",
) -> BehaviourRecord:
    return BehaviourRecord(
        record_id=rid,
        user_id=user,
        timestamp=ts,
        domain=Category.MOVIES,
        type=BehaviourType.WATCH,
        fields=fields,
        provenance=provenance,
    )


ANCHOR = _record(
    "anchor-1",
    ANCHOR_TS,
    {"title": "Heat (1995)", "genres": "Action, Crime", "rating": 4.0},
    provenance=Provenance.ANCHOR,
)


def _kept(*records: BehaviourRecord) -> list[str]:
    return [r.record_id for r in remove_anchors([ANCHOR, *records], [ANCHOR])]


def test_copy_shifted_by_two_minutes_is_removed() -> None:
    shifted = _record("s", ANCHOR_TS + 120, dict(ANCHOR.fields))
    assert _kept(shifted) == []


def test_copy_with_one_extra_field_is_removed() -> None:
    extra = _record("s", ANCHOR_TS + 7200, {**ANCHOR.fields, "cinema": "Odeon"})
    assert _kept(extra) == []


def test_case_and_space_folded_title_copy_is_removed() -> None:
    folded = _record("s", ANCHOR_TS + 86_400, {"movie_title": "  HEAT ", "rating": 2})
    assert _kept(folded) == []


def test_near_verbatim_text_copy_is_removed() -> None:
    anchor = _record(
        "anchor-2", 50, {"merchant": "Blue Bottle Coffee", "item": "oat latte"}, provenance=Provenance.ANCHOR
    )
    typo = _record("s", 5000, {"merchant": "Blue Botle Coffee", "item": "oat latte", "amount": 5})
    assert remove_anchors([typo], [anchor]) == []


def test_different_record_at_the_same_time_is_kept() -> None:
    aligned = _record("s", ANCHOR_TS, {"title": "Toy Story", "genres": "Animation", "rating": 4.0})
    same_minute = _record("t", ANCHOR_TS + 30, {"title": "Casino", "platform": "cinema"})
    assert _kept(aligned, same_minute) == ["s", "t"]


def test_other_users_anchor_does_not_remove() -> None:
    other = _record("s", ANCHOR_TS + 120, dict(ANCHOR.fields), user="u2")
    assert _kept(other) == ["s"]


def test_numbers_alone_are_not_content() -> None:
    anchor = _record("anchor-3", 10, {"rating": 4.0}, provenance=Provenance.ANCHOR)
    rated = _record("s", 10, {"title": "Fargo", "rating": 4.0})
    assert [r.record_id for r in remove_anchors([rated], [anchor])] == ["s"]
