"""``recworld.evaluate(suite, model=..., **settings)``: an evaluation from Python, in one call.

It reads like inspect_ai's ``eval(tasks, model=...)``::

    import recworld

    result = recworld.evaluate("suites/ml100k", model=MyModel(), limit=100, out="runs/mine")
    result.metrics.measures["assoc_rule"].score

``model`` is a spec string (``"openai:gpt-4o-mini"``, ``"popularity"``) or any
object with the :class:`~recworld.models.Model` protocol's ``identity``,
``supports``, ``complete`` and ``aclose``: a fine-tuned recommender LLM behind
your own class needs no registry edit. The object belongs to you; RecWorld never
closes it.

The settings are the command line's option names with ``_`` (``limit``,
``max_tokens``, ``system``, ``timeout``, ``concurrency``, ``model_options``,
``out``), the same keys a ``--config`` file takes, generated from
:class:`~recworld.evaluation.config.EvalConfig`. mypy checks them
(:class:`~recworld.evaluation.settings.EvalSettings`: ``limit="3"`` is a type
error); at run time an unknown one is a :class:`~recworld.errors.ConfigError`
with a did-you-mean, and a value out of bounds one naming the keyword. The result is typed:
the run folder, its :class:`~recworld.evaluation.records.RunHeader` and its
:class:`~recworld.scoring.records.MetricsRecord`. A run that fails raises
:class:`~recworld.evaluation.run.RunFailedError`, whose ``result`` holds what it
wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Unpack

from recworld.console.options import build, from_file, layered
from recworld.evaluation.config import EvalConfig
from recworld.evaluation.records import EvalResult
from recworld.evaluation.run import evaluate_config, evaluate_config_async
from recworld.evaluation.settings import EvalSettings
from recworld.models import object_name
from recworld.models.base import Model
from recworld.models.registry import ModelLike, ModelSpec, resolve_model

__all__ = ["EvalSettings", "evaluate", "evaluate_async", "make_config"]

_SOURCE = "recworld.evaluate()"


def evaluate(suite: str | Path, *, model: ModelLike, **settings: Unpack[EvalSettings]) -> EvalResult:
    """Evaluate ``model`` on the suite at ``suite``; rerunning the same call resumes."""
    config, obj = make_config(suite, model, settings)
    return evaluate_config(config, model=obj)


async def evaluate_async(
    suite: str | Path, *, model: ModelLike, **settings: Unpack[EvalSettings]
) -> EvalResult:
    """:func:`evaluate` for callers already inside an event loop (a notebook cell with ``await``)."""
    config, obj = make_config(suite, model, settings)
    return await evaluate_config_async(config, model=obj)


def make_config(
    suite: str | Path,
    model: ModelLike,
    settings: Mapping[str, Any],
    config: type[EvalConfig] = EvalConfig,
) -> tuple[EvalConfig, Model | None]:
    """The checked config of a library call, and the model object to ask (None: load the spec)."""
    obj: Model | None = None
    if isinstance(model, str | ModelSpec):
        name = str(model)
    else:
        obj, _owned = resolve_model(model)  # checks the protocol; an object is never owned
        name = object_name(obj)
    values = from_file(config, settings, source=_SOURCE, noun="keyword")
    built = build(
        config, layered(values, {"suite_dir": Path(suite), "model": name}), source=_SOURCE, noun="keyword"
    )
    return built, obj
