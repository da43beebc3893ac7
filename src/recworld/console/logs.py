"""Logging for the package: ``--log-level`` on stderr, and a log file per run folder.

Modules log through ``logging.getLogger(__name__)``, so every record sits under
the ``recworld`` logger configured here. Stderr shows warnings by default, in
the same ``recworld: ...`` style as errors; a run folder's ``recworld.log``
keeps INFO and above whatever the terminal shows, for reading after the fact.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path

from recworld.console.terminal import strip_control
from recworld.io import open_append

LOG_FILE = "recworld.log"
_ROOT = "recworld"


class LogLevel(StrEnum):
    """The levels ``--log-level`` accepts."""

    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"

    @property
    def number(self) -> int:
        return int(getattr(logging, self.value.upper()))


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is now (tests and pagers replace it)."""

    def emit(self, record: logging.LogRecord) -> None:
        # Not setStream: it flushes the old stream, which a test harness may have closed.
        self.stream = sys.stderr
        super().emit(record)


class _ConsoleFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"recworld: {record.levelname.lower()}: {strip_control(record.getMessage())}"


class _FileFormatter(logging.Formatter):
    """A log file is read in a terminal too (``tail -f``): no control sequences from data in it."""

    def format(self, record: logging.LogRecord) -> str:
        return strip_control(super().format(record))


def _stderr_handler(logger: logging.Logger) -> _StderrHandler:
    for handler in logger.handlers:
        if isinstance(handler, _StderrHandler):
            return handler
    handler = _StderrHandler()
    handler.setFormatter(_ConsoleFormatter())
    logger.addHandler(handler)
    return handler


def _effective_level(logger: logging.Logger) -> int:
    # A handler at NOTSET takes every record (pytest's capture handlers do): the logger
    # must then pass DEBUG, not NOTSET, which would mean "inherit the root's WARNING".
    return min((h.level or logging.DEBUG for h in logger.handlers), default=logging.NOTSET)


def shows_on_stderr(level: int) -> bool:
    """Whether a ``recworld`` record at ``level`` reaches stderr now (``--log-level``)."""
    logger = logging.getLogger(_ROOT)
    return any(isinstance(h, _StderrHandler) and level >= h.level for h in logger.handlers)


def configure_logging(level: LogLevel | str = LogLevel.warning) -> None:
    """Send ``recworld`` records at ``level`` and above to stderr (idempotent)."""
    chosen = level if isinstance(level, LogLevel) else LogLevel(str(level).lower())
    logger = logging.getLogger(_ROOT)
    logger.propagate = False
    _stderr_handler(logger).setLevel(chosen.number)
    logger.setLevel(_effective_level(logger))


@contextmanager
def log_to_file(folder: Path, level: int = logging.INFO) -> Iterator[Path]:
    """Append the package's log records to ``folder/recworld.log`` while the block runs.

    The eval and LUNAR commands wrap a run in this, so a run folder explains
    itself (retries, skipped items, timings) without rerunning at a higher level.
    """
    path = Path(folder) / LOG_FILE
    handler = logging.StreamHandler(os.fdopen(open_append(path), "a", encoding="utf-8", errors="replace"))
    handler.setLevel(level)
    handler.setFormatter(_FileFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger(_ROOT)
    logger.addHandler(handler)
    logger.setLevel(_effective_level(logger))
    try:
        yield path
    finally:
        logger.removeHandler(handler)
        handler.close()
        handler.stream.close()
        logger.setLevel(_effective_level(logger))
