"""No dead code that looks alive: every top-level function and class under src/ is used.

Used means named somewhere other than its own definition: as a name or an attribute
in src/, scripts/ or bench/ (an import under another name counts, a re-export in an
``__all__`` or a plain ``import`` does not), in a string there (a registry row such as
``"recworld.models.scripted:create_embedder"`` or an entry point), or in docs/ and the
README (the public API a reader is shown). A use in tests/ alone does not count: code
only its own test calls is what this check is for. Decorated functions (commands,
callbacks, validators) are used by their decorator.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
USERS = ("src", "scripts", "bench")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def definitions(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, name) of each undecorated top-level function and each top-level class."""
    return [
        (node.lineno, node.name)
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        or (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.decorator_list)
    ]


def uses(tree: ast.Module) -> Counter[str]:
    """Every name a module uses: names, attributes, renamed imports and words in its strings."""
    found: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found[node.id] += 1
        elif isinstance(node, ast.Attribute):
            found[node.attr] += 1
        elif isinstance(node, ast.alias) and node.asname and node.asname != node.name:
            found[node.name.rpartition(".")[2]] += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(WORD.findall(node.value))
    return found


def unused() -> list[str]:
    used: Counter[str] = Counter()
    defined: list[tuple[str, int, str]] = []
    for folder in USERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            used += uses(tree)
            if folder == "src":
                defined += [(str(path.relative_to(ROOT)), line, name) for line, name in definitions(tree)]
    prose = " ".join(
        p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    )
    shown = set(WORD.findall(prose))
    return [
        f"{path}:{line} {name}"
        for path, line, name in defined
        if not name.startswith("__") and used[name] == 0 and name not in shown
    ]


def test_every_top_level_definition_is_used() -> None:
    assert unused() == []


def test_the_check_sees_a_function_nothing_calls() -> None:
    tree = ast.parse("def lonely() -> None: ...\n\n\ndef caller() -> None:\n    helper()\n")
    assert [name for _, name in definitions(tree)] == ["lonely", "caller"]
    assert uses(tree)["lonely"] == 0 and uses(tree)["helper"] == 1
    renamed = ast.parse("from recworld.models.plugins import plugin_names as plugins_of\n")
    assert uses(renamed)["plugin_names"] == 1
