"""Evaluate one model on an LRWorld suite: a resumable run that writes samples, run and metrics files.

Layout of a run directory (default ``SUITE/runs/<model-slug>__<mode>__<variant>``)::

    run.json                  what was run (model, mode, variant, suite), counts, timestamps
    samples.jsonl             one recworld.sample/1 record per question, sorted by (measure, question_id)
    metrics.json              recworld.scoring.compute_metrics(samples)
    .samples.journal.jsonl    fsynced line per finished sample; the resume state
    cache.sqlite              the run's response cache (keyed without secrets or concurrency)

Rerunning the same command resumes: questions whose sample is in the journal
without an error are skipped, and every response that arrived before a kill
is in the cache, so nothing that was answered is sent again. Samples that
ended in an error are retried on the next run.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recworld.errors import ConfigError, DataError
from recworld.io import atomic_write_json, atomic_write_jsonl, read_json_object
from recworld.models.base import AnswerMode, Request, Response
from recworld.runner.cache import ResponseCache
from recworld.runner.engine import Completion, Runner, RunnerConfig
from recworld.runner.journal import SampleJournal

if TYPE_CHECKING:
    from recworld.lrworld.prompts import RenderedPrompt
    from recworld.lrworld.schema import Question

SAMPLE_SCHEMA = "recworld.sample/1"
RUN_SCHEMA = "recworld.run/1"
JOURNAL_NAME = ".samples.journal.jsonl"
CACHE_NAME = "cache.sqlite"
# What must match for a rerun into an existing run directory to be a resume.
_RUN_IDENTITY = ("model", "mode", "variant", "suite", "suite_fingerprint")


class EvalConfig(BaseModel):
    """Everything ``recworld eval`` needs; written into ``run.json``."""

    model_config = ConfigDict(extra="forbid")

    suite_dir: Path
    model: str
    base_url: str | None = None
    # The NAME of the environment variable holding the key; the key itself is never stored.
    api_key_env: str = "OPENAI_API_KEY"
    out_dir: Path | None = None
    limit: int | None = Field(default=None, ge=1)  # first N questions per measure
    measures: tuple[str, ...] | None = None
    concurrency: int = Field(default=8, ge=1)
    mode: AnswerMode = AnswerMode.GENERATE
    variant: str = "zero-shot"
    seed: int = 0
    # An answer is one label; a few tokens leave room for "Answer: B".
    max_tokens: int = Field(default=16, ge=1)
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=6, ge=0)
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    progress: bool = True
    # None: RUN_DIR/cache.sqlite. Point several runs at one file to share responses.
    cache_path: Path | None = None

    def runner_config(self) -> RunnerConfig:
        return RunnerConfig(
            concurrency=self.concurrency,
            max_retries=self.max_retries,
            timeout_s=self.timeout_s,
            backoff_base_s=self.backoff_base_s,
            backoff_max_s=self.backoff_max_s,
            progress=self.progress,
            seed=self.seed,
        )


def run_slug(spec: str) -> str:
    """A file-name-safe form of a model spec: ``openai:gpt-4o`` -> ``openai-gpt-4o``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", spec).strip("-.") or "model"


def default_run_dir(config: EvalConfig) -> Path:
    return config.suite_dir / "runs" / f"{run_slug(config.model)}__{config.mode.value}__{config.variant}"


def load_questions(
    suite_dir: Path, measures: Sequence[str] | None = None, limit: int | None = None
) -> list[Question]:
    """The first ``limit`` valid questions of each measure, in file order."""
    from recworld.lrworld.schema import Question

    qdir = suite_dir / "questions"
    available = sorted(p.stem for p in qdir.glob("*.jsonl"))
    if not available:
        raise DataError("no questions/*.jsonl files: is this a suite directory?", path=suite_dir)
    wanted = list(measures) if measures else available
    unknown = [m for m in wanted if m not in available]
    if unknown:
        raise ConfigError(f"measures not in {qdir}: {', '.join(unknown)}; available: {', '.join(available)}")
    questions: list[Question] = []
    for measure in wanted:
        path = qdir / f"{measure}.jsonl"
        taken = 0
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if limit is not None and taken >= limit:
                    break
                if not line.strip():
                    continue
                try:
                    question = Question.model_validate_json(line)
                except ValidationError as exc:
                    first = exc.errors()[0]
                    where = ".".join(str(p) for p in first["loc"]) or "record"
                    raise DataError(first["msg"], path=path, line=number, field=where) from exc
                questions.append(question)
                taken += 1
    return questions


def evaluate(config: EvalConfig) -> Path:
    """Run (or resume) an evaluation; returns the run directory."""
    return asyncio.run(evaluate_async(config))


