"""The review's 99 cases are all in this folder (``cases.CASES``), each named test really exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers.security.cases import CASES

HERE = Path(__file__).parent
REVIEW_TALLY = {"A": 12, "D": 7, "E": 22, "H": 2, "X": 9, "B": 25, "I": 2, "K": 12, "G": 6, "M": 2}


def _tests(module: str) -> set[str]:
    tree = ast.parse((HERE / f"{module}.py").read_text(encoding="utf-8"))
    return {
        node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


def test_the_table_has_the_reviews_99_cases() -> None:
    assert len(CASES) == 99
    by_group: dict[str, int] = {}
    for case in CASES:
        group = re.match(r"[A-Z]", case)
        assert group is not None
        by_group[group.group()] = by_group.get(group.group(), 0) + 1
    assert by_group == REVIEW_TALLY
    assert "E18" not in CASES  # noted by the review, not counted (no DNS to confirm it offline)


def test_every_case_names_a_test_that_exists() -> None:
    missing = [
        f"{case}: {module}::{name}" for case, (module, name) in CASES.items() if name not in _tests(module)
    ]
    assert not missing, "cases naming no test:\n" + "\n".join(missing)
