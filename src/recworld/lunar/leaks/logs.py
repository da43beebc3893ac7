"""Masking what is printed and logged, and walking the strings of a released document."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager


def string_leaves(data: object, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every string in a JSON value (keys of objects included), with where it sits."""
    if isinstance(data, str):
        yield path, data
    elif isinstance(data, Mapping):
        for k, v in data.items():
            yield (*path, "{key}"), str(k)
            yield from string_leaves(v, (*path, str(k)))
    elif isinstance(data, list | tuple):
        for v in data:
            yield from string_leaves(v, (*path, "[]"))


class _MaskingFilter(logging.Filter):
    def __init__(self, mask: Callable[[str], str]) -> None:
        super().__init__()
        self._mask = mask

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self._mask(record.getMessage())
        record.args = None
        return True


@contextmanager
def masking_logs(mask: Callable[[str], str], logger: str = "recworld") -> Iterator[None]:
    """While the block runs, every record reaching a handler of ``logger`` is masked first.

    The handlers are the terminal (stderr) and the run folder's ``recworld.log``; the filter is
    added to each handler present when the block starts (``log_to_file`` inside it adds its own
    handler later, so enter this block inside that one).
    """
    target = logging.getLogger(logger)
    masking = _MaskingFilter(mask)
    handlers = list(target.handlers) + [h for h in logging.getLogger().handlers if h not in target.handlers]
    for h in handlers:
        h.addFilter(masking)
    try:
        yield
    finally:
        for h in handlers:
            h.removeFilter(masking)
