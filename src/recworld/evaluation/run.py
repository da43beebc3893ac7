"""Evaluate one model on an LRWorld suite: a resumable run that writes samples, run and metrics files.

Layout of a run directory (default ``SUITE/runs/<model-slug>__<mode>__<variant>[__<settings>]``)::

    run.json                  RunHeader: what was run, with which settings, counts, status, timestamps
    samples.jsonl             one SampleRecord per question, sorted by (measure, question_id)
    metrics.json              MetricsRecord: recworld.scoring.score_samples(samples)
    .samples.journal.jsonl    a line per finished sample, fsynced in groups; the resume state
    cache.sqlite              the run's response cache (keyed without secrets or concurrency)
    recworld.log              what each invocation did (INFO and above), appended

``samples.jsonl`` is the union of every invocation: ``--limit 5`` then
``--measures a,b`` keeps all the first run's answers and adds the second's.
Every invocation has the folder's settings: another ``--system`` is another
folder (:meth:`~recworld.evaluation.config.EvalConfig.identity`).

Rerunning the same command resumes: questions whose sample is in the journal
without an error are skipped, and every response that arrived before a kill
is in the cache, so nothing that was answered is sent again. Samples that
ended in an error are retried on the next run.

Failure policy: a failed request is an unscored sample with ``error`` set. A
fatal failure (bad key, no such model, a server that refuses every
connection) stops the run at once; more failed samples than
``fail_on_error`` allows fails it at the end. Either way what is finished is
written, ``run.json`` says why, and :class:`RunFailedError` (exit 3) is raised.
Ctrl-C (or cancelling the task) writes what is finished too, with status
``interrupted``, and then lets the interrupt through.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from recworld.console import Resume, log_to_file, resumable
from recworld.console.progress import ProgressLines
from recworld.errors import ConfigError, RunError, from_validation
from recworld.evaluation.claims import ClaimWatch
from recworld.evaluation.config import EvalConfig
from recworld.evaluation.estimate import answer_with_estimate
from recworld.evaluation.plan import RunPlan, now_iso, plan_run, render_all
from recworld.evaluation.records import RUN_KIND, EvalResult, RunCounts, RunHeader, RunStatus
from recworld.evaluation.samples import build_request, build_sample
from recworld.evaluation.variants import Asked
from recworld.io import (
    atomic_write_json,
    atomic_write_jsonl,
    claim_output_dir,
    mark_output_dir,
    output_lock,
)
from recworld.models.base import FatalModelError
from recworld.models.registry import resolve_model
from recworld.runner import Completion, RunnerStats, judge, open_runner
from recworld.runner.journal import SampleJournal
from recworld.scoring import score_samples
from recworld.scoring.records import SampleRecord

if TYPE_CHECKING:
    from recworld.models.base import Model

_log = logging.getLogger(__name__)

JOURNAL_NAME = ".samples.journal.jsonl"
CACHE_NAME = "cache.sqlite"

__all__ = ["CACHE_NAME", "JOURNAL_NAME", "RunFailedError", "evaluate_config", "evaluate_config_async"]


class RunFailedError(RunError):
    """A run that stopped or had too many errors (exit 3); ``result`` is what it wrote."""

    def __init__(self, message: str, result: EvalResult) -> None:
        super().__init__(message)
        self.result = result


def evaluate_config(config: EvalConfig, *, model: Model | None = None) -> EvalResult:
    """Run (or resume) an evaluation; returns its folder and typed records.

    ``model``: a model object to ask instead of loading ``config.model`` (it is
    never closed here: it belongs to whoever made it). The Ctrl-C note lives out
    here: inside ``asyncio.run`` a SIGINT arrives as a cancellation, and only
    this frame sees the ``KeyboardInterrupt``. Called where an event loop is
    already running (a notebook cell), the run gets its own loop in a worker
    thread; ``await evaluate_config_async(...)`` uses the caller's loop instead.
    """
    with resumable() as note:
        run = evaluate_config_async(config, model=model, note=note)
        if not _loop_running():
            return asyncio.run(run)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1, thread_name_prefix="recworld-eval") as pool:
            return pool.submit(asyncio.run, run).result()


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def evaluate_config_async(
    config: EvalConfig, *, model: Model | None = None, note: Resume | None = None
) -> EvalResult:
    """:func:`evaluate_config` for callers already inside an event loop.

    Every input is checked and the model is opened before the run folder is
    created, so a typo or a missing extra leaves nothing behind.
    """
    plan = plan_run(config, model)
    if config.engine == "ray":  # a missing extra or a model object that cannot travel is reported here
        from recworld.evaluation.ray_engine import check_copyable, require_ray

        require_ray()
        if model is not None:
            check_copyable(model)
    # Ray with a spec: the replicas load it, the driver opens nothing. A model object is checked
    # here either way (its modes); on Ray each replica asks its own copy of it.
    local = config.engine == "local" or model is not None
    opened, owned = await _open_model(plan, model) if local else (None, False)
    try:
        claim_output_dir(plan.run_dir, RUN_KIND, force=plan.config.force)
        with log_to_file(plan.run_dir):
            return await _run(plan, opened, note or Resume())
    finally:
        if opened is not None and owned:  # closed once, here; a caller's object is left open
            await opened.aclose()


async def _run(plan: RunPlan, model: Model | None, note: Resume) -> EvalResult:
    """Answer what is not yet answered; write the union of every invocation's samples."""
    run_dir, header = plan.run_dir, plan.header
    atomic_write_json(run_dir / "run.json", header.to_json())
    journal = SampleJournal(run_dir / JOURNAL_NAME)
    done = _journalled(journal, run_dir / JOURNAL_NAME)
    todo = [a for a in plan.asked if a.question.id not in done or not done[a.question.id].scored]
    resumed = len(plan.asked) - len(todo)
    _log.info(
        "%s: %d questions asked, %d already answered, %d to send",
        plan.spec,
        len(plan.asked),
        resumed,
        len(todo),
    )
    if header.label:
        _log.info("%s: settings %s", plan.spec, header.label)
    note.total, note.done = len(plan.asked), resumed
    stats: dict[str, int] = {}
    try:
        stopped = await _answer(plan, model, todo, done, journal, note, stats)
    except (asyncio.CancelledError, KeyboardInterrupt):
        journal.close()
        reason = f"interrupted after {note.done}/{note.total} answered; rerun the same command to resume"
        _finish(plan, done, resumed, stats, ("interrupted", reason))
        raise
    finally:
        journal.close()
    return _finish(plan, done, resumed, stats, _stopped(stopped))


