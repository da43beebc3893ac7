"""The tests' shared helpers: one importable package, found through pytest's ``pythonpath = ["tests"]``.

Invariant: a helper that more than one test module uses lives here and is imported by its dotted
name (``from helpers.lunar import tiny_run``), never through a ``sys.path`` edit or a folder's
basename. Test modules import helpers, never each other. A child process that imports a helper gets
the folder through :func:`child_env` (``PYTHONPATH``), the same way pytest itself finds it.

Layout: one module per suite or concern (``cli``, ``lunar``, ``runner_fakes``, ...), and a
sub-package where a suite has several (``security``, ``lrworld``).
"""

from __future__ import annotations

import os
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
"""The ``tests`` folder: the one entry of ``sys.path`` that makes ``helpers`` importable."""


def child_env(**extra: str) -> dict[str, str]:
    """``os.environ`` for a child Python that imports ``helpers``: ``tests`` first on its ``PYTHONPATH``."""
    path = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}
