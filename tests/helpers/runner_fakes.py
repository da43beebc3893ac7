"""Fixtures of the runner and evaluation tests: a tiny suite on disk and the answer key of its questions.

The fake OpenAI-compatible server they run against is :class:`recworld.testing.fake_server.FakeOpenAIServer`
in mode ``letters`` (a letter derived from the request body), with its fault plans, barrier and
``hold_after``; :func:`answer_for` and :func:`vector_for` are its replies, re-exported here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recworld.testing.fake_server import letter_for as answer_for
from recworld.testing.fake_server import vector_for

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


def write_suite(root: Path, counts: Mapping[str, int], *, fingerprint: str = "fake-fp") -> Path:
    """A tiny suite directory: a manifest and ``counts[measure]`` questions per measure."""
    from recworld.io import atomic_write_json
    from recworld.lrworld.catalogue import MEASURES
    from recworld.lrworld.manifest import SuiteManifest, UsersSkipped
    from recworld.lrworld.schema import Entry, Question, Target

    by_id = {m.id: m for m in MEASURES}
    (root / "questions").mkdir(parents=True, exist_ok=True)
    for measure, n in counts.items():
        meta = by_id[measure]
        n_options = meta.format.n_options
        lines = []
        for i in range(n):
            question = Question(
                id=f"fake/{measure}/{i:05d}",
                dataset="fake",
                domain="movie",
                measure=measure,
                scale=meta.scale.value,
                format=meta.format,
                target=Target(kind="item", id=f"t{i}", text=f"Target movie {i}"),
                history=[Entry(id=f"h{i}", text=f"History movie {i}")],
                candidates=[
                    Entry(id=f"c{i}-{j}", text=f"Option {j} of question {i}") for j in range(n_options)
                ],
                answer_index=(i * 7) % n_options,
                evidence={"field": "genres"} if meta.format.value == "mcq" else {},
                seed=0,
            )
            lines.append(json.dumps(question.to_json()) + "\n")
        (root / "questions" / f"{measure}.jsonl").write_text("".join(lines), encoding="utf-8")
    manifest = SuiteManifest(
        dataset="fake",
        domain="movie",
        fingerprint=fingerprint,
        config={},
        seed=0,
        counts=dict(counts),
        users_skipped=UsersSkipped(too_short_history=0, rule="fake suite"),
    )
    atomic_write_json(root / "manifest.json", manifest.to_json())
    return root
