"""LLM-rated data quality (Tables 1, 9): prompts, means, failures, resume, the LLM sheet."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from helpers.lunar import scripted, session, tiny_run
from recworld.chat import Request
from recworld.errors import ConfigError, RunError
from recworld.io import atomic_write_jsonl
from recworld.lunar import RateConfig, rate_quality
from recworld.lunar.quality.annotate import export_sheet, read_key
from recworld.lunar.quality.history import thin
from recworld.lunar.quality.ratings import LLM_SHEET_FILE
from recworld.lunar.quality.records import RATINGS_FILE, RUN_FILE, QualityRatingsRun
from recworld.lunar.schemas import Category, Query

SCORES = {
    "PlausibilityScores": {"record_plausibility": 5, "sequence_coherence": 4, "trajectory_consistency": 3},
    "ProfileScores": {
        "affinity_coherence": 5,
        "domain_consistency": 5,
        "demographic_compatibility": 4,
        "trajectory_profile_fit": 4,
    },
    "QueryScores": {"scenario_realism": 4, "human_likeness": 2},
}


class Rater:
    """Scores by schema title; ``broken`` users get an invalid profile reply every time."""

    def __init__(self, broken: str | None = None) -> None:
        self.prompts: dict[str, list[str]] = {}
        self.broken = broken

    def __call__(self, request: Request) -> str:
        assert request.json_schema is not None
        title = str(request.json_schema["title"])
        prompt = request.messages[-1].content
        self.prompts.setdefault(title, []).append(prompt)
        if self.broken and title == "ProfileScores" and f"age {self.broken}" in prompt:
            return json.dumps({**SCORES[title], "affinity_coherence": 9})
        return json.dumps(SCORES[title])


@pytest.fixture
def rater() -> Rater:
    return Rater()


def _config(root: Path, rater: Rater, **extra: Any) -> RateConfig:
    """The rater model handed to LUNAR as an object (``scripted:rater`` in the records)."""
    return RateConfig(root=root, llm=session(scripted(rater, name="rater"), max_attempts=2), **extra)


def _queries(root: Path) -> None:
    rows = [
        Query(
            query_id=f"q{n}",
            user_id="user-000",
            text=f"Where should I eat tonight {n}?",
            domains=[Category.DINING],
            multi_domain=False,
        )
        for n in range(2)
    ]
    atomic_write_jsonl(root / "queries.jsonl", [q.to_json() for q in rows])


def test_rate_writes_scores_and_paper_means(tmp_path: Path, rater: Rater) -> None:
    root = tiny_run(tmp_path, users=3)
    _queries(root)
    run = rate_quality(_config(root, rater))
    s = run.summary
    assert s.overall["plausibility"] == pytest.approx(4.0)  # mean of 5, 4, 3
    assert s.overall["profile"] == pytest.approx(4.5)
    assert s.overall["query"] == pytest.approx(3.0)
    assert s.rated == {"plausibility": 3, "profile": 3, "query": 2}
    assert QualityRatingsRun.read(root / RUN_FILE) == run  # read back typed, as the report does
    lines = [json.loads(x) for x in (root / RATINGS_FILE).read_text().splitlines()]
    assert len(lines) == 8 and all(x["error"] is None for x in lines)
    assert json.loads((root / RUN_FILE).read_text())["model"] == "scripted:rater"
    prompts = rater.prompts
    # Both history calls see the same text: records in the user's local time, and the weekly summaries.
    plaus, profile = prompts["PlausibilityScores"][0], prompts["ProfileScores"][0]
    assert "19:30" in plaus and "Records (14 of 14" in plaus
    assert plaus.split("\n\n", 2)[2] == profile.split("\n\n", 2)[2]  # after the dimension lists
    assert "Weekly summaries" in profile and "routine week" in profile


def test_failed_piece_is_recorded_and_fail_on_error_exits_3(tmp_path: Path, rater: Rater) -> None:
    root = tiny_run(tmp_path, users=3)
    rater.broken = "31"  # user-001
    with pytest.raises(RunError, match="1 of 6 pieces failed"):
        rate_quality(_config(root, rater, fail_on_error=0.0))
    lines = [json.loads(x) for x in (root / RATINGS_FILE).read_text().splitlines()]
    failed = [x for x in lines if x["error"] is not None]
    assert [(x["kind"], x["subject"], x["scores"]) for x in failed] == [("profile", "user-001", None)]
    run = json.loads((root / RUN_FILE).read_text())
    assert run["summary"]["errors"]["profile"] == 1 and run["summary"]["rated"]["profile"] == 2
    assert run["counts"]["failures"] == 1


def test_rerun_resumes_from_the_cache(tmp_path: Path, rater: Rater) -> None:
    root = tiny_run(tmp_path, users=2)
    rate_quality(_config(root, rater))
    asked = sum(len(v) for v in rater.prompts.values())
    rate_quality(_config(root, rater))
    assert sum(len(v) for v in rater.prompts.values()) == asked  # nothing sent again


def test_llm_scores_on_annotation_items_use_the_opaque_ids(tmp_path: Path, rater: Rater) -> None:
    root = tiny_run(tmp_path, users=3)
    _queries(root)
    export_sheet(root, histories=2, queries=1, seed=3)
    rate_quality(_config(root, rater))
    key = {i.item_id: i for i in read_key(root).items}
    with (root / LLM_SHEET_FILE).open() as f:
        rows = list(csv.DictReader(f))
    assert {r["rater"] for r in rows} == {"llm:scripted:rater"}
    assert {r["item_id"] for r in rows} == set(key)
    history = [r for r in rows if key[r["item_id"]].kind == "history"]
    assert len(history) == 2 * 7
    realism = [r for r in rows if r["dimension"] == "scenario_realism"]
    assert [r["score"] for r in realism] == ["4"]


def test_thin_spreads_over_the_span(tmp_path: Path) -> None:
    from recworld.lunar.store import dataset as store

    records = store.records(tiny_run(tmp_path, users=1))
    picked = thin(records, 3)
    assert [r.record_id for r in picked] == [
        records[0].record_id,
        records[6].record_id,
        records[-1].record_id,
    ]


def test_the_llm_rates_exactly_what_the_human_sheet_shows(tmp_path: Path, rater: Rater) -> None:
    root = tiny_run(tmp_path, users=3)
    _queries(root)
    export_sheet(root, histories=3, queries=2, seed=2, max_records=5)
    rate_quality(_config(root, rater))  # no --max-records: the sheet's 5
    sheet = (root / "annotation" / "form.html").read_text()
    import html as html_lib

    shown = {html_lib.unescape(b.split("</pre>")[0]) for b in sheet.split("<pre>")[1:]}
    assert len(shown) == 5
    for title, n in (("ProfileScores", 3), ("PlausibilityScores", 3), ("QueryScores", 2)):
        prompts = rater.prompts[title]
        assert len(prompts) == n
        # Each prompt holds exactly one sheet item's content, word for word, and all are covered.
        found = [[c for c in shown if c in p] for p in prompts]
        assert all(len(f) == 1 for f in found), title
        expected = {c for c in shown if c.startswith("Request:") == (title == "QueryScores")}
        assert {f[0] for f in found} == expected, title
    assert all("Records (5 of 14" in p for p in rater.prompts["ProfileScores"])
    assert json.loads((root / RUN_FILE).read_text())["max_records"] == 5
    # A different count than the sheet's would compare different inputs: refused.
    with pytest.raises(ConfigError, match="showed 5 records per history"):
        rate_quality(_config(root, rater, max_records=120))
