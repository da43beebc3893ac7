"""--engine ray: a local Ray session answers through model replicas, into the same journal, cache and files.

One Ray session (2 CPUs) is shared by every test of this module: starting Ray takes seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _runner_fakes import write_suite

from recworld.chat import AnswerMode, Request
from recworld.cli import main
from recworld.errors import ConfigError
from recworld.evaluation import JOURNAL_NAME, EvalConfig, evaluate_config
from recworld.models.scripted import ScriptedModel
from recworld.runner import RunnerConfig

ray = pytest.importorskip("ray")

COUNTS = {"kg_movie_genre": 6, "mem_item_item": 6}
VOLATILE = ("latency_s", "cache_hit", "attempts")
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    context = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        yield str(context.address_info["gcs_address"])
    finally:
        ray.shutdown()


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", COUNTS)


def run(suite: Path, out: str, **kwargs: Any) -> Path:
    return evaluate_config(
        EvalConfig(
            suite_dir=suite,
            out_dir=suite / out,
            runner=RunnerConfig(progress=False),
            **{"model": "scripted", **kwargs},
        )
    ).run_dir


def samples(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "samples.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in VOLATILE} for line in lines]


def metrics(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "metrics.json").read_text()))


def counts(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "run.json").read_text())["counts"])


def test_ray_run_matches_local_run_and_resends_nothing_cached(suite: Path, ray_address: str) -> None:
    local = run(suite, "local")
    on_ray = run(suite, "ray", engine="ray", replicas=2)
    assert samples(on_ray) == samples(local)
    assert metrics(on_ray) == metrics(local)
    correct = [s["correct"] for s in samples(on_ray)]
    assert len(correct) == sum(COUNTS.values()) and any(correct) and not all(correct)
    assert counts(on_ray)["runner"]["sent"] == sum(COUNTS.values())
    # Without the journal only the cache remembers: every answer comes from it, nothing reaches Ray.
    (on_ray / JOURNAL_NAME).unlink()
    again = run(suite, "ray", engine="ray", replicas=2)
    assert counts(again)["runner"] == {
        **counts(again)["runner"],
        "sent": 0,
        "cache_hits": sum(COUNTS.values()),
    }
    assert samples(again) == samples(local)


def test_a_mode_the_backend_lacks_is_a_config_error(suite: Path, ray_address: str) -> None:
    with pytest.raises(ConfigError, match="does not support 'rank'"):
        run(suite, "rank", model="random", mode=AnswerMode.RANK, engine="ray")


def test_cli_engine_ray_runs_and_checks_its_options(
    suite: Path, ray_address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = suite / "cli"
    base = ["eval", str(suite), "--model", "scripted", "--out", str(out), "--no-progress"]
    assert main([*base, "--engine", "ray", "--replicas", "2"]) == 0
    assert counts(out)["runner"]["sent"] == sum(COUNTS.values())
    assert json.loads((out / "run.json").read_text())["config"]["engine"] == "ray"
    capsys.readouterr()
    assert main([*base, "--engine", "ray", "--replicas", "0"]) == 2
    assert "--replicas" in capsys.readouterr().err
    assert main([*base, "--engine", "spark"]) == 2
    assert "--engine" in capsys.readouterr().err


def test_missing_ray_extra_is_reported_before_the_run_folder_exists(
    suite: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails, as without the extra
    assert (
        main(["eval", str(suite), "--model", "scripted", "--engine", "ray", "--out", str(suite / "x")]) == 2
    )
    assert "pip install 'recworld[ray]'" in capsys.readouterr().err
    assert not (suite / "x").exists()


_DRIVER = """
import sys, time
from pathlib import Path
import ray
from recworld.evaluation import EvalConfig, evaluate_config, ray_engine
from recworld.models.scripted import ScriptedModel
from recworld.runner import RunnerConfig

suite, out, address, log = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]

def slow_model():
    def answer(request):
        with open(log, "a") as f:
            f.write(request.question.id + "\\n")
        time.sleep(0.25)
        right = request.question.id.endswith(("0", "2"))
        return request.choices[request.question.answer_index] if right else "?"
    return ScriptedModel(answer)

ray_engine.replica_factory = slow_model
ray.init(address=address, log_to_driver=False)
evaluate_config(EvalConfig(suite_dir=suite, model="scripted", out_dir=out, engine="ray", replicas=2,
                    runner=RunnerConfig(progress=False)))
"""


def oracle(request: Request) -> str:
    assert request.question is not None
    right = request.question.id.endswith(("0", "2"))
    return request.choices[request.question.answer_index] if right else "?"


def journal_ids(run_dir: Path) -> list[str]:
    path = run_dir / JOURNAL_NAME
    text = path.read_text() if path.exists() else ""
    return [json.loads(line)["question_id"] for line in text.splitlines() if line.endswith("}")]


def test_killed_driver_resumes_without_answering_twice(
    suite: Path, ray_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(_DRIVER))
    out = suite / "ray"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    args = [sys.executable, str(script), str(suite), str(out), ray_address]
    first = subprocess.Popen([*args, str(tmp_path / "calls1.log")], env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while len(journal_ids(out)) < 3 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait()
    answered_before = set(journal_ids(out))
    assert 3 <= len(answered_before) < sum(COUNTS.values()), "kill the driver mid-run"

    subprocess.run(
        [*args, str(tmp_path / "calls2.log")], env=env, check=True, timeout=120, stderr=subprocess.DEVNULL
    )
    resent = set((tmp_path / "calls2.log").read_text().split())
    assert not resent & answered_before  # nothing journaled before the kill reached a model again
    assert max(Counter(journal_ids(out)).values()) == 1  # and nothing was journaled twice
    assert counts(out)["resumed"] == len(answered_before)

    monkeypatch.setattr("recworld.models.registry.load_model", lambda *a, **k: ScriptedModel(oracle))
    clean = run(suite, "clean")
    assert samples(out) == samples(clean)
    assert metrics(out) == metrics(clean)


@pytest.mark.model
def test_llamacpp_on_ray_matches_local(tmp_path: Path, ray_address: str) -> None:
    pytest.importorskip("llama_cpp")
    suite = write_suite(tmp_path / "suite", {"kg_movie_genre": 3, "mem_item_item": 3})
    spec = "llamacpp:smollm2-135m"
    local = run(suite, "local", model=spec)
    on_ray = run(suite, "ray", model=spec, engine="ray", replicas=2)
    assert [s["response"] for s in samples(on_ray)] == [s["response"] for s in samples(local)]
    assert samples(on_ray) == samples(local)
    assert metrics(on_ray) == metrics(local)
