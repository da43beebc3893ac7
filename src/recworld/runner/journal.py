"""The journal of finished samples that makes ``recworld eval`` resumable (see :class:`Journal`)."""

from __future__ import annotations

from pathlib import Path

from recworld.io import Journal

# Group commit, as the response cache does: one fsync per 64 samples or 2 s, whichever comes first
# (1,800 fast samples: 29 fsyncs, not 1,800). A kill -9 loses no line the kernel has; a machine
# crash loses at most the group in flight, which a resume asks again.
SAMPLE_BATCH = 64
SAMPLE_BATCH_S = 2.0


class SampleJournal(Journal):
    """Samples keyed by ``question_id``; a later line for the same id replaces an earlier one."""

    def __init__(self, path: Path, *, batch: int = SAMPLE_BATCH, batch_s: float = SAMPLE_BATCH_S) -> None:
        super().__init__(path, key="question_id", batch=batch, batch_s=batch_s)