def _stopped(stopped: FatalModelError | None) -> tuple[RunStatus, str] | None:
    return None if stopped is None else ("stopped", str(stopped))


async def _answer(
    plan: RunPlan,
    model: Model | None,
    todo: list[Asked],
    done: dict[str, SampleRecord],
    journal: SampleJournal,
    note: Resume,
    stats: dict[str, int],
) -> FatalModelError | None:
    """Ask the model every question in ``todo``, journaling each sample.

    Fills ``stats`` with the runner's counters and returns the fatal failure that stopped
    the run early, if one did (the samples finished before it are journaled).
    """
    config, spec = plan.config, plan.spec
    rendered = render_all(plan, todo)
    requests = [build_request(a.question, r, config) for a, r in zip(todo, rendered, strict=True)]
    lines = _progress(plan, len(plan.asked), note.done)
    watch = ClaimWatch(spec, model if plan.header.model_identity is not None else None)

    def record(index: int, completion: Completion) -> None:
        watch.see(completion.response)  # a model object's answers, against what it declares
        asked = todo[index]
        sample = build_sample(
            asked.question, rendered[index], completion, spec=spec, config=config, order=asked.order
        )
        done[sample.question_id] = sample
        journal.append(sample.to_json())
        note.done += 1
        if isinstance(lines, ProgressLines):
            lines.advance(error=not sample.scored)

    cache_path = config.cache_path or plan.run_dir / CACHE_NAME
    with lines:
        if config.engine == "ray":  # same records, same cache, answered by Ray replicas
            from recworld.evaluation.ray_engine import answer_on_ray

            # The replicas load the spec, or each gets a copy of the model object.
            ask = (config, spec if model is None else model, plan.suite, requests, record, cache_path)
            counters, stopped = await asyncio.to_thread(answer_on_ray, *ask)
            stats.update(counters)
            return stopped
        assert model is not None, "a local run opened its model in evaluate_config_async"
        # owned=False: the model is the run's, closed once by evaluate_config_async.
        async with open_runner(model, config.runner, cache_path, owned=False) as runner:
            try:
                await answer_with_estimate(
                    runner, model, requests, record, description=f"{spec} {config.mode.value}"
                )
            except FatalModelError as exc:
                return exc
            finally:
                stats.update(runner.stats.to_json())
    return None


