"""What a ``--dry-run`` reports per stage: requests, whether the count is exact, the first prompt, the price.

Nothing is sent and nothing is written. A stage whose prompts come from the inputs
alone (profiles, queries, the answer without context, a setting's distillation batches) is
counted exactly and its first prompt shown; a stage whose prompts are built from
earlier replies (weeks, records, rubrics, judgments) is counted as an upper bound
(retries excluded). Prompt tokens are estimated at 4 characters per token
(as :class:`~recworld.lunar.llm.budget.CharEstimate`); replies are counted at their
token cap, so a price is an upper bound and covers only stages whose prompts could
be rendered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from recworld.lunar.llm.budget import CHARS_PER_TOKEN
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.llm.structured import DATA_SYSTEM
from recworld.models import ModelSpec
from recworld.records import FrozenRecord
from recworld.scoring.prices import Price


class PromptMessage(FrozenRecord):
    role: str
    content: str


class PlannedStage(FrozenRecord):
    """One stage of a dry run: what would be asked of which model, and what it might cost."""

    model: str  # the spec this stage asks (prices are looked up by it)
    requests: int
    exact: bool  # False: an upper bound (the prompts depend on earlier replies)
    prompt_tokens: int | None  # None: the prompts are built at run time
    max_reply_tokens: int
    first_prompt: tuple[PromptMessage, ...] | None
    cost_usd: float | None = None


def planned(
    model: str,
    requests: int,
    reply_tokens: int,
    prompts: Sequence[str] = (),
    *,
    exact: bool,
    system: str = DATA_SYSTEM,
) -> PlannedStage:
    """A stage of ``requests`` calls capped at ``reply_tokens``; ``prompts`` when they can be rendered now."""
    chars = sum(len(system) + len(p) for p in prompts)
    first = None
    if prompts:
        first = (PromptMessage(role="system", content=system), PromptMessage(role="user", content=prompts[0]))
    return PlannedStage(
        model=model,
        requests=requests,
        exact=exact,
        prompt_tokens=-(-chars // CHARS_PER_TOKEN) if prompts else None,
        max_reply_tokens=requests * reply_tokens,
        first_prompt=first,
    )


def priced(stages: Mapping[str, PlannedStage], prices: Mapping[str, Price]) -> dict[str, PlannedStage]:
    """Each stage with ``cost_usd`` where its prompts were rendered and its model has a price."""
    out = {}
    for name, stage in stages.items():
        rate = prices.get(stage.model)
        cost = None
        if rate is not None and stage.prompt_tokens is not None:
            cost = (stage.prompt_tokens * rate.input_per_m + stage.max_reply_tokens * rate.output_per_m) / 1e6
        out[name] = stage.model_copy(update={"cost_usd": cost})
    return out


def check_spec(*sessions: SessionConfig) -> None:
    """An unknown backend fails before anything is counted, with "did you mean"."""
    for s in sessions:
        if isinstance(s.model, str):
            ModelSpec.parse(s.model)
