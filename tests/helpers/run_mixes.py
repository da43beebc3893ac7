"""Run folders of every kind, written through the evaluation's own record classes and writers.

A :class:`RunSpec` names a run the way a researcher makes one (model, mode,
variant, orders, settings, measures, limit, errors, status); :func:`write_spec`
writes its folder as ``recworld eval`` does: the header is a
:class:`~recworld.evaluation.records.RunHeader` over a real
:class:`~recworld.evaluation.config.EvalConfig` (so ``settings`` and ``label``
come from the config's own ``differing()``), the samples are
:class:`~recworld.scoring.records.SampleRecord` lines, the metrics come from
``score_samples``, and the folder is ``default_run_dir`` of the config. The
answers are drawn from a seed, not from a model: the report is what is tested.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

from recworld.evaluation.config import EvalConfig, default_run_dir, settings_label
from recworld.evaluation.records import RunCounts, RunHeader
from recworld.io import atomic_write_json, atomic_write_jsonl
from recworld.lrworld.catalogue import MEASURES_BY_ID
from recworld.scoring import score_samples
from recworld.scoring.records import SampleRecord

MEASURES = (
    "assoc_rule",
    "mem_item_item",
    "neu_user2items",
    "kg_movie_genre",
    "kg_movie_cast",
    "text_logline",
)
KINDS = ("full", "partial", "ceiling", "rank", "variant", "orders", "errored", "settings")
SYSTEMS = (None, "You are a movie expert.", "Be brief.", "Answer with one letter only, please.")


@dataclass(frozen=True)
class RunSpec:
    kind: str
    model: str
    measures: tuple[str, ...]
    limit: int
    mode: str = "generate"
    variant: str = "zero-shot"
    orders: int = 1
    errors: int = 0
    skill: float = 0.5
    seed: int = 0
    status: str = "finished"
    settings: dict[str, Any] = field(default_factory=dict)  # EvalConfig keywords: system, max_tokens, ...


def _config(suite: Path, spec: RunSpec) -> EvalConfig:
    return EvalConfig.model_validate(
        {
            "suite_dir": suite,
            "model": spec.model,
            "mode": spec.mode,
            "variant": spec.variant,
            "orders": spec.orders,
            "limit": spec.limit,
            "measures": spec.measures,
            **spec.settings,
        }
    )


def _sample(spec: RunSpec, measure: str, q: int, order: int, draw: np.random.Generator) -> SampleRecord:
    fmt = MEASURES_BY_ID[measure].format
    labels = tuple("ABCDEFGHIJ"[: fmt.n_options])
    base = f"ml-100k/{measure}/{q:05d}"
    gold = (zlib.crc32(base.encode()) + order) % fmt.n_options
    failed = q >= spec.limit - spec.errors
    parsed = None
    if not failed:
        parsed = gold if draw.random() < spec.skill else int(draw.integers(fmt.n_options))
    ranking = None
    if spec.mode == "rank" and parsed is not None:
        ranking = (parsed, *[i for i in range(fmt.n_options) if i != parsed])
    return SampleRecord.model_validate(
        {
            "question_id": base if order == 0 else f"{base}#o{order}",
            "measure": measure,
            "dataset": "ml-100k",
            "format": fmt.value,
            "model": spec.model,
            "mode": spec.mode,
            "variant": spec.variant,
            "prompt": [{"role": "user", "content": "..."}],
            "labels": labels,
            "answer_index": gold,
            "response": None if failed else labels[parsed] if parsed is not None else "?",
            "parsed_index": parsed,
            "correct": None if failed else parsed == gold,
            "missed": None if failed else parsed is None,
            "error": "ServerError: 500" if failed else None,
            "latency_s": 0.01,
            "usage": {"prompt_tokens": 10, "completion_tokens": 1},
            "attempts": 1,
            "order": order,
            "ranking": ranking,
            "tie": None if ranking is None else False,
        }
    )


def write_spec(suite: Path, spec: RunSpec) -> Path:
    """Write the run folder of ``spec`` into ``suite/runs``; a spec written before gets a second folder."""
    config = _config(suite, spec)
    run_dir = default_run_dir(config)
    copy = 1
    while run_dir.exists():  # the same settings again, as `--out` into another folder would give
        run_dir = default_run_dir(config).with_name(f"{default_run_dir(config).name}-copy{copy}")
        copy += 1
    draw = np.random.default_rng(spec.seed)
    samples = [
        _sample(spec, m, q, o, draw)
        for m in spec.measures
        for q in range(spec.limit)
        for o in range(spec.orders)
    ]
    samples.sort(key=lambda s: (s.measure, s.question_id))
    differing = config.differing()
    failed = sum(not s.scored for s in samples)
    header = RunHeader.model_validate(
        {
            "model": spec.model,
            "mode": spec.mode,
            "variant": spec.variant,
            "suite": str(suite),
            "suite_fingerprint": "f" * 64,
            "dataset": "ml-100k",
            "measures": list(spec.measures),
            "limit": spec.limit,
            "status": spec.status,
            "counts": RunCounts(questions=len(samples), answered=len(samples) - failed, errors=failed),
            "config": config,
            "settings": differing,
            "label": settings_label(differing),
        }
    )
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(run_dir / "run.json", header.to_json())
    atomic_write_jsonl(run_dir / "samples.jsonl", [s.to_json() for s in samples])
    score_samples(samples).write(run_dir / "metrics.json")
    return run_dir


def run_specs() -> st.SearchStrategy[RunSpec]:
    """One run of any kind, on any non-empty subset of :data:`MEASURES`, with any limit."""

    @st.composite
    def build(draw: st.DrawFn) -> RunSpec:
        kind = draw(st.sampled_from(KINDS))
        chosen = draw(st.sets(st.sampled_from(MEASURES), min_size=1, max_size=len(MEASURES)))
        measures = tuple(m for m in MEASURES if m in chosen)  # one draw: never empty
        limit = draw(st.integers(1, 25))
        model = draw(st.sampled_from(("random", "popularity", "openai:gpt-4o-mini", "llamacpp:smollm2-135m")))
        spec: dict[str, Any] = {"kind": kind, "model": model, "measures": measures, "limit": limit}
        spec["skill"] = draw(st.sampled_from((0.0, 0.4, 1.0)))
        spec["seed"] = draw(st.integers(0, 3))
        if kind == "ceiling":
            spec |= {"model": "oracle", "skill": 1.0}
        elif kind == "rank":
            spec |= {"mode": "rank", "model": "llamacpp:smollm2-135m"}
        elif kind == "variant":
            spec["variant"] = draw(st.sampled_from(("cot", "few-shot-1", "noisy")))
        elif kind == "orders":
            spec["orders"] = draw(st.integers(2, 3))
        elif kind == "errored":
            spec["errors"] = draw(st.integers(1, limit))
            spec["status"] = draw(st.sampled_from(("finished", "too_many_errors", "interrupted", "stopped")))
        elif kind == "settings":
            spec["settings"] = draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "system": st.sampled_from(SYSTEMS[1:]),
                        "max_tokens": st.sampled_from((8, 64)),
                        "temperature": st.sampled_from((0.0, 0.7)),
                    },
                )
            )
        return RunSpec(**spec)

    return build()
