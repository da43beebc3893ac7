"""``recworld analyze SUITE --all --model M``: every variant run that applies, then the report.

Each variant is an ordinary run in its own directory (``SUITE/runs/...``),
so a second invocation resumes where the first stopped and answers nothing
twice. The report then reads the whole suite: variants, option orders and
suite analyses all land in one ``report.html``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from recworld.chat import AnswerMode
from recworld.errors import RunError
from recworld.lrworld.catalogue import MEASURES

if TYPE_CHECKING:
    from recworld.evaluation.config import EvalConfig

__all__ = ["ORDERS", "plan_runs", "run_plans"]

ORDERS = 5  # the paper's five option orders (Tables 6, 11)


def plan_runs(base: EvalConfig, *, all_variants: bool, variants: Sequence[str] = ()) -> list[EvalConfig]:
    """The runs ``analyze`` makes: zero-shot, then each variant that applies to the suite and mode."""
    from recworld.lrworld.prompts import MAX_SHOTS

    names = list(variants)
    if all_variants:
        names = ["zero-shot", *[f"few-shot-{k}" for k in range(1, MAX_SHOTS + 1)]]
        if (base.suite_dir / "dataset" / "dataset.json").is_file():
            names.append("noisy")  # draws from the suite's own catalogue
        if base.mode is AnswerMode.GENERATE:
            names.insert(1, "cot")  # reasoning needs generated text
        if any((base.suite_dir / "questions" / f"{m.id}.jsonl").is_file() for m in MEASURES if m.uses_images):
            names.append("describe+image")
    if "zero-shot" not in names:
        names.insert(0, "zero-shot")
    plans = [base.model_copy(update={"variant": name, "orders": 1, "out_dir": None}) for name in names]
    if all_variants:
        plans.append(base.model_copy(update={"variant": "zero-shot", "orders": ORDERS, "out_dir": None}))
    return plans


def run_plans(
    plans: Sequence[EvalConfig],
    *,
    say: Callable[[str], None] = print,
) -> list[str]:
    """Run (or resume) every planned run; returns the failures.

    A run that fails is reported and the others go on; its finished samples
    still enter the report, which the caller (``recworld analyze``, in
    :mod:`recworld.report`, the layer above) writes over the suite.
    """
    from recworld.evaluation.run import evaluate_config

    failures: list[str] = []
    for config in plans:
        say(f"== {config.model} {config.mode.value} {config.variant} (orders {config.orders})")
        try:
            evaluate_config(config)
        except RunError as exc:
            failures.append(str(exc))
            say(f"   failed: {exc}")
    return failures