def _progress(plan: RunPlan, total: int, done: int) -> AbstractContextManager[object]:
    """Plain progress lines when stderr is not a terminal (a terminal gets the runner's bar)."""
    if not plan.config.runner.progress or sys.stderr.isatty():
        return nullcontext()
    label = f"{plan.spec} ({plan.config.mode.value}, {plan.config.variant})"
    return ProgressLines(label, total, done=done, every_s=plan.config.progress_every)


async def _open_model(plan: RunPlan, given: Model | None) -> tuple[Model, bool]:
    """The model to ask, and whether this run owns it (loaded from the spec) and closes it."""
    model, owned = resolve_model(given if given is not None else plan.spec, plan.model_config())
    mode = plan.config.mode
    if mode not in model.supports:
        if owned:
            await model.aclose()
        modes = ", ".join(sorted(m.value for m in model.supports))
        raise ConfigError(
            f"--mode: model {plan.spec!r} does not support {mode.value!r}; it supports: {modes}"
        )
    return model, owned


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
        runner=RunnerStats(**runner),
    )


def _finish(
    plan: RunPlan,
    done: dict[str, SampleRecord],
    resumed: int,
    stats: dict[str, int],
    ended: tuple[RunStatus, str] | None,
) -> EvalResult:
    """Write samples, metrics and the final header; raise :class:`RunFailedError` when the run failed.

    A run keeps all it ever answered: a later --measures or --limit subset adds, never removes.
    The files are rebuilt from the journal under the run folder's lock, so two
    invocations on one run (other --measures, at the same time) each write every
    sample either finished, never only their own. The folder is marked as a run
    once one has finished.
    """
    run_dir, header = plan.run_dir, plan.header
    with output_lock(run_dir):
        journal = SampleJournal(run_dir / JOURNAL_NAME)
        done = {**done, **_journalled(journal, run_dir / JOURNAL_NAME)}
        samples = sorted(done.values(), key=lambda s: (s.measure, s.question_id))
        header.measures = sorted({s.measure for s in samples})
        header.counts = _counts(samples, resumed=resumed, runner=stats)
        atomic_write_jsonl(run_dir / "samples.jsonl", [s.to_json() for s in samples])
        metrics = score_samples(samples, seed=plan.config.seed)
        atomic_write_json(run_dir / "metrics.json", metrics.to_json())
        header.finished = now_iso()
        failure = ended or _failure(header, samples, plan.config)
        header.status, header.reason = failure if failure is not None else ("finished", None)
        atomic_write_json(run_dir / "run.json", header.to_json())
    if failure is None:
        mark_output_dir(run_dir, RUN_KIND)
    result = EvalResult(run_dir, header, metrics)
    if failure is not None and failure[0] != "interrupted":
        raise RunFailedError(f"{header.model}: {failure[1]}; what finished is in {run_dir}", result)
    return result


def _failure(
    header: RunHeader, samples: list[SampleRecord], config: EvalConfig
) -> tuple[RunStatus, str] | None:
    verdict = judge(
        asked=len(samples),
        failed=header.counts.errors,
        limit=config.fail_on_error,
        first_error=next((s.error for s in samples if s.error is not None), None),
    )
    if verdict is None or verdict.status == "produced_nothing":  # LRWorld passes no production count
        return None
    return verdict.status, verdict.reason
