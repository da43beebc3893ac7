"""A sixth context setting is one class and one registration; every part of LUNAR then knows it.

``RecentContext`` below is defined here and nowhere else: it shows the ``--recent-n`` newest
records plus a one-line summary of each user that the judge model writes in its build-up step.
Registering it makes it a ``--context`` choice with its own option, counts its build-up requests
in ``--dry-run``, prepares, answers, judges, reports coverage, closes, and gets a report row in
its declared order: all through the scripted backend (``scripted:FILE.json``), nothing patched.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, ClassVar

import pytest
from pydantic import Field
from typer.testing import CliRunner

from helpers.lunar import scripted, session
from recworld import lunar
from recworld.console.options import Flag
from recworld.lunar.cli import build_app
from recworld.lunar.contexts import (
    ContextEnv,
    ContextSetting,
    Coverage,
    Preparation,
    Sessions,
    missing_parts,
    register_context,
    registered,
    unregister_context,
)
from recworld.lunar.llm.plan import PlannedStage, planned
from recworld.lunar.schemas import EvalInputs, Query, Rubric, UserData, records_block
from recworld.lunar.store.outputs import AnswerRecord, EvalRun
from recworld.records import FrozenRecord, Settings

pytestmark = pytest.mark.slow  # synthesises a folder and runs eval and report on it


def summary_prompt(user: UserData) -> str:
    return f"Summarise this user in one line.\n{records_block(user.records[-5:])}"


class RecentOptions(FrozenRecord, Settings):  # a plugin's options are bounded like ours
    n: Annotated[
        int, Field(ge=1, le=50, description="Newest records shown by the recent context."), Flag("--recent-n")
    ] = 3


class RecentContext(ContextSetting[RecentOptions]):
    name = "recent"
    summary = "the newest records and a one-line summary the judge model wrote"
    order = 5
    default = False
    needs_embedder = False
    options_type = RecentOptions
    closed: ClassVar[list[str]] = []

    def __init__(self, options: RecentOptions) -> None:
        super().__init__(options)
        self.summaries: dict[str, str] = {}
        self.shown: dict[str, Coverage] = {}

    def plan(self, inputs: EvalInputs, sessions: Sessions) -> dict[str, PlannedStage]:
        prompts = [summary_prompt(inputs.users[u]) for u in sorted(inputs.users)]
        return {"recent-summary": planned(sessions.judge.name, len(prompts), 64, prompts, exact=True)}

    async def prepare(self, env: ContextEnv) -> Preparation:
        llm = env.judge_llm
        before = (len(llm.failures), llm.calls, llm.asked)
        for uid in sorted(env.inputs.users):
            text = await llm.text(
                summary_prompt(env.inputs.users[uid]), stage="recent-summary", key=uid, max_tokens=64
            )
            self.summaries[uid] = text or ""
        return Preparation(
            asked=llm.asked - before[2],
            failures=tuple(llm.failures[before[0] :]),
            calls=llm.calls - before[1],
        )

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        newest = sorted(user.records, key=lambda r: (r.timestamp, r.record_id))[-self.options.n :]
        self.shown[query.query_id] = Coverage(len(newest), len(user.records), 0, self.options.n, "records")
        return f"Summary: {self.summaries[user.profile.user_id]}\nNewest records:\n{records_block(newest)}"

    def coverage(self, query_id: str) -> Coverage | None:
        return self.shown.get(query_id)

    def close(self) -> None:
        RecentContext.closed.append(self.name)


@pytest.fixture(autouse=True, scope="module")
def _recent_registered() -> Iterator[None]:
    """Registered for this module only: other tests in the worker see the five built-in settings."""
    register_context(RecentContext)
    yield
    unregister_context(RecentContext)


PAIR = {"response_1": {"pc": 4, "pd": 3}, "response_2": {"pc": 2, "pd": 2}, "rationale": "first"}
SCRIPT = {
    "Score both responses independently": json.dumps(PAIR),
    "Rate how much this personalised response offends": json.dumps({"offences": [], "score": 5}),
    "Summarise this user in one line": "SUMMARY-LINE: likes ramen in the evening",
    "*": "An answer for you.",
}


@pytest.fixture(scope="module")
def folder(ml100k_saved: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("registry") / "lunar"
    llm = session(scripted(name="gen"))
    options = lunar.SynthOptions(weeks=1, max_slots_per_day=1)
    lunar.synthesize(
        lunar.SynthConfig(anchors=str(ml100k_saved), out_dir=out, users=2, llm=llm, options=options)
    )
    lunar.make_queries(lunar.QueriesConfig(root=out, llm=llm))
    (out / "m.json").write_text(json.dumps(SCRIPT))
    return out


def _invoke(*args: str) -> Any:
    result = CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result


def test_a_sixth_setting_runs_end_to_end_from_one_registration(folder: Path) -> None:
    model = ["--model", f"scripted:{folder / 'm.json'}", "--judge", f"scripted:{folder / 'm.json'}"]
    # The --context help and the setting's own option come from the registry.
    usage = _invoke("eval", "--help").output
    assert "none, full, curated, rag, memory, recent" in usage and "--recent-n" in usage
    # The dry run counts its build-up step: one summary per user, rendered from the inputs alone.
    plan = json.loads(
        _invoke("eval", str(folder), *model, "--context", "none,recent", "--dry-run", "--json").output
    )
    stage = plan["stages"]["recent-summary (recent)"]
    assert (stage["requests"], stage["exact"]) == (2, True)
    assert "Summarise this user" in stage["first_prompt"][1]["content"]
    assert plan["stages"]["answer (recent)"]["requests"] == 4 and plan["stages"]["judge"]["requests"] == 8
    assert not (folder / "eval").exists()  # nothing was written
    # The eval prepares, answers, judges and closes it; its option reaches it.
    RecentContext.closed.clear()
    _invoke("eval", str(folder), *model, "--context", "none,recent", "--recent-n", "2", "--no-progress")
    assert RecentContext.closed == ["recent"]
    (run_path,) = folder.glob("eval/*/recent/run.json")
    run = EvalRun.read(run_path)
    assert run.config.options_of("recent") == RecentOptions(n=2)
    assert run.counts.asked == 4 + 4 + 2  # answers, judgments and the 2 summaries (privacy: Full only)
    assert run.counts.judged == 4 and run.counts.failures == 0
    answers = [AnswerRecord.model_validate_json(x) for x in (run_path.parent / "answers.jsonl").open()]
    assert all(a.context_shown == 2 and a.context_total and a.context_total > 2 for a in answers)
    # The report gives it a row in its declared order, and its coverage in the truncation table.
    _invoke("report", str(folder))
    rows = list(csv.DictReader((folder / "report.csv").open()))
    assert [r["context"] for r in rows] == ["none", "recent"]
    markdown = (folder / "report.md").read_text()
    assert "| recent | 4 | 4 of 4 |" in markdown


def test_every_registered_setting_declares_the_whole_interface() -> None:
    names = [s.name for s in registered()]
    assert names[:5] == ["none", "full", "curated", "rag", "memory"] and "recent" in names
    for setting in registered():
        assert missing_parts(setting) == [], setting


def test_an_incomplete_setting_is_refused_at_registration() -> None:
    class NoPlan(ContextSetting[RecentOptions]):
        name = "noplan"
        summary = "lacks plan"
        order = 9
        default = False
        needs_embedder = False
        options_type = RecentOptions

        async def prepare(self, env: ContextEnv) -> Preparation:
            return Preparation()

        def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
            return ""

        def coverage(self, query_id: str) -> Coverage | None:
            return None

        def close(self) -> None:
            return None

    with pytest.raises(TypeError, match=r"NoPlan lacks: plan\(\)"):
        register_context(NoPlan)

    bare = type("Bare", (RecentContext,), {"order": None, "name": "Bad Name"})
    assert missing_parts(bare) == ["order: int", "name: lower-case letters, digits and '_' (got 'Bad Name')"]
    with pytest.raises(TypeError, match="is already"):
        register_context(type("Twin", (RecentContext,), {}))
    assert missing_parts(dict) == ["a ContextSetting subclass"]


def test_the_dry_run_counts_the_memory_loop(folder: Path) -> None:
    """``--dry-run --context memory`` counts one extraction (and at most one decision) per batch of 10."""
    from recworld.lunar.store.dataset import load_eval_inputs

    script = f"scripted:{folder / 'm.json'}"
    model = ["--model", script, "--judge", script]
    refused = CliRunner().invoke(
        build_app(), ["eval", str(folder), *model, "--context", "memory", "--dry-run"]
    )
    assert refused.exit_code != 0 and "--memory-model" in str(refused.exception or refused.output)
    memory = ["--memory-model", "scripted:memory.json"]
    plan = json.loads(
        _invoke("eval", str(folder), *model, *memory, "--context", "memory", "--dry-run", "--json").output
    )
    users = load_eval_inputs(folder).users.values()
    batches = sum(-(-len(u.records) // 10) for u in users)
    extract, decide = plan["stages"]["memory-extract (memory)"], plan["stages"]["memory-decide (memory)"]
    assert batches > 0 and (extract["requests"], extract["exact"]) == (batches, True)
    assert (decide["requests"], decide["exact"]) == (batches, False)
    assert extract["model"] == "scripted:memory.json"  # the memory model, never the judge
    assert plan["requests"] == 2 * batches + 4 + 4  # the memory loop, answers, judgments (no privacy)
