""":class:`EvalSettings`: the keywords of :func:`recworld.evaluate`, typed so mypy checks a call.

``recworld.evaluate(suite, model=m, limit="3")`` is a mypy error, like
inspect_ai's ``eval(..., **kwargs: Unpack[GenerateConfigArgs])``. At run time
the keywords go through the same road as a ``--config`` file's keys
(:func:`recworld.console.options.from_file`), so pydantic still checks bounds
and an unknown keyword is a :class:`~recworld.errors.ConfigError` with a
did-you-mean.

The invariant: the keys are exactly the library keywords
:class:`~recworld.evaluation.config.EvalConfig` generates (``file_keys``), and
each value type is its field's type, widened only where the field parses a
wider input: a path also as ``str``, a tuple as any sequence, a dict as any
mapping, an enum also as its values. ``tests/evaluation/test_eval_settings.py``
fails when a field is added, renamed or retyped without this class following.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict

from recworld.chat import AnswerMode

__all__ = ["EvalSettings"]


class EvalSettings(TypedDict, total=False):
    """Every keyword :func:`recworld.evaluate` takes; each is optional, its default is ``EvalConfig``'s."""

    # The backend (ModelConfig): for a model spec only.
    base_url: str | None
    api_key_env: str
    allow_insecure_http: bool
    n_ctx: int
    n_threads: int | None
    model_options: Mapping[str, Any]
    # The run.
    out: str | Path | None
    force: bool
    limit: int | None
    measures: Sequence[str] | None  # "a,b" or ["a", "b"]
    mode: AnswerMode | Literal["generate", "loglik", "rank"]
    variant: str
    seed: int
    max_tokens: int | None
    temperature: float
    image_root: Sequence[str | Path]
    system: str | None
    orders: int
    fail_on_error: float
    cache_path: str | Path | None
    progress_every: float
    # The engine (RunnerConfig).
    concurrency: int
    max_retries: int
    timeout: float
    backoff: float
    backoff_max: float
    progress: bool
    # Where the model answers.
    engine: Literal["local", "ray"]
    ray_address: str | None
    replicas: int
