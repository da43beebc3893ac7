"""Turn questions into requests, and completions into typed sample records: the scorer's side.

Invariant (the gold never leaves the scorer): :func:`build_request` puts only
the question's public view (:attr:`~recworld.lrworld.schema.Question.public`)
and a prompt rendered from it into the request, so the request is the same
whichever option is the answer and whatever the builder's evidence says. Only
:func:`build_sample`, after the reply, reads ``answer_index``.

A loglik reply whose best score is shared by several options is a tie: the
pick is drawn uniformly among them, seeded by the run's seed and the
question's id, and the sample is marked ``tie`` (the metrics count them), so a
tie never goes to option A.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from recworld.chat import AnswerMode, Message, Request, Response
from recworld.runner import Completion
from recworld.scoring.records import SampleRecord, SampleUsage

if TYPE_CHECKING:
    from recworld.evaluation.config import EvalConfig
    from recworld.lrworld.prompts import RenderedPrompt
    from recworld.lrworld.schema import Question

__all__ = ["build_request", "build_sample", "parse_answer", "with_system"]


def with_system(prompt: RenderedPrompt, system: str | None) -> RenderedPrompt:
    """``prompt`` with ``--system`` in front: joined to a variant's own system turn, never a second one.

    It is part of the messages, hence of the cache key and of the sample's
    recorded prompt, so a reader sees exactly what the model saw.
    """
    if not system:
        return prompt
    messages = list(prompt.messages)
    if messages and messages[0].role == "system":
        messages[0] = dataclasses.replace(messages[0], content=f"{system}\n\n{messages[0].content}")
    else:
        messages.insert(0, Message(role="system", content=system))
    return dataclasses.replace(prompt, messages=tuple(messages))


def build_request(question: Question, prompt: RenderedPrompt, config: EvalConfig) -> Request:
    """The request for one question; the eval seed is in it, hence in the cache key.

    Rank mode scores the options' own texts; loglik scores their labels (their names, when the
    prompt lists names without letters).
    """
    by_text = config.mode is AnswerMode.RANK or prompt.answer_by == "name"
    return Request(
        messages=prompt.messages,
        mode=config.mode,
        choices=prompt.option_texts if by_text else prompt.labels,
        question=question.public,
        max_tokens=config.reply_tokens,
        temperature=config.temperature,
        seed=config.seed,
    )


def build_sample(
    question: Question,
    prompt: RenderedPrompt,
    completion: Completion,
    *,
    spec: str,
    config: EvalConfig,
    order: int = 0,
) -> SampleRecord:
    """One ``recworld.sample/2`` record. A failed request is an unscored sample with ``error`` set."""
    response = completion.response
    failed = response is None
    ranking, tie = _ranking(response, prompt, config.mode)
    if config.mode is AnswerMode.LOGLIK and response is not None:
        tie = len(_loglik_best(response, prompt)) > 1
    parsed = (
        None
        if response is None
        else parse_answer(response, prompt, config.mode, seed=config.seed, question_id=question.id)
    )
    return SampleRecord(
        question_id=question.id,
        measure=question.measure,
        dataset=question.dataset,
        format=question.format,
        model=spec,
        mode=config.mode.value,
        variant=config.variant,
        prompt=prompt.messages,
        labels=tuple(prompt.labels),
        answer_index=question.answer_index,
        response=None if response is None else response.text,
        choice_logprobs=None if response is None else _finite(response.choice_logprobs),
        parsed_index=parsed,
        correct=None if failed else parsed is not None and parsed == question.answer_index,
        missed=None if failed else parsed is None,
        latency_s=round(completion.latency_s, 6),
        usage=None if response is None else _usage(response),
        cache_hit=completion.cache_hit,
        attempts=completion.attempts,
        error=completion.error if failed else None,
        order=order,
        option_ids=tuple(c.id for c in question.candidates),
        ranking=ranking,
        tie=tie,
    )


def _ranking(
    response: Response | None, prompt: RenderedPrompt, mode: AnswerMode
) -> tuple[tuple[int, ...] | None, bool | None]:
    scores = None if response is None else response.choice_logprobs
    if mode is not AnswerMode.RANK or scores is None or len(scores) != len(prompt.labels):
        return None, None
    from recworld.scoring.ranking import rank_scores

    return rank_scores(scores)


def _finite(scores: Sequence[float] | None) -> list[float | None] | None:
    # A label the backend could not score is -inf; null keeps the file strict JSON.
    return None if scores is None else [x if math.isfinite(x) else None for x in scores]


def _usage(response: Response) -> SampleUsage:
    return SampleUsage(
        prompt_tokens=response.usage.prompt_tokens, completion_tokens=response.usage.completion_tokens
    )


def _loglik_best(response: Response, prompt: RenderedPrompt) -> list[int]:
    """The options sharing the best loglik score (within the ranking's tolerance); empty when unscored."""
    from recworld.scoring.ranking import TIE_TOLERANCE

    scores = response.choice_logprobs
    if scores is None or len(scores) != len(prompt.labels):
        return []
    value = [x if math.isfinite(x) else -math.inf for x in scores]
    top = max(value)
    if top == -math.inf:
        return []
    return [i for i, x in enumerate(value) if x >= top - TIE_TOLERANCE]


def parse_answer(
    response: Response,
    prompt: RenderedPrompt,
    mode: AnswerMode,
    *,
    seed: int = 0,
    question_id: str = "",
) -> int | None:
    """The chosen option index: extracted from text, or the best-scored choice.

    In rank mode a shared top score is no answer (a miss). In loglik mode a
    shared best score is drawn uniformly among the tied options, seeded by
    ``seed`` and ``question_id``. Either way a tie is never given to "A".
    """
    if mode is AnswerMode.RANK:
        ranking, tie = _ranking(response, prompt, mode)
        return None if ranking is None or tie else ranking[0]
    if mode is AnswerMode.LOGLIK:
        best = _loglik_best(response, prompt)
        if len(best) <= 1:
            return best[0] if best else None
        from recworld.seeding import rng

        return best[int(rng(seed, "loglik-tie", question_id).integers(len(best)))]
    if prompt.answer_by == "name":  # LastFM as LLaRA: the reply names a candidate (prompts.read_name_reply)
        from recworld.lrworld.prompts import read_name_reply

        return read_name_reply(response.text, prompt.option_texts)
    from recworld.scoring import extract_choice

    return extract_choice(response.text, prompt.labels, prompt.option_texts)
