"""Test modules have unique basenames: pytest imports folders without ``__init__.py`` by basename.

Still a real guard now that the helpers are one package (``tests/helpers``): under pytest's default
``prepend`` import mode, a test module in a folder without ``__init__.py`` is imported as a top-level
module named by its basename, so a second ``test_x.py`` elsewhere fails to import ("import file
mismatch"). Shared code no longer needs unique basenames; test modules still do.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_basename_outside_packages() -> None:
    by_name: dict[str, list[Path]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        if ".data" in path.parts or (path.parent / "__init__.py").exists():
            continue  # a package's modules are imported by their dotted name
        by_name[path.name].append(path.relative_to(TESTS))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"rename one of each (pytest cannot import both): {clashes}"
