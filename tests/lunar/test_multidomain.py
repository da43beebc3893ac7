"""Multi-domain anchors: Amazon 2018 categories through the domain table, mixed sources, the demo fixture."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.lunar import follow_real_days, lunar_responder
from recworld.chat import Request
from recworld.errors import DataError
from recworld.lunar.anchors import DEMO, demo_path, load_anchors
from recworld.lunar.anchors.domains import load_domain_map
from recworld.lunar.schemas import BehaviourType, Category
from recworld.testing.fake_server import FakeOpenAIServer


def test_domain_table_maps_amazon_categories_and_can_be_overridden(tmp_path: Path) -> None:
    shipped = load_domain_map()
    assert shipped.lookup("Grocery_and_Gourmet_Food") == (Category.GROCERIES, BehaviourType.PURCHASE)
    assert shipped.lookup("Movies_and_TV") == (Category.MOVIES, BehaviourType.WATCH)
    assert shipped.lookup("Some_New_Category") == (Category.SHOPPING, BehaviourType.PURCHASE)  # '*'
    mine = tmp_path / "map.json"
    mine.write_text(json.dumps({"Movies_and_TV": {"domain": "shopping", "type": "purchase"}}))
    assert load_domain_map(mine).lookup("Movies_and_TV") == (Category.SHOPPING, BehaviourType.PURCHASE)
    mine.write_text(json.dumps({"Books": {"domain": "library", "type": "purchase"}}))
    with pytest.raises(DataError, match="Books"):
        load_domain_map(mine)


def test_demo_fixture_gives_multi_domain_anchor_users() -> None:
    users = load_anchors(DEMO, 3, min_domains=2)
    assert [u.user_id for u in users] == ["AFIXTURE0001", "AFIXTURE0002", "AFIXTURE0003"]
    first = users[0]
    assert {r.domain for r in first.records} == {Category.GROCERIES, Category.MOVIES, Category.MUSIC}
    assert [r.timestamp for r in first.records] == sorted(r.timestamp for r in first.records)
    by_title = {str(r.fields["title"]): r for r in first.records}
    assert by_title["Northern Lines - Vinyl LP"].type is BehaviourType.LISTEN
    with pytest.raises(DataError, match="only 3 users"):
        load_anchors(DEMO, 4, min_domains=2)


def test_domain_map_option_changes_anchor_domains(tmp_path: Path) -> None:
    mine = tmp_path / "map.json"
    mine.write_text(json.dumps({"CDs_and_Vinyl": {"domain": "shopping", "type": "purchase"}}))
    users = load_anchors(str(demo_path()), 1, seed=0, min_domains=3, domain_map=mine)
    assert [u.user_id for u in users] == ["AFIXTURE0001"]
    assert {r.domain for r in users[0].records} == {Category.GROCERIES, Category.MOVIES, Category.SHOPPING}


def test_sources_are_merged_by_user_id(tmp_path: Path) -> None:
    events = tmp_path / "events.csv"
    events.write_text(
        "user_id,timestamp,domain,type,field.merchant\n"
        "AFIXTURE0004,1452600000,dining,order,Ramen Ya\nAFIXTURE0004,1452700000,dining,order,Pho 9\n"
    )
    users = load_anchors(f"{DEMO},{events}", 4)
    merged = next(u for u in users if u.user_id == "AFIXTURE0004")
    assert {r.domain for r in merged.records} == {Category.GROCERIES, Category.DINING}
    assert len(merged.records) == 7
    ids = [r.record_id for r in merged.records]
    assert len(set(ids)) == len(ids)


@pytest.mark.slow
def test_offline_path_on_the_demo_fixture_spans_several_domains(
    tmp_path: Path,
    openai_server: Callable[[Callable[[Request], str]], FakeOpenAIServer],
) -> None:
    # The fixture knows days, not times: slots follow each day's real events, records their slot.
    model = ["--model", "openai:g", "--base-url", openai_server(follow_real_days(lunar_responder())).base_url]
    out = tmp_path / "run"
    synth = ["lunar", "synth", "--anchors", DEMO, "--min-domains", "2", "--users", "2", "--weeks", "2"]
    r = run_recworld(*synth, *model, "--out", str(out), "--max-slots", "1")
    assert r.returncode == 0, r.stderr
    records = [json.loads(x) for x in (out / "dataset" / "records.jsonl").read_text().splitlines()]
    assert len({r["domain"] for r in records}) >= 3
    release = "\n".join(p.read_text() for p in (out / "dataset").iterdir())
    assert "AFIXTURE" not in release and "Northern Lines" not in release
    r = run_recworld("lunar", "queries", str(out), *model, "--per-user", "1")
    assert r.returncode == 0, r.stderr
    queries = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines()]
    rubrics = {x["query_id"]: x for x in map(json.loads, (out / "rubrics.jsonl").read_text().splitlines())}
    assert queries and any(q["multi_domain"] for q in queries)
    for q in queries:  # tags are the evidence's domains
        assert q["domains"] == sorted(rubrics[q["query_id"]]["evidence"]["domains"])
