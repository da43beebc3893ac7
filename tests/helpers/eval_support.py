"""What the evaluation tests share: a config on the fake suite, a scripted oracle, JSONL reading.

Models are handed to the run (``evaluate_config(config, model=...)``), never patched
into the registry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.runner_fakes import fake_answer
from recworld.chat import Request
from recworld.evaluation import EvalConfig, evaluate_config
from recworld.models.base import Model
from recworld.runner import RunnerConfig

VOLATILE = ("latency_s", "cache_hit", "attempts")


def oracle(request: Request) -> str:
    """Right on even-numbered questions, unparseable on the others."""
    assert request.question is not None
    number = int(request.question.id.rsplit("/", 1)[1])
    return request.choices[fake_answer(request)] if number % 2 == 0 else "no idea"


def config(suite: Path, **kwargs: Any) -> EvalConfig:
    """An EvalConfig of the scripted model on ``suite``, without progress; runner settings by name."""
    engine = {k: kwargs.pop(k) for k in list(kwargs) if k in RunnerConfig.model_fields and k != "seed"}
    return EvalConfig(
        suite_dir=suite, model="scripted", runner=RunnerConfig(**{"progress": False, **engine}), **kwargs
    )


def evaluate_with(model: Model, config: EvalConfig) -> Path:
    """Evaluate ``config`` asking ``model``; the run folder."""
    return evaluate_config(config, model=model).run_dir


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def stable(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in s.items() if k not in VOLATILE} for s in samples]
