"""The journal of finished image descriptions that makes describing resumable.

A later line for an item replaces an earlier one: an image that changed is
described again and appended.
"""

from __future__ import annotations

from pathlib import Path

from recworld.io import Journal


class DescriptionJournal(Journal):
    """Description records keyed by ``item_id``."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, key="item_id")
