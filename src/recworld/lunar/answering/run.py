"""Answering under each context setting, then judging: ``DIR/eval/<model>/<context>/``.

Each folder holds ``answers.jsonl`` (:class:`~recworld.lunar.store.outputs.AnswerRecord`),
``judgments.jsonl`` (:class:`~recworld.lunar.judges.personalization.Judgment`),
``privacy.jsonl`` (:class:`~recworld.lunar.judges.privacy.PrivacyJudgment`, when privacy
is on for that context: ``--privacy-contexts``, by default as the paper's Fig. 4) and ``run.json``
(:class:`~recworld.lunar.store.outputs.EvalRun`). Answers written under the ``discreet``
system prompt go to ``DIR/eval/<model>@discreet/<context>/``, so both variants of one
model can stand side by side (:func:`series_dir`). A failed answer
is written with its error, is not sent to a judge, and gets the personalisation scale's
floor (1) in a row flagged ``answer_failed``; its privacy row is reported apart (no
score). A failed judgment is written with its error. All are counted in ``run.json``
and shown in the report.

A setting is a registered :class:`~recworld.lunar.contexts.ContextSetting`: it is
prepared once (its build-up step, such as distilling facts with a model of its own, counted with the
setting), builds each query's context, reports what it dropped (``coverage``), and is
closed at the end whatever happened.

Baseline and target are written under the same token cap by default (``answer_max_tokens``,
256, the generic answer's cap), so the judge never compares a long answer with a cut one.
Another cap (``--max-tokens``, ``--smoke``) is logged as a warning and labelled on the
report's Runs row (:func:`~recworld.lunar.queries.rubrics.baseline_note`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from recworld.errors import DataError
from recworld.io import atomic_write_jsonl, read_json_object
from recworld.lunar.config import LunarEvalConfig
from recworld.lunar.contexts import ContextEnv, Preparation, Sessions, context_setting
from recworld.lunar.contexts.base import DEFAULT_ASSISTANT_PROMPT, AnySetting, answer_prompt
from recworld.lunar.judges.personalization import (
    Judge,
    JudgeItem,
    Judgment,
    PersonalizationJudge,
    failed_answer_judgment,
)
from recworld.lunar.judges.privacy import PrivacyJudge, PrivacyJudgment, failed_answer_privacy
from recworld.lunar.llm import StructuredLLM, gather_or_cancel
from recworld.lunar.queries.rubrics import baseline_note
from recworld.lunar.schemas import EvalInputs
from recworld.lunar.store.outputs import AnswerRecord, EvalCounts, EvalRun
from recworld.paths import slug
from recworld.runner import BlockingEmbedder

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Judges:
    """The judges of one eval and the LLM they share (for failure accounting)."""

    personalization: Judge
    privacy: PrivacyJudge | None
    llm: StructuredLLM

    @classmethod
    def of(cls, llm: StructuredLLM, *, privacy: bool) -> Judges:
        return cls(PersonalizationJudge(llm), PrivacyJudge(llm) if privacy else None, llm)


def series_dir(config: LunarEvalConfig) -> str:
    """The model folder under ``eval/``: the model's slug, and ``@<prompt>`` for a non-default prompt.

    A folder an earlier version named for the same series is kept (:func:`earlier_series`).
    """
    model = slug(config.answer.name)
    name = (
        model if config.assistant_prompt == DEFAULT_ASSISTANT_PROMPT else f"{model}@{config.assistant_prompt}"
    )
    if (config.root / "eval" / name).exists():
        return name
    return earlier_series(config) or name


def earlier_series(config: LunarEvalConfig) -> str | None:
    """The folder of this model and prompt's runs when it is not named by today's slug, else None.

    Before the suites shared :func:`recworld.paths.slug`, LUNAR wrote ``openai_gpt-4o``
    where it now writes ``openai-gpt-4o``. A rerun finds that folder by what its
    ``run.json`` records, so it replaces those results rather than standing beside them,
    and its judge tags, which name the folder, keep their answer order.
    """
    for path in sorted((config.root / "eval").glob("*/*/run.json")):
        try:
            run = read_json_object(path)
        except DataError:
            continue  # an unreadable run names no series; the report says why
        prompt = run.get("assistant_prompt", DEFAULT_ASSISTANT_PROMPT)
        if run.get("model") == config.answer.name and prompt == config.assistant_prompt:
            return path.parent.parent.name
    return None


def sessions_of(config: LunarEvalConfig) -> Sessions:
    """The eval's models: answer, judge, and each setting's declared roles by name."""
    return Sessions(answer=config.answer, judge=config.judge, roles=dict(config.roles))


def check_settings(config: LunarEvalConfig) -> None:
    """Every configured setting's declared models are given (``ContextSetting.check``), before any call."""
    sessions = sessions_of(config)
    for name in config.contexts:
        context_setting(name).check(sessions)


def context_env(
    config: LunarEvalConfig,
    answer_llm: StructuredLLM,
    judge_llm: StructuredLLM,
    inputs: EvalInputs,
    embedder: BlockingEmbedder | None,
) -> ContextEnv:
    return ContextEnv(
        root=config.root,
        inputs=inputs,
        sessions=sessions_of(config),
        answer_llm=answer_llm,
        judge_llm=judge_llm,
        answer_max_tokens=config.answer_max_tokens,
        embedder=embedder,
        system=config.system_prompt,
    )


