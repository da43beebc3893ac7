"""What a run will ask, worked out and checked before anything is created.

Everything a user can get wrong (the suite, the model spec, the backend's
options, the variant, the measures, a run folder that holds another run) is
checked here, so that a typo ends with one error line and no half-made run
folder. ``recworld eval --dry-run`` stops after this step; a real run goes on
to open the model (a missing extra fails there, still before the folder).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from recworld.errors import ConfigError
from recworld.evaluation.config import EvalConfig, default_run_dir
from recworld.evaluation.questions import load_questions
from recworld.evaluation.records import RunHeader, read_run_header
from recworld.evaluation.samples import with_system
from recworld.evaluation.variants import Asked, prepare

if TYPE_CHECKING:
    from recworld.lrworld.prompts import RenderedPrompt

__all__ = ["RunPlan", "check_model", "now_iso", "plan_run", "render_all"]


@dataclass
class RunPlan:
    """One checked run: its spec, folder, header and the (question, order) pairs it asks."""

    config: EvalConfig
    spec: str
    suite: Path
    run_dir: Path
    header: RunHeader
    asked: list[Asked]
    previous: RunHeader | None  # the header already in run_dir: this run resumes it

    def requests_per_measure(self) -> dict[str, int]:
        return dict(Counter(a.question.measure for a in self.asked))


def check_model(spec: str, options: dict[str, object]) -> str:
    """The canonical spec; a bad spec or backend option is a ConfigError. Loads nothing."""
    from recworld.models.options import parse_options
    from recworld.models.registry import ModelSpec, backend_of

    parsed = ModelSpec.parse(spec)
    parse_options(backend_of(parsed).options, options, parsed.backend)
    return str(parsed)


def plan_run(config: EvalConfig) -> RunPlan:
    """Check every input of ``config`` and return what the run will do; writes nothing."""
    from recworld.lrworld.manifest import read_manifest
    from recworld.lrworld.prompts import get_variant

    suite = config.suite_dir.resolve()
    manifest = read_manifest(suite)
    spec = check_model(config.model, config.model_options)
    get_variant(config.variant)
    run_dir = (config.out_dir or default_run_dir(config)).resolve()
    questions = load_questions(suite, config.measures, config.limit)
    asked = prepare(
        questions, variant=config.variant, orders=config.orders, seed=config.seed, suite_dir=suite
    )
    header = RunHeader(
        model=spec,
        mode=config.mode.value,
        variant=config.variant,
        suite=str(suite),
        suite_fingerprint=manifest.fingerprint,
        dataset=manifest.dataset,
        measures=sorted({q.measure for q in questions}),
        limit=config.limit,
        started=now_iso(),
        status="running",
        config=config.model_dump(mode="json"),
    )
    previous = _check_resumable(run_dir, header)
    if previous is not None:
        header.started = previous.started
    return RunPlan(config, spec, suite, run_dir, header, asked, previous)


def now_iso() -> str:
    """An ISO 8601 UTC time, to the second: what a person reads in run.json and the report."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def render_all(plan: RunPlan, asked: list[Asked]) -> list[RenderedPrompt]:
    """The prompts for ``asked``, with ``--system`` in front: exactly what is sent."""
    from recworld.chat import AnswerMode
    from recworld.lrworld.prompts import get_variant, render_prompt

    config = plan.config
    images = None
    if get_variant(config.variant).attach_image:
        from recworld.lrworld.image_variant import suite_images

        images = suite_images(plan.suite)
    rank = config.mode is AnswerMode.RANK
    return [
        with_system(
            render_prompt(a.question, config.variant, images=images, examples=a.examples, rank=rank),
            config.system,
        )
        for a in asked
    ]


def _check_resumable(run_dir: Path, header: RunHeader) -> RunHeader | None:
    """The previous header, if this is a resume; ConfigError if the directory holds another run."""
    path = run_dir / "run.json"
    if not path.exists():
        return None
    previous = read_run_header(path)
    ours = header.identity()
    for key, theirs in previous.identity().items():
        if theirs != ours[key]:
            raise ConfigError(
                f"{path}: field {key!r} is {theirs!r}, this run has {ours[key]!r}; "
                "use another --out directory"
            )
    return previous
