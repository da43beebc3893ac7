"""Fixtures of the runner and evaluation tests: a tiny suite on disk and the answer key of its questions.

The fake OpenAI-compatible server they run against is :class:`recworld.testing.fake_server.FakeOpenAIServer`
in mode ``letters`` (a letter derived from the request body), with its fault plans, barrier and
``hold_after``; :func:`answer_for` and :func:`vector_for` are its replies, re-exported here.
"""

from __future__ import annotations

from typing import Any

from recworld.testing.fake_server import letter_for as answer_for
from recworld.testing.fake_server import vector_for
from recworld.testing.suites import write_suite

__all__ = ["answer_for", "fake_answer", "vector_for", "write_suite"]


def fake_answer(request: Any) -> int:
    """The index of the right option of a :func:`write_suite` question in ``request``, in any option order.

    A request carries no gold (``Request.question`` is a public view), so a test model that must
    answer right knows the fake suite's answer key itself: question ``i``'s answer is ``c{i}-{7i % n}``.
    """
    question = request.question
    assert question is not None
    number = int(question.id.split("#o", 1)[0].rsplit("/", 1)[1])
    ids = [c.id for c in question.candidates]
    return ids.index(f"c{number}-{(number * 7) % len(ids)}")
