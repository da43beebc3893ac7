"""The package layers point one way: each package imports only the packages declared below it.

Two checks, because each misses what the other sees:

* statically, every ``import`` in every module (function-level and
  ``TYPE_CHECKING``-only imports included: a lazy import still couples the
  layers and hides a cycle) must be an edge of :data:`ALLOWED`;
* dynamically, each package imported alone in a fresh interpreter must load,
  and must not pull in any package outside what :data:`ALLOWED` reaches from it
  (``__init__`` side effects, import-time registration).

:data:`ALLOWED` is the target graph, written once. Changing the architecture
means changing this table (and docs/architecture.md), consciously.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "recworld"

# The package root (``recworld/__init__.py``: version and error types) and the leaf modules every layer uses.
FOUNDATION = frozenset(
    {
        "recworld",
        "errors",
        "lazy",
        "capped",
        "csvsafe",
        "svg",
        "mdsafe",
        "io",
        "records",
        "seeding",
        "stats",
        "paths",
        "chat",
        "domain",
        "console",
    }
)

# Lowest first. A package may import only packages earlier in this order, and only those ALLOWED names.
ORDER = (
    "errors",
    "lazy",
    "recworld",
    "seeding",
    "stats",
    "paths",
    "capped",
    "chat",
    "domain",
    "csvsafe",
    "svg",
    "mdsafe",
    "io",
    "records",
    "console",
    "reportkit",
    "data",
    "mining",
    "models",
    "lrworld",
    "runner",
    "testing",
    "scoring",
    "baselines",
    "multimodal",
    "evaluation",
    "export",
    "report",
    "lunar",
    "cli",
)

ALLOWED: dict[str, frozenset[str]] = {
    # foundation: leaf modules; io names the package version for its output markers.
    # package faces whose names load their module on first use (SPEC 1): importlib only.
    "lazy": frozenset(),
    "recworld": frozenset({"errors", "lazy"}),
    "errors": frozenset(),
    "seeding": frozenset(),
    # intervals and tests (Clopper-Pearson, Wilson, McNemar, a bootstrap that cannot collapse).
    "stats": frozenset(),
    "paths": frozenset(),
    # chat types; a local image reference is hashed for the cache key through capped.
    "chat": frozenset({"errors", "capped"}),
    # what users interact with (movie, product, music): shared by data and the measure catalogue.
    "domain": frozenset(),
    # size-capped reads of regular files only; CSV cells a spreadsheet reads as data.
    "capped": frozenset({"errors"}),
    "csvsafe": frozenset(),
    # the figure conventions both reports draw with (matplotlib only inside the functions); ids by paths.slug.
    "svg": frozenset({"paths"}),
    # Markdown text that renders as typed (no HTML, links or table breaks from data).
    "mdsafe": frozenset(),
    "io": frozenset({"recworld", "errors", "capped", "paths"}),
    # the record bases: strict pydantic models written and read through io.
    "records": frozenset({"recworld", "errors", "io"}),
    # terminal conventions (errors, help, Ctrl-C, did-you-mean, logging); typer/rich only lazily.
    "console": frozenset({"recworld", "errors", "io", "records", "paths"}),
    # the one report kit: cells, tables, figures (grouped bars), sections, Markdown and HTML, the viewer.
    "reportkit": frozenset({"recworld", "mdsafe", "svg"}),
    # data and mining know nothing of each other: mining works on plain frames and matrices.
    "data": FOUNDATION,
    "mining": FOUNDATION,
    # Model backends speak chat types only; they never see a question type or a suite.
    "models": FOUNDATION,
    "lrworld": FOUNDATION | {"data", "mining"},
    # The engine: requests in, completions out, cached and journalled; no LRWorld knowledge.
    "runner": FOUNDATION | {"models"},
    # The backend contract tests, the fake server and a tiny fake suite, shipped for plugin authors
    # and the benchmarks (pytest only inside the tests).
    "testing": FOUNDATION | {"models", "runner", "lrworld"},
    "scoring": FOUNDATION | {"lrworld"},
    "baselines": FOUNDATION | {"data", "mining", "models", "lrworld"},
    "multimodal": FOUNDATION | {"data", "models", "runner", "lrworld"},
    # LRWorld evaluation orchestration sits above the engine, the scorer and the questions.
    "evaluation": FOUNDATION | {"data", "models", "runner", "scoring", "lrworld"},
    # Suite exports for other harnesses: questions and prompts only, never a model or the engine.
    "export": FOUNDATION | {"lrworld", "scoring"},
    "report": FOUNDATION | {"reportkit", "data", "mining", "lrworld", "scoring", "evaluation"},
    "lunar": FOUNDATION | {"reportkit", "data", "models", "runner", "scoring"},
    "cli": FOUNDATION | {"data", "lrworld", "evaluation", "export", "multimodal", "report", "lunar"},
}

# Edges made by a module *name* in data, not by an import statement, loaded on demand like an
# entry point. They are allowed to point up because the lower package never imports the upper one.
PLUGINS: dict[tuple[str, str], str] = {
    ("models", "baselines"): "recworld.models.registry.BACKENDS names the classic baselines' module; "
    "load_model imports it only when a baseline spec is asked for",
    ("recworld", "evaluation"): "recworld.LAZY names recworld.evaluation.api for recworld.evaluate; "
    "the root's __getattr__ imports it on first use, so `import recworld` stays light",
}


def unit_of(module: str) -> str:
    """The layer a dotted module name belongs to: its top-level package or foundation module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_in(source: str, package: str) -> list[tuple[int, str]]:
    """Every recworld module ``source`` imports, anywhere in it, with its line.

    ``package`` is the package relative imports resolve against.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target == "recworld":  # ``from recworld import mining`` imports the subpackage
                found += [(node.lineno, f"recworld.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, target))
    return [(line, m) for line, m in found if m == "recworld" or m.startswith("recworld.")]


def imported_modules(path: Path) -> list[tuple[int, str]]:
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return imports_in(path.read_text(encoding="utf-8"), package)


def resolve(module: str) -> str:
    """``recworld.__version__`` and the like are names in the root package, not modules."""
    unit = unit_of(module)
    return unit if unit in ALLOWED else "recworld"


@cache
def reachable(unit: str) -> frozenset[str]:
    seen = {unit}
    for dep in ALLOWED[unit]:
        seen |= reachable(dep)
    return frozenset(seen)


def test_the_table_is_a_layering() -> None:
    """Every allowed edge points down the order, so the graph has no cycle by construction."""
    assert set(ALLOWED) == set(ORDER)
    for unit, deps in ALLOWED.items():
        below = set(ORDER[: ORDER.index(unit)])
        assert deps <= below, f"{unit} may not import {sorted(deps - below)}: not below it"
    for (low, high), _reason in PLUGINS.items():
        assert ORDER.index(low) < ORDER.index(high)


def test_every_package_is_in_the_table() -> None:
    units = {p.stem if p.is_file() else p.name for p in SRC.iterdir() if p.suffix == ".py" or p.is_dir()}
    units = {"recworld" if u == "__init__" else u for u in units if u != "__pycache__"}
    assert units == set(ALLOWED)


def test_static_imports_follow_the_layers() -> None:
    violations = []
    for path in sorted(SRC.rglob("*.py")):
        unit = unit_of(module_name(path))
        for line, target in imported_modules(path):
            dep = resolve(target)
            if dep != unit and dep not in ALLOWED[unit]:
                violations.append(f"{path.relative_to(SRC.parent)}:{line}: {unit} -> {dep} ({target})")
    assert not violations, "imports against the layers:\n" + "\n".join(violations)


def test_module_name_plugins_are_declared() -> None:
    from recworld.models.registry import BACKENDS, EMBEDDERS

    for name, backend in [*BACKENDS.items(), *EMBEDDERS.items()]:
        dep = unit_of(backend.module.partition(":")[0])
        assert dep == "models" or ("models", dep) in PLUGINS, f"backend {name!r} loads {backend.module}"


def test_lazy_root_names_are_declared() -> None:
    import recworld

    for name, module in recworld.LAZY.items():
        dep = unit_of(module)
        assert ("recworld", dep) in PLUGINS, f"recworld.{name} loads {module}"
        assert name in recworld.__all__ and callable(getattr(recworld, name))


def test_the_root_stub_types_exactly_the_runtime_names() -> None:
    """``recworld/__init__.pyi`` (what mypy reads) declares ``__all__``; upward, it imports only LAZY names.

    Its ``recworld.evaluation`` import is the declared ``PLUGINS`` edge, seen by the type checker
    only: at run time the root's ``__getattr__`` loads the module on first use.
    """
    import recworld

    tree = ast.parse((SRC / "__init__.pyi").read_text(encoding="utf-8"))
    declared = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"]
    )
    assert declared == recworld.__all__
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("recworld."):
            for alias in node.names:
                dep = resolve(node.module or "")
                assert dep in ALLOWED["recworld"] or recworld.LAZY.get(alias.name) == node.module, alias.name
                assert alias.asname == alias.name, f"{alias.name}: re-export it as itself"


def test_the_import_walker_sees_lazy_and_type_only_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import numpy\n"
        "from . import dataset\n"
        "if TYPE_CHECKING:\n"
        "    from recworld.lrworld.schema import Question\n"
        "def f():\n"
        "    import recworld.report.writer\n"
        "    from ..runner import engine\n"
        "    from recworld import mining\n"
    )
    got = [m for _line, m in imports_in(source, "recworld.data")]
    assert got == [
        "recworld.data",
        "recworld.lrworld.schema",
        "recworld.report.writer",
        "recworld.runner",
        "recworld.mining",
    ]


@cache
def module_paths() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def module_imports(path: Path) -> list[tuple[int, str, str]]:
    """``(line, module, name)`` for every recworld import in ``path``; ``name`` is "" for ``import X``.

    ``from P import m`` where ``P.m`` is a module names that module (not ``P``'s ``__init__``).
    """
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    modules = module_paths()
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1]) if node.level else ""
            target = ".".join(x for x in (base, node.module or "") if x)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((node.lineno, sub, "") if sub in modules else (node.lineno, target, alias.name))
    return [(line, m, n) for line, m, n in found if m == "recworld" or m.startswith("recworld.")]


def _module_of(target: str) -> str | None:
    modules = module_paths()
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one member."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_cycles() -> None:
    """No two modules import each other, however indirectly, lazy and type-only imports included."""
    graph: dict[str, set[str]] = {m: set() for m in module_paths()}
    for module, path in module_paths().items():
        for _line, target, _name in module_imports(path):
            dep = _module_of(target)
            if dep is not None and dep != module:
                graph[module].add(dep)
    cycles = strongly_connected(graph)
    assert not cycles, "module cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_private_name_is_imported_from_another_module() -> None:
    """A ``_name`` is private to its module: two modules sharing one are one unit, or need a public name."""
    found = []
    for module, path in module_paths().items():
        for line, target, name in module_imports(path):
            if name.startswith("_") and not name.startswith("__") and target != module:
                found.append(f"{path.relative_to(SRC.parent)}:{line}: {name} from {target}")
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def test_the_cycle_check_sees_a_lazy_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]


_LOADED = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
names = [m.split(".") for m in sys.modules]
print(json.dumps(sorted({p[1] if len(p) > 1 else p[0] for p in names if p[0] == "recworld"})))
"""


def _module(unit: str) -> str:
    return "recworld" if unit == "recworld" else f"recworld.{unit}"


def _import_alone(unit: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", _LOADED, _module(unit)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


class ImportsAlone:
    """Each unit imported in its own fresh interpreter at most once, on a pool of one per CPU."""

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self._pool = pool
        self._started: dict[str, Future[subprocess.CompletedProcess[str]]] = {}

    def start(self, unit: str) -> Future[subprocess.CompletedProcess[str]]:
        if unit not in self._started:
            self._started[unit] = self._pool.submit(_import_alone, unit)
        return self._started[unit]


@pytest.fixture(scope="module")
def imported_alone(request: pytest.FixtureRequest) -> Iterator[ImportsAlone]:
    """Each unit a test of this run asks for, imported once in its own interpreter.

    Outside xdist, ``session.items`` is exactly what this process runs, so every selected unit's
    interpreter starts at once (about a second of imports each) instead of one per test. An xdist
    worker's ``session.items`` is the whole collection while it runs only the share the controller
    sends it, so there each test starts its own unit alone (the workers are the parallelism): a run
    spawns one interpreter per test however many workers it has. Each test reads its own unit's
    result, so what is asserted is unchanged.
    """
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        spawner = ImportsAlone(pool)
        if not hasattr(request.config, "workerinput"):  # not an xdist worker
            for item in request.session.items:
                if getattr(item, "originalname", None) == "test_each_package_imports_alone":
                    spawner.start(item.callspec.params["unit"])
        yield spawner


@pytest.mark.parametrize("unit", ORDER)
def test_each_package_imports_alone(unit: str, imported_alone: ImportsAlone) -> None:
    module = _module(unit)
    done = imported_alone.start(unit).result()
    assert done.returncode == 0, f"import {module} failed:\n{done.stderr[-3000:]}"
    loaded = {resolve(f"recworld.{u}") if u != "recworld" else u for u in json.loads(done.stdout)}
    # Python runs the root package's __init__ before any submodule.
    allowed = reachable(unit) | reachable("recworld")
    assert loaded <= allowed, f"import {module} loads {sorted(loaded - allowed)}"


def test_architecture_doc_lists_each_public_api() -> None:
    """docs/architecture.md names exactly each package's ``__all__`` (foundation: names that exist)."""
    doc = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(recworld\.\w+)` \| [^|]* \| (.*) \|$", doc, flags=re.M)
    assert {unit_of(name) for name, _api in rows} == set(ORDER) - {"recworld", "cli"}
    for name, api in rows:
        listed = set(re.findall(r"`(\w+)`", api.split("(see")[0]))
        module = importlib.import_module(name)
        public = getattr(module, "__all__", None)
        if public is None:
            assert all(hasattr(module, n) for n in listed), (
                name,
                sorted(n for n in listed if not hasattr(module, n)),
            )
        else:
            assert listed == set(public), (name, sorted(listed ^ set(public)))
