"""``recworld analyze SUITE --all --model M``: every variant run that applies, then the report.

Each variant is an ordinary run in its own directory (``SUITE/runs/...``),
so a second invocation resumes where the first stopped and answers nothing
twice. The report then reads the whole suite: variants, option orders and
suite analyses all land in one ``report.html``.

Where the paper ran an analysis on a few measures, ``analyze`` does the same
by default (:data:`PAPER_MEASURES`): chain of thought and few-shot on text
knowledge and memory user-user (Fig. 5, 9), the five orders on the three
movie KG measures (Tables 6, 11), text + image on the multimodal measures
(Table 4). ``--measures`` widens every analysis to the measures named.
The noisy-profile variant runs only on measures it can change (a user's
history or profile on screen, :func:`~recworld.lrworld.noise.noisy_changes`),
``--measures`` or not; :func:`skipped_by_noisy` names the others, and
``analyze`` prints them. :func:`estimate_plans` gives the cost of the plan
before it starts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recworld.chat import AnswerMode
from recworld.errors import RunError
from recworld.lrworld.catalogue import MEASURES, get_measure
from recworld.lrworld.noise import noisy_changes

if TYPE_CHECKING:
    from recworld.evaluation.config import EvalConfig

__all__ = [
    "ORDERS",
    "PAPER_MEASURES",
    "PlanCost",
    "estimate_plans",
    "plan_runs",
    "run_plans",
    "skipped_by_noisy",
]

ORDERS = 5  # the paper's five option orders (Tables 6, 11)
# The measures the paper ran each analysis on; an analysis not named here runs on every measure
# (noisy profiles: Fig. 6 covers every history-bearing factor).
PAPER_MEASURES: dict[str, tuple[str, ...]] = {
    "cot": ("text_logline", "mem_user_user"),  # Fig. 5 (text knowledge, Netflix) and Fig. 9
    "few-shot": ("text_logline", "mem_user_user"),
    "orders": ("kg_movie_cast", "kg_movie_director", "kg_movie_genre"),  # Tables 6 and 11
    "describe+image": tuple(m.id for m in MEASURES if m.uses_images),  # Table 4
}


def _analysis(variant: str, orders: int) -> str:
    if orders > 1:
        return "orders"
    return "few-shot" if variant.startswith("few-shot-") else variant


def _suite_measures(base: EvalConfig) -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in (base.suite_dir / "questions").glob("*.jsonl")))


def skipped_by_noisy(base: EvalConfig) -> tuple[str, ...]:
    """The measures (``--measures``, else the suite's) the noisy variant would leave unchanged."""
    wanted = base.measures if base.measures is not None else _suite_measures(base)
    return tuple(m for m in wanted if not noisy_changes(get_measure(m)))


def _default_measures(base: EvalConfig, variant: str, orders: int) -> tuple[str, ...] | None:
    """``--measures`` when given; else the paper's measures of this analysis found in the suite.

    Noisy: only those of them the variant changes.
    """
    if variant == "noisy" and orders == 1:
        wanted = base.measures if base.measures is not None else _suite_measures(base)
        return tuple(m for m in wanted if noisy_changes(get_measure(m)))
    if base.measures is not None:
        return base.measures
    paper = PAPER_MEASURES.get(_analysis(variant, orders))
    if paper is None:
        return None
    present = tuple(m for m in paper if (base.suite_dir / "questions" / f"{m}.jsonl").is_file())
    return present or None  # none of the paper's measures in this suite: every measure


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

    def plan(name: str, orders: int) -> EvalConfig:
        measures = (
            base.measures if name == "zero-shot" and orders == 1 else _default_measures(base, name, orders)
        )
        return base.model_copy(
            update={"variant": name, "orders": orders, "out_dir": None, "measures": measures}
        )

    # A noisy run with nothing to change is not made (every measure it could ask is item-only).
    plans = [p for p in (plan(name, 1) for name in names) if p.variant != "noisy" or p.measures != ()]
    if all_variants:
        plans.append(plan("zero-shot", ORDERS))
    return plans


@dataclass(frozen=True)
class PlanCost:
    """What one planned run will ask: requests and prompt tokens (estimated as the dry run does)."""

    variant: str
    orders: int
    measures: tuple[str, ...]
    requests: int
    prompt_tokens: int
    resumes: bool  # the run folder holds an earlier run: only unanswered questions are sent


def estimate_plans(plans: Sequence[EvalConfig]) -> list[PlanCost]:
    """The dry run of every planned run (nothing is sent or written); a bad input fails here, first."""
    from recworld.evaluation.dry_run import describe
    from recworld.evaluation.plan import plan_run

    out = []
    for config in plans:
        summary = describe(plan_run(config), {})
        out.append(
            PlanCost(
                variant=config.variant,
                orders=config.orders,
                measures=tuple(summary["measures"]),
                requests=int(summary["requests"]),
                prompt_tokens=sum(int(m["prompt_tokens"]) for m in summary["measures"].values()),
                resumes=bool(summary["resumes"]),
            )
        )
    return out


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
