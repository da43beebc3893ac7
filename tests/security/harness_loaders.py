"""Load an export the way the harnesses do, to show that loading it runs nothing.

* lm-eval: PyYAML's *unsafe* loader, in this process, exactly as lm-eval's
  ``utils.load_yaml_config`` loaded task files up to 0.4.x (``yaml.CLoader``
  when libyaml is present, else ``yaml.FullLoader``, plus its ``!function``
  constructor); and, when the test harness venv (``tests/.data/harness-venv``,
  :mod:`tests.export.harness`) is built, the installed lm-eval's own
  ``load_yaml`` and ``TaskManager`` over the export.
* inspect: the installed inspect_ai's ``load_tasks`` (what ``inspect eval
  FILE`` runs) in the harness venv; without it, the task file imported as
  ``inspect eval`` imports it (``runpy.run_path``) against a stand-in
  ``inspect_ai`` package that only records what the file asks for.

Every loader runs with its working directory in a scratch folder, where a
payload's ``touch`` would leave its canary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

HARNESS_VENV = Path(__file__).resolve().parents[1] / ".data" / "harness-venv"
STAMP = (
    HARNESS_VENV / ".recworld-harness"
)  # written by tests/export/harness.py once lm-eval and inspect-ai are installed


def harness_python() -> Path | None:
    """The harness venv's python when it is built (these tests never build it: that needs the network)."""
    python = HARNESS_VENV / "bin" / "python"
    return python if python.is_file() and STAMP.is_file() else None


def load_yaml_unsafely(path: Path) -> dict[str, Any]:
    """One task file through PyYAML's unsafe loader with lm-eval's ``!function`` tag, in this process."""
    base = yaml.CLoader if getattr(yaml, "__with_libyaml__", False) else yaml.FullLoader

    class Loader(base):  # type: ignore[misc,valid-type]
        pass

    Loader.add_constructor("!function", lambda loader, node: ("!function", loader.construct_scalar(node)))
    with path.open("rb") as handle:
        data = yaml.load(handle, Loader=Loader)
    assert isinstance(data, dict)
    return data


_LM_EVAL = """
import glob, json, sys
from lm_eval.tasks import TaskManager
from lm_eval.tasks._yaml_loader import load_yaml
export = sys.argv[1]
for path in sorted(glob.glob(export + "/*.yaml")):
    load_yaml(path, resolve_func=True)
manager = TaskManager(include_path=export, include_defaults=False)
print(json.dumps(sorted(manager.all_tasks)))
"""

_INSPECT = """
import json, sys
from inspect_ai._eval.loader import load_tasks
tasks = load_tasks([sys.argv[1]])
print(json.dumps(sorted(t.name for t in tasks)))
"""

_STUB_INIT = """
SEEN = []
class Task:
    def __init__(self, **kwargs):
        SEEN.append(("Task", sorted(kwargs)))
def task(fn):
    SEEN.append(("task", fn.__name__))
    return fn
"""
_STUB_MODULES = {
    "dataset": "def Sample(**kw):\n    return kw\ndef json_dataset(path, **kw):\n    return [path, kw]\n",
    "model": "class GenerateConfig:\n    def __init__(self, **kw):\n        self.kw = kw\n",
    "scorer": (
        "CORRECT, INCORRECT = 'C', 'I'\nclass Score:\n    def __init__(self, **kw):\n        self.kw = kw\n"
        "def accuracy():\n    return 'accuracy'\ndef stderr():\n    return 'stderr'\n"
        "def scorer(**kw):\n    return lambda fn: fn\n"
        "def choice():\n    return 'choice'\ndef pattern(p, **kw):\n    return ('pattern', p)\n"
    ),
    "solver": "def generate():\n    return 'generate'\ndef multiple_choice():\n    return 'mc'\n",
}
_STUB_RUN = """
import json, runpy, sys
namespace = runpy.run_path(sys.argv[1])
import inspect_ai
names = [name for kind, name in inspect_ai.SEEN if kind == "task"]
for name in names:
    namespace[name]()  # build each task, as inspect does before it runs one
print(json.dumps(sorted(names)))
"""


def _offline_env(scratch: Path, pythonpath: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HF_HOME=str(scratch / "hf"), HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", NO_COLOR="1")
    env.update(INSPECT_LOG_DIR=str(scratch / "inspect-logs"), INSPECT_DISPLAY="none")
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    return env


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> list[str]:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def lm_eval_task_names(export: Path, cwd: Path) -> list[str] | None:
    """The task and group names the installed lm-eval finds in ``export``; None without the harness venv."""
    python = harness_python()
    if python is None:
        return None
    return _run([str(python), "-c", _LM_EVAL, str(export)], cwd, _offline_env(cwd))


def inspect_task_names(task_file: Path, cwd: Path) -> tuple[str, list[str]]:
    """(which loader, the task names it loaded from ``task_file``)."""
    python = harness_python()
    if python is not None:  # inspect resolves a task file relative to the working directory
        names = _run([str(python), "-c", _INSPECT, task_file.name], task_file.parent, _offline_env(cwd))
        return "inspect_ai", names
    stub = cwd / "stub-inspect" / "inspect_ai"
    stub.mkdir(parents=True, exist_ok=True)
    (stub / "__init__.py").write_text(_STUB_INIT, encoding="utf-8")
    for name, text in _STUB_MODULES.items():
        (stub / f"{name}.py").write_text(text, encoding="utf-8")
    env = _offline_env(cwd, pythonpath=str(stub.parent))
    return "stub", _run([sys.executable, "-c", _STUB_RUN, str(task_file)], cwd, env)
