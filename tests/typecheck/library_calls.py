"""Calls mypy checks (``[tool.mypy] files`` in pyproject.toml names this folder); nothing runs them.

Each wrong call carries the ``# type: ignore[code]`` mypy must raise for it. With
``warn_unused_ignores`` on, a regression of ``recworld.evaluate``'s keywords to
``Any`` (or of ``recworld.evaluate`` itself, the root package's lazy name) makes
the ignore unused, and ``mypy`` fails.
"""

from __future__ import annotations

from pathlib import Path

import recworld
from recworld.evaluation import EvalResult, EvalSettings
from recworld.lunar import EmbedderConfig, LunarEvalConfig, SessionConfig


def wrong_calls() -> None:
    recworld.evaluate("suite", model="random", limit="3")  # type: ignore[arg-type]
    recworld.evaluate("suite", model="random", limt=3)  # type: ignore[call-arg]
    recworld.evaluate("suite", model="random", engine="spark")  # type: ignore[arg-type]
    recworld.evaluate("suite", model="random", mode="beam")  # type: ignore[arg-type]
    recworld.evaluate("suite", model="random", concurrency=2.5)  # type: ignore[arg-type]
    recworld.evalute  # type: ignore[attr-defined]  # noqa: B018
    model = SessionConfig(model="scripted")
    # A context setting's model is a key of roles=, never a keyword of its own.
    LunarEvalConfig(root=Path("run"), answer=model, judge=model, memory=model)  # type: ignore[call-arg]


def right_lunar_call() -> LunarEvalConfig:
    model = SessionConfig(model="scripted")
    return LunarEvalConfig(
        root=Path("run"),
        answer=model,
        judge=model,
        contexts=("memory",),
        roles={"memory": model, "memory_embedder": EmbedderConfig(model="minilm")},
    )


async def right_calls() -> list[EvalResult]:
    settings: EvalSettings = {"limit": 3, "concurrency": 2, "model_options": {"n_gpu_layers": 0}}
    return [
        recworld.evaluate(
            "suite",
            model="openai:gpt-4o-mini",
            limit=3,
            measures="kg_movie_genre,mem_item_item",
            out="runs/x",
            mode="rank",
            timeout=30,
            image_root=["images"],
        ),
        recworld.evaluate("suite", model="random", **settings),
        await recworld.evaluate_async("suite", model="random", measures=["assoc_rule"], engine="ray"),
    ]
