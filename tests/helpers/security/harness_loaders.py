"""Load an export the way the harnesses do, to show that loading it runs nothing.

Every load runs the installed harness, in the harness venv
(``tests/.data/harness-venv``, built on first use by :mod:`helpers.export_harness`; a build
that fails fails the test). There is no stand-in: no stub package, no fallback.

* lm-eval: the installed lm-eval's own ``load_yaml`` over every task file and its
  ``TaskManager`` over the export.
* inspect: the installed inspect_ai's ``load_tasks`` (what ``inspect eval FILE`` runs).
* Hugging Face: the installed ``datasets``' ``load_dataset`` of every config.

:func:`load_yaml_unsafely` is an extra, harsher reader on top of those, never instead
of one: PyYAML's unsafe loader with lm-eval's ``!function`` tag, as lm-eval's
``utils.load_yaml_config`` read task files up to 0.4.x, so a YAML payload that an
older lm-eval would have run is caught too.

Every loader runs with its working directory in a scratch folder, where a
payload's ``touch`` would leave its canary.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from helpers.export_harness import ensure_venv, offline_env, venv_python


def harness_python() -> Path:
    """The harness venv's python, built first if it is not there (a failed build raises)."""
    ensure_venv()
    return venv_python()


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

_DATASETS = """
import json, sys
import datasets
export = sys.argv[1]
names = datasets.get_dataset_config_names(export)
rows = {name: datasets.load_dataset(export, name)["test"].num_rows for name in names}
print(json.dumps(sorted(rows.items())))
"""


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> list[Any]:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def lm_eval_task_names(export: Path, cwd: Path) -> list[str]:
    """The task and group names the installed lm-eval finds in ``export``."""
    return _run([str(harness_python()), "-c", _LM_EVAL, str(export)], cwd, offline_env(cwd))


def inspect_task_names(task_file: Path, cwd: Path) -> list[str]:
    """The task names the installed inspect_ai loads from ``task_file``."""
    # inspect resolves a task file relative to the working directory
    command = [str(harness_python()), "-c", _INSPECT, task_file.name]
    return _run(command, task_file.parent, offline_env(cwd))


def datasets_config_rows(export: Path, cwd: Path) -> dict[str, int]:
    """Each config the installed ``datasets`` finds in ``export``, with its test split's row count."""
    found = _run([str(harness_python()), "-c", _DATASETS, str(export)], cwd, offline_env(cwd))
    return {str(name): int(rows) for name, rows in found}
