"""LUNAR's sub-packages import one way: no two of them import each other, however indirectly.

The module-cycle check in ``tests/test_layers.py`` covers single modules; this one covers the
ideas: ``llm`` < ``contexts`` < ``config`` < ``store`` < ... as ``docs/architecture.md`` draws them.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

LUNAR = Path(__file__).resolve().parents[2] / "src" / "recworld" / "lunar"


def unit(path: Path) -> str:
    """The sub-package (or root module) of a LUNAR file: ``contexts``, ``config``, ``__init__``..."""
    rel = path.relative_to(LUNAR)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imported_units(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        for name in names:
            parts = name.split(".")
            if parts[:2] != ["recworld", "lunar"] or len(parts) < 3:
                continue
            if (LUNAR / parts[2]).is_dir() or (LUNAR / f"{parts[2]}.py").is_file():
                out.add(parts[2])
    return out


def unit_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in LUNAR.rglob("*.py"):
        me = unit(path)
        graph.setdefault(me, set()).update(u for u in imported_units(path) if u != me)
    return graph


def test_the_sub_packages_form_a_layering() -> None:
    graph = unit_graph()
    graph.pop("__init__", None)  # the package face re-exports from above; nothing imports it inside
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        raise AssertionError(f"LUNAR sub-packages import each other: {exc.args[1]}") from None
    assert {"llm", "contexts", "config", "store", "answering", "report", "cli"} <= set(order)
    assert order.index("llm") < order.index("contexts") < order.index("config") < order.index("store")
    assert order.index("store") < order.index("answering") < order.index("report") < order.index("cli")


def test_the_walker_sees_a_sub_package_import() -> None:
    assert "contexts" in imported_units(LUNAR / "config.py")
    assert unit(LUNAR / "contexts" / "rag.py") == "contexts" and unit(LUNAR / "api.py") == "api"
