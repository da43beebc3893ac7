"""LUNAR's library API: one function per stage, each taking one typed config.

``recworld lunar synth | queries | eval | ablate | rate | report`` only parse options
into these configs and call these functions (as ``recworld eval`` calls
:func:`recworld.evaluation.evaluate` for LRWorld)::

    from recworld import lunar

    llm = lunar.SessionConfig(model="openai:gpt-4o-mini")   # or model=MyModel(), any Model object
    lunar.synthesize(lunar.SynthConfig(anchors="ml-100k", out_dir=out, llm=llm))
    lunar.make_queries(lunar.QueriesConfig(root=out, llm=llm))
    judge = lunar.SessionConfig(model="openai:gpt-4o")
    lunar.evaluate_contexts(lunar.LunarEvalConfig(root=out, answer=llm, judge=judge))
    lunar.write_lunar_report(lunar.ReportConfig(root=out))

The names say what they do in LUNAR (``evaluate_contexts``, ``write_lunar_report``) so they
are never confused with LRWorld's ``recworld.evaluation.evaluate`` and
``recworld.report.write_report``. Every stage also has an ``*_async`` twin for callers
already inside an event loop.

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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC
from pathlib import Path

from recworld.console import log_to_file
from recworld.errors import DataError
from recworld.io import (
    atomic_write_jsonl,
    check_output_dir,
    claim_output_dir,
    mark_output_dir,
    require_output,
)
from recworld.lunar.anchors import load_anchors, with_default_zone
from recworld.lunar.answering import ablate as ablation
from recworld.lunar.answering.run import check_settings, evaluate_settings
from recworld.lunar.config import (
    RUN_KIND,
    AblateConfig,
    LunarEvalConfig,
    QueriesConfig,
    RateConfig,
    ReportConfig,
    SynthConfig,
)
from recworld.lunar.contexts import context_setting
from recworld.lunar.judges.tradeoff import PRIVACY_FIGURE_FILE, write_privacy_figure
from recworld.lunar.leaks import masking_logs
from recworld.lunar.llm import StructuredLLM, failures_json, gather_or_cancel
from recworld.lunar.llm.config import EmbedderConfig
from recworld.lunar.llm.embed import open_embedder
from recworld.lunar.llm.policy import check_failures
from recworld.lunar.llm.session import open_llm
from recworld.lunar.localtime import user_zones
from recworld.lunar.privacy import run_key
from recworld.lunar.quality.ratings import rate_folder
from recworld.lunar.quality.records import QualityRatingsRun
from recworld.lunar.queries.evidence import keep_supported
from recworld.lunar.queries.generate import generate_queries
from recworld.lunar.queries.rubrics import build_rubric
from recworld.lunar.report.document import ReportResult, write_files
from recworld.lunar.schemas import BehaviourRecord, Profile, Query, Rubric
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import EvalRun, QueriesCounts, QueriesRun, SynthManifest
from recworld.lunar.synth import pipeline
from recworld.runner import BlockingEmbedder

__all__ = [
    "ablate",
    "ablate_async",
    "evaluate_contexts",
    "evaluate_contexts_async",
    "make_queries",
    "make_queries_async",
    "rate_quality",
    "rate_quality_async",
    "synthesize",
    "synthesize_async",
    "write_lunar_report",
]

_log = logging.getLogger(__name__)


def synthesize(config: SynthConfig) -> SynthManifest:
    """Synthesise profiles, trajectories and records anchored on real users into ``config.out_dir``."""
    return asyncio.run(synthesize_async(config))


def make_queries(config: QueriesConfig) -> QueriesRun:
    """Generate queries and build their rubrics and evidence sets in ``config.root``."""
    return asyncio.run(make_queries_async(config))


def evaluate_contexts(config: LunarEvalConfig) -> list[EvalRun]:
    """Answer every query under each context setting and judge it against the generic baseline."""
    return asyncio.run(evaluate_contexts_async(config))


def ablate(config: AblateConfig) -> dict[str, EvalRun]:
    """Evidence ablations (Table 5, Fig. 3): the rubric's evidence records under each variant, judged."""
    return asyncio.run(ablate_async(config))


def rate_quality(config: RateConfig) -> QualityRatingsRun:
    """LLM-rated log plausibility and profile consistency (Tables 1, 9), plus query quality."""
    return asyncio.run(rate_quality_async(config))


def write_lunar_report(config: ReportConfig, *, progress: bool = False) -> ReportResult:
    """Write report.md / .html / .csv and quality.json: models × contexts, errors, data-quality figures.

    ``progress``: its steps on stderr (a live display on a terminal, else plain lines).
    """
    from recworld.console.progress import StageProgress

    run_root(config.root)
    with StageProgress(enabled=progress, plain=True, label="lunar report") as view:

        def step(what: str, done: int, total: int) -> None:
            view.overall("lunar report", done, total)
            view.step(what)

        return write_files(config, step)


SYNTH = "lunar synth"


