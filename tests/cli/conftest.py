"""The ``recworld`` fixture: the real entry point, run in this process the way a person runs it.

``recworld.cli.main`` is what the installed script calls (its error style, exit
codes and help formatting included), so calling it here at ``COLUMNS=80``, without
a terminal, shows what a person sees in a fraction of a subprocess's time.
``test_terminal.py`` keeps one subprocess check that the installed script is that
entry point; ``test_interrupt.py`` keeps the one whose point is a real signal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli import Recworld, as_a_person, run_recworld


@pytest.fixture
def recworld(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Recworld:
    """``recworld(*args)`` -> CompletedProcess, run in ``tmp_path`` with an empty RECWORLD_HOME."""
    as_a_person(monkeypatch, tmp_path)
    return run_recworld
