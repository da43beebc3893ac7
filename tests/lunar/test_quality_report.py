"""The report's quality-validation section: external JSD, synthesised-days reference, tables, Chromium."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import run_recworld
from helpers.lunar import CHICAGO_MONDAY, lunar_responder, tiny_run
from helpers.report_folders import read_page
from recworld.chat import Request
from recworld.lunar import localtime
from recworld.lunar.quality.records import (
    AgreementReport,
    PairAgreement,
    QualityRatingsRun,
    RatingSummary,
)
from recworld.lunar.quality.stats import on_synthesised_days
from recworld.lunar.report import validation
from recworld.lunar.report.validation import quality_section
from recworld.lunar.schemas import BehaviourRecord, BehaviourType, Category
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import StageCounts
from recworld.testing.fake_server import FakeOpenAIServer


def _events_like_the_run(path: Path, zone: str) -> Path:
    """Real-looking events at the same local minutes as tiny_run's records, in CSV."""
    lines = ["user_id,timestamp,domain,type"]
    for d in range(7):
        for minute in (19 * 60 + 30, 21 * 60):
            lines.append(f"7,{CHICAGO_MONDAY + d * 86400 + minute * 60},dining,order")
    path.write_text("\n".join(lines) + "\n")
    (path.parent / "users.csv").write_text(f"user_id,timezone\n7,{zone}\n")
    return path.parent


def test_external_jsd_is_zero_for_the_same_local_behaviour(tmp_path: Path) -> None:
    root = tiny_run(tmp_path / "run", users=2)
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    _events_like_the_run(ref_dir / "events.csv", "America/Chicago")
    ext = quality_section(root, str(ref_dir)).external
    assert ext is not None
    jsd = ext.jsd
    assert jsd == {"type": pytest.approx(0.0), "hour": pytest.approx(0.0), "weekday": pytest.approx(0.0)}
    # The same instants read in UTC: hours move to 1-3 a.m. and the hour JSD is maximal.
    (ref_dir / "users.csv").write_text("user_id,timezone\n7,UTC\n")
    shifted = quality_section(root, str(ref_dir)).external.jsd  # type: ignore[union-attr]
    assert shifted["hour"] == pytest.approx(1.0) and shifted["type"] == pytest.approx(0.0)


def test_external_jsd_leaves_out_the_dimensions_a_reference_lacks(tmp_path: Path, ml100k_small: Any) -> None:
    root = tiny_run(tmp_path / "run", users=1)
    saved = ml100k_small.save(tmp_path / "ml")
    ext = quality_section(root, str(saved), "America/Chicago").external
    # ML-100K has no type column: no constant stand-in type, so no type JSD at all.
    assert ext is not None and ext.jsd["type"] is None
    assert 0.0 < (ext.jsd["hour"] or 0) < 1.0 and 0.0 < (ext.jsd["weekday"] or 0) < 1.0
    # A domain table no longer invents a type either.
    table = tmp_path / "map.json"
    table.write_text(json.dumps({"movie": {"domain": "dining", "type": "order"}}))
    mapped = quality_section(root, str(saved), "America/Chicago", domain_map=table).external
    assert mapped is not None and mapped.jsd["type"] is None
    # Day-granular timestamps (a date at 00:00 UTC, as Amazon 2018): no hour of day either.
    from recworld.data import Dataset

    inter = ml100k_small.interactions.copy()
    inter["timestamp"] = inter["timestamp"] // 86_400 * 86_400
    days = Dataset.from_frames("days", "movie", inter, ml100k_small.items, ml100k_small.users)
    daily = quality_section(root, str(days.save(tmp_path / "days")), "UTC").external
    assert daily is not None and daily.jsd["type"] is None and daily.jsd["hour"] is None
    assert daily.jsd["weekday"] is not None


def test_real_reference_keeps_only_synthesised_days(tmp_path: Path) -> None:
    root = tiny_run(tmp_path, users=1, active_days=2)
    (plan,) = store.trajectories(root)
    tz = localtime.zone("America/Chicago")
    real = [
        BehaviourRecord(
            record_id=f"a{d}",
            user_id="x",
            timestamp=CHICAGO_MONDAY + d * 86400 + 12 * 3600,
            domain=Category.DINING,
            type=BehaviourType.ORDER,
        )
        for d in range(7)
    ]
    kept = on_synthesised_days(real, plan, tz)
    assert [r.record_id for r in kept] == ["a0", "a1"]
    # In UTC the local Tuesday 23:30 event would fall on Wednesday and be dropped; locally it is kept.
    late = real[1].model_copy(
        update={"record_id": "late", "timestamp": CHICAGO_MONDAY + 86400 + 23 * 3600 + 1800}
    )
    assert [r.record_id for r in on_synthesised_days([late], plan, tz)] == ["late"]


