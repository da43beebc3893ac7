"""Text that reaches a terminal carries no control sequences from data.

A dataset folder named ``ESC]0;PWNED BEL ESC[2J`` once set the window title and
cleared the screen through ``data info``, ``build`` and ``recworld: error:``
lines that echoed it. Rich markup is escaped elsewhere; this strips what a
terminal acts on: escape sequences (CSI, OSC, DCS and the rest, 7-bit and
C1 forms), every other C0 control but tab and newline, DEL, and C1 controls.

:func:`guarded_streams` (entered by :func:`recworld.console.app.run` around
every command) puts a filter in front of ``sys.stdout`` and ``sys.stderr``, so
``typer.echo``, ``print`` and logging are covered wherever they are called.
Rich draws tables and progress bars with escape sequences of its own: it finds
the stream behind the filter through ``rich_proxied_file`` (the hook rich's own
file proxy uses), and that path keeps only the few sequences rich draws with
(colours, cursor up and back, erase line, cursor hide/show). Cells and progress
descriptions that hold data are stripped with :func:`strip_control` first.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

__all__ = ["guarded_streams", "strip_control"]

_SEQUENCES = re.compile(
    # CSI (ESC [ or the C1 byte): parameters, intermediates, one final byte.
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
    # OSC, DCS, SOS, PM, APC with their terminator (BEL or ST); an unterminated one loses its opener below.
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    # Any other escape: ESC, intermediates, a final byte (ESC c resets the terminal).
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
    # Every other control character: C0 but tab and newline, DEL, C1.
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)
# What rich draws with: SGR colours, cursor up/down/forward/back/column, erase line, cursor hide/show.
_RICH_DRAWS = re.compile(r"\x1b\[[0-9;:]*m|\x1b\[[0-9]*[ABCDGK]|\x1b\[\?25[hl]|\r")


def strip_control(text: str) -> str:
    """``text`` without escape sequences or control characters (tab and newline kept)."""
    return _SEQUENCES.sub("", text)


def _rich_safe(text: str) -> str:
    return _SEQUENCES.sub(lambda m: m.group() if _RICH_DRAWS.fullmatch(m.group()) else "", text)


class _Filtered:
    """A text stream that writes through ``clean``; everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO, clean: Callable[[str], str]) -> None:
        self._stream = stream
        self._clean = clean

    def write(self, text: str) -> int:
        self._stream.write(self._clean(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    @property
    def wrapped(self) -> TextIO:
        return self._stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _Guarded(_Filtered):
    """Strips every control sequence; rich draws on :attr:`rich_proxied_file` instead."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream, strip_control)
        self._rich = _Filtered(stream, _rich_safe)

    @property
    def rich_proxied_file(self) -> Any:
        return self._rich


@contextlib.contextmanager
def guarded_streams() -> Iterator[None]:
    """Filter ``sys.stdout`` and ``sys.stderr`` for the duration of the block (nested calls are no-ops)."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, _Guarded):
        sys.stdout = _Guarded(sys.stdout)
    if not isinstance(sys.stderr, _Guarded):
        sys.stderr = _Guarded(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
