"""Cost before the wait: how long a local model will take, measured, said before it starts.

A local model (one that serves ``max_concurrency`` requests at a time, the
:class:`~recworld.models.base.BoundedModel` backends: llama.cpp, transformers)
can take minutes per question, in rank mode on user-option measures above all
(every option's text is scored after a long prompt). Before such a run starts,
the cheapest request is answered alone and timed (its answer is kept: the
warm-up costs nothing), and the rest is estimated from its speed in tokens of
work per second: the prompt, plus the scored choices (loglik, rank) or the
reply budget (generate), at 4 characters a token as ``--dry-run`` counts them.
The estimate is printed when it is over a minute, and logged always.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from recworld.chat import AnswerMode, Request
from recworld.console.progress import clock, notice
from recworld.models.base import Model, max_concurrency
from recworld.runner import Completion, Runner

__all__ = ["CHARS_PER_TOKEN", "SAY_ABOVE_S", "answer_with_estimate", "estimate_seconds", "work_tokens"]

_log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
SAY_ABOVE_S = 60.0  # estimates shorter than this are only logged


def tokens(chars: int) -> int:
    """Tokens of ``chars`` characters, estimated (no tokenizer is loaded)."""
    return -(-chars // CHARS_PER_TOKEN)


def prompt_tokens(request: Request) -> int:
    """The request's prompt, in estimated tokens."""
    return tokens(sum(len(m.content) for m in request.messages))


def work_tokens(request: Request) -> int:
    """What answering costs a local model, in tokens: the prompt, plus the choices or the reply."""
    if request.mode is AnswerMode.GENERATE:
        return prompt_tokens(request) + request.max_tokens
    return prompt_tokens(request) + sum(tokens(len(c)) for c in request.choices)


def estimate_seconds(measured_s: float, measured: Request, rest: Sequence[Request], parallel: int) -> float:
    """Seconds for ``rest`` at the speed ``measured`` took, ``parallel`` requests at a time."""
    per_token = measured_s / max(work_tokens(measured), 1)
    return per_token * sum(work_tokens(r) for r in rest) / max(parallel, 1)


OnResult = Callable[[int, Completion], None]


async def answer_with_estimate(
    runner: Runner, model: Model, requests: Sequence[Request], record: OnResult, *, description: str
) -> None:
    """``runner.map(requests)``; for a local model, first the cheapest one alone, timed, then the estimate."""
    bound = max_concurrency(model)
    if bound is None or len(requests) < 2:
        await runner.map(requests, description=description, on_result=record)
        return
    first = min(range(len(requests)), key=lambda i: work_tokens(requests[i]))
    rest = [i for i in range(len(requests)) if i != first]
    warm: list[Completion] = []

    def keep(_index: int, completion: Completion) -> None:
        warm.append(completion)
        record(first, completion)

    started = time.monotonic()
    await runner.map([requests[first]], description=description, on_result=keep)
    elapsed = time.monotonic() - started
    if warm and warm[0].ok and not warm[0].cache_hit:
        parallel = min(bound, runner.config.concurrency)
        others = [requests[i] for i in rest]
        _say(estimate_seconds(elapsed, requests[first], others, parallel), others, elapsed, requests[first])
    await runner.map(
        [requests[i] for i in rest], description=description, on_result=lambda j, c: record(rest[j], c)
    )


def _say(seconds: float, rest: Sequence[Request], elapsed: float, measured: Request) -> None:

    speed = work_tokens(measured) / elapsed if elapsed > 0 else 0.0
    line = (
        f"estimate: {len(rest)} more requests, ~{sum(prompt_tokens(r) for r in rest):,} prompt tokens, "
        f"about {clock(seconds)} at {speed:,.0f} tokens/s (measured on one request); "
        "Ctrl-C stops and a rerun resumes"
    )
    if seconds > SAY_ABOVE_S:
        notice(line)
    else:
        _log.info("%s", line)
