"""LUNAR's failure policy, as ``recworld eval``'s: errors counted and shown, fatal stops, bugs propagate."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import run_recworld
from helpers.lunar import lunar_responder, make_llm, scripted, session
from recworld import lunar
from recworld.chat import Request
from recworld.errors import ModelError, RunError
from recworld.lunar.config import SynthOptions
from recworld.lunar.judges.personalization import Judgment
from recworld.lunar.llm import FailureRecord, StructuredLLM, gather_or_cancel
from recworld.lunar.llm.policy import check_failures
from recworld.lunar.store import dataset as lunar_store
from recworld.lunar.store.outputs import AnswerRecord, EvalRun
from recworld.lunar.synth.trajectory import WeekDraft
from recworld.models import ModelConfig
from recworld.models.base import FatalModelError, TransientModelError
from recworld.testing.fake_server import FakeOpenAIServer, HTTPStatusError

Responder = Callable[[Request], str]


@pytest.fixture(scope="module")
def synthesised(ml100k_saved: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One synthesised folder with 4 queries, made once per module through the library API."""
    out = tmp_path_factory.mktemp("policy") / "lunar"
    llm = session(scripted(name="gen"))
    options = SynthOptions(weeks=1, max_slots_per_day=1)
    lunar.synthesize(
        lunar.SynthConfig(anchors=str(ml100k_saved), out_dir=out, users=2, llm=llm, options=options)
    )
    lunar.make_queries(lunar.QueriesConfig(root=out, llm=llm))
    assert len(lunar_store.queries(out)) == 4
    return out


@pytest.fixture
def folder(synthesised: Path, tmp_path: Path) -> Path:
    """A fresh copy of the synthesised folder for each test (each writes its own eval)."""
    return Path(shutil.copytree(synthesised, tmp_path / "lunar"))


def _eval_config(
    root: Path, answer: Responder | None = None, judge: Responder | None = None, **update: Any
) -> lunar.LunarEvalConfig:
    """Scripted answer model and judge (objects), runner retries off, the ``none`` context."""
    return lunar.LunarEvalConfig(
        root=root,
        answer=session(scripted(answer, name="a"), runner={"max_retries": 0}),
        judge=session(scripted(judge, name="j"), runner={"max_retries": 0}),
        contexts=("none",),
        **update,
    )


def _failing_on(query_ids: set[str], exc: Exception) -> Responder:
    """Answers like the scripted model, except free-text answers to the given queries' requests."""
    ok = lunar_responder()

    def respond(request: Request) -> str:
        if request.json_schema is None and any(q in request.messages[-1].content for q in query_ids):
            raise exc
        return ok(request)

    return respond


def test_failed_answers_are_counted_shown_and_never_scored(folder: Path) -> None:
    # Give one query a unique text so the failing model can single it out.
    queries = lunar_store.queries(folder)
    marked = [q.model_copy(update={"text": f"{q.text} #{i}"}) for i, q in enumerate(queries)]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q.to_json()) + "\n" for q in marked))
    failing = _failing_on({"#2"}, TransientModelError("503 from the server"))
    (run,) = lunar.evaluate_contexts(_eval_config(folder, failing, fail_on_error=0.5))
    assert (run.counts.queries, run.counts.answered, run.counts.answer_errors, run.counts.judged) == (
        4,
        3,
        1,
        3,
    )
    assert run.failures[0].kind == "request" and "503" in run.failures[0].error
    answers = [
        AnswerRecord.model_validate_json(x) for x in (folder / "eval/scripted-a/none/answers.jsonl").open()
    ]
    failed = [a for a in answers if a.answer is None]
    assert len(failed) == 1 and failed[0].error is not None and "503" in failed[0].error
    (row,) = lunar.write_lunar_report(lunar.ReportConfig(root=folder)).rows
    # The failed answer is scored at the floor (1), never dropped from the mean.
    assert (row.n, row.judged, row.answer_errors, row.judge_errors) == (4, 4, 1, 0)
    judged = [
        Judgment.model_validate_json(x) for x in (folder / "eval/scripted-a/none/judgments.jsonl").open()
    ]
    floor = [j for j in judged if j.answer_failed]
    assert len(floor) == 1 and (floor[0].pc, floor[0].pd, floor[0].avg) == (1, 1, 1.0)
    assert row.avg.mean == pytest.approx(sum(j.avg or 0 for j in judged) / 4)
    md = (folder / "report.md").read_text()
    assert "| scripted:a | none | scripted:j | 4 / 4 | 1 | 0 |" in md


