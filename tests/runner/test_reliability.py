"""End-to-end reliability through the ``openai:`` backend against a local fake server.

Kill -9 and resume, faults (429 with Retry-After, 500, hangs, malformed JSON),
API-key hygiene, and cache keys across runner settings.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from helpers.runner_fakes import answer_for, write_suite
from recworld.chat import Message, Request
from recworld.errors import RunError
from recworld.evaluation import JOURNAL_NAME, EvalConfig, evaluate_config
from recworld.models.registry import ModelConfig, load_model
from recworld.runner import ResponseCache, Runner, RunnerConfig
from recworld.testing.fake_server import FakeOpenAIServer

SRC = str(Path(__file__).resolve().parents[2] / "src")
FAKE_KEY = "sk-test-Zq8vN3madeUpKey-4f1d2c9b"
COUNTS = {"kg_movie_genre": 8, "mem_item_item": 8}
VOLATILE = ("latency_s", "cache_hit", "attempts")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def stable(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in s.items() if k not in VOLATILE} for s in samples]


def cli(suite: Path, server: FakeOpenAIServer, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "recworld.cli", "eval", str(suite),
        "--model", "openai:fake-model", "--base-url", server.base_url, "--out", str(out),
        "--concurrency", "3", "--timeout", "10", "--no-progress",
    ]  # fmt: skip


def child_env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "OPENAI_API_KEY": FAKE_KEY}


def config(suite: Path, server: FakeOpenAIServer, out: Path, **kwargs: Any) -> EvalConfig:
    engine = {k: kwargs.pop(k) for k in list(kwargs) if k in RunnerConfig.model_fields and k != "seed"}
    return EvalConfig(
        suite_dir=suite, model="openai:fake-model", backend={"base_url": server.base_url}, out_dir=out,
        runner=RunnerConfig(progress=False, **engine), **kwargs,
    )  # fmt: skip


def assert_no_key_under(root: Path) -> None:
    files = [p for p in root.rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert FAKE_KEY.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_killed_run_resumes_without_resending(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    suite = write_suite(tmp_path / "suite", COUNTS)
    total = sum(COUNTS.values())
    with FakeOpenAIServer("letters") as reference_server:
        reference = evaluate_config(
            config(suite, reference_server, tmp_path / "reference", concurrency=3)
        ).run_dir

    run_dir = tmp_path / "interrupted"
    journal = run_dir / JOURNAL_NAME
    with FakeOpenAIServer("letters", hold_after=7) as server:
        child = subprocess.Popen(cli(suite, server, run_dir), env=child_env())
        deadline = time.monotonic() + 60
        while not (journal.exists() and journal.read_text().count("\n") >= 7):
            assert child.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no progress before the kill"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        assert journal.read_text().count("\n") == 7
        assert not (run_dir / "samples.jsonl").exists()
        server.release()
        rerun = subprocess.run(
            cli(suite, server, run_dir), env=child_env(), capture_output=True, text=True, check=False
        )
        assert rerun.returncode == 0, rerun.stderr
        assert f"run: {run_dir.resolve()}" in rerun.stdout
        assert "kg_movie_genre" in rerun.stdout  # the score table

        assert len(server.counts) == total
        assert set(server.counts.values()) == {1}, "a request was sent twice"
        assert server.answered == server.counts
        # The key did reach the server, and nothing under the run dir holds it.
        assert all(h.get("authorization") == f"Bearer {FAKE_KEY}" for h in server.headers_seen)
    assert_no_key_under(run_dir)

    assert stable(read_jsonl(run_dir / "samples.jsonl")) == stable(read_jsonl(reference / "samples.jsonl"))
    assert json.loads((run_dir / "metrics.json").read_text()) == json.loads(
        (reference / "metrics.json").read_text()
    )
    run = json.loads((run_dir / "run.json").read_text())
    assert run["counts"]["resumed"] == 7 and run["counts"]["runner"]["sent"] == total - 7


PLANS: tuple[tuple[str, ...], ...] = (
    ("429", "429"),
    ("500",),
    ("hang",),
    ("malformed",),
    (),
    ("500",) * 10,  # never recovers within max_retries
)


def plan_of(key: str) -> tuple[str, ...]:
    return PLANS[hashlib.sha256(key.encode()).digest()[1] % len(PLANS)]


@pytest.mark.slow
def test_faulty_server_every_sample_is_accounted_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    suite = write_suite(tmp_path / "suite", {"kg_movie_genre": 12, "mem_item_item": 12})
    run_dir = tmp_path / "run"
    # The failures exceed --fail-on-error's 5%: the run writes everything, then fails with exit 3.
    with (
        FakeOpenAIServer("letters", plan=plan_of, hang_s=3.0) as server,
        pytest.raises(RunError, match="samples failed"),
    ):
        evaluate_config(
            config(suite, server, run_dir, concurrency=6, timeout_s=0.5, max_retries=3,
                   backoff_base_s=0.01, backoff_max_s=0.05)
        )  # fmt: skip
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert len(samples) == 24
    by_prompt = {json.dumps(json.loads(k)["messages"], sort_keys=True): k for k in server.counts}
    assert len(by_prompt) == 24
    plans_used = {plan_of(k) for k in server.counts}
    assert len(plans_used) >= 4, "the fake suite should exercise most fault kinds"
    for sample in samples:
        key = by_prompt[json.dumps(sample["prompt"], sort_keys=True)]
        plan = plan_of(key)
        if len(plan) > 3:
            assert sample["response"] is None and "HTTP 500" in sample["error"]
            assert server.counts[key] == 4 and sample["attempts"] == 4
        else:
            assert sample["error"] is None and sample["response"] == answer_for(key)
            assert sample["attempts"] == len(plan) + 1 == server.counts[key]
            assert server.answered[key] == 1
    run = json.loads((run_dir / "run.json").read_text())
    assert run["counts"]["errors"] == sum(len(plan_of(k)) > 3 for k in server.counts)
    assert run["status"] == "too_many_errors" and "HTTP 500" in run["reason"]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["errors"] == run["counts"]["errors"]
    assert_no_key_under(run_dir)


def test_cache_keys_through_the_openai_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    requests = [Request(messages=(Message("user", f"question {i}"),), max_tokens=4) for i in range(4)]

    def sent(
        server: FakeOpenAIServer, runner_config: RunnerConfig, reqs: list[Request], name: str = "m"
    ) -> int:
        before = sum(server.counts.values())
        model = load_model(f"openai:{name}", ModelConfig(base_url=server.base_url))
        with ResponseCache(tmp_path / "cache.sqlite") as cache:
            runner = Runner(model, runner_config, cache)

            async def go() -> None:
                await runner.map(reqs)
                await runner.aclose()

            asyncio.run(go())
        return sum(server.counts.values()) - before

    slow = RunnerConfig(concurrency=1, timeout_s=30, progress=False)
    fast = RunnerConfig(concurrency=16, timeout_s=5, max_retries=1, progress=False)
    with FakeOpenAIServer("letters") as server, FakeOpenAIServer("letters") as other:
        assert sent(server, slow, requests) == 4
        assert sent(server, fast, requests) == 0  # runner settings are not in the key
        hotter = [Request(messages=r.messages, max_tokens=4, temperature=0.5) for r in requests]
        assert sent(server, fast, hotter) == 4
        reworded = [
            Request(messages=(Message("user", r.messages[0].content + "?"),), max_tokens=4) for r in requests
        ]
        assert sent(server, fast, reworded) == 4
        assert sent(server, fast, requests, name="m2") == 4
        assert sent(other, fast, requests) == 4  # another base_url
    with ResponseCache(tmp_path / "cache.sqlite"):
        pass
    assert FAKE_KEY.encode() not in (tmp_path / "cache.sqlite").read_bytes()
