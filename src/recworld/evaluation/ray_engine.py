"""``recworld eval --engine ray``: the questions as a Ray Dataset, answered by a pool of model replicas.

Only the answering moves to Ray. The driver (this process) keeps the run's
:class:`~recworld.runner.ResponseCache` and sample journal, and streams the
answers back with ``iter_batches``: each is put in the cache, then journaled,
exactly as a local run does. A killed Ray run therefore resumes like any
other, and ``samples.jsonl``/``metrics.json`` are written by the same code.

Questions already journaled never reach this module (``evaluation.run``
filters them). Questions whose answer is already in the cache are answered on
the driver and never sent to Ray: the cache key needs the model's identity,
so when the cache is not empty one Ray task loads the model once to read it.

Replicas: ``vllm`` in generate mode goes through Ray Data's LLM API
(``ray.data.llm``, one vLLM engine per GPU replica, continuous batching);
every other backend (and vLLM's loglik) is a callable class in
``map_batches`` over an actor pool of ``replicas`` actors, each running the
backend behind its own :class:`~recworld.runner.Runner` (retries, timeouts,
failure policy) without a cache. CPU replicas get one CPU and one thread each.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import pickle
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recworld.chat import AnswerMode, Request, Response, Usage
from recworld.errors import ConfigError, RecWorldError, require
from recworld.evaluation.config import EvalConfig
from recworld.models.base import FatalModelError, Model
from recworld.models.registry import ModelConfig, ModelSpec
from recworld.runner import Completion, ResponseCache, Runner, RunnerConfig, RunnerStats
from recworld.runner.cache import CacheKeyer
from recworld.runner.progress import ProgressBar

__all__ = ["answer_on_ray", "replica_factory", "require_ray"]

OnResult = Callable[[int, Completion], None]

# Builds each replica's model instead of the spec (tests, embedding). Read on the driver and shipped
# to the replicas by value, so setting it in the driver process is enough.
replica_factory: Callable[[], Model] | None = None

CPU_BATCH = 4  # small: answers stream back often, and a killed driver loses at most a few per replica
VLLM_BATCH = 64
_COLUMNS = ("index", "key", "response", "error", "latency_s", "attempts", "cache_hit", "fatal", "failure")


@dataclass(frozen=True)
class ReplicaJob:
    """Everything a replica needs to build its model and runner; pickled to every actor."""

    spec: str
    model_config: ModelConfig
    runner_config: RunnerConfig
    mode: AnswerMode
    factory: Callable[[], Model] | None = None

    def open_model(self) -> Model:
        if self.factory is not None:
            return self.factory()
        from recworld.models.registry import load_model

        model = load_model(self.spec, self.model_config)
        if self.mode not in model.supports:
            asyncio.run(model.aclose())
            modes = ", ".join(sorted(m.value for m in model.supports))
            raise ConfigError(
                f"--mode: model {self.spec!r} does not support {self.mode.value!r}; it supports: {modes}"
            )
        return model


def require_ray() -> Any:
    """The ``ray`` module, or the usual MissingDependencyError naming the ``ray`` extra."""
    return require("ray", feature="--engine ray", extra="ray", package="ray[data]")


def answer_on_ray(
    config: EvalConfig, spec: str, suite: Path, requests: list[Request], record: OnResult, cache_path: Path
) -> tuple[dict[str, int], FatalModelError | None]:
    """Answer ``requests`` on Ray, calling ``record(index, completion)`` as each answer arrives.

    Returns the runner counters summed over the replicas, and the fatal failure that
    stopped the run, if one did (what arrived before it is recorded).
    """
    ray = require_ray()
    job = _job(config, spec, suite)
    started = _connect(ray, config.ray_address)
    cache = ResponseCache(cache_path)
    stats = RunnerStats()
    try:
        keyer = _driver_keyer(ray, job, config, cache, bool(requests))
        pending = _answer_from_cache(requests, keyer, cache, record, stats)
        stopped = _stream(ray, job, config, requests, pending, keyer, cache, record, stats)
    finally:
        cache.close()
        if started:
            ray.shutdown()
    return stats.to_json(), stopped


def _job(config: EvalConfig, spec: str, suite: Path) -> ReplicaJob:
    # One CPU per replica: more threads than cores slows llama.cpp down badly.
    model_config = config.backend.model_copy(update={"suite_dir": suite, "seed": config.seed, "n_threads": 1})
    runner = config.runner.model_copy(update={"progress": False})
    return ReplicaJob(spec, model_config, runner, config.mode, replica_factory)


def _connect(ray: Any, address: str | None) -> bool:
    """Join the Ray session already open, else ``address`` (or a new local one); True if we started it."""
    if ray.is_initialized():
        return False
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the driver shows its own bar
    return True


def _uses_llm_api(job: ReplicaJob) -> bool:
    return (
        job.factory is None
        and ModelSpec.parse(job.spec).backend == "vllm"
        and job.mode is AnswerMode.GENERATE
    )


def _driver_keyer(
    ray: Any, job: ReplicaJob, config: EvalConfig, cache: ResponseCache, needed: bool
) -> CacheKeyer | None:
    """The cache keyer for this model, when the driver needs one.

    The ``ray.data.llm`` path has a fixed identity (and needs it to put answers in the
    cache). Otherwise an empty cache needs no lookup: replicas key their own answers.
    """
    if _uses_llm_api(job):
        return CacheKeyer(_llm_api_identity(job))
    if not needed or len(cache) == 0:
        return None
    probe = ray.remote(_probe_identity).options(**_resources(job))
    identity: dict[str, str] = ray.get(probe.remote(job))
    return CacheKeyer(identity)


def _probe_identity(job: ReplicaJob) -> dict[str, str]:
    model = job.open_model()
    identity = dict(model.identity)
    asyncio.run(model.aclose())
    return identity


def _answer_from_cache(
    requests: list[Request],
    keyer: CacheKeyer | None,
    cache: ResponseCache,
    record: OnResult,
    stats: RunnerStats,
) -> list[int]:
    """Record every cached answer at once; the indices left to send."""
    if keyer is None:
        return list(range(len(requests)))
    pending = []
    for index, request in enumerate(requests):
        entry = cache.get_entry(keyer(request))
        if entry is None:
            pending.append(index)
            continue
        stats.requests += 1
        stats.cache_hits += 1
        record(index, Completion(entry[0], None, cache_hit=True, latency_s=entry[1], attempts=0))
    return pending


def _stream(
    ray: Any,
    job: ReplicaJob,
    config: EvalConfig,
    requests: list[Request],
    pending: list[int],
    keyer: CacheKeyer | None,
    cache: ResponseCache,
    record: OnResult,
    stats: RunnerStats,
) -> FatalModelError | None:
    """Send ``pending`` through Ray; cache then journal each answer as its batch arrives."""
    if not pending:
        return None
    batch = VLLM_BATCH if _uses_llm_api(job) else CPU_BATCH
    rows = [{"index": i, "request": pickle.dumps(requests[i])} for i in pending]
    dataset = ray.data.from_items(rows, override_num_blocks=math.ceil(len(rows) / batch))
    answered = (
        _llm_api(dataset, job, config) if _uses_llm_api(job) else _actor_pool(ray, dataset, job, config)
    )
    bar = ProgressBar(len(pending), f"{job.spec} {job.mode.value} (ray)", enabled=config.runner.progress)
    try:
        for index, completion, key in _completions(answered, batch):
            if completion.response is not None:
                cache.put(key or _key(keyer, requests[index]), completion.response, completion.latency_s)
            record(index, completion)
            _count(stats, completion)
            bar.advance(error=completion.error is not None, retries=max(completion.attempts - 1, 0))
            if completion.fatal:
                return FatalModelError(f"the run stopped: {completion.error}")
    finally:
        bar.close()
    return None


def _key(keyer: CacheKeyer | None, request: Request) -> str:
    if keyer is None:  # replicas key their own answers whenever the driver has no keyer
        raise AssertionError("an answer arrived without its cache key")
    return keyer(request)


def _count(stats: RunnerStats, completion: Completion) -> None:
    stats.requests += 1
    stats.sent += completion.attempts
    stats.retries += max(completion.attempts - 1, 0)
    stats.coalesced += int(completion.cache_hit)
    stats.errors += int(completion.error is not None)


def _completions(dataset: Any, batch: int) -> Iterator[tuple[int, Completion, str]]:
    for rows in dataset.iter_batches(batch_size=None, batch_format="numpy"):
        for i in range(len(rows["index"])):
            if rows["failure"][i]:
                raise _failure(rows["failure"][i])
            text = str(rows["response"][i])
            response = Response.from_json(json.loads(text)) if text else None
            error = str(rows["error"][i]) or None
            completion = Completion(
                response,
                error,
                cache_hit=bool(rows["cache_hit"][i]),
                latency_s=float(rows["latency_s"][i]),
                attempts=int(rows["attempts"][i]),
                fatal=bool(rows["fatal"][i]),
            )
            yield int(rows["index"][i]), completion, str(rows["key"][i])


def _resources(job: ReplicaJob) -> dict[str, float]:
    backend = "" if job.factory is not None else ModelSpec.parse(job.spec).backend
    return {"num_gpus": 1.0} if backend == "vllm" else {"num_cpus": 1.0}


def _actor_pool(ray: Any, dataset: Any, job: ReplicaJob, config: EvalConfig) -> Any:
    return dataset.map_batches(
        Replica,
        fn_constructor_args=(job,),
        batch_size=CPU_BATCH,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=config.replicas),
        **_resources(job),
    )


class Replica:
    """One model replica: a Ray actor answering batches through its own Runner."""

    def __init__(self, job: ReplicaJob) -> None:
        self._loop = asyncio.new_event_loop()
        self._failure: RecWorldError | None = None
        try:
            model = job.open_model()
        except RecWorldError as exc:
            # Sent back in-band: Ray keeps only the text of an exception raised in an actor,
            # and the driver must re-raise it as the user error it is (exit 2).
            self._failure = exc
            return
        self._key = CacheKeyer(model.identity)
        self._runner = Runner(model, job.runner_config)

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, list[Any]]:
        if self._failure is not None:
            blob = pickle.dumps((type(self._failure), str(self._failure)))
            n = len(batch["index"])
            defaults = ("", "", "", 0.0, 0, False, False, blob)  # the same columns as an answer
            return {
                "index": list(batch["index"]),
                **{c: [v] * n for c, v in zip(_COLUMNS[1:], defaults, strict=True)},
            }
        requests: list[Request] = [pickle.loads(blob) for blob in batch["request"]]
        done: dict[int, Completion] = {}
        self._loop.run_until_complete(self._answer(requests, done))
        out: dict[str, list[Any]] = {name: [] for name in _COLUMNS}
        for i, completion in sorted(done.items()):
            response = completion.response
            out["index"].append(int(batch["index"][i]))
            out["key"].append(self._key(requests[i]))
            out["response"].append("" if response is None else json.dumps(response.to_json()))
            out["error"].append(completion.error or "")
            out["latency_s"].append(completion.latency_s)
            out["attempts"].append(completion.attempts)
            out["cache_hit"].append(completion.cache_hit)
            out["fatal"].append(completion.fatal)
            out["failure"].append(b"")
        return out

    async def _answer(self, requests: list[Request], done: dict[int, Completion]) -> None:
        # A fatal completion is in ``done`` too: the driver stops the run on it.
        with contextlib.suppress(FatalModelError):
            await self._runner.map(requests, on_result=done.__setitem__)


# -- vLLM through Ray Data's LLM API ------------------------------------------------------------


def _llm_api_identity(job: ReplicaJob) -> dict[str, str]:
    # Its own identity: ray.data.llm templates the chat itself, so its answers never share
    # cache entries with the in-process vllm backend.
    engine = job.model_config.options.get("engine_args", {})
    name = ModelSpec.parse(job.spec).name
    return {
        "backend": "vllm",
        "engine": "ray.data.llm",
        "model": name,
        "dtype": str(engine.get("dtype", "auto")),
    }


def _llm_api(dataset: Any, job: ReplicaJob, config: EvalConfig) -> Any:
    llm: Any = require("ray.data.llm", feature="--engine ray with vllm", extra="ray", package="ray[data]")
    build = getattr(llm, "build_processor", None) or llm.build_llm_processor
    engine_kwargs = {"seed": config.seed, "max_model_len": job.model_config.n_ctx}
    engine_kwargs.update(job.model_config.options.get("engine_args", {}))
    processor = build(
        llm.vLLMEngineProcessorConfig(
            model_source=ModelSpec.parse(job.spec).name,
            engine_kwargs=engine_kwargs,
            concurrency=config.replicas,
            batch_size=VLLM_BATCH,
        ),
        preprocess=_to_vllm,
        postprocess=_from_vllm,
    )
    return processor(dataset)


def _to_vllm(row: dict[str, Any]) -> dict[str, Any]:
    request: Request = pickle.loads(row["request"])
    return {
        "index": row["index"],
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "sampling_params": {"temperature": 0.0, "max_tokens": request.max_tokens, "seed": request.seed},
    }


def _from_vllm(row: dict[str, Any]) -> dict[str, Any]:
    usage = Usage(int(row.get("num_input_tokens") or 0), int(row.get("num_generated_tokens") or 0))
    response = Response(text=str(row["generated_text"]), usage=usage)
    values = ("", json.dumps(response.to_json()), "", 0.0, 1, False, False, b"")
    return {"index": row["index"], **dict(zip(_COLUMNS[1:], values, strict=True))}


def _failure(blob: bytes) -> RecWorldError:
    """The user error a replica met while loading its model, as the same class when it can be rebuilt."""
    kind, message = pickle.loads(blob)
    try:
        error = kind(message)
    except TypeError:  # a class whose constructor takes more than a message
        return ConfigError(message)
    return error if isinstance(error, RecWorldError) else ConfigError(message)
