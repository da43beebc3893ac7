"""The four commands end to end on real ML-100K anchors, with the scripted model behind the real Runner."""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lunar_helpers import lunar_responder
from typer.testing import CliRunner

from recworld.cli import app
from recworld.data import Dataset
from recworld.lunar import embed, session
from recworld.models.scripted import ScriptedModel


class _HashEmbedder:
    identity = "test-hash"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 16), dtype=np.float32)
        for i, t in enumerate(texts):
            for word in t.lower().split():
                out[i, hash(word) % 16] += 1
        return embed.normalise(out)


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> list[ScriptedModel]:
    made: list[ScriptedModel] = []

    def fake_load(spec: str, config: Any) -> ScriptedModel:
        model = ScriptedModel(lunar_responder(), name=spec)
        made.append(model)
        return model

    monkeypatch.setattr(session, "load_model", fake_load)
    monkeypatch.setattr(embed, "load_embedder", lambda *a, **k: _HashEmbedder())
    return made


def test_synth_queries_eval_report(
    ml100k_small: Dataset, tmp_path: Path, scripted: list[ScriptedModel]
) -> None:
    anchors = ml100k_small.save(tmp_path / "ml")
    out = tmp_path / "lunar"
    cli = CliRunner()
    r = cli.invoke(
        app,
        [
            "lunar",
            "synth",
            "--anchors",
            str(anchors),
            "--users",
            "2",
            "--weeks",
            "1",
            "--model",
            "scripted:x",
            "--out",
            str(out),
            "--max-slots",
            "1",
        ],
    )
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["schema"] == "recworld.lunar.manifest/1" and manifest["counts"]["users"] == 2
    r = cli.invoke(app, ["lunar", "queries", str(out), "--model", "scripted:x", "--per-user", "2"])
    assert r.exit_code == 0, r.output
    queries = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines()]
    rubrics = [json.loads(x) for x in (out / "rubrics.jsonl").read_text().splitlines()]
    assert len(queries) == 4 and [q["query_id"] for q in queries] == [r["query_id"] for r in rubrics]
    # The model tags dining+movies, but the synthetic logs hold dining only (movie anchors were removed).
    assert all(q["domains"] == ["dining"] and not q["multi_domain"] for q in queries)
    assert all(r["evidence"]["record_ids"] and r["facts"] == ["likes ramen"] for r in rubrics)
    r = cli.invoke(
        app,
        [
            "lunar",
            "eval",
            str(out),
            "--model",
            "scripted:a",
            "--judge",
            "scripted:j",
            "--context",
            "none,full,curated,rag",
        ],
    )
    assert r.exit_code == 0, r.output
    for ctx in ("none", "full", "curated", "rag"):
        judged = [
            json.loads(x)
            for x in (out / "eval" / "scripted_a" / ctx / "judgments.jsonl").read_text().splitlines()
        ]
        assert len(judged) == 4 and sum(j["target_first"] for j in judged) == 2
    r = cli.invoke(app, ["lunar", "report", str(out)])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((out / "report.csv").open()))
    assert [row["context"] for row in rows] == ["none", "full", "curated", "rag"]
    # The scripted judge prefers Response 1: (4, 3) first vs (2, 2) second, so the
    # target averages (3.5·2 + 2.0·2)/4 = 2.75 per context.
    assert all(float(row["avg"]) == pytest.approx(2.75) for row in rows)
    md = (out / "report.md").read_text()
    assert "| scripted:a | rag | 4 / 4 |" in md and "JSD type vs real (with anchors)" in md
    # Rerunning eval is served from the cache: no new model calls.
    before = sum(len(m.calls) for m in scripted)
    r = cli.invoke(
        app,
        ["lunar", "eval", str(out), "--model", "scripted:a", "--judge", "scripted:j", "--context", "full"],
    )
    assert r.exit_code == 0 and sum(len(m.calls) for m in scripted) == before


def test_bad_anchor_file_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "events.jsonl"
    bad.write_text('{"user_id": "u", "timestamp": 1, "domain": "dining"}\n')
    from recworld.cli import main

    assert (
        main(["lunar", "synth", "--anchors", str(bad), "--out", str(tmp_path / "o"), "--model", "scripted"])
        == 2
    )


@pytest.mark.parametrize(
    ("flag", "expected"),
    [([], {"llamacpp:m": True, "openai:m": False}), (["--compact"], True), (["--no-compact"], False)],
)
def test_compact_flag_reaches_the_session_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: list[str], expected: bool | dict[str, bool]
) -> None:
    seen: list[tuple[str, bool | None, bool]] = []

    @contextlib.asynccontextmanager
    async def recording_open_llm(
        spec: str, root: Path, config: session.SessionConfig
    ) -> AsyncIterator[object]:
        # Records the config and yields a dummy: the command then fails on first use of it,
        # after every session (eval opens two: answers and judge) has been opened.
        seen.append((spec, config.compact, config.compact_for(spec)))
        yield object()

    monkeypatch.setattr(session, "open_llm", recording_open_llm)
    events = tmp_path / "events.jsonl"
    events.write_text('{"user_id": "u1", "timestamp": 1700000000, "domain": "dining", "type": "order"}\n')
    root = tmp_path / "run"
    root.mkdir()
    for name in ("profiles", "records", "queries", "rubrics"):
        (root / f"{name}.jsonl").write_text("")
    cli = CliRunner()
    for spec in ("llamacpp:m", "openai:m"):
        commands = [
            ["lunar", "synth", "--anchors", str(events), "--out", str(root), "--model", spec],
            ["lunar", "queries", str(root), "--model", spec],
            ["lunar", "eval", str(root), "--model", spec, "--judge", f"{spec}j", "--context", "none"],
        ]
        for command in commands:
            seen.clear()
            r = cli.invoke(app, command + flag)
            want = expected if isinstance(expected, bool) else expected[spec]
            explicit = None if not flag else want
            specs = [spec, f"{spec}j"] if command[1] == "eval" else [spec]
            assert seen == [(s, explicit, want) for s in specs], (command, r.output)
