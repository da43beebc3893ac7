"""``--retry-failures`` asks past the cache through the session's one runner, not a second one.

A model that serves one request at once never sees two, however many pieces are
refreshed together; the runner's ``sent`` counts the refreshed sends too; and
the fresh replies replace the rejected ones, so a third pass sends nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel

from recworld.chat import Request, Response
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.llm.session import open_llm
from recworld.models.base import ModelBase
from recworld.runner import RunnerConfig

PIECES = 6


class Answer(BaseModel):
    word: str


class Single(ModelBase):
    """``max_concurrency`` 1; replies junk while ``bad`` is set; counts calls and the most in flight."""

    def __init__(self) -> None:
        self._identity = {"backend": "single", "model": "m"}
        self.bad = True
        self.calls = 0
        self.in_flight = 0
        self.peak = 0

    @property
    def max_concurrency(self) -> int | None:
        return 1

    async def complete(self, request: Request) -> Response:
        self.calls += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0.001)
            return Response(text="not json" if self.bad else '{"word": "ok"}')
        finally:
            self.in_flight -= 1


def _pass(model: Single, root: Path, *, retry: bool) -> tuple[list[Answer | None], int]:
    config = SessionConfig(
        model=model,
        retry_failures=retry,
        max_attempts=1,
        runner=RunnerConfig(concurrency=8, max_retries=0, progress=False),
    )

    async def go() -> tuple[list[Answer | None], int]:
        async with open_llm(config, root) as llm:
            jobs = [llm.structured(f"piece {k}", Answer, stage="s", key=str(k)) for k in range(PIECES)]
            answers = await asyncio.gather(*jobs)
            return list(answers), llm.completer.stats.sent  # type: ignore[attr-defined]

    return asyncio.run(go())


def test_refreshed_pieces_share_the_sessions_runner_its_bound_and_its_count(tmp_path: Path) -> None:
    model = Single()
    answers, sent = _pass(model, tmp_path, retry=True)  # nothing cached yet: junk, cached
    assert answers == [None] * PIECES and sent == model.calls == PIECES
    model.bad = False
    answers, sent = _pass(model, tmp_path, retry=True)  # each cached junk reply is asked again
    assert answers == [Answer(word="ok")] * PIECES
    assert sent == PIECES and model.calls == 2 * PIECES  # the fresh sends are the runner's sends
    assert model.peak == 1  # one at a time, cached and refreshed requests alike
    answers, sent = _pass(model, tmp_path, retry=True)  # the fresh replies replaced the junk
    assert answers == [Answer(word="ok")] * PIECES and sent == 0 and model.calls == 2 * PIECES