def test_too_many_errors_write_what_finished_then_exit_3(folder: Path) -> None:
    ids = {f"#{i}" for i in range(2)}
    queries = lunar_store.queries(folder)
    marked = [q.model_copy(update={"text": f"{q.text} #{i}"}) for i, q in enumerate(queries)]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q.to_json()) + "\n" for q in marked))
    # 4 answers + 2 personalisation judgments of the answered ones (privacy judges Full answers only).
    with pytest.raises(
        RunError, match=r"lunar eval 2 of 6 pieces failed \(33\.3%\), more than --fail-on-error"
    ):
        lunar.evaluate_contexts(_eval_config(folder, _failing_on(ids, ModelError("content filter"))))
    run = EvalRun.model_validate_json((folder / "eval/scripted-a/none/run.json").read_text())
    assert run.counts.answer_errors == 2 and run.counts.judged == 2


def test_a_failed_judgment_is_an_error_row_not_a_drop(folder: Path) -> None:
    # Nothing judged: the stage writes its run, then exits 3 whatever --fail-on-error allows.
    with pytest.raises(RunError, match="produced no judgments"):
        lunar.evaluate_contexts(_eval_config(folder, judge=lambda request: "not json", fail_on_error=1.0))
    run = EvalRun.model_validate_json((folder / "eval" / "scripted-a" / "none" / "run.json").read_text())
    assert (run.counts.answered, run.counts.judged, run.counts.judge_errors) == (4, 0, 4)
    assert {f.kind for f in run.failures} == {"invalid"}
    assert {f.reply for f in run.failures} == {"not json"}  # the rejected reply is kept
    (row,) = lunar.write_lunar_report(lunar.ReportConfig(root=folder)).rows
    assert row.judge_errors == 4 and row.avg.mean is None


def test_auth_failure_stops_the_stage_with_exit_3(
    folder: Path,
    openai_server: Callable[[Callable[[Request], str]], FakeOpenAIServer],
) -> None:
    """A judge server answering 401 stops ``lunar eval`` at once: exit 3, one line, no setting written."""

    def refuse(request: Request) -> str:
        raise HTTPStatusError(401, "Unauthorized: bad key in JUDGE_KEY")

    answers, judges = openai_server(lunar_responder()), openai_server(refuse)
    args = ["lunar", "eval", str(folder), "--model", "openai:a", "--base-url", answers.base_url]
    ran = run_recworld(
        *args, "--judge", "openai:j", "--judge-base-url", judges.base_url, "--max-retries", "3"
    )
    assert ran.returncode == 3
    assert "401" in ran.stderr
    # The first setting's judge fails at once and stops everything: no other setting ran.
    assert not (folder / "eval" / "openai-a" / "none" / "run.json").exists()
    assert len(judges.chat) <= 4  # at most the judge requests already in flight (concurrency 4), no retries


def test_a_bug_in_a_backend_propagates(folder: Path) -> None:
    def broken(request: Request) -> str:
        raise TypeError("bug in our code")

    with pytest.raises(TypeError, match="bug in our code"):
        lunar.evaluate_contexts(_eval_config(folder, broken))