def open_settings(config: LunarEvalConfig) -> list[AnySetting]:
    """One instance per configured setting, each with its own options."""
    return [context_setting(name).from_options(config.options_of(name)) for name in config.contexts]


async def evaluate_settings(
    config: LunarEvalConfig,
    answer_llm: StructuredLLM,
    judge_llm: StructuredLLM,
    inputs: EvalInputs,
    embedder: BlockingEmbedder | None,
) -> list[EvalRun]:
    """Every configured setting in turn, with the personalisation (and, if on, privacy) judge."""
    if (note := baseline_note(config.answer_max_tokens)) is not None:
        _log.warning("%s: the judge compares answers of unequal length", note)
    judges = Judges.of(judge_llm, privacy=config.privacy)
    env = context_env(config, answer_llm, judge_llm, inputs, embedder)
    settings = open_settings(config)
    try:
        return [await evaluate_setting(s, env, judges, config) for s in settings]
    finally:
        for s in settings:
            s.close()


async def evaluate_setting(
    setting: AnySetting, env: ContextEnv, judges: Judges, config: LunarEvalConfig
) -> EvalRun:
    """Prepare ``setting``, answer and judge every pair under it; write and return its run record."""
    prepared = await setting.prepare(env)
    answer_llm, judge_llm = env.answer_llm, judges.llm
    marks = (len(answer_llm.failures), len(judge_llm.failures), answer_llm.calls + judge_llm.calls)
    name, model = setting.name, config.answer.name
    answers, records = await _answer(setting, env, config)
    pairs = env.inputs.pairs
    items = [JudgeItem(q, r, a) for (q, r), a in zip(pairs, answers, strict=True) if a is not None]
    tag = f"{series_dir(config)}/{name}"
    judged = {j.query_id: j for j in await judges.personalization.judge(items, seed=config.seed, tag=tag)}
    judgments = [
        judged.get(q.query_id) or failed_answer_judgment(judges.personalization.name, q.query_id)
        for q, _ in pairs
    ]
    privacy: list[PrivacyJudgment] = []
    privacy_judge = judges.privacy if config.judges_privacy(name) else None
    if privacy_judge is not None:
        scored = {p.query_id: p for p in await privacy_judge.judge(items, tag=tag)}
        privacy = [scored.get(q.query_id) or failed_answer_privacy(q.query_id) for q, _ in pairs]
    calls = answer_llm.calls + judge_llm.calls - marks[2] + prepared.calls
    run = EvalRun(
        model=model,
        judge=config.judge.name,
        context=name,
        assistant_prompt=config.assistant_prompt,
        config=config,
        counts=_counts(records, judgments, privacy, calls=calls, prepared=prepared),
        # In the order the old single mark gave: answers, then the judge LLM's (a build-up step's first).
        failures=[*answer_llm.failures[marks[0] :], *prepared.failures, *judge_llm.failures[marks[1] :]],
    )
    out = config.root / "eval" / series_dir(config) / name
    atomic_write_jsonl(out / "answers.jsonl", [r.to_json() for r in records])
    atomic_write_jsonl(out / "judgments.jsonl", [j.to_json() for j in judgments])
    if privacy_judge is not None:
        atomic_write_jsonl(out / "privacy.jsonl", [p.to_json() for p in privacy])
    else:
        (out / "privacy.jsonl").unlink(missing_ok=True)  # a rerun without privacy for it leaves no stale file
    run.write(out / "run.json")
    return run


async def _answer(
    setting: AnySetting, env: ContextEnv, config: LunarEvalConfig
) -> tuple[list[str | None], list[AnswerRecord]]:
    stage = f"answer-{setting.name}"
    llm = env.answer_llm.with_system(env.system)
    pairs = env.inputs.pairs
    prompts = [answer_prompt(setting.build(env.inputs.users[q.user_id], q, r), q) for q, r in pairs]
    answers = await gather_or_cancel(
        [
            llm.text(p, stage=stage, key=q.query_id, max_tokens=config.answer_max_tokens)
            for p, (q, _) in zip(prompts, pairs, strict=True)
        ]
    )
    records = []
    for p, (q, _), a in zip(prompts, pairs, answers, strict=True):
        cover = setting.coverage(q.query_id)
        records.append(
            AnswerRecord(
                query_id=q.query_id,
                model=config.answer.name,
                context=setting.name,
                prompt_chars=len(p),
                answer=a,
                error=None if a is not None else llm.error_of(stage, q.query_id) or "no answer",
                context_shown=cover.shown if cover else None,
                context_total=cover.total if cover else None,
                context_budget_tokens=cover.budget if cover else None,
                token_counter=cover.counter if cover else None,
                context_window=cover.window if cover else None,
                context_window_source=cover.window_source if cover else None,
            )
        )
    return answers, records


def _counts(
    answers: Sequence[AnswerRecord],
    judgments: Sequence[Judgment],
    privacy: Sequence[PrivacyJudgment],
    *,
    calls: int,
    prepared: Preparation,
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
        asked=len(answers) + sent + (sent if privacy else 0) + prepared.asked,
        failures=answer_errors + judge_errors + privacy_errors,
        llm_calls=calls,
    )
