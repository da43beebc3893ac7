"""What ``recworld eval`` runs: :class:`EvalConfig`, and where a run's files go."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from recworld.chat import AnswerMode
from recworld.runner import RunnerConfig

__all__ = ["EvalConfig", "default_run_dir", "run_slug"]


class EvalConfig(BaseModel):
    """Everything an evaluation needs; written into ``run.json``.

    How requests are sent (concurrency, timeouts, retries) is the runner's own
    :class:`~recworld.runner.RunnerConfig`, nested rather than repeated, so an
    engine setting exists in one place.
    """

    model_config = ConfigDict(extra="forbid")

    suite_dir: Path
    model: str
    base_url: str | None = None
    # The NAME of the environment variable holding the key; the key itself is never stored.
    api_key_env: str = "OPENAI_API_KEY"
    out_dir: Path | None = None
    limit: int | None = Field(default=None, ge=1)  # first N questions per measure
    measures: tuple[str, ...] | None = None
    mode: AnswerMode = AnswerMode.GENERATE
    variant: str = "zero-shot"
    # Seeds the request (Request.seed, so the cache key) and the bootstrap intervals.
    seed: int = 0
    # None: the variant's default (16 leaves room for "Answer: B"; cot gets 512 for its reasoning).
    max_tokens: int | None = Field(default=None, ge=1)
    # 0: the same reply every time (greedy); above it the cache still keys on the seed.
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    # A system message sent before every prompt (joined to the variant's own, if it has one).
    system: str | None = None
    # Backend-specific options, checked against the backend's typed class (recworld.models.options).
    model_options: dict[str, Any] = Field(default_factory=dict)
    # The --config file this run came from, if any (the values above are what it resolved to).
    config_file: Path | None = None
    # Ask each question under this many seeded option orders (paper Tables 6, 11: 5).
    orders: int = Field(default=1, ge=1, le=24)
    # Above this share of failed samples the run is written and then exits 3 (inspect_ai's fail_on_error).
    fail_on_error: float = Field(default=0.05, ge=0.0, le=1.0)
    # None: RUN_DIR/cache.sqlite. Point several runs at one file to share responses.
    cache_path: Path | None = None
    runner: RunnerConfig = Field(default_factory=RunnerConfig)
    # "ray": a Ray Dataset over `replicas` model replicas answers (recworld.evaluation.ray_engine).
    engine: Literal["local", "ray"] = "local"
    ray_address: str | None = None  # None: the Ray session already open, else a new local one
    replicas: int = Field(default=1, ge=1)

    @property
    def reply_tokens(self) -> int:
        """``max_tokens``, or the variant's default."""
        from recworld.lrworld.prompts import get_variant

        return (
            self.max_tokens if self.max_tokens is not None else get_variant(self.variant).default_max_tokens
        )


def run_slug(spec: str) -> str:
    """A file-name-safe form of a model spec: ``openai:gpt-4o`` -> ``openai-gpt-4o``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", spec).strip("-.") or "model"


def default_run_dir(config: EvalConfig) -> Path:
    """``SUITE/runs/<model>__<mode>__<variant>``, with ``__o<N>`` when asked in N option orders."""
    orders = f"__o{config.orders}" if config.orders > 1 else ""
    return (
        config.suite_dir / "runs" / f"{run_slug(config.model)}__{config.mode.value}__{config.variant}{orders}"
    )
