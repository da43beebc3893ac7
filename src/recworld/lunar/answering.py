"""Answering under one context setting, then judging: ``DIR/eval/<model>/<context>/``.

Each folder holds ``answers.jsonl`` (:class:`~recworld.lunar.outputs.AnswerRecord`),
``judgments.jsonl`` (:class:`~recworld.lunar.judge.Judgment`), ``privacy.jsonl``
(:class:`~recworld.lunar.privacy.PrivacyJudgment`, when privacy is on) and ``run.json``
(:class:`~recworld.lunar.outputs.EvalRun`). A failed answer is written with its error,
is not sent to a judge, and gets the personalisation scale's floor (1) in a row flagged
``answer_failed``; its privacy row is reported apart (no score). A failed judgment is
written with its error. All are counted in ``run.json`` and shown in the report.

Baseline and target are written under the same token cap (``answer_max_tokens``, 256,
the generic answer's cap), so the judge never compares a long answer with a cut one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from recworld.io import atomic_write_jsonl
from recworld.lunar import store
from recworld.lunar.budget import counter_for, full_budget, window_of
from recworld.lunar.config import LunarEvalConfig
from recworld.lunar.contexts import ContextBuilder, FullContext, UserData, make_builder
from recworld.lunar.embed import Embedder
from recworld.lunar.judge import Judge, JudgeItem, Judgment, failed_answer_judgment
from recworld.lunar.llm import StructuredLLM, gather_or_cancel
from recworld.lunar.outputs import AnswerRecord, EvalCounts, EvalRun, write_record
from recworld.lunar.privacy import PrivacyJudge, PrivacyJudgment, failed_answer_privacy
from recworld.lunar.schemas import Query, Rubric

ASSISTANT_SYSTEM = (
    "You are the user's personal assistant. When user context is given, use it where it helps the request; "
    "do not recite it."
)


@dataclass(frozen=True)
class EvalInputs:
    """What every context setting answers: the (query, rubric) pairs and each user's data."""

    pairs: Sequence[tuple[Query, Rubric]]
    users: Mapping[str, UserData]


def answer_prompt(context: str, query: Query) -> str:
    if not context:
        return query.text
    return f"{context}\n\nUser request: {query.text}"


def make_builders(
    config: LunarEvalConfig, answer_llm: StructuredLLM, inputs: EvalInputs, embedder: Embedder | None
) -> list[ContextBuilder]:
    """One builder per configured setting; the Full budget comes from the answer model's window and tokens."""
    counter = counter_for(answer_llm.completer, config.answer.model)
    budget = full_budget(
        counter,
        window=window_of(answer_llm.completer, config.answer.n_ctx),
        answer_tokens=config.answer_max_tokens,
        system=ASSISTANT_SYSTEM,
        requests=[answer_prompt("", q) + "\n\nUser request: " for q, _ in inputs.pairs],
        cap=config.budget_tokens,
    )
    return [
        make_builder(
            s,
            embedder=embedder,
            budget_tokens=budget,
            rag_k=config.rag_k,
            counter=counter,
            memory_root=config.root,
            memory_k=config.memory_k,
            qdrant_url=config.qdrant_url,
        )
        for s in config.contexts
    ]


@dataclass(frozen=True)
class Judges:
    """The judges of one eval and the LLM they share (for failure accounting)."""

    personalization: Judge
    privacy: PrivacyJudge | None
    llm: StructuredLLM
    name: str  # the judge model spec (also distils the memory context)


async def evaluate_settings(
    config: LunarEvalConfig,
    answer_llm: StructuredLLM,
    judge_llm: StructuredLLM,
    inputs: EvalInputs,
    embedder: Embedder | None,
) -> list[EvalRun]:
    """Every configured setting in turn, with the personalisation (and, if on, privacy) judge."""
    from recworld.lunar.judge import PersonalizationJudge

    judges = Judges(
        personalization=PersonalizationJudge(judge_llm),
        privacy=PrivacyJudge(judge_llm) if config.privacy else None,
        llm=judge_llm,
        name=config.judge.model,
    )
    builders = make_builders(config, answer_llm, inputs, embedder)
    try:
        return [await evaluate_setting(b, answer_llm, judges, inputs, config) for b in builders]
    finally:
        for b in builders:
            close = getattr(b, "close", None)
            if callable(close):
                close()


