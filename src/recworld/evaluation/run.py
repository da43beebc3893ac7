"""Evaluate one model on an LRWorld suite: a resumable run that writes samples, run and metrics files.

Layout of a run directory (default ``SUITE/runs/<model-slug>__<mode>__<variant>``)::

    run.json                  RunHeader: what was run, counts, status, timestamps
    samples.jsonl             one SampleRecord per question, sorted by (measure, question_id)
    metrics.json              MetricsRecord: recworld.scoring.score_samples(samples)
    .samples.journal.jsonl    fsynced line per finished sample; the resume state
    cache.sqlite              the run's response cache (keyed without secrets or concurrency)
    recworld.log              what each invocation did (INFO and above), appended

``samples.jsonl`` is the union of every invocation: ``--limit 5`` then
``--measures a,b`` keeps all the first run's answers and adds the second's.

Rerunning the same command resumes: questions whose sample is in the journal
without an error are skipped, and every response that arrived before a kill
is in the cache, so nothing that was answered is sent again. Samples that
ended in an error are retried on the next run.

Failure policy: a failed request is an unscored sample with ``error`` set. A
fatal failure (bad key, no such model, a server that refuses every
connection) stops the run at once; more failed samples than
``fail_on_error`` allows fails it at the end. Either way what is finished is
written, ``run.json`` says why, and :class:`~recworld.errors.RunError` (exit 3)
is raised.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from recworld.console import Resume, log_to_file, resumable
from recworld.errors import ConfigError, RunError, from_validation
from recworld.evaluation.config import EvalConfig
from recworld.evaluation.plan import RunPlan, now_iso, plan_run, render_all
from recworld.evaluation.records import RunCounts, RunHeader, RunStatus
from recworld.evaluation.samples import build_request, build_sample
from recworld.evaluation.variants import Asked
from recworld.io import atomic_write_json, atomic_write_jsonl
from recworld.models.base import FatalModelError
from recworld.runner import Completion, ResponseCache, Runner, judge
from recworld.runner.journal import SampleJournal
from recworld.scoring import score_samples
from recworld.scoring.records import SampleRecord

if TYPE_CHECKING:
    from recworld.models.base import Model

_log = logging.getLogger(__name__)

JOURNAL_NAME = ".samples.journal.jsonl"
CACHE_NAME = "cache.sqlite"

__all__ = ["CACHE_NAME", "JOURNAL_NAME", "evaluate", "evaluate_async"]


def evaluate(config: EvalConfig) -> Path:
    """Run (or resume) an evaluation; returns the run directory.

    The Ctrl-C note lives out here: inside ``asyncio.run`` a SIGINT arrives as
    a cancellation, and only this frame sees the ``KeyboardInterrupt``.
    """
    with resumable() as note:
        return asyncio.run(evaluate_async(config, note=note))


async def evaluate_async(config: EvalConfig, *, note: Resume | None = None) -> Path:
    """:func:`evaluate` for callers already inside an event loop.

    Every input is checked and the model is opened before the run folder is
    created, so a typo or a missing extra leaves nothing behind.
    """
    plan = plan_run(config)
    if config.engine == "ray":  # the replicas load the model; a missing extra is reported here
        from recworld.evaluation.ray_engine import require_ray

        require_ray()
    model = None if config.engine == "ray" else await _open_model(plan)
    try:
        plan.run_dir.mkdir(parents=True, exist_ok=True)
        with log_to_file(plan.run_dir):
            return await _run(plan, model, note or Resume())
    finally:
        if model is not None:
            await model.aclose()


async def _run(plan: RunPlan, model: Model | None, note: Resume) -> Path:
    """Answer what is not yet answered; write the union of every invocation's samples."""
    run_dir, header = plan.run_dir, plan.header
    atomic_write_json(run_dir / "run.json", header.to_json())
    journal = SampleJournal(run_dir / JOURNAL_NAME)
    done = _journalled(journal, run_dir / JOURNAL_NAME)
    todo = [a for a in plan.asked if a.question.id not in done or not done[a.question.id].scored]
    _log.info(
        "%s: %d questions asked, %d already answered, %d to send",
        plan.spec,
        len(plan.asked),
        len(plan.asked) - len(todo),
        len(todo),
    )
    note.total, note.done = len(plan.asked), len(plan.asked) - len(todo)
    try:
        stats, stopped = await _answer(plan, model, todo, done, journal, note)
    finally:
        journal.close()
    # A run keeps all it ever answered: a later --measures or --limit subset adds, never removes.
    samples = sorted(done.values(), key=lambda s: (s.measure, s.question_id))
    header.measures = sorted({s.measure for s in samples})
    header.counts = _counts(samples, resumed=len(plan.asked) - len(todo), runner=stats)
    _write_results(run_dir, header, samples, plan.config, stopped)
    return run_dir


