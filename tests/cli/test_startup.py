"""``recworld --help`` starts without the heavy libraries: they load only when a command runs.

Every ``recworld`` process pays for what ``import recworld.cli`` imports, and the suite starts
the CLI in many subprocesses, so a package face that re-exports its loaders eagerly (pandas
through ``recworld.data``, scipy through ``recworld.mining``, numpy through a type alias) costs
each of them most of a second.
One fresh interpreter per run imports the CLI, then asks every command and group for its help
in process, walking the ``Commands:`` lists a person reads, and reports what it loaded. The
check reads plain module names; it calls nothing of recworld's but the entry point.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from helpers.cli import cli_env

SRC = Path(__file__).resolve().parents[2] / "src"

# Libraries a command imports when it runs, never to start: arrays (numpy alone is a tenth of
# a second), data frames, sparse matrices and learners, model runtimes, charts, LUNAR's memory,
# vector store and PII stacks, the Ray engine.
HEAVY = frozenset(
    {
        "numpy",
        "pandas",
        "pyarrow",
        "scipy",
        "sklearn",
        "torch",
        "transformers",
        "sentence_transformers",
        "tokenizers",
        "llama_cpp",
        "matplotlib",
        "PIL",
        "jinja2",
        "qdrant_client",
        "mem0",
        "presidio_analyzer",
        "presidio_anonymizer",
        "spacy",
        "ray",
        "openai",
        "httpx",
    }
)

# The groups a person sees in ``recworld --help`` (the walk must reach each, or it proves nothing).
GROUPS = {("data",), ("lunar",)}

_WALK = r"""
import contextlib, io, json, sys

def tops():
    return sorted({name.partition(".")[0] for name in sys.modules})

import recworld.cli
after_import = tops()

def commands(text):
    names, inside = [], False
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            inside = line.strip() == "Commands:"
        elif inside and line.startswith("  ") and not line.startswith("   "):
            names.append(line.split()[0])
    return names

helped, groups, failed, todo = [], [], [], [()]
while todo:
    path = todo.pop()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = recworld.cli.main([*path, "--help"])
    helped.append(list(path))
    if code != 0:
        failed.append([list(path), code])
    subs = commands(out.getvalue())
    if subs:
        groups.append(list(path))
    todo += [(*path, name) for name in subs]
print(json.dumps({"after_import": after_import, "after_help": tops(), "helped": helped,
                  "groups": groups, "failed": failed}))
"""


def heavy_in(modules: list[str]) -> list[str]:
    """The heavy libraries among top-level module names."""
    return sorted(HEAVY & set(modules))


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[object]]:
    """One interpreter: ``import recworld.cli``, then ``--help`` of every command, in process."""
    home = tmp_path_factory.mktemp("startup")
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    env = cli_env(home, PYTHONPATH=path)
    done = subprocess.run(
        [sys.executable, "-c", _WALK],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, list[object]] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_importing_the_cli_loads_no_heavy_library(walked: dict[str, list[str]]) -> None:
    assert "typer" in walked["after_import"]  # what was read is the interpreter that built the app
    assert heavy_in(walked["after_import"]) == []


def test_every_help_loads_no_heavy_library(walked: dict[str, list[object]]) -> None:
    helped = {tuple(p) for p in walked["helped"] if isinstance(p, list)}
    groups = {tuple(p) for p in walked["groups"] if isinstance(p, list)}
    assert walked["failed"] == []
    assert groups >= GROUPS, sorted(groups)
    assert ("lunar", "eval") in helped and ("build",) in helped and ("export",) in helped
    assert len(helped) > 20, sorted(helped)
    assert heavy_in([str(m) for m in walked["after_help"]]) == []


def test_the_check_names_a_heavy_library_by_its_top_level_module() -> None:
    assert heavy_in(["json", "pandas", "scipy", "recworld", "typer"]) == ["pandas", "scipy"]
    assert heavy_in(["pydantic", "typer", "asyncio"]) == []


LAZY_FACES = (
    "recworld.data",
    "recworld.mining",
    "recworld.runner",
    "recworld.scoring",
    "recworld.multimodal",
    "recworld.evaluation",
    "recworld.report",
    "recworld.lunar",
)


@pytest.mark.parametrize("package", LAZY_FACES)
def test_each_name_of_a_lazy_face_resolves_and_is_listed(package: str) -> None:
    face = importlib.import_module(package)
    for name in face.__all__:
        value = getattr(face, name)
        assert getattr(face, name) is value, name  # loaded once, then a plain attribute
        assert name in dir(face), name
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        face.not_a_name  # noqa: B018


def test_loading_the_fetch_module_leaves_the_fetch_function_on_the_package() -> None:
    import recworld.data

    module = importlib.import_module("recworld.data.fetch")
    # what the import system does once a submodule has loaded: bind it on its package
    recworld.data.fetch = module  # type: ignore[assignment]
    assert recworld.data.fetch is module.fetch
    assert callable(recworld.data.fetch) and not isinstance(recworld.data.fetch, types.ModuleType)
