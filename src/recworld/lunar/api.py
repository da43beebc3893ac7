"""LUNAR's library API: one function per stage, each taking one typed config.

``recworld lunar synth | queries | eval | report`` only parse options and call these
(as ``recworld eval`` calls :func:`recworld.runner.evaluate` for LRWorld)::

    from recworld import lunar

    llm = lunar.SessionConfig(model="openai:gpt-4o-mini")
    lunar.synthesize(lunar.SynthConfig(anchors="ml-100k", out_dir=out, llm=llm))
    lunar.make_queries(lunar.QueriesConfig(root=out, llm=llm))
    lunar.evaluate(lunar.LunarEvalConfig(root=out, answer=llm, judge=llm.model_copy(update={"model": J})))
    lunar.write_report(lunar.ReportConfig(root=out))

The names stay namespaced under ``recworld.lunar`` (``lunar.evaluate``,
``lunar.write_report``) so they are never confused with LRWorld's evaluation.

Failure policy, the same as ``recworld eval``: a piece whose request failed after
retries, or whose reply never validated, is counted in the stage's output; a
``FatalModelError`` (401/403/404, server unreachable) stops the stage at once
(exit 3); a stage whose failed fraction exceeds ``fail_on_error`` writes what it
has, then raises :class:`~recworld.errors.RunError` (exit 3). Bugs propagate.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recworld.console import log_to_file
from recworld.errors import DataError
from recworld.lunar import store
from recworld.lunar.answering import EvalInputs, evaluate_settings
from recworld.lunar.config import LunarEvalConfig, QueriesConfig, ReportConfig, SynthConfig
from recworld.lunar.contexts import ContextSetting, UserData
from recworld.lunar.llm import StructuredLLM, failures_json, gather_or_cancel
from recworld.lunar.outputs import EvalRun, QueriesCounts, QueriesRun, SynthManifest, write_record
from recworld.lunar.policy import check_failures
from recworld.lunar.schemas import BehaviourRecord, Profile, Query, Rubric

__all__ = [
    "check_failures",
    "evaluate",
    "evaluate_async",
    "load_eval_inputs",
    "make_queries",
    "make_queries_async",
    "synthesize",
    "synthesize_async",
    "write_report",
]

_log = logging.getLogger(__name__)


def synthesize(config: SynthConfig) -> SynthManifest:
    """Synthesise profiles, trajectories and records anchored on real users into ``config.out_dir``."""
    return asyncio.run(synthesize_async(config))


def make_queries(config: QueriesConfig) -> QueriesRun:
    """Generate queries and build their rubrics and evidence sets in ``config.root``."""
    return asyncio.run(make_queries_async(config))


def evaluate(config: LunarEvalConfig) -> list[EvalRun]:
    """Answer every query under each context setting and judge it against the generic baseline."""
    return asyncio.run(evaluate_async(config))


def write_report(config: ReportConfig) -> dict[str, Any]:
    """Write report.md / report.csv / quality.json: models × contexts, errors, data-quality figures."""
    from recworld.lunar.report import write_report as write

    return write(
        config.root,
        baseline=config.baseline,
        seed=config.seed,
        reference=config.reference,
        reference_timezone=config.reference_timezone,
    )


RUN_KIND = "lunar-run"


def claim_run_dir(out_dir: Path) -> None:
    """``lunar synth --out``: a new or empty folder, or a LUNAR run (which a rerun resumes); never another."""
    from recworld.io import claim_output_dir

    def earlier(path: Path) -> bool:  # runs written before output markers existed
        return (path / "manifest.json").is_file() or (path / "dataset" / "profiles.jsonl").is_file()

    claim_output_dir(out_dir, RUN_KIND, recognise=earlier)


async def synthesize_async(config: SynthConfig) -> SynthManifest:
    """:func:`synthesize` for callers already inside an event loop."""
    from recworld.lunar.anchors import load_anchors
    from recworld.lunar.embed import load_embedder
    from recworld.lunar.session import open_llm
    from recworld.lunar.synth import pipeline

    started = time.perf_counter()
    from recworld.io import mark_output_dir
    from recworld.lunar.timeutil import with_default_zone

    claim_run_dir(config.out_dir)

    real = with_default_zone(
        load_anchors(
            config.anchors,
            config.users,
            seed=config.seed,
            min_domains=config.min_domains,
            domain_map=config.domain_map,
        ),
        config.timezone,
    )
    mark_output_dir(config.out_dir, RUN_KIND)
    emb = None
    if config.embedder is not None:
        emb = load_embedder(config.embedder, cache=config.out_dir / "embeddings.sqlite")
    with log_to_file(config.out_dir):
        async with open_llm(config.llm, config.out_dir) as llm:
            result = await pipeline.synthesize(llm, real, config.options, emb)
            manifest = pipeline.write_dataset(config.out_dir, result, llm, config, started)
        _log.info("lunar synth wrote %s: %s", config.out_dir, manifest.counts.model_dump_json())
        check_failures(
            "synth",
            llm.asked,
            llm.failures,
            config.fail_on_error,
            produced=(manifest.counts.users, "users"),
            where=str(config.out_dir / "failures.jsonl"),
        )
    return manifest


async def make_queries_async(config: QueriesConfig) -> QueriesRun:
    """:func:`make_queries` for callers already inside an event loop."""
    root = config.root
    profiles, records = store.profiles(root), store.records(root)
    if not profiles:
        raise DataError(
            "no synthesised users to write queries for (lunar synth produced none; rerun it)",
            path=store.dataset_dir(root) / "profiles.jsonl",
        )
    with log_to_file(root):
        return await _make_queries(config, profiles, records)


async def _make_queries(
    config: QueriesConfig, profiles: Sequence[Profile], records: Sequence[BehaviourRecord]
) -> QueriesRun:
    from recworld.io import atomic_write_jsonl
    from recworld.lunar.session import open_llm

    root = config.root
    async with open_llm(config.llm, root) as llm:
        kept, unsupported = await _queries_with_rubrics(llm, config, profiles, records)
        atomic_write_jsonl(root / "queries.jsonl", [q.to_json() for q, _ in kept])
        atomic_write_jsonl(root / "rubrics.jsonl", [r.to_json() for _, r in kept])
        atomic_write_jsonl(root / "query_failures.jsonl", failures_json(llm.failures))
        counts = QueriesCounts(
            queries=len(kept),
            dropped=len(profiles) * config.per_user - len(kept),
            unsupported=unsupported,
            asked=llm.asked,
            failures=len(llm.failures),
            llm_calls=llm.calls,
        )
    run = QueriesRun(config=config, counts=counts)
    write_record(root / "queries_run.json", run)
    _log.info("lunar queries wrote %s: %s", root, counts.model_dump_json())
    where = str(root / "query_failures.jsonl")
    produced = (counts.queries, "queries")
    check_failures("queries", llm.asked, llm.failures, config.fail_on_error, produced=produced, where=where)
    return run


async def _queries_with_rubrics(
    llm: StructuredLLM, config: QueriesConfig, profiles: Sequence[Profile], records: Sequence[BehaviourRecord]
) -> tuple[list[tuple[Query, Rubric]], int]:
    from recworld.lunar.evidence import keep_supported
    from recworld.lunar.queries import generate_queries
    from recworld.lunar.rubrics import build_rubric

    made = await generate_queries(llm, profiles, records, per_user=config.per_user, seed=config.seed)
    by_user: dict[str, list[BehaviourRecord]] = {}
    for r in records:
        by_user.setdefault(r.user_id, []).append(r)
    emb = None
    if config.embedder is not None:
        from recworld.lunar.embed import load_embedder

        emb = load_embedder(config.embedder, cache=config.root / "embeddings.sqlite")
    rubrics = await gather_or_cancel(
        [build_rubric(llm, q, by_user.get(q.user_id, []), embedder=emb) for q in made]
    )
    # Queries are re-tagged from their evidence; those without evidence or points are dropped and counted.
    return keep_supported(list(zip(made, rubrics, strict=True)))


async def evaluate_async(config: LunarEvalConfig) -> list[EvalRun]:
    """:func:`evaluate` for callers already inside an event loop."""
    from recworld.lunar.embed import load_embedder
    from recworld.lunar.session import open_llm

    root = config.root
    inputs = load_eval_inputs(root)
    if not inputs.pairs:
        raise DataError(
            "no queries with rubrics to evaluate (rerun lunar queries)", path=root / "queries.jsonl"
        )
    emb = None
    if {ContextSetting.RAG, ContextSetting.MEMORY} & set(config.contexts):
        emb = load_embedder(config.embedder, cache=root / "embeddings.sqlite")
    with log_to_file(root):
        async with open_llm(config.answer, root) as answer_llm, open_llm(config.judge, root) as judge_llm:
            runs = await evaluate_settings(config, answer_llm, judge_llm, inputs, emb)
        for run in runs:
            _log.info("lunar eval %s / %s: %s", run.model, run.context, run.counts.model_dump_json())
        check_failures(
            "eval",
            sum(r.counts.asked for r in runs),
            [f for r in runs for f in r.failures],
            config.fail_on_error,
            produced=(sum(r.counts.judged for r in runs), "judgments"),
            where=str(root / "eval" / "*" / "*" / "run.json"),
        )
    return runs


def load_eval_inputs(root: Path) -> EvalInputs:
    """The (query, rubric) pairs of a LUNAR folder and each user's profile and records."""
    records_of: dict[str, list[BehaviourRecord]] = {}
    for r in store.records(root):
        records_of.setdefault(r.user_id, []).append(r)
    users = {p.user_id: UserData(p, tuple(records_of.get(p.user_id, ()))) for p in store.profiles(root)}
    rubric_of = {r.query_id: r for r in store.rubrics(root)}
    pairs = [(q, rubric_of[q.query_id]) for q in store.queries(root) if q.query_id in rubric_of]
    return EvalInputs(pairs=pairs, users=users)
