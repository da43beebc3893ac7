"""A Full context that is full: the answer model's real window, its own tokens or a labelled estimate.

Before, an ``openai:`` model got ``--n-ctx`` (4096) as its window and chars/4 as its
count, so ``openai:gpt-4o-mini`` saw 3,696 tokens of a 12-week log. Now the window is
what the server reports (vLLM's ``max_model_len`` from ``GET /v1/models``), else the
known-model table, else ``--context-window``, else the assumed ``--n-ctx``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.lunar import eval_pair, eval_user, lunar_responder
from recworld.chat import Request
from recworld.io import atomic_write_jsonl, mark_output_dir
from recworld.lunar.config import RUN_KIND
from recworld.lunar.contexts import FullContext
from recworld.lunar.contexts.full import FullOptions
from recworld.lunar.llm.budget import CharEstimate, Window, counter_for, window_for
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.store.outputs import AnswerRecord
from recworld.models import ModelConfig, load_model
from recworld.models.windows import ServedWindow, known_context_window, served_window
from recworld.paths import slug
from recworld.testing.fake_server import FakeOpenAIServer

Server = Callable[[Callable[[Request], str]], FakeOpenAIServer]
RECORDS = 3000  # about 12 weeks of a busy log: far beyond 4096 tokens


def _folder(root: Path, n: int = RECORDS) -> Path:
    """A run folder with one user of ``n`` records and one query, as lunar queries leaves it."""
    user = eval_user(n=n)
    query, rubric = eval_pair(0)
    atomic_write_jsonl(root / "dataset" / "profiles.jsonl", [user.profile.to_json()])
    atomic_write_jsonl(root / "dataset" / "records.jsonl", [r.to_json() for r in user.records])
    atomic_write_jsonl(root / "dataset" / "trajectories.jsonl", [])
    atomic_write_jsonl(root / "queries.jsonl", [query.to_json()])
    atomic_write_jsonl(root / "rubrics.jsonl", [rubric.to_json()])
    mark_output_dir(root, RUN_KIND)  # as a finished lunar synth leaves it
    return root


def _eval(root: Path, model: str, url: str, *extra: str) -> AnswerRecord:
    args = ["lunar", "eval", str(root), "--model", model, "--base-url", url, "--judge", "openai:j"]
    args += ["--judge-base-url", url, "--context", "full", "--no-privacy", "--timezone", "UTC", *extra]
    result = run_recworld(*args)
    assert result.returncode == 0, result.stderr
    (line,) = (root / "eval" / slug(model) / "full" / "answers.jsonl").read_text().splitlines()
    return AnswerRecord.model_validate_json(line)


def test_a_server_reporting_max_model_len_gets_a_full_context_of_that_size(
    tmp_path: Path, openai_server: Server
) -> None:
    server = openai_server(lunar_responder())
    server.models = [{"id": "other", "max_model_len": 2048}, {"id": "big", "max_model_len": 131072}]
    # What the server serves beats a --context-window the user guessed.
    row = _eval(_folder(tmp_path / "run"), "openai:big", server.base_url, "--context-window", "1000")
    assert server.gets == ["/v1/models"]  # asked once
    assert row.context_window == 131072 and row.context_window_source is not None
    assert row.context_window_source.startswith("server http://127.0.0.1")
    assert row.token_counter == "estimate:chars/4"  # no tokenizer of the model offline: said so
    assert (row.context_shown, row.context_total) == (RECORDS, RECORDS)  # the whole log fits
    assert row.context_budget_tokens is not None and row.context_budget_tokens > 120_000
    (sent,) = [c for c in server.chat if c["model"] == "big"]
    assert sent["messages"][-1]["content"].count("\n[r") == RECORDS


def test_an_api_model_in_the_table_gets_its_128k_window(tmp_path: Path, openai_server: Server) -> None:
    server = openai_server(lunar_responder())  # no /v1/models here (404): the table decides
    row = _eval(_folder(tmp_path / "run"), "openai:gpt-4o-mini", server.base_url)
    assert row.context_window == 128_000
    assert row.context_window_source == "known-model table (checked 2024-07)"
    assert (row.context_shown, row.context_total) == (RECORDS, RECORDS)
    # The old budget: --n-ctx 4096 and chars/4 showed a few dozen records of this log.
    old = FullContext(FullOptions(budget_tokens=4096 - 256 - 64)).build(eval_user(n=RECORDS), *eval_pair(0))
    assert old.count("\n[r") < 300  # about 8% of the log


def test_an_unknown_model_takes_context_window_else_an_assumed_n_ctx(
    tmp_path: Path, openai_server: Server
) -> None:
    server = openai_server(lunar_responder())
    declared = _eval(_folder(tmp_path / "a"), "openai:mystery", server.base_url, "--context-window", "32768")
    assert (declared.context_window, declared.context_window_source) == (32768, "--context-window")
    assumed = _eval(_folder(tmp_path / "b"), "openai:mystery", server.base_url)
    assert assumed.context_window == 4096 and assumed.context_window_source is not None
    assert "assumed" in assumed.context_window_source
    assert assumed.context_shown is not None and assumed.context_shown < RECORDS  # truncated, and reported


def test_the_table_yields_to_context_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    model = load_model("openai:gpt-4o-mini", ModelConfig())
    table = window_for(model, SessionConfig(model="openai:gpt-4o-mini"))
    assert table == Window(128_000, "known-model table (checked 2024-07)")
    # --context-window overrides the table (a proxy may serve less) ...
    flagged = window_for(model, SessionConfig(model="openai:gpt-4o-mini", context_window=16_000))
    assert flagged == Window(16_000, "--context-window")
    assert counter_for(model, "openai:gpt-4o-mini").estimate  # no tokenizer offline: an estimate
    asyncio.run(model.aclose())


def test_served_windows_and_the_table_read_only_what_they_should() -> None:
    listing = {"data": [{"id": "a", "max_model_len": 100}, {"id": "b", "context_length": 200}]}
    assert served_window(listing, "a") == ServedWindow(100, "a", exact=True)
    assert served_window(listing, "b") == ServedWindow(200, "b", exact=True)
    assert served_window(listing, "c") is None  # several entries, none of them: unknown
    only = served_window({"data": [{"id": "x", "max_model_len": 64}]}, "y")
    assert only == ServedWindow(64, "x", exact=False)  # the only one served: a guess, named so (U11)
    assert only.note("y") == " (its only entry, 'x', not 'y')"
    assert served_window({"data": [{"id": "a", "max_model_len": True}]}, "a") is None
    assert served_window({"data": "nope"}, "a") is None and served_window([], "a") is None
    assert known_context_window("gpt-4o-mini-2024-07-18") == 128_000  # a dated snapshot
    assert known_context_window("gpt-4.1") == 1_047_576 and known_context_window("my-model") is None
    assert CharEstimate().estimate and CharEstimate().identity == "estimate:chars/4"


def test_answers_record_the_window_in_their_file(tmp_path: Path, openai_server: Server) -> None:
    server = openai_server(lunar_responder())
    server.models = [{"id": "big", "max_model_len": 65536}]
    root = _folder(tmp_path / "run", n=50)
    _eval(root, "openai:big", server.base_url)
    row = json.loads((root / "eval/openai-big/full/answers.jsonl").read_text())
    assert row["context_window"] == 65536 and row["token_counter"] == "estimate:chars/4"


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
def test_both_transports_ask_the_server_once(openai_server: Server, transport: str) -> None:
    server = openai_server(lunar_responder())
    server.models = [{"id": "big", "max_model_len": 8192}]
    model = load_model("openai:big", ModelConfig(base_url=server.base_url, options={"transport": transport}))

    async def ask() -> tuple[int | None, int | None]:
        try:
            return await model.discover_context_window(), await model.discover_context_window()  # type: ignore[attr-defined]
        finally:
            await model.aclose()

    assert asyncio.run(ask()) == (8192, 8192) and server.gets == ["/v1/models"]
    server.models = None  # a server without the endpoint (404): the table, else unknown
    bare = load_model(
        "openai:mystery", ModelConfig(base_url=server.base_url, options={"transport": transport})
    )

    async def ask_bare() -> int | None:
        try:
            return await bare.discover_context_window()  # type: ignore[attr-defined,no-any-return]
        finally:
            await bare.aclose()

    assert asyncio.run(ask_bare()) is None


@pytest.mark.parametrize(
    ("name", "window", "source"),
    [
        (
            "gpt-4o-mini",
            128_000,
            "known-model table (checked 2024-07)",
        ),  # the table beats another entry's window
        ("my-local-llm", 32_768, "(its only entry, 'stub', not 'my-local-llm')"),  # a guess, said so
        ("stub", 32_768, "/models"),
    ],
)
def test_a_single_entry_under_another_id_is_only_a_labelled_guess(
    openai_server: Server, name: str, window: int, source: str
) -> None:
    """U11: a stub listing one entry ``stub`` once sized gpt-4o-mini at 32768 "from the server"."""
    server = openai_server(lunar_responder())
    server.models = [{"id": "stub", "max_model_len": 32_768}]
    model = load_model(f"openai:{name}", ModelConfig(base_url=server.base_url))

    async def ask() -> int | None:
        try:
            return await model.discover_context_window()  # type: ignore[attr-defined,no-any-return]
        finally:
            await model.aclose()

    assert asyncio.run(ask()) == window
    said = model.context_window_source  # type: ignore[attr-defined]
    assert said is not None and said.endswith(source), said