def _section(root: Path) -> Any:
    """Write a ratings run and an agreement file with their record classes; read the section back."""
    QualityRatingsRun(
        model="openai:judge",
        max_records=120,
        counts=StageCounts(asked=60, failures=0, llm_calls=60),
        failures=[],
        summary=RatingSummary(
            overall={"plausibility": 4.67, "profile": 4.93, "query": None},
            rated={"plausibility": 30, "profile": 30, "query": 0},
            errors={"plausibility": 0, "profile": 0, "query": 0},
            dimensions={"record_plausibility": 4.7, "affinity_coherence": 5.0},
        ),
    ).write(root / "quality_ratings_run.json")
    row = PairAgreement(
        dimension="scenario_realism",
        rater_a="ann1",
        rater_b="llm:judge",
        kind="human-LLM",
        n=100,
        exact=0.815,
        within_one=1.0,
        ac1=0.77,
    )
    AgreementReport(sources=["a.csv"], llm_raters=[], rows=[row]).write(root / "agreement.json")
    return quality_section(root)


def test_section_tables_and_reasons(tmp_path: Path) -> None:
    root = tiny_run(tmp_path, users=1)
    empty = quality_section(root)
    assert (empty.ratings, empty.agreement, empty.external) == (None, None, None)
    section = _section(root)
    assert section.ratings is not None and section.agreement is not None
    ratings = validation.ratings_table(section.ratings)
    assert [c.text for c in ratings.rows[0]] == ["log plausibility (mean of 3)", "4.670", "30"]
    assert "query quality (mean of 2)" not in ratings.column("figure")  # no query was rated: no invented row
    (row,) = validation.agreement_table(section.agreement).rows
    assert [c.text for c in row] == [
        "scenario_realism",
        "ann1 / llm:judge",
        "human-LLM",
        "100",
        "82/100 (82%) [73%, 89%]",
        "100/100 (100%) [96%, 100%]",
        "0.770",
    ]


def test_a_small_n_agreement_is_flagged(tmp_path: Path) -> None:
    row = PairAgreement(
        dimension="realism",
        rater_a="h1",
        rater_b="h2",
        kind="human-human",
        n=2,
        exact=0.5,
        within_one=1.0,
        ac1=-0.143,
    )
    (cells,) = validation.agreement_table(AgreementReport(sources=["a.csv"], llm_raters=[], rows=[row])).rows
    assert cells[-1].text == "-0.143 (n=2, n too small)" and cells[-1].css == "warn"
    assert cells[4].text == "1/2 (50%) [1%, 99%]"


@pytest.mark.slow
def test_cli_synth_rate_agreement_report(
    tmp_path: Path,
    ml100k_saved: Path,
    openai_server: Callable[[Callable[[Request], str]], FakeOpenAIServer],
) -> None:
    """End to end: --timezone, active days, rate, agreement into RUN, report --reference."""
    lunar = lunar_responder()
    scores = {
        "PlausibilityScores": {
            "record_plausibility": 5,
            "sequence_coherence": 5,
            "trajectory_consistency": 4,
        },
        "ProfileScores": dict.fromkeys(
            (
                "affinity_coherence",
                "domain_consistency",
                "demographic_compatibility",
                "trajectory_profile_fit",
            ),
            5,
        ),
    }

    def respond(request: Request) -> str:
        title = str((request.json_schema or {}).get("title"))
        return json.dumps(scores[title]) if title in scores else lunar(request)

    model = ["--model", "openai:x", "--base-url", openai_server(respond).base_url]
    anchors = ml100k_saved
    out = tmp_path / "lunar"
    synth = [
        "lunar",
        "synth",
        "--anchors",
        str(anchors),
        "--users",
        "1",
        *model,
        "--out",
        str(out),
    ]
    r = run_recworld(*synth, "--max-slots", "1", "--active-days", "2", "--timezone", "America/Chicago")
    assert r.returncode == 0, r.stderr
    (profile,) = store.profiles(out)
    assert profile.demographic.timezone == "America/Chicago"
    real = json.loads((out / "real_stats.json").read_text())
    assert set(real["weekday"]) <= {"0", "1"}  # only the two synthesised days
    r = run_recworld("lunar", "rate", str(out), *model)
    assert r.returncode == 0, r.stderr
    assert "plausibility 4.67, profile consistency 5.00" in r.stdout
    sheet = tmp_path / "ratings.csv"
    sheet.write_text(
        "item_id,rater,dimension,score\na,h1,realism,5\na,h2,realism,5\nb,h1,realism,4\nb,h2,realism,5\n"
    )
    r = run_recworld("lunar", "agreement", str(sheet), "--out", str(out))
    assert r.returncode == 0, r.stderr
    r = run_recworld(
        "lunar",
        "report",
        str(out),
        "--reference",
        str(anchors),
        "--reference-timezone",
        "America/Chicago",
    )
    assert r.returncode == 0, r.stderr
    md = (out / "report.md").read_text()
    assert "**LLM-rated data quality (1–5; rater openai:x)**" in md and "**Rater agreement**" in md
    page = read_page(out / "report.html")
    assert {"quality-ratings", "agreement", "jsd"} <= set(page.tables)
    (header, *_rows) = page.tables["jsd"]
    assert header == ["dimension", "with anchors", f"external: {anchors}"]  # Table 3's two comparisons
    assert "fig-quality-ratings-chart" in page.figures and "fig-jsd" in page.figures
    validation = json.loads((out / "quality.json").read_text())["validation"]
    assert validation["ratings"]["overall"]["plausibility"] == pytest.approx(14 / 3)
    assert validation["agreement"]["rows"][0]["exact"] == 0.5
