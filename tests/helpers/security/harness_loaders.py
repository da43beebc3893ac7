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

Every load runs with its working directory in a scratch folder, where a
payload's ``touch`` would leave its canary. :func:`load_all` runs a batch of loads in
one harness interpreter (importing a harness is most of a load's cost), each load in
a fresh fork of it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
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


# One harness interpreter loads many exports: it imports the harnesses a batch needs once (most
# of a load's cost), then forks a child per load, so every load starts from that freshly imported
# state (no module, task or dataset cache of an earlier load) in its own working directory.
_BATCH = """
import json, os, sys, traceback
jobs = json.load(open(sys.argv[1]))
kinds = {job["kind"] for job in jobs}
if "lm-eval" in kinds:
    import glob
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks._yaml_loader import load_yaml
if "inspect" in kinds:
    from inspect_ai._eval.loader import load_tasks
if "datasets" in kinds:
    import datasets

def load(kind, target):
    if kind == "lm-eval":
        for path in sorted(glob.glob(target + "/*.yaml")):
            load_yaml(path, resolve_func=True)
        return sorted(TaskManager(include_path=target, include_defaults=False).all_tasks)
    if kind == "inspect":
        return sorted(t.name for t in load_tasks([target]))
    names = datasets.get_dataset_config_names(target)
    return sorted((n, datasets.load_dataset(target, n)["test"].num_rows) for n in names)

for job in jobs:
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.chdir(job["cwd"])
            found = load(job["kind"], job["target"])
            with open(job["result"], "w") as out:
                json.dump(found, out)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        sys.exit(f"{job['kind']} load of {job['target']} failed (wait status {status})")
"""


@dataclass(frozen=True)
class Load:
    """One load: ``kind`` is ``lm-eval`` (an export folder), ``inspect`` (a task file) or ``datasets``."""

    kind: str
    target: Path
    cwd: Path


def load_all(loads: Sequence[Load], scratch: Path) -> list[list[Any]]:
    """What each load found, in order: one harness interpreter for them all, a fresh fork per load.

    ``scratch`` holds the job list, the results and the harnesses' caches and logs (:func:`offline_env`).
    """
    scratch.mkdir(parents=True, exist_ok=True)
    jobs = [
        {"kind": load.kind, "target": str(load.target), "cwd": str(load.cwd), "result": f"{scratch}/{n}.json"}
        for n, load in enumerate(loads)
    ]
    for job in jobs:
        Path(job["result"]).unlink(missing_ok=True)
    (scratch / "jobs.json").write_text(json.dumps(jobs))
    command = [str(harness_python()), "-c", _BATCH, str(scratch / "jobs.json")]
    env, cwd = offline_env(scratch), scratch
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return [list(json.loads(Path(job["result"]).read_text())) for job in jobs]