async def evaluate_async(config: EvalConfig) -> Path:
    """:func:`evaluate` for callers already inside an event loop."""
    from recworld.lrworld.prompts import get_variant, render_prompt
    from recworld.models.registry import ModelConfig, ModelSpec, load_model

    suite = config.suite_dir.resolve()
    manifest = _read_manifest(suite)
    spec = str(ModelSpec.parse(config.model))
    run_dir = (config.out_dir or default_run_dir(config)).resolve()
    questions = load_questions(suite, config.measures, config.limit)

    header = {
        "schema": RUN_SCHEMA,
        "model": spec,
        "mode": config.mode.value,
        "variant": config.variant,
        "suite": str(suite),
        "suite_fingerprint": manifest.get("fingerprint"),
        "dataset": manifest.get("dataset"),
        "measures": sorted({q.measure for q in questions}),
        "limit": config.limit,
        "started": int(time.time()),
        "finished": None,
        "config": config.model_dump(mode="json"),
    }
    previous = _check_resumable(run_dir, header)
    if previous is not None:
        header["started"] = previous.get("started", header["started"])
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(run_dir / "run.json", header)

    journal = SampleJournal(run_dir / JOURNAL_NAME)
    done = journal.load()
    selected = {q.id for q in questions}
    todo = [q for q in questions if q.id not in done or done[q.id].get("error") is not None]
    resumed = len(selected) - len(todo)

    model = load_model(
        spec,
        ModelConfig(
            base_url=config.base_url, api_key_env=config.api_key_env, suite_dir=suite, seed=config.seed
        ),
    )
    if config.mode not in model.supports:
        await model.aclose()
        modes = ", ".join(sorted(m.value for m in model.supports))
        raise ConfigError(f"model {spec!r} does not support mode {config.mode.value!r}; it supports: {modes}")

    images = None
    if get_variant(config.variant).attach_image:
        from recworld.multimodal.variant import suite_images

        images = suite_images(suite)
    rendered = [render_prompt(q, config.variant, images=images) for q in todo]
    requests = [
        Request(
            messages=r.messages,
            mode=config.mode,
            choices=r.labels,
            question=q,
            max_tokens=config.max_tokens,
            temperature=0.0,
        )
        for q, r in zip(todo, rendered, strict=True)
    ]

    def record(index: int, completion: Completion) -> None:
        sample = build_sample(todo[index], rendered[index], completion, spec=spec, config=config)
        done[sample["question_id"]] = sample
        journal.append(sample)

    cache = ResponseCache(config.cache_path or run_dir / CACHE_NAME)
    runner = Runner(model, config.runner_config(), cache)
    try:
        await runner.map(requests, description=f"{spec} {config.mode.value}", on_result=record)
    finally:
        await runner.aclose()
        cache.close()
        journal.close()

    samples = sorted(
        (done[qid] for qid in selected), key=lambda s: (str(s["measure"]), str(s["question_id"]))
    )
    atomic_write_jsonl(run_dir / "samples.jsonl", samples)
    from recworld.scoring import compute_metrics

    atomic_write_json(run_dir / "metrics.json", compute_metrics(samples, seed=config.seed))
    header["finished"] = int(time.time())
    header["counts"] = {
        "questions": len(samples),
        "answered": sum(1 for s in samples if s["error"] is None),
        "errors": sum(1 for s in samples if s["error"] is not None),
        "missed": sum(1 for s in samples if s["missed"]),
        "resumed": resumed,
        # The runner's counters cover this invocation only.
        **{f"runner_{k}": v for k, v in runner.stats.to_json().items()},
    }
    atomic_write_json(run_dir / "run.json", header)
    return run_dir


def build_sample(
    question: Question,
    prompt: RenderedPrompt,
    completion: Completion,
    *,
    spec: str,
    config: EvalConfig,
) -> dict[str, Any]:
    """One ``recworld.sample/1`` record."""
    response = completion.response
    parsed = None if response is None else parse_answer(response, prompt, config.mode)
    usage = None
    if response is not None:
        usage = {
            "prompt_tokens": response.usage.prompt_tokens,
            "completion_tokens": response.usage.completion_tokens,
        }
    return {
        "schema": SAMPLE_SCHEMA,
        "question_id": question.id,
        "measure": question.measure,
        "dataset": question.dataset,
        "format": question.format.value,
        "model": spec,
        "mode": config.mode.value,
        "variant": config.variant,
        "prompt": [m.to_json() for m in prompt.messages],
        "labels": list(prompt.labels),
        "answer_index": question.answer_index,
        "response": None if response is None else response.text,
        # A label the backend could not score is -inf; null keeps the file strict JSON.
        "choice_logprobs": None
        if response is None or response.choice_logprobs is None
        else [x if math.isfinite(x) else None for x in response.choice_logprobs],
        "parsed_index": parsed,
        "correct": parsed is not None and parsed == question.answer_index,
        "missed": parsed is None,
        "latency_s": round(completion.latency_s, 6),
        "usage": usage,
        "cache_hit": completion.cache_hit,
        "attempts": completion.attempts,
        "error": completion.error,
    }


def parse_answer(response: Response, prompt: RenderedPrompt, mode: AnswerMode) -> int | None:
    """The chosen option index: extracted from text, or the best-scored choice in loglik mode."""
    if mode is AnswerMode.LOGLIK:
        scores = response.choice_logprobs
        if scores is None or len(scores) != len(prompt.labels):
            return None
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))  # first best on ties
        return best
    from recworld.scoring import extract_choice

    return extract_choice(response.text, prompt.labels, prompt.option_texts)


def _read_manifest(suite: Path) -> dict[str, Any]:
    return read_json_object(
        suite / "manifest.json", missing="manifest.json not found: is this a suite directory?"
    )


def _check_resumable(run_dir: Path, header: dict[str, Any]) -> dict[str, Any] | None:
    """The previous run.json, if this is a resume; ConfigError if the directory holds another run."""
    path = run_dir / "run.json"
    if not path.exists():
        return None
    previous = read_json_object(path)
    for key in _RUN_IDENTITY:
        if previous.get(key) != header[key]:
            raise ConfigError(
                f"{path}: field {key!r} is {previous.get(key)!r}, this run has {header[key]!r}; "
                "use another --out directory"
            )
    return previous
