"""What a run will ask, worked out and checked before anything is created.

Everything a user can get wrong (the suite, the model spec, the backend's
options, the variant, the measures, a run folder that holds another run or
that recworld did not write) is checked here, so that a typo ends with one error line and no half-made run
folder. ``recworld eval --dry-run`` stops after this step; a real run goes on
to open the model (a missing extra fails there, still before the folder).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from recworld.console.options import iter_settings, option_fields
from recworld.errors import ConfigError
from recworld.evaluation.config import EvalConfig, default_run_dir, settings_label
from recworld.evaluation.questions import load_questions
from recworld.evaluation.records import RUN_KIND, RunHeader, read_run_header
from recworld.evaluation.samples import with_system
from recworld.evaluation.variants import Asked, prepare
from recworld.io import check_output_dir, normal
from recworld.models.registry import ModelConfig, object_name

if TYPE_CHECKING:
    from recworld.lrworld.prompts import RenderedPrompt
    from recworld.models.base import Model

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

    def model_config(self) -> ModelConfig:
        """The backend settings a spec is loaded with: the run's own, with the suite and the seed."""
        return self.config.backend.model_copy(update={"suite_dir": self.suite, "seed": self.config.seed})


def check_model(spec: str, options: dict[str, object]) -> str:
    """The canonical spec; a bad spec or backend option is a ConfigError. Loads nothing."""
    from recworld.models.options import parse_options
    from recworld.models.registry import ModelSpec, backend_of

    parsed = ModelSpec.parse(spec)
    parse_options(backend_of(parsed).options, options, parsed.backend)
    return str(parsed)


def plan_run(config: EvalConfig, model: Model | None = None) -> RunPlan:
    """Check every input of ``config`` and return what the run will do; writes nothing.

    ``model``: a model object to ask instead of loading ``config.model``; it is
    used as it is, so backend settings (``--base-url``, ``--model-option``, ...)
    given with it are refused rather than ignored.
    """
    from recworld.lrworld.manifest import read_manifest
    from recworld.lrworld.prompts import get_variant

    suite = config.suite_dir.resolve()
    manifest = read_manifest(suite)
    identity = _object_identity(config, model)
    spec = check_model(config.model, config.backend.options) if model is None else config.model
    get_variant(config.variant)
    extra = {k: v for k, v in (identity or {}).items() if k not in ("backend", "model")}
    # Absolute, not resolved: a link given as --out is refused, never followed (check_output_dir).
    run_dir = normal(config.out_dir or default_run_dir(config, {"model_identity": extra} if extra else None))
    questions = load_questions(suite, config.measures, config.limit)
    asked = prepare(
        questions, variant=config.variant, orders=config.orders, seed=config.seed, suite_dir=suite
    )
    differing = config.differing()
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
        config=config,
        settings=differing,
        label=settings_label(differing),
        model_identity=identity,
    )
    check_output_dir(run_dir, RUN_KIND, force=config.force)  # before any file in it is read
    previous = _check_resumable(run_dir, header, config)
    if previous is not None:
        header.started = previous.started
    return RunPlan(config, spec, suite, run_dir, header, asked, previous)


def _object_identity(config: EvalConfig, model: Model | None) -> dict[str, str] | None:
    """A model object's identity; ConfigError for backend settings it would silently ignore."""
    if model is None:
        return None
    unset = {o.key: v for o, v in iter_settings(ModelConfig())}
    changed = [
        o.key
        for o, v in iter_settings(config.backend)
        if o.key not in ("seed", "suite_dir") and v != unset[o.key]
    ]
    if changed:
        raise ConfigError(
            f"{', '.join(changed)}: a backend setting applies to a model spec; "
            f"the model object {object_name(model)!r} is used as it is (configure it when you make it)"
        )
    return {str(k): str(v) for k, v in model.identity.items()}


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
        from recworld.data.image_refs import ImageRoots
        from recworld.lrworld.image_variant import suite_images

        images = suite_images(plan.suite, ImageRoots.of(config.image_roots, check=True))
    rank = config.mode is AnswerMode.RANK
    return [
        with_system(
            render_prompt(a.question, config.variant, images=images, examples=a.examples, rank=rank),
            config.system,
        )
        for a in asked
    ]


def _check_resumable(run_dir: Path, header: RunHeader, config: EvalConfig) -> RunHeader | None:
    """The previous header, if this is a resume; ConfigError if the directory holds another run.

    Every identity setting must match, so answers made with another system
    prompt, temperature or seed are never mixed with this run's.
    """
    path = run_dir / "run.json"
    if not path.exists():
        return None
    previous = read_run_header(path, type(config))
    ours, theirs = header.identity(), previous.identity()
    for key in [*theirs, *(k for k in ours if k not in theirs)]:
        if theirs.get(key) != ours.get(key):
            where = "give another --out" if config.out_dir is not None else "move it away or give --out"
            raise ConfigError(
                f"{run_dir} holds a run with other settings: {_named(config, key)} is "
                f"{theirs.get(key)!r} there and {ours.get(key)!r} here; {where} "
                "(each set of settings is its own run, so answers are never mixed)"
            )
    return previous


def _named(config: EvalConfig, key: str) -> str:
    """A setting as the user gives it: ``--system`` (the flag) for a key of the config."""
    flags = {o.key: o.flag for o in option_fields(type(config)) if o.cli}
    return flags.get(key, key)
