"""--engine ray: a local Ray session answers through model replicas, into the same journal, cache and files.

One Ray session (2 CPUs) is shared by every test of this module: starting Ray takes seconds.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import recworld
from helpers.cli import run_recworld
from helpers.runner_fakes import write_suite
from recworld.chat import AnswerMode, Request
from recworld.errors import ConfigError, RunError
from recworld.evaluation import (
    JOURNAL_NAME,
    EvalConfig,
    build_request,
    build_sample,
    evaluate_config,
    load_questions,
)
from recworld.evaluation.ray_engine import answer_on_ray
from recworld.lrworld import Question, RenderedPrompt, render_prompt
from recworld.models import ModelConfig
from recworld.models.scripted import ScriptedModel
from recworld.runner import Completion, ResponseCache, Runner, RunnerConfig
from recworld.scoring import score_samples
from recworld.testing.fake_server import FakeOpenAIServer

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow  # one Ray session for the module: starting Ray alone takes seconds

COUNTS = {"kg_movie_genre": 6, "mem_item_item": 6}
VOLATILE = ("latency_s", "cache_hit", "attempts")
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    context = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
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
            **{"model": "scripted", "runner": RunnerConfig(progress=False), **kwargs},
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


def test_cli_engine_ray_runs_and_checks_its_options(suite: Path, ray_address: str) -> None:
    out = suite / "cli"
    base = ["eval", str(suite), "--model", "scripted", "--out", str(out), "--no-progress"]
    ran = run_recworld(*base, "--engine", "ray", "--replicas", "2")
    assert ran.returncode == 0, ran.stderr
    assert counts(out)["runner"]["sent"] == sum(COUNTS.values())
    assert json.loads((out / "run.json").read_text())["config"]["engine"] == "ray"
    ran = run_recworld(*base, "--engine", "ray", "--replicas", "0")
    assert ran.returncode == 2 and "--replicas" in ran.stderr
    ran = run_recworld(*base, "--engine", "spark")
    assert ran.returncode == 2 and "--engine" in ran.stderr


def test_missing_ray_extra_is_reported_before_the_run_folder_exists(
    suite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails, as without the extra
    argv = ["eval", str(suite), "--model", "scripted", "--engine", "ray", "--out", str(suite / "x")]
    ran = run_recworld(*argv)
    assert ran.returncode == 2 and "pip install 'recworld[ray]'" in ran.stderr
    assert not (suite / "x").exists()


def script(tmp_path: Path) -> Path:
    """A scripted model's reply table: right for targets 1 and 3, "A" for the rest."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"Target movie 1": "B", "Target movie 3": "D", "*": "A"}))
    return path


def journal_ids(run_dir: Path) -> list[str]:
    path = run_dir / JOURNAL_NAME
    text = path.read_text() if path.exists() else ""
    return [json.loads(line)["question_id"] for line in text.splitlines() if line.endswith("}")]


