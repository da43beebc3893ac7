"""A context setting declares the models it needs (``roles``); nothing else in LUNAR names it.

``SummaryContext`` is defined here only and registered for one test at a time (the fixture
restores the registry): a sixth setting with a model of its own (``summariser``,
``--summary-model``) and an embedder with a default (``summary_embedder``). With no other
file edited, its roles are

* checked by the same function ``lunar.evaluate_contexts`` calls before any request
  (``check_settings``), with one error naming the setting's own flag, as the built-in
  memory setting's ``--memory-model`` is;
* flags of ``lunar eval`` (``--summary-model``, ``--summary-base-url``, ...) that reach the
  setting's model with the shared flags (``--timeout``);
* keys of ``LunarEvalConfig.roles`` (``roles={"summariser": ...}``, the one spelling: a role
  keyword is refused), written to and read from ``run.json``;
* planned by ``--dry-run`` with the role's model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from helpers.lunar import eval_pair, eval_user, tiny_run
from recworld.errors import ConfigError
from recworld.io import atomic_write_jsonl
from recworld.lunar.answering.plan import plan_eval
from recworld.lunar.answering.run import check_settings
from recworld.lunar.cli import build_app
from recworld.lunar.config import LunarEvalConfig, stored_eval_config
from recworld.lunar.contexts import (
    ContextEnv,
    ContextSetting,
    Coverage,
    NoContext,
    Preparation,
    RoleSpec,
    Sessions,
    register_context,
    unregister_context,
)
from recworld.lunar.contexts.base import NoOptions
from recworld.lunar.llm.config import EmbedderConfig, SessionConfig
from recworld.lunar.llm.plan import PlannedStage, planned
from recworld.lunar.schemas import EvalInputs, Query, Rubric, UserData
from recworld.lunar.store.outputs import EvalRun


class SummaryContext(ContextSetting[NoOptions]):
    name = "summary"
    summary = "a one-line summary a summariser model wrote"
    order = 6
    default = False
    needs_embedder = False
    options_type = NoOptions
    roles: ClassVar[Mapping[str, RoleSpec]] = {
        "summariser": RoleSpec("--summary-model", "the model that writes each user's summary"),
        "summary_embedder": RoleSpec(
            "--summary-embedder",
            "the embedder of the summaries",
            kind="embedder",
            default=EmbedderConfig(model="st:summary-default"),
        ),
    }
    planned_with: ClassVar[list[Sessions]] = []

    def plan(self, inputs: EvalInputs, sessions: Sessions) -> dict[str, PlannedStage]:
        self.planned_with.append(sessions)
        model = self.session(sessions, "summariser")
        prompts = [f"Summarise {u}." for u in sorted(inputs.users)]
        return {"summary-write": planned(model.name, len(prompts), model.max_tokens, prompts, exact=True)}

    async def prepare(self, env: ContextEnv) -> Preparation:
        return Preparation()

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        return ""

    def coverage(self, query_id: str) -> Coverage | None:
        return None

    def close(self) -> None:
        return None


@pytest.fixture
def summary_registered() -> Iterator[None]:
    register_context(SummaryContext)
    SummaryContext.planned_with.clear()
    try:
        yield
    finally:
        unregister_context(SummaryContext)


def _folder(root: Path) -> Path:
    """A finished-synth folder of three users with two queries (and rubrics) of the first."""
    tiny_run(root)
    pairs = [eval_pair(n, uid="user-000") for n in range(2)]
    atomic_write_jsonl(root / "queries.jsonl", [q.to_json() for q, _ in pairs])
    atomic_write_jsonl(root / "rubrics.jsonl", [r.to_json() for _, r in pairs])
    return root


def _eval(*args: str) -> Any:
    return CliRunner().invoke(build_app(), ["eval", *args], env={"COLUMNS": "250"})


def _config(root: Path, contexts: tuple[str, ...], **update: Any) -> LunarEvalConfig:
    return LunarEvalConfig(
        root=root,
        answer=SessionConfig(model="scripted:a"),
        judge=SessionConfig(model="scripted:j"),
        contexts=contexts,
        **update,
    )


def test_a_sixth_settings_required_role_is_checked_by_the_generic_loop(
    summary_registered: None, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="the summary context needs --summary-model: the model that writes"):
        check_settings(_config(tmp_path, ("none", "summary")))
    check_settings(_config(tmp_path, ("none",)))  # not run: not checked
    assert NoContext.roles == {} and SummaryContext.roles["summariser"].required


def test_the_memory_setting_declares_its_model_and_the_same_loop_checks_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="the memory context needs --memory-model"):
        check_settings(_config(tmp_path, ("memory",)))
    check_settings(_config(tmp_path, ("memory",), roles={"memory": SessionConfig(model="scripted:m")}))


def test_a_sixth_settings_roles_are_flags_of_lunar_eval(summary_registered: None) -> None:
    usage = _eval("--help").output
    for flag in (
        "--summary-model",
        "--summary-base-url",
        "--summary-api-key-env",
        "--summary-model-option",
        "--summary-embedder",
        "--summary-embed-base-url",
        "--summary-embed-api-key-env",
        "--summary-embedder-option",
    ):
        assert flag in usage, flag
    assert "The model that writes each user's summary." in usage
    # The built-in setting's flags are generated the same way, under the names they always had.
    for flag in ("--memory-model", "--memory-base-url", "--memory-embedder", "--memory-embed-api-key-env"):
        assert flag in usage, flag


def test_without_the_registration_there_are_no_such_flags() -> None:
    usage = _eval("--help").output
    assert "--memory-model" in usage and "--summary-model" not in usage


def test_a_sixth_settings_role_flags_reach_its_model_and_its_plan_entry(
    summary_registered: None, tmp_path: Path
) -> None:
    root = str(_folder(tmp_path))
    base = [root, "--model", "scripted:a", "--judge", "scripted:j", "--context", "none,summary", "--dry-run"]
    refused = _eval(*base)
    assert refused.exit_code != 0 and "the summary context needs --summary-model" in str(refused.exception)
    alone = _eval(*base, "--summary-base-url", "http://127.0.0.1:9/v1")
    assert alone.exit_code != 0 and "--summary-base-url needs --summary-model" in str(alone.exception)
    given = ["--summary-model", "scripted:s", "--summary-base-url", "http://127.0.0.1:9/v1", "--timeout", "7"]
    given += ["--summary-embed-api-key-env", "SUMMARY_KEY"]
    result = _eval(*base, *given, "--json")
    assert result.exit_code == 0, (result.output, result.exception)
    stage = json.loads(result.output)["stages"]["summary-write (summary)"]
    assert (stage["model"], stage["requests"], stage["exact"]) == ("scripted:s", 3, True)
    sessions = SummaryContext.planned_with[-1]  # the run that was given its model
    model = sessions.model("summariser")
    assert model is not None and model.backend.base_url == "http://127.0.0.1:9/v1"
    assert model.runner.timeout_s == 7  # a shared flag reaches a declared model as it reaches --model
    embedder = sessions.embedder("summary_embedder")
    assert embedder is not None and embedder.model == "st:summary-default"  # its declared default
    assert embedder.backend.api_key_env == "SUMMARY_KEY" and embedder.runner.timeout_s == 7


def test_a_sixth_settings_role_is_a_key_of_roles_in_python_and_in_run_json(
    summary_registered: None, tmp_path: Path
) -> None:
    config = _config(tmp_path, ("none", "summary"), roles={"summariser": SessionConfig(model="scripted:s")})
    assert config.roles["summariser"] == SessionConfig(model="scripted:s")
    assert config.roles["summary_embedder"] == EmbedderConfig(model="st:summary-default")  # filled in
    written = config.to_json()
    assert written["roles"]["summariser"]["model"] == "scripted:s" and "summariser" not in written
    assert written["roles"]["summary_embedder"]["model"] == "st:summary-default"
    assert LunarEvalConfig.model_validate(json.loads(json.dumps(written))) == config
    # The key is validated as the role's kind, and a bad value names the role.
    with pytest.raises(ValidationError, match=r"summariser\.max_tokens"):
        _config(tmp_path, ("summary",), roles={"summariser": {"model": "scripted:s", "max_tokens": 0}})
    # The library's plan asks the role's model, as the command line's does.
    stages = plan_eval(
        _config(_folder(tmp_path), ("summary",), roles={"summariser": {"model": "scripted:s"}})
    )
    assert stages["summary-write (summary)"].model == "scripted:s"


@pytest.mark.parametrize("role", ["memory", "memory_embedder"])
def test_a_role_given_as_a_keyword_is_one_error_naming_roles(tmp_path: Path, role: str) -> None:
    """``roles={...}`` is the one spelling (the one a type checker knows); a role keyword says so."""
    with pytest.raises(
        ValidationError, match=rf"give it as roles=\{{'{role}': \.\.\.\}}, not as {role}="
    ) as err:
        _config(tmp_path, ("memory",), **{role: {"model": "scripted:m"}})
    assert len(err.value.errors()) == 1


def test_an_unregistered_settings_role_is_no_key(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="unknown role 'summariser'"):
        _config(tmp_path, ("none",), roles={"summariser": SessionConfig(model="scripted:s")})
    with pytest.raises(ValidationError, match="summariser"):  # nor a keyword: an unknown field
        _config(tmp_path, ("none",), summariser=SessionConfig(model="scripted:s"))


def test_run_records_with_each_role_a_key_of_its_own_read_back_into_roles(tmp_path: Path) -> None:
    """Earlier runs wrote ``"memory": {...}`` beside ``answer``: the run record reads it into ``roles``."""
    config = _config(tmp_path, ("memory",), roles={"memory": {"model": "scripted:m"}})
    assert config.to_json()["roles"]["memory_embedder"]["model"] == "minilm"  # its declared default
    flat = {k: v for k, v in config.to_json().items() if k != "roles"}
    flat |= {"memory": {"model": "scripted:m"}, "memory_embedder": {"model": "minilm"}}
    counts = {"queries": 0, "answered": 0, "answer_errors": 0, "judged": 0, "judge_errors": 0}
    counts |= {"asked": 0, "failures": 0, "llm_calls": 0}
    record = {"model": "scripted:a", "judge": "scripted:j", "context": "memory", "config": flat}
    (tmp_path / "run.json").write_text(json.dumps({**record, "counts": counts, "failures": []}))
    assert EvalRun.read(tmp_path / "run.json").config == config
    assert LunarEvalConfig.model_validate(stored_eval_config(flat)) == config
    with pytest.raises(ValidationError, match=r"roles=\{'memory'"):  # only a stored record reads that form
        LunarEvalConfig.model_validate(flat)


def test_a_role_another_setting_declares_is_refused(summary_registered: None) -> None:
    twin = type("Twin", (SummaryContext,), {"name": "twin"})
    with pytest.raises(TypeError, match="declares the role 'summariser' of context setting 'summary'"):
        register_context(twin)
    bad = type("BadRole", (SummaryContext,), {"name": "badrole", "roles": {"x": RoleSpec("--x", "why")}})
    with pytest.raises(TypeError, match=r"roles\['x'\]\.flag: --NAME-model"):
        register_context(bad)


def test_a_setting_that_declares_its_fixed_context_has_its_answers_rendered_by_the_plan(
    summary_registered: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dry run renders the answers of any setting whose context is one known text, not only ``none``'s."""
    folder = _folder(tmp_path)
    roles = {"summariser": {"model": "scripted:s"}}
    asked = {"question 0 please", "question 1 please"}  # the two queries of _folder (eval_pair)
    stages = plan_eval(_config(folder, ("none", "summary"), roles=roles))
    floor, summary = stages["answer (none)"], stages["answer (summary)"]
    assert floor.first_prompt is not None and floor.first_prompt[1].content in asked
    assert floor.prompt_tokens is not None and (summary.first_prompt, summary.prompt_tokens) == (None, None)
    assert NoContext.fixed_context == "" == NoContext.from_options().build(eval_user(), *eval_pair(0))
    monkeypatch.setattr(SummaryContext, "fixed_context", "Likes tea.")
    summary = plan_eval(_config(folder, ("none", "summary"), roles=roles))["answer (summary)"]
    assert summary.first_prompt is not None
    assert summary.first_prompt[1].content in {f"Likes tea.\n\nUser request: {q}" for q in asked}
    assert summary.requests == floor.requests == 2 and summary.prompt_tokens is not None
    bad = type("BadFixed", (SummaryContext,), {"name": "badfixed", "roles": {}, "fixed_context": 0})
    with pytest.raises(TypeError, match="fixed_context: str or None"):
        register_context(bad)


def test_the_privacy_judges_default_contexts_are_the_settings_that_declare_it(
    summary_registered: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _config(tmp_path, ("none", "summary")).privacy_contexts == ("full",)  # FullContext declares it
    monkeypatch.setattr(SummaryContext, "privacy_default", True)
    config = _config(tmp_path, ("none", "summary"))
    assert config.privacy_contexts == ("full", "summary") and config.judges_privacy("summary")
    assert not config.judges_privacy("none")
    assert _config(tmp_path, ("summary",), privacy_contexts=("none",)).privacy_contexts == ("none",)
