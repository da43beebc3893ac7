"""Read a suite's questions for an evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from recworld.errors import ConfigError, DataError, from_validation
from recworld.io import iter_json_lines

if TYPE_CHECKING:
    from recworld.lrworld.schema import Question

__all__ = ["load_questions"]


def load_questions(
    suite_dir: Path, measures: Sequence[str] | None = None, limit: int | None = None
) -> list[Question]:
    """The first ``limit`` valid questions of each measure, in file order."""
    from recworld.lrworld.schema import Question

    qdir = suite_dir / "questions"
    available = sorted(p.stem for p in qdir.glob("*.jsonl"))
    if not available:
        raise DataError("no questions/*.jsonl files: is this a suite directory?", path=suite_dir)
    wanted = list(measures) if measures else available
    unknown = [m for m in wanted if m not in available]
    if unknown:
        from recworld.console import suggestion

        hints = "".join(suggestion(m, available) for m in unknown)
        raise ConfigError(
            f"--measures: not in {qdir}: {', '.join(unknown)}{hints}; available: {', '.join(available)}"
        )
    questions: list[Question] = []
    for measure in wanted:
        path = qdir / f"{measure}.jsonl"
        for taken, (number, record) in enumerate(iter_json_lines(path)):
            if limit is not None and taken >= limit:
                break
            try:
                questions.append(Question.model_validate(record))
            except ValidationError as exc:
                raise from_validation(exc, path=path, line=number) from None
    return questions
