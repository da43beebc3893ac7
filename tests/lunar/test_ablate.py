"""Evidence ablations: the variants, the command through eval's answering and judging, the report section."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from helpers.cli import run_recworld
from helpers.lunar import follow_real_days, lunar_responder
from recworld.chat import Request
from recworld.lunar.answering.ablate import (
    K_SCALING,
    MULTI_FULL,
    MULTI_SINGLE,
    SINGLE_DOMAIN,
    AblateRun,
    skipped_variants,
    variants,
)
from recworld.lunar.report.ablation import load_ablation
from recworld.lunar.schemas import (
    BehaviourRecord,
    BehaviourType,
    Category,
    EvidenceSet,
    Query,
    Rubric,
)
from recworld.lunar.store import dataset as store
from recworld.testing.fake_server import FakeOpenAIServer

COUNT = re.compile(r"EVIDENCE-COUNT=(\d)")
RECORD_LINE = re.compile(r"^\[", flags=re.M)


def _rec(rid: str, domain: Category) -> BehaviourRecord:
    return BehaviourRecord(record_id=rid, user_id="u", timestamp=1, domain=domain, type=BehaviourType.ORDER)


def _pair(qid: str, ids: list[str], domains: list[Category]) -> tuple[Query, Rubric]:
    query = Query(query_id=qid, user_id="u", text="what now?", domains=domains, multi_domain=len(domains) > 1)
    rubric = Rubric(
        query_id=qid,
        user_id="u",
        generic_answer="g",
        decisions=[],
        evidence=EvidenceSet(record_ids=ids, domains=domains),
        effects=[],
        facts=["f"],
        points=["p"],
    )
    return query, rubric


def test_k_scaling_takes_only_queries_with_exactly_k_max_records() -> None:
    records = [_rec(f"d{i}", Category.DINING) for i in range(4)] + [
        _rec(f"m{i}", Category.MOVIES) for i in range(2)
    ]
    doms = [Category.DINING, Category.MOVIES]
    five = _pair("five", ["d0", "d1", "d2", "m0", "m1"], doms)
    four = _pair("four", ["d0", "d1", "m0", "m1"], doms)
    three = _pair("three", ["d0", "m0", "m1"], doms)
    table = variants([five, four, three], records, k_max=4, seed=0)
    assert {q.query_id for k in range(5) for q, _ in table[f"k{k}"]} == {"four"}
    assert [q.query_id for q, _ in table[MULTI_FULL]] == ["five", "four", "three"]  # Full-E takes all


def test_variants_split_queries_and_vary_evidence() -> None:
    records = [_rec(f"d{i}", Category.DINING) for i in range(3)] + [_rec("m0", Category.MOVIES)]
    multi = _pair("multi", ["d0", "d1", "m0", "d2"], [Category.DINING, Category.MOVIES])
    single = _pair("single", ["d0"], [Category.DINING])
    table = variants([multi, single], records, k_max=4, seed=3)
    assert [q.query_id for q, _ in table[SINGLE_DOMAIN]] == ["single"]
    assert [q.query_id for q, _ in table[MULTI_FULL]] == ["multi"]
    ((_, one),) = table[MULTI_SINGLE]
    assert len(one.evidence.domains) == 1  # one relevant domain, all of its records
    assert one.evidence.record_ids in (["d0", "d1", "d2"], ["m0"])
    shown = [r.evidence.record_ids for k in range(5) for _, r in table[f"k{k}"]]
    assert [len(s) for s in shown] == [0, 1, 2, 3, 4]
    assert all(shown[k] == shown[4][:k] for k in range(5))  # one record added at a time
    assert sorted(shown[4]) == ["d0", "d1", "d2", "m0"]
    assert variants([multi, single], records, seed=3) == table  # seeded
    # The judge keeps the full rubric: facts and points are untouched.
    assert all(r.points == ["p"] for _, r in table["k0"])


def test_skipped_parts_say_why() -> None:
    records = [_rec(f"d{i}", Category.DINING) for i in range(3)] + [_rec("m0", Category.MOVIES)]
    single = [_pair(f"s{i}", ["d0"], [Category.DINING]) for i in range(3)]
    table = variants(single, records, k_max=4)
    why = skipped_variants(table, single, 4)
    assert set(why) == {MULTI_FULL, MULTI_SINGLE, K_SCALING}
    assert why[MULTI_FULL].startswith("no multi-domain query: all 3 queries' evidence spans one domain")
    assert why[MULTI_FULL] == why[K_SCALING]  # one reason, said once on the terminal and in the report
    assert "--min-domains 2" in why[MULTI_FULL]
    # Multi-domain queries, but none with k_max records: only the k-curve is skipped, and the counts are said.
    multi = [_pair("m", ["d0", "m0"], [Category.DINING, Category.MOVIES]), *single]
    why = skipped_variants(variants(multi, records, k_max=4), multi, 4)
    assert list(why) == [K_SCALING] and "(their evidence counts: 2)" in why[K_SCALING]
    only_multi = multi[:1]
    why = skipped_variants(variants(only_multi, records, k_max=2), only_multi, 2)
    assert list(why) == [SINGLE_DOMAIN]
    assert skipped_variants(variants([], records), [], 4)[MULTI_FULL].startswith("no queries")


def _counting(base: Callable[[Request], str]) -> Callable[[Request], str]:
    """Answers say how many records they were shown; the judge scores 1 + that count (generic: 2)."""

    def respond(request: Request) -> str:
        prompt = request.messages[-1].content
        system = request.messages[0].content if len(request.messages) > 1 else ""
        if request.json_schema is None and "personal assistant" in system:
            shown = len(RECORD_LINE.findall(prompt))
            return f"EVIDENCE-COUNT={shown}"
        if request.json_schema is not None and request.json_schema.get("title") == "PairDraft":
            first, second = prompt.split("Response 2:", 1)
            scores = []
            for part in (first, second):
                found = COUNT.findall(part)
                score = min(5, 1 + int(found[-1])) if found else 2
                scores.append({"pc": score, "pd": score})
            return json.dumps({"response_1": scores[0], "response_2": scores[1], "rationale": "r"})
        return follow_real_days(base)(request)

    return respond


@pytest.fixture
def ablated(
    tmp_path: Path,
    openai_server: Callable[[Callable[[Request], str]], FakeOpenAIServer],
) -> Path:
    """The four commands in-process, every model an OpenAI-compatible local server of ``_counting``."""
    url = openai_server(_counting(lunar_responder())).base_url
    out = tmp_path / "run"
    steps = [
        ["synth", "--anchors", "lunar-demo", "--min-domains", "2", "--users", "3", "--weeks", "2"],
        ["queries", str(out), "--model", "openai:g", "--base-url", url, "--per-user", "2"],
        # k-scaling takes the multi-domain queries with exactly k_max evidence records: here 6.
        ["ablate", str(out), "--model", "openai:a", "--base-url", url, "--judge", "openai:j", "--k-max", "6"],
        ["report", str(out)],
    ]
    steps[0] += ["--model", "openai:g", "--base-url", url, "--out", str(out), "--max-slots", "1"]
    steps[2] += ["--judge-base-url", url]
    for step in steps:
        r = run_recworld("lunar", *step)
        assert r.returncode == 0, (step[0], r.stderr)
    return out


@pytest.mark.slow
def test_ablate_command_scores_variants_and_reports_them(ablated: Path) -> None:
    cells = load_ablation(ablated).cells(seed=0)["openai:a"]
    # Scores follow the evidence shown: 1 + k (at most 5), so the curve rises by one per record.
    assert [cells[f"k{k}"].mean for k in range(7)] == [1.0, 2.0, 3.0, 4.0, 5.0, 5.0, 5.0]
    k_queries = ablated / "ablate" / "k0" / "eval" / "openai-a" / "curated" / "answers.jsonl"
    assert len(k_queries.read_text().splitlines()) == 4  # the four with exactly 6, not the two with 8
    full, single = cells[MULTI_FULL].mean, cells[MULTI_SINGLE].mean
    assert full is not None and single is not None and full > single
    answers = ablated / "ablate" / "k2" / "eval" / "openai-a" / "curated" / "answers.jsonl"
    assert all("EVIDENCE-COUNT=2" in json.loads(x)["answer"] for x in answers.read_text().splitlines())
    md = (ablated / "report.md").read_text()
    assert "## Evidence ablations" in md and "k0=1.00 k1=2.00 k2=3.00 k3=4.00 k4=5.00 k5=5.00 k6=5.00" in md
    record = AblateRun.of(ablated)
    multi = [q for q in store.queries(ablated) if q.multi_domain]
    assert record is not None and record.ran[MULTI_FULL] == len(multi) == len(store.queries(ablated))
    # Every query is multi-domain here: the single-domain column could not run, and the report says why.
    assert list(record.skipped) == [SINGLE_DOMAIN]
    assert "Not run: single-domain queries. No single-domain query: all 6 queries' evidence spans" in md


@pytest.mark.slow
@pytest.mark.browser
def test_ablation_section_renders_in_chromium(
    ablated: Path, tmp_path: Path, chromium: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    url = (ablated / "report.html").resolve().as_uri()
    dom = chromium("--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert '<table id="ablation">' in dom.stdout and 'id="fig-k-scaling"' in dom.stdout
    assert "Evidence scaling on multi-domain queries" in dom.stdout  # chart text stays text
    shot = tmp_path / "report.png"
    res = chromium(f"--screenshot={shot}", "--window-size=1200,4000", url)
    assert res.returncode == 0, res.stderr[-2000:]
    from PIL import Image

    image = np.asarray(Image.open(shot).convert("L"), dtype=np.float64)
    assert image.std() > 5  # not blank (a tall page, mostly white)
    assert (image < 100).any(axis=1).sum() > 200  # ink on many rows: tables and the chart drew


def test_ablate_says_on_the_terminal_what_it_could_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from recworld.lunar.cli.output import ablate_done

    why = {MULTI_FULL: "no multi-domain query", K_SCALING: "no multi-domain query"}
    AblateRun(model="m", judge="j", k_max=4, ran={SINGLE_DOMAIN: 2}, skipped=why).write(
        tmp_path / "ablate" / "ablate_run.json"
    )
    ablate_done(tmp_path, {}, as_json=False)
    assert capsys.readouterr().out.splitlines() == ["not run: multi-full, k-scaling: no multi-domain query"]
    ablate_done(tmp_path, {}, as_json=True)
    assert json.loads(capsys.readouterr().out)["skipped"] == why
