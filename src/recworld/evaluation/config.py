"""What ``recworld eval`` runs: :class:`EvalConfig`, every setting declared once, and where a run goes.

Each field is the one declaration of a setting: its type, bounds, default and
help. The ``recworld eval`` options, the ``--config`` TOML keys and the keywords
of :func:`recworld.evaluate` are all generated from it
(:mod:`recworld.console.options`), and ``run.json`` stores it typed. The
backend's shared settings are the model registry's own :class:`ModelConfig`
(``backend``) and the engine's are :class:`RunnerConfig` (``runner``), nested, so
``--base-url`` or ``--timeout`` exists in one place.

A run's identity is its settings (:meth:`EvalConfig.identity`): every setting
except those marked :class:`~recworld.console.options.Operational` (how fast, how
many, where to). Two configs with different identities write to different run
folders (:func:`default_run_dir`), so a rerun with another ``--system`` never
reuses an answer made without it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from recworld.chat import AnswerMode
from recworld.console.options import Flag, Force, Nested, Operational, comma_list, identity_settings
from recworld.errors import ConfigError
from recworld.io import dumps_canonical
from recworld.models.registry import ModelConfig, ServerURL
from recworld.paths import slug
from recworld.records import MAX_INT, MAX_TOKENS, Record, Seed, Settings
from recworld.runner import DEFAULT_FAIL_ON_ERROR, FailOnError, RunnerConfig

__all__ = ["NAMED", "EvalConfig", "default_run_dir"]

# Settings the run folder's name already shows (model__mode__variant__oN): not hashed again.
NAMED = frozenset({"suite_dir", "model", "mode", "variant", "orders"})

_VARIANTS = "zero-shot, cot, few-shot-1..5, noisy or describe+image"


class EvalConfig(Record, Settings):
    """Everything an evaluation needs; written typed into ``run.json``.

    Every number in it, nested ones included, is finite and bounded
    (:class:`~recworld.records.Settings`): one config error before any work.

    Adding a setting is one field here: the flag, the file key, the library
    keyword, the run.json field and (unless marked ``Operational``) the run's
    identity follow from it.
    """

    suite_dir: Annotated[Path, Field(description="Suite directory."), Flag(cli=False, file=False)]
    # The spec; for a model object (recworld.evaluate(model=obj)), the name made from its identity.
    model: Annotated[str, Field(min_length=1, description="Model spec."), Flag(cli=False, file=False)]
    backend: Annotated[ModelConfig, Nested(omit=("seed", "suite_dir"))] = Field(default_factory=ModelConfig)
    out_dir: Annotated[
        Path | None,
        Field(description="Run directory (default SUITE/runs/MODEL__MODE__VARIANT[__SETTINGS]); one model."),
        Flag("--out", metavar="RUN_DIR"),
        Operational(),
    ] = None
    force: Annotated[Force, Operational()] = False
    limit: Annotated[
        int | None,
        Field(ge=1, le=MAX_INT, description="First N questions per measure (default all)."),
        Operational(),
    ] = None
    measures: Annotated[
        tuple[str, ...] | None,
        Field(description="Comma-separated measure ids (default all)."),
        Flag(parse=comma_list, cli_type=str, metavar="IDS"),
        Operational(),
    ] = None
    mode: Annotated[
        AnswerMode, Field(description="generate, loglik (score the letters) or rank (score the texts).")
    ] = AnswerMode.GENERATE
    variant: Annotated[str, Field(min_length=1, description=f"Prompt variant: {_VARIANTS}.")] = "zero-shot"
    seed: Annotated[
        Seed, Field(description="Seeds the request (so the cache key), backoff jitter and bootstrap CIs.")
    ] = 0
    max_tokens: Annotated[
        int | None,
        Field(ge=1, le=MAX_TOKENS, description="Reply length."),
        Flag(default_help="16; 512 for --variant cot"),
    ] = None
    temperature: Annotated[
        float, Field(ge=0.0, le=2.0, description="Sampling temperature, 0 to 2 (0: greedy).")
    ] = 0.0
    image_roots: Annotated[
        tuple[Path, ...],
        Field(description="A folder item images may come from besides SUITE/dataset (describe+image)."),
        Flag("--image-root", metavar="DIR"),
        Operational(),
    ] = Field(default_factory=tuple)
    system: Annotated[
        str | None, Field(description="A system message sent before every prompt."), Flag(metavar="TEXT")
    ] = None
    orders: Annotated[
        int, Field(ge=1, le=24, description="Ask each question in N seeded option orders (paper: 5).")
    ] = 1
    fail_on_error: Annotated[FailOnError, Operational()] = DEFAULT_FAIL_ON_ERROR
    cache_path: Annotated[
        Path | None,
        Field(
            description="Response cache file; point runs at one to share it (default RUN_DIR/cache.sqlite)."
        ),
        Flag(metavar="FILE"),
        Operational(),
    ] = None
    progress_every: Annotated[
        float,
        Field(gt=0, le=3600, description="Seconds between progress lines when stderr is not a terminal."),
        Flag(metavar="SECONDS"),
        Operational(),
    ] = 30.0
    runner: Annotated[RunnerConfig, Nested(omit=("seed",)), Operational()] = Field(
        default_factory=RunnerConfig
    )
    engine: Annotated[
        Literal["local", "ray"],
        Field(description="local, or ray: model replicas answer on a Ray cluster."),
        Operational(),
    ] = "local"
    ray_address: Annotated[
        ServerURL | None,
        Field(description="Ray cluster to join (default: start a local one)."),
        Flag(metavar="ADDRESS"),
        Operational(),
    ] = None
    replicas: Annotated[
        int, Field(ge=1, le=4096, description="Model replicas (--engine ray)."), Operational()
    ] = 1
    # The --config file this run came from, if any (the values above are what it resolved to).
    config_file: Annotated[Path | None, Flag(cli=False, file=False), Operational()] = None

    @model_validator(mode="after")
    def _one_seed(self) -> Self:
        """``seed`` is the one seed: the backend's fallback and the runner's jitter follow it."""
        if self.backend.seed != self.seed:
            self.backend = self.backend.model_copy(update={"seed": self.seed})
        if self.runner.seed != self.seed:
            self.runner = self.runner.model_copy(update={"seed": self.seed})
        return self

    @property
    def reply_tokens(self) -> int:
        """``max_tokens``, or the variant's default."""
        from recworld.lrworld.prompts import get_variant

        return (
            self.max_tokens if self.max_tokens is not None else get_variant(self.variant).default_max_tokens
        )

    def identity(self) -> dict[str, Any]:
        """Every setting that changes a request or its answer, by key (``max_tokens`` as sent)."""
        settings = identity_settings(self)
        settings["max_tokens"] = self.reply_tokens
        settings["model_options"] = self._answer_options()
        return settings

    def _answer_options(self) -> dict[str, Any]:
        """The backend options that can change an answer (not those its options class marks operational)."""
        from recworld.models import backend_of
        from recworld.models.options import operational_options

        try:
            operational = operational_options(backend_of(self.model).options)
        except ConfigError:  # a plugin no longer installed: every option counts
            operational = frozenset()
        return {k: v for k, v in self.backend.options.items() if k not in operational}

    def differing(self) -> dict[str, Any]:
        """The identity settings that differ from the defaults, leaving out what the folder name shows."""
        default = type(self)(
            suite_dir=self.suite_dir,
            model=self.model,
            mode=self.mode,
            variant=self.variant,
            orders=self.orders,
        ).identity()
        return {k: v for k, v in self.identity().items() if k not in NAMED and v != default.get(k)}


def settings_hash(differing: dict[str, Any]) -> str:
    """Eight hex digits naming a set of non-default settings; empty for none."""
    if not differing:
        return ""
    return hashlib.sha256(dumps_canonical(differing).encode("utf-8")).hexdigest()[:8]


def settings_label(differing: dict[str, Any]) -> str:
    """The non-default settings as a reader scans them: ``system='Be brief.', max_tokens=8``."""
    return ", ".join(f"{key}={value!r}" for key, value in differing.items())


def default_run_dir(config: EvalConfig, extra: dict[str, Any] | None = None) -> Path:
    """``SUITE/runs/<model>__<mode>__<variant>[__o<N>][__<settings hash>]``.

    The hash covers every identity setting that differs from the defaults (and
    ``extra``: what identifies a model object beyond its name), so runs with
    other settings never share a folder, and a default run keeps the plain name.
    """
    orders = f"__o{config.orders}" if config.orders > 1 else ""
    digest = settings_hash({**config.differing(), **(extra or {})})
    name = f"{slug(config.model)}__{config.mode.value}__{config.variant}{orders}"
    return config.suite_dir / "runs" / (f"{name}__{digest}" if digest else name)