@pytest.mark.slow
def test_killed_driver_resumes_without_answering_twice(suite: Path, ray_address: str, tmp_path: Path) -> None:
    spec = f"scripted:{script(tmp_path)}"
    out = suite / "ray"

    def command(log: Path) -> list[str]:
        return [
            sys.executable, "-m", "recworld.cli", "eval", str(suite), "--model", spec, "--out", str(out),
            "--engine", "ray", "--replicas", "2", "--ray-address", ray_address, "--no-progress",
            "--model-option", "delay_s=0.25", "--model-option", f"calls_log={log}",
        ]  # fmt: skip

    env = {**os.environ, "PYTHONPATH": str(SRC)}
    first = subprocess.Popen(command(tmp_path / "calls1.log"), env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while len(journal_ids(out)) < 3 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait()
    answered_before = set(journal_ids(out))
    assert 3 <= len(answered_before) < sum(COUNTS.values()), "kill the driver mid-run"

    # The rerun needs no process of its own (nothing kills it): in this one, already joined to Ray.
    rerun = run_recworld(*command(tmp_path / "calls2.log")[3:])
    assert rerun.returncode == 0, rerun.stderr
    resent = set((tmp_path / "calls2.log").read_text().split())
    everything = set(_question_ids(suite))
    # Nothing journaled before the kill reached a model again; the rest was asked once more, except
    # answers committed to the cache just before the kill (at most the requests that were in flight).
    assert resent <= everything - answered_before
    assert len(everything - answered_before - resent) <= RunnerConfig().concurrency
    assert set(journal_ids(out)) == everything
    assert max(Counter(journal_ids(out)).values()) == 1  # and nothing was journaled twice
    assert counts(out)["resumed"] == len(answered_before)

    clean = run(suite, "clean", model=spec)
    assert samples(out) == samples(clean)
    assert metrics(out) == metrics(clean)


def copied_model() -> ScriptedModel:
    """A model object, right on the questions whose id ends in 1 or 3, else "?".

    Built in a function so that Ray copies its responder by value (this test module is not
    importable in the replicas).
    """

    def answer(request: Request) -> str:
        question = request.question
        assert question is not None
        number = int(question.id.split("#o", 1)[0].rsplit("/", 1)[1])
        ids = [c.id for c in question.candidates]
        right = request.choices[ids.index(f"c{number}-{(number * 7) % len(ids)}")]
        return right if question.id.endswith(("1", "3")) else "?"

    return ScriptedModel(answer, name="copied")


def test_a_model_object_runs_on_ray_each_replica_asking_its_copy(suite: Path, ray_address: str) -> None:
    """``recworld.evaluate(..., engine="ray", model=obj)``: what docs/models.md promises."""
    here, sent = copied_model(), copied_model()
    local = recworld.evaluate(suite, model=here, out=suite / "obj-local", progress=False)
    on_ray = recworld.evaluate(
        suite, model=sent, out=suite / "obj-ray", engine="ray", replicas=2, progress=False
    )
    assert on_ray.status == "finished" and on_ray.header.config.engine == "ray"
    assert samples(on_ray.run_dir) == samples(local.run_dir)
    assert metrics(on_ray.run_dir) == metrics(local.run_dir)
    assert 0 < sum(s["correct"] for s in samples(on_ray.run_dir)) < sum(COUNTS.values())
    assert on_ray.header.model_identity == {"backend": "scripted", "model": "copied"}
    assert counts(on_ray.run_dir)["runner"]["sent"] == sum(COUNTS.values())
    assert len(here.calls) == sum(COUNTS.values())
    assert sent.calls == []  # the replicas answered with copies; the caller's object was never asked


def test_a_model_object_that_cannot_be_pickled_is_one_error_before_any_folder(suite: Path) -> None:
    model = copied_model()
    model.lock = threading.Lock()  # type: ignore[attr-defined]  # what a live client holds
    says = "engine ray copies the model object to each replica, and ScriptedModel cannot be pickled"
    with pytest.raises(ConfigError, match=says) as caught:
        recworld.evaluate(suite, model=model, out=suite / "never", engine="ray", progress=False)
    assert "_thread.lock" in str(caught.value)
    assert not (suite / "never").exists() and not (suite / "runs").exists()


def _question_ids(suite: Path) -> list[str]:
    return [
        json.loads(line)["id"] for f in sorted((suite / "questions").glob("*.jsonl")) for line in f.open()
    ]


SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def fussy_model() -> ScriptedModel:
    """Right only when every decoding field arrived as sent (and the image with it); else "?".

    Built in a function so that Ray copies the responder by value to its replicas.
    """
    image = "data:image/png;base64,iVBORw0KGgo="
    schema = dict(SCHEMA)

    def fussy(request: Request) -> str:
        assert request.question is not None
        arrived = (
            request.temperature == 0.7
            and request.stop == ("\n\n",)
            and request.json_schema == schema
            and request.messages[-1].images == (image,)
        )
        right = request.question.id.endswith(("1", "3"))
        return request.choices[answer_of(request)] if arrived and right else "?"

    def answer_of(request: Request) -> int:
        # fake_answer's key, inlined: Ray copies this closure by value, and _runner_fakes
        # is not importable in the replicas.
        question = request.question
        assert question is not None
        number = int(question.id.split("#o", 1)[0].rsplit("/", 1)[1])
        ids = [c.id for c in question.candidates]
        return ids.index(f"c{number}-{(number * 7) % len(ids)}")

    return ScriptedModel(fussy)


def decorated(suite: Path) -> tuple[EvalConfig, list[Question], list[RenderedPrompt], list[Request]]:
    """Requests as an eval renders them, with temperature, stop, a JSON schema and an image set."""
    config = EvalConfig(
        suite_dir=suite, model="scripted", temperature=0.7, runner=RunnerConfig(progress=False)
    )
    questions = load_questions(suite)
    prompts = [render_prompt(q) for q in questions]
    requests = []
    for question, prompt in zip(questions, prompts, strict=True):
        request = build_request(question, prompt, config)
        last = replace(request.messages[-1], images=("data:image/png;base64,iVBORw0KGgo=",))
        requests.append(
            replace(request, messages=(*request.messages[:-1], last), stop=("\n\n",), json_schema=SCHEMA)
        )
    return config, questions, prompts, requests


def test_ray_and_local_give_the_same_samples_for_every_request_field(suite: Path, ray_address: str) -> None:
    config, questions, prompts, requests = decorated(suite)
    by_engine: dict[str, list[dict[str, Any]]] = {}
    for engine in ("local", "ray"):
        got: dict[int, Completion] = {}
        cache = suite / f"{engine}.sqlite"
        if engine == "local":
            runner = Runner(fussy_model(), config.runner, ResponseCache(cache))
            asyncio.run(runner.map(requests, on_result=got.__setitem__))
            assert runner.cache is not None
            runner.cache.close()
        else:
            ray_config = config.model_copy(update={"engine": "ray", "replicas": 2})
            stats, stopped = answer_on_ray(ray_config, fussy_model(), suite, requests, got.__setitem__, cache)
            assert stopped is None and stats["sent"] == len(requests)
        records = [
            build_sample(q, p, got[i], spec="scripted", config=config)
            for i, (q, p) in enumerate(zip(questions, prompts, strict=True))
        ]
        by_engine[engine] = [{k: v for k, v in r.to_json().items() if k not in VOLATILE} for r in records]
        by_engine[engine + "-metrics"] = [score_samples(records, seed=0).to_json()]
    assert by_engine["ray"] == by_engine["local"]
    assert by_engine["ray-metrics"] == by_engine["local-metrics"]
    correct = [s["correct"] for s in by_engine["ray"]]
    assert sum(correct) == sum(q.id.endswith(("1", "3")) for q in questions) > 0  # every field arrived


def test_rays_cache_is_the_runners(suite: Path, ray_address: str) -> None:
    """A local run and a Ray run of one model share one cache: whichever runs second sends nothing."""
    spec_run = {"cache_path": suite / "shared.sqlite"}
    local = run(suite, "local", **spec_run)
    assert counts(local)["runner"]["sent"] == sum(COUNTS.values())
    on_ray = run(suite, "ray", engine="ray", replicas=2, **spec_run)
    assert counts(on_ray)["runner"] == {
        **counts(on_ray)["runner"],
        "sent": 0,
        "cache_hits": sum(COUNTS.values()),
    }
    hotter = run(suite, "ray-hot", engine="ray", replicas=2, temperature=0.5, **spec_run)
    assert counts(hotter)["runner"]["sent"] == sum(COUNTS.values())  # a new setting is a new key
    again = run(suite, "local-hot", temperature=0.5, **spec_run)
    assert counts(again)["runner"]["sent"] == 0
    assert samples(on_ray) == samples(local)


def test_vllm_options_are_checked_and_a_cpu_cluster_is_a_config_error(suite: Path, ray_address: str) -> None:
    with pytest.raises(ConfigError, match=r"engine_args.*not a JSON object"):
        run(
            suite,
            "v1",
            model="vllm:org/m",
            engine="ray",
            backend=ModelConfig(options={"engine_args": "{not json"}),
        )
    # A valid engine_args string (the command line's form) is typed, not read raw: no AttributeError.
    with pytest.raises(ConfigError, match=r"each vllm:org/m replica needs 1 GPU, and the Ray cluster has 0"):
        run(
            suite,
            "v2",
            model="vllm:org/m",
            engine="ray",
            backend=ModelConfig(options={"engine_args": '{"dtype": "half"}'}),
        )


def test_a_rejected_key_on_ray_stops_the_run_and_sends_no_second_wave(
    suite: Path, ray_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ray-rejected-0123456789")
    with FakeOpenAIServer("letters", plan=lambda key: ("401",) * 5, barrier=4) as server:
        with pytest.raises(RunError, match="rejected the API key"):
            run(
                suite, "401", model="openai:m", backend=ModelConfig(base_url=server.base_url),
                engine="ray", replicas=2,
                runner=RunnerConfig(progress=False, concurrency=4),
            )  # fmt: skip
        time.sleep(0.3)
        assert sum(server.counts.values()) == 4
    header = json.loads((suite / "401" / "run.json").read_text())
    assert header["status"] == "stopped" and header["counts"]["runner"]["sent"] == 4


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