async def evaluate_setting(
    builder: ContextBuilder,
    answer_llm: StructuredLLM,
    judges: Judges,
    inputs: EvalInputs,
    config: LunarEvalConfig,
) -> EvalRun:
    """Answer and judge every pair under ``builder``'s setting; write and return its run record."""
    setting, model = builder.setting.value, config.answer.model
    judge_llm = judges.llm
    marks = (len(answer_llm.failures), len(judge_llm.failures), answer_llm.calls + judge_llm.calls)
    prepared = await _prepare(builder, inputs, judges)
    answers, records = await _answer(builder, answer_llm, inputs, config)
    items = [JudgeItem(q, r, a) for (q, r), a in zip(inputs.pairs, answers, strict=True) if a is not None]
    tag = f"{store.slug(model)}/{setting}"
    judged = {j.query_id: j for j in await judges.personalization.judge(items, seed=config.seed, tag=tag)}
    judgments = [
        judged.get(q.query_id) or failed_answer_judgment(judges.personalization.name, q.query_id)
        for q, _ in inputs.pairs
    ]
    privacy: list[PrivacyJudgment] = []
    if judges.privacy is not None:
        scored = {p.query_id: p for p in await judges.privacy.judge(items, tag=tag)}
        privacy = [scored.get(q.query_id) or failed_answer_privacy(q.query_id) for q, _ in inputs.pairs]
    calls = answer_llm.calls + judge_llm.calls - marks[2]
    run = EvalRun(
        model=model,
        judge=config.judge.model,
        context=setting,
        config=config,
        counts=_counts(records, judgments, privacy, calls=calls, extra_asked=prepared),
        failures=answer_llm.failures[marks[0] :] + judge_llm.failures[marks[1] :],
    )
    out = config.root / "eval" / store.slug(model) / setting
    atomic_write_jsonl(out / "answers.jsonl", [r.to_json() for r in records])
    atomic_write_jsonl(out / "judgments.jsonl", [j.to_json() for j in judgments])
    if judges.privacy is not None:
        atomic_write_jsonl(out / "privacy.jsonl", [p.to_json() for p in privacy])
    write_record(out / "run.json", run)
    return run


async def _prepare(builder: ContextBuilder, inputs: EvalInputs, judges: Judges) -> int:
    """Settings with a build-up step (memory distils facts) run it here; returns the pieces asked."""
    from recworld.lunar.memory import MemoryContext

    if isinstance(builder, MemoryContext):
        return await builder.prepare(inputs.users, judges.llm, judges.name)
    return 0


async def _answer(
    builder: ContextBuilder, answer_llm: StructuredLLM, inputs: EvalInputs, config: LunarEvalConfig
) -> tuple[list[str | None], list[AnswerRecord]]:
    setting, stage = builder.setting, f"answer-{builder.setting.value}"
    llm = answer_llm.with_system(ASSISTANT_SYSTEM)
    prompts = [answer_prompt(builder.build(inputs.users[q.user_id], q, r), q) for q, r in inputs.pairs]
    answers = await gather_or_cancel(
        [
            llm.text(p, stage=stage, key=q.query_id, max_tokens=config.answer_max_tokens)
            for p, (q, _) in zip(prompts, inputs.pairs, strict=True)
        ]
    )
    records = []
    for p, (q, _), a in zip(prompts, inputs.pairs, answers, strict=True):
        cover = builder.coverage.get(q.query_id) if isinstance(builder, FullContext) else None
        records.append(
            AnswerRecord(
                query_id=q.query_id,
                model=config.answer.model,
                context=setting.value,
                prompt_chars=len(p),
                answer=a,
                error=None if a is not None else llm.error_of(stage, q.query_id) or "no answer",
                context_shown=cover.shown if cover else None,
                context_total=cover.total if cover else None,
                context_budget_tokens=cover.budget if cover else None,
                token_counter=cover.counter if cover else None,
            )
        )
    return answers, records


def _counts(
    answers: Sequence[AnswerRecord],
    judgments: Sequence[Judgment],
    privacy: Sequence[PrivacyJudgment],
    *,
    calls: int,
    extra_asked: int = 0,
) -> EvalCounts:
    answer_errors = sum(a.error is not None for a in answers)
    judge_errors = sum(j.error is not None for j in judgments)
    privacy_errors = sum(p.error is not None and not p.answer_failed for p in privacy)
    sent = len(answers) - answer_errors
    return EvalCounts(
        queries=len(answers),
        answered=sent,
        answer_errors=answer_errors,
        judged=sum(j.error is None and not j.answer_failed for j in judgments),
        judge_errors=judge_errors,
        privacy_judged=sum(p.score is not None for p in privacy),
        privacy_errors=privacy_errors,
        asked=len(answers) + sent + (sent if privacy else 0) + extra_asked,
        failures=answer_errors + judge_errors + privacy_errors,
        llm_calls=calls,
    )
