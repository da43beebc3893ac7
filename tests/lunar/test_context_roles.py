"""A context setting declares the models it needs (``roles``); the eval checks them without naming a setting.

``SummaryContext`` is defined here only and registered for one test at a time (the fixture
restores the registry). Its declared role is checked by the same function
``lunar.evaluate_contexts`` calls before any request (``check_settings``), with one error
naming the setting's own flag, as the built-in memory setting's ``--memory-model`` is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from recworld.errors import ConfigError
from recworld.lunar.answering.run import check_settings
from recworld.lunar.config import LunarEvalConfig
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
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.llm.plan import PlannedStage
from recworld.lunar.schemas import EvalInputs, Query, Rubric, UserData


class SummaryContext(ContextSetting[NoOptions]):
    name = "summary"
    summary = "a one-line summary a summariser model wrote"
    order = 6
    default = False
    needs_embedder = False
    options_type = NoOptions
    roles: ClassVar[Mapping[str, RoleSpec]] = {
        "summariser": RoleSpec("--summary-model", "the model that writes each user's summary")
    }

    def plan(self, inputs: EvalInputs, sessions: Sessions) -> dict[str, PlannedStage]:
        return {}

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
    try:
        yield
    finally:
        unregister_context(SummaryContext)


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
    check_settings(_config(tmp_path, ("memory",), memory=SessionConfig(model="scripted:m")))