async def _answer(
    plan: RunPlan,
    model: Model | None,
    todo: list[Asked],
    done: dict[str, SampleRecord],
    journal: SampleJournal,
    note: Resume,
) -> tuple[dict[str, int], FatalModelError | None]:
    """Ask the model every question in ``todo``, journaling each sample.

    Returns the runner's counters, and the fatal failure that stopped the run
    early, if one did (the samples finished before it are journaled).
    """
    config, spec = plan.config, plan.spec
    rendered = render_all(plan, todo)
    requests = [build_request(a.question, r, config) for a, r in zip(todo, rendered, strict=True)]

    def record(index: int, completion: Completion) -> None:
        asked = todo[index]
        sample = build_sample(
            asked.question, rendered[index], completion, spec=spec, config=config, order=asked.order
        )
        done[sample.question_id] = sample
        journal.append(sample.to_json())
        note.done += 1

    cache_path = config.cache_path or plan.run_dir / CACHE_NAME
    if model is None:  # --engine ray: same records, same cache, answered by Ray replicas
        from recworld.evaluation.ray_engine import answer_on_ray

        return await asyncio.to_thread(answer_on_ray, config, spec, plan.suite, requests, record, cache_path)
    cache = ResponseCache(cache_path)
    runner = Runner(model, config.runner, cache)
    stopped: FatalModelError | None = None
    try:
        await runner.map(requests, description=f"{spec} {config.mode.value}", on_result=record)
    except FatalModelError as exc:
        stopped = exc
    finally:
        await runner.aclose()
        cache.close()
    return runner.stats.to_json(), stopped


async def _open_model(plan: RunPlan) -> Model:
    from recworld.models.registry import ModelConfig, load_model

    config = plan.config
    model = load_model(
        plan.spec,
        ModelConfig(
            base_url=config.base_url,
            api_key_env=config.api_key_env,
            suite_dir=plan.suite,
            seed=config.seed,
            options=config.model_options,
        ),
    )
    if config.mode not in model.supports:
        await model.aclose()
        modes = ", ".join(sorted(m.value for m in model.supports))
        raise ConfigError(
            f"--mode: model {plan.spec!r} does not support {config.mode.value!r}; it supports: {modes}"
        )
    return model


def _journalled(journal: SampleJournal, path: Path) -> dict[str, SampleRecord]:
    """The samples a previous invocation finished, typed; a bad journal line names its place."""
    out: dict[str, SampleRecord] = {}
    for qid, record in journal.load().items():
        try:
            out[qid] = SampleRecord.model_validate(record)
        except ValidationError as exc:
            raise from_validation(exc, path=path) from None
    return out


def _counts(samples: list[SampleRecord], *, resumed: int, runner: dict[str, int]) -> RunCounts:
    scored = [s for s in samples if s.scored]
    return RunCounts(
        questions=len(samples),
        answered=len(scored),
        errors=len(samples) - len(scored),
        missed=sum(s.parsed_index is None for s in scored),
        resumed=resumed,
        runner=runner,
    )


def _write_results(
    run_dir: Path,
    header: RunHeader,
    samples: list[SampleRecord],
    config: EvalConfig,
    stopped: FatalModelError | None,
) -> None:
    """Write samples, metrics and the final header; raise :class:`RunError` when the run failed."""
    atomic_write_jsonl(run_dir / "samples.jsonl", [s.to_json() for s in samples])
    atomic_write_json(run_dir / "metrics.json", score_samples(samples, seed=config.seed).to_json())
    header.finished = now_iso()
    failure = _failure(header, samples, config, stopped)
    if failure is not None:
        header.status, header.reason = failure
    else:
        header.status = "finished"
    atomic_write_json(run_dir / "run.json", header.to_json())
    if failure is not None:
        raise RunError(f"{header.model}: {failure[1]}; what finished is in {run_dir}")


def _failure(
    header: RunHeader, samples: list[SampleRecord], config: EvalConfig, stopped: FatalModelError | None
) -> tuple[RunStatus, str] | None:
    verdict = judge(
        asked=len(samples),
        failed=header.counts.errors,
        limit=config.fail_on_error,
        stopped=stopped,
        first_error=next((s.error for s in samples if s.error is not None), None),
    )
    if verdict is None or verdict.status == "produced_nothing":  # LRWorld passes no production count
        return None
    return verdict.status, verdict.reason
