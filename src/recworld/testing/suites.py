"""A tiny suite on disk for runner, evaluation and engine tests (and the benchmarks that time them).

Invariant: ``write_suite(root, counts)`` writes a manifest and ``counts[measure]`` questions per
measure, each a valid :class:`recworld.lrworld.schema.Question` whose answer is option
``(7 i) mod n`` of question ``i``: an answer key a test double can know without the gold ever
reaching a request. The same arguments give byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

__all__ = ["write_suite"]


def write_suite(root: Path, counts: Mapping[str, int], *, fingerprint: str = "fake-fp") -> Path:
    """A tiny suite directory: a manifest and ``counts[measure]`` questions per measure."""
    from recworld.io import atomic_write_json, atomic_write_text
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
        atomic_write_text(root / "questions" / f"{measure}.jsonl", "".join(lines))
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