def test_structured_llm_tells_request_failures_from_invalid_replies() -> None:
    class Failing:
        async def complete(self, request: Request) -> Any:
            from recworld.runner import Completion

            return Completion(None, "gave up after 3 attempts: 503", False, 0.0, 3)

    llm = StructuredLLM(Failing(), max_attempts=2)
    assert asyncio.run(llm.structured("p", WeekDraft, stage="week", key="k")) is None
    assert asyncio.run(llm.text("p", stage="answer", key="k2")) is None
    invalid, _ = make_llm(lambda r: "no json here", max_attempts=1)
    assert asyncio.run(invalid.structured("p", WeekDraft, stage="week", key="k")) is None
    assert [f.kind for f in llm.failures] == ["request", "request"] and llm.asked == 2
    assert (
        invalid.failures[0].kind == "invalid" and invalid.error_of("week", "k") == invalid.failures[0].error
    )
    record = FailureRecord.model_validate(llm.failures[0].to_json())
    assert record == llm.failures[0] and llm.failures[0].to_json()["schema"] == "recworld.lunar.failure/1"


def test_gather_or_cancel_stops_the_siblings_of_a_fatal_piece() -> None:
    finished: list[int] = []

    async def slow(i: int) -> int:
        await asyncio.sleep(0.2)
        finished.append(i)
        return i

    async def fatal() -> int:
        raise FatalModelError("403 Forbidden")

    async def run() -> None:
        await gather_or_cancel([slow(1), fatal(), slow(2)])

    with pytest.raises(FatalModelError):
        asyncio.run(run())
    assert finished == []


@pytest.mark.parametrize(("failed", "asked", "raises"), [(0, 0, False), (1, 20, False), (2, 20, True)])
def test_fail_on_error_threshold(failed: int, asked: int, raises: bool) -> None:
    failures = [
        FailureRecord(stage="s", key=str(i), attempts=1, kind="invalid", error="e") for i in range(failed)
    ]
    if raises:
        with pytest.raises(RunError) as info:
            check_failures("queries", asked, failures, 0.05)
        assert info.value.exit_code == 3 and "2 of 20" in str(info.value)
    else:
        check_failures("queries", asked, failures, 0.05)


def _non_loopback_address() -> str | None:
    """An address of this machine that is not loopback (None when it has none)."""
    import socket

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: no packet is sent for a UDP connect
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def test_openai_embedder_stops_on_401_and_withholds_the_key_over_remote_plain_http(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from recworld.lunar.llm.config import EMBED_RUNNER, EmbedderConfig
    from recworld.lunar.llm.embed import open_embedder

    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EMBED_KEY", "secret")

    def refusing(host: str = "127.0.0.1") -> FakeOpenAIServer:
        return FakeOpenAIServer("status", "401", message="bad key", host=host)

    def seen(server: FakeOpenAIServer) -> list[str]:
        return [r.headers.get("authorization", "") for r in server.requests]

    with refusing() as near:
        config = EmbedderConfig(
            model="openai:e",
            backend=ModelConfig(base_url=near.base_url, api_key_env="EMBED_KEY"),
            runner=EMBED_RUNNER.model_copy(update={"max_retries": 3}),
        )
        with open_embedder(config, tmp_path) as embedder, pytest.raises(FatalModelError, match="401"):
            embedder.embed(["hello"])
        assert seen(near) == ["Bearer secret"]  # the key variable named for this embedder; 401 is not retried
    # Plain http beyond loopback: the key is withheld (the placeholder goes), the 401 says why.
    address = _non_loopback_address()
    if address is not None:
        with refusing(address) as far_server:
            far = config.backend.model_copy(update={"base_url": far_server.base_url})
            remote = config.model_copy(update={"backend": far})
            with (
                open_embedder(remote, tmp_path) as embedder,
                pytest.raises(FatalModelError, match="not sent"),
            ):
                embedder.embed(["hello"])
            assert seen(far_server) == ["Bearer EMPTY"]
            insecure = remote.backend.model_copy(update={"allow_insecure_http": True})
            allowed = remote.model_copy(update={"backend": insecure})
            with open_embedder(allowed, tmp_path) as embedder, pytest.raises(FatalModelError):
                embedder.embed(["hello again"])
            assert seen(far_server)[1:] == ["Bearer secret"]  # --allow-insecure-http sends it