def claim_run_dir(out_dir: Path, *, force: bool = False) -> Path:
    """``lunar synth --out``: new or empty, or a LUNAR run (its marker, or an unfinished synth's claim).

    Anything else is refused unless ``force`` (:func:`recworld.io.claim_output_dir`); the
    folder is marked a LUNAR run only when synthesis succeeded.
    """
    return claim_output_dir(out_dir, RUN_KIND, force=force)


def run_root(root: Path) -> Path:
    """The LUNAR run a later stage writes into: a folder a finished ``lunar synth`` marked."""
    return require_output(root, RUN_KIND, made_by=SYNTH)


async def synthesize_async(config: SynthConfig) -> SynthManifest:
    """:func:`synthesize` for callers already inside an event loop."""
    started = time.perf_counter()
    check_output_dir(config.out_dir, RUN_KIND, force=config.force)  # before the anchors are read

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
    claim_run_dir(config.out_dir, force=config.force)
    # Every anchor string of the run: masked in failures, in the terminal and in recworld.log.
    scanner = pipeline.scanner_of(real)
    with (
        log_to_file(config.out_dir),
        masking_logs(scanner.mask),
        _embedder(config.embedder, config.out_dir) as emb,
    ):
        async with open_llm(config.llm, config.out_dir) as llm:
            key = run_key(config.out_dir)  # RUN/private/key (or RECWORLD_LUNAR_KEY): never released
            result = await pipeline.synthesize(llm, real, config.options, emb, scanner, key)
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
    mark_output_dir(config.out_dir, RUN_KIND)
    return manifest


async def make_queries_async(config: QueriesConfig) -> QueriesRun:
    """:func:`make_queries` for callers already inside an event loop."""
    root = run_root(config.root)
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
    run.write(root / "queries_run.json")
    _log.info("lunar queries wrote %s: %s", root, counts.model_dump_json())
    where = str(root / "query_failures.jsonl")
    produced = (counts.queries, "queries")
    check_failures("queries", llm.asked, llm.failures, config.fail_on_error, produced=produced, where=where)
    return run


async def _queries_with_rubrics(
    llm: StructuredLLM, config: QueriesConfig, profiles: Sequence[Profile], records: Sequence[BehaviourRecord]
) -> tuple[list[tuple[Query, Rubric]], int]:
    made = await generate_queries(llm, profiles, records, per_user=config.per_user, seed=config.seed)
    by_user = store.records_by_user(records)
    zones = user_zones(profiles, config.timezone)
    with _embedder(config.embedder, config.root) as emb:
        rubrics = await gather_or_cancel(
            [
                build_rubric(llm, q, by_user.get(q.user_id, []), embedder=emb, zone=zones.get(q.user_id, UTC))
                for q in made
            ]
        )
    # Queries are re-tagged from their evidence; those without evidence or points are dropped and counted.
    return keep_supported(list(zip(made, rubrics, strict=True)))


async def evaluate_contexts_async(config: LunarEvalConfig) -> list[EvalRun]:
    """:func:`evaluate_contexts` for callers already inside an event loop."""
    root = run_root(config.root)
    inputs = store.load_eval_inputs(root, config.timezone)
    if not inputs.pairs:
        raise DataError(
            "no queries with rubrics to evaluate (rerun lunar queries)", path=root / "queries.jsonl"
        )
    check_settings(config)  # a setting's missing model (its role's flag) fails before any call
    needs = any(context_setting(name).needs_embedder for name in config.contexts)
    with log_to_file(root), _embedder(config.embedder if needs else None, root) as emb:
        async with open_llm(config.answer, root) as answer_llm, open_llm(config.judge, root) as judge_llm:
            runs = await evaluate_settings(config, answer_llm, judge_llm, inputs, emb)
        for run in runs:
            _log.info("lunar eval %s / %s: %s", run.model, run.context, run.counts.model_dump_json())
        figure = write_privacy_figure(root)
        _log.info("lunar eval: privacy figure %s (%d points)", root / PRIVACY_FIGURE_FILE, len(figure.points))
        check_failures(
            "eval",
            sum(r.counts.asked for r in runs),
            [f for r in runs for f in r.failures],
            config.fail_on_error,
            produced=(sum(r.counts.judged for r in runs), "judgments"),
            where=str(root / "eval" / "*" / "*" / "run.json"),
        )
    return runs


@contextmanager
def _embedder(config: EmbedderConfig | None, root: Path) -> Iterator[BlockingEmbedder | None]:
    """The embedder of ``config`` (None: none), opened for one stage and closed after it."""
    if config is None:
        yield None
        return
    with open_embedder(config, root) as opened:
        yield opened


async def ablate_async(config: AblateConfig) -> dict[str, EvalRun]:
    """:func:`ablate` for callers already inside an event loop."""
    run_root(config.root)
    return await ablation.ablate_async(config)


async def rate_quality_async(config: RateConfig) -> QualityRatingsRun:
    """:func:`rate_quality` for callers already inside an event loop."""
    run_root(config.root)
    return await rate_folder(config)
