"""The journal of finished samples that makes ``recworld eval`` resumable (see :class:`Journal`)."""

from __future__ import annotations

from pathlib import Path

from recworld.io import Journal


class SampleJournal(Journal):
    """Samples keyed by ``question_id``; a later line for the same id replaces an earlier one."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, key="question_id")
