"""``recworld eval --engine ray``: the same Runner as a local run, its model a pool of Ray replicas.

Only where the model runs moves to Ray. The driver (this process) runs the
run's one :class:`~recworld.runner.Runner` with the run's one
:class:`~recworld.runner.ResponseCache`: cache lookups and writes,
coalescing, retries, timeouts, the failure policy (a 401 stops everything,
with nothing more sent), the counters and the progress bar are the local
run's code, not a copy of it. The Runner's model is :class:`RayReplicas`: a
:class:`~recworld.models.base.Model` whose ``complete`` hands each request to
the least busy of ``replicas`` Ray actors. Each actor loads the backend once
(from the spec, or a copy of a model object) and answers with its
``complete``, so every request field (messages with images, temperature,
stop, JSON schema, seed, choices) reaches the backend exactly as in a local
run, and the answers share cache entries with local runs of the same model.

An actor sends back the response, or the error it met as its kind and text
(Ray keeps only the text of an exception raised in an actor); the driver
raises the same class again, so the Runner classifies it as it would
locally. A replica that cannot load its model (wrong mode, missing GGUF,
missing extra) is the same ``ConfigError``/``MissingDependencyError`` on the
driver (exit 2).

Replicas ask Ray for what their backend declares (``Backend.needs_gpu``: one
GPU, else one CPU and one thread). A backend's ``max_concurrency`` holds per
replica, so N llama.cpp replicas take N requests at a time.
"""

from __future__ import annotations

import asyncio
import pickle
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recworld.chat import AnswerMode, Request, Response
from recworld.errors import ConfigError, ModelError, RecWorldError, require
from recworld.evaluation.config import EvalConfig
from recworld.models import ModelBase, ModelConfig, ModelLike, ModelSpec, backend_of
from recworld.models.base import (
    ConnectionFailedError,
    FatalModelError,
    Model,
    TransientModelError,
    max_concurrency,
)
from recworld.models.options import parse_options
from recworld.models.registry import object_name, resolve_model
from recworld.runner import Completion, answer_all

__all__ = [
    "RayReplicas",
    "ReplicaError",
    "ReplicaJob",
    "answer_on_ray",
    "check_copyable",
    "open_replicas",
    "require_ray",
]

OnResult = Callable[[int, Completion], None]


class ReplicaError(RuntimeError):
    """A bug inside a replica (not a model failure): the remote traceback, raised on the driver."""


@dataclass(frozen=True)
class ReplicaJob:
    """Everything a replica needs to build its model; pickled to every actor.

    ``model`` is a spec, loaded by each replica, or a model object, copied to
    each (it must pickle; Ray uses cloudpickle, so closures are fine).
    """

    model: str | Model
    model_config: ModelConfig
    mode: AnswerMode

    @property
    def name(self) -> str:
        return self.model if isinstance(self.model, str) else object_name(self.model)

    def resources(self) -> dict[str, float]:
        gpu = isinstance(self.model, str) and backend_of(self.model).needs_gpu
        return {"num_gpus": 1.0} if gpu else {"num_cpus": 1.0}

    def check_options(self) -> None:
        """Bad backend options are a ConfigError here, on the driver, before any replica starts."""
        if isinstance(self.model, str):
            parsed = ModelSpec.parse(self.model)
            parse_options(backend_of(parsed).options, self.model_config.options, parsed.backend)


def require_ray() -> Any:
    """The ``ray`` module, or the usual MissingDependencyError naming the ``ray`` extra."""
    return require("ray", feature="--engine ray", extra="ray", package="ray[data]")


def check_copyable(model: Model) -> None:
    """A model object travels to each replica pickled (Ray's cloudpickle); one that cannot is a ConfigError.

    Checked on the driver before Ray starts or a run folder exists, with the
    pickler the replicas' arguments go through, so what passes here reaches them.
    """
    try:
        require_ray().cloudpickle.dumps(model)
    except Exception as exc:  # pickling fails with whatever the unpicklable member raises
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"engine ray copies the model object to each replica, and {type(model).__name__} cannot be "
            f"pickled: {first} (keep sessions, locks and open files out of it, or open them in complete)"
        ) from None


def answer_on_ray(
    config: EvalConfig,
    model: ModelLike,
    suite: Path,
    requests: Sequence[Request],
    record: OnResult,
    cache_path: Path,
) -> tuple[dict[str, int], FatalModelError | None]:
    """Answer ``requests`` through the run's Runner over Ray replicas, calling ``record`` per answer.

    Returns the runner's counters and the fatal failure that stopped the run, if
    one did (what arrived before it is recorded). ``model`` is the spec each
    replica loads, or a model object copied to each.
    """
    if not requests:
        return {"requests": 0, "sent": 0, "cache_hits": 0, "coalesced": 0, "retries": 0, "errors": 0}, None
    job = ReplicaJob(_for_replicas(model), _model_config(config, suite), config.mode)
    job.check_options()
    ray = require_ray()
    started = _connect(ray, config.ray_address)
    try:
        return asyncio.run(_answer(ray, job, config, requests, record, cache_path))
    finally:
        if started:
            ray.shutdown()


def _for_replicas(model: ModelLike) -> str | Model:
    """A spec (string or parsed) travels as its string, loaded by each replica; an object as itself."""
    if isinstance(model, str | ModelSpec):
        return str(model)
    resolved, _owned = resolve_model(model)  # checks the object has the Model protocol
    return resolved


def _model_config(config: EvalConfig, suite: Path) -> ModelConfig:
    # One CPU per replica: more threads than cores slows llama.cpp down badly.
    return config.backend.model_copy(update={"suite_dir": suite, "seed": config.seed, "n_threads": 1})


async def _answer(
    ray: Any,
    job: ReplicaJob,
    config: EvalConfig,
    requests: Sequence[Request],
    record: OnResult,
    cache_path: Path,
) -> tuple[dict[str, int], FatalModelError | None]:
    model = await open_replicas(ray, job, config.replicas)
    description = f"{job.name} {job.mode.value} (ray x{config.replicas})"
    stats, stopped = await answer_all(
        model, requests, config.runner, cache_path, description=description, on_result=record
    )
    return stats.to_json(), stopped


def _connect(ray: Any, address: str | None) -> bool:
    """Join the Ray session already open, else ``address`` (or a new local one); True if we started it."""
    if ray.is_initialized():
        return False
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return True


async def open_replicas(ray: Any, job: ReplicaJob, replicas: int) -> RayReplicas:
    """Start ``replicas`` actors for ``job`` and wait until each has loaded its model."""
    _check_room(ray, job, replicas)
    actor = ray.remote(Replica).options(**job.resources())
    actors = [actor.remote(job) for _ in range(replicas)]
    try:
        described: list[dict[str, Any]] = list(await asyncio.gather(*(a.describe.remote() for a in actors)))
    except ray.exceptions.RayError as exc:  # the job did not reach the actor (unpicklable, not importable)
        for started in actors:
            ray.kill(started)
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"the Ray replicas of {job.name} could not start: {first} (a model object must pickle, "
            "and its class must be importable where the replicas run)"
        ) from None
    failure = next((d["failure"] for d in described if d["failure"] is not None), None)
    if failure is None and any(d["identity"] != described[0]["identity"] for d in described):
        failure = pickle.dumps((ConfigError, "the Ray replicas disagree on the model's identity"))
    pool = RayReplicas(ray, actors, described[0])
    if failure is not None:
        await pool.aclose()
        raise _rebuilt(failure)
    if job.mode not in pool.supports:
        await pool.aclose()
        modes = ", ".join(sorted(m.value for m in pool.supports))
        raise ConfigError(
            f"--mode: model {job.name!r} does not support {job.mode.value!r}; it supports: {modes}"
        )
    return pool


def _check_room(ray: Any, job: ReplicaJob, replicas: int) -> None:
    """A replica the cluster can never place would wait forever: say so instead."""
    have = ray.cluster_resources()
    for need, per_replica in job.resources().items():
        resource = {"num_gpus": "GPU", "num_cpus": "CPU"}[need]
        total = float(have.get(resource, 0.0))
        if per_replica * replicas > total:
            raise ConfigError(
                f"--replicas {replicas}: each {job.name} replica needs {per_replica:g} {resource}, "
                f"and the Ray cluster has {total:g}"
            )


class RayReplicas(ModelBase):
    """The Model a driver's Runner asks: each request goes to the least busy replica."""

    def __init__(self, ray: Any, actors: list[Any], described: Mapping[str, Any]) -> None:
        self._ray = ray
        self._actors = actors
        self._busy = [0] * len(actors)
        self._identity = dict(described.get("identity") or {})
        self._supports = frozenset(AnswerMode(m) for m in described.get("supports") or ())
        bound = described.get("bound")
        self._bound = None if bound is None else int(bound) * len(actors)

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return self._supports

    @property
    def max_concurrency(self) -> int | None:
        return self._bound

    async def complete(self, request: Request) -> Response:
        i = min(range(len(self._actors)), key=self._busy.__getitem__)
        self._busy[i] += 1
        ref = self._actors[i].complete.remote(request)
        try:
            reply = await ref
        except asyncio.CancelledError:
            self._ray.cancel(
                ref
            )  # the replica's coroutine is cancelled too (llama.cpp stops at its next token)
            raise
        finally:
            self._busy[i] -= 1
        return _unwrap(reply)

    async def aclose(self) -> None:
        await asyncio.gather(*(a.aclose.remote() for a in self._actors), return_exceptions=True)
        for actor in self._actors:
            self._ray.kill(actor)


Reply = tuple[str, Any, Any, Any]  # (kind, response or message, retry_after, connection failure)


def _unwrap(reply: Reply) -> Response:
    """The response, or the replica's error raised again as its own class."""
    kind, payload, retry_after, connection = reply
    if kind == "ok":
        assert isinstance(payload, Response)
        return payload
    if kind == "transient":
        error = ConnectionFailedError if connection else TransientModelError
        raise error(str(payload), retry_after=retry_after)
    if kind == "fatal":
        raise FatalModelError(str(payload))
    if kind == "model":
        raise ModelError(str(payload))
    raise ReplicaError(f"a Ray replica failed:\n{payload}")


class Replica:
    """One model replica: a Ray actor (async, so a batching backend sees concurrent requests)."""

    def __init__(self, job: ReplicaJob) -> None:
        self._model: Model | None = None
        self._failure: bytes | None = None
        try:
            self._model = (
                resolve_model(job.model, job.model_config)[0] if isinstance(job.model, str) else job.model
            )
        except RecWorldError as exc:
            # Sent back in-band: the driver re-raises it as the user error it is (exit 2).
            self._failure = pickle.dumps((type(exc), str(exc)))

    async def describe(self) -> dict[str, Any]:
        model = self._model
        if model is None:
            return {"failure": self._failure, "identity": {}, "supports": [], "bound": None}
        modes = sorted(m.value for m in model.supports)
        return {
            "failure": None,
            "identity": dict(model.identity),
            "supports": modes,
            "bound": max_concurrency(model),
        }

    async def complete(self, request: Request) -> Reply:
        assert self._model is not None, "describe() reported the load failure"
        try:
            return ("ok", await self._model.complete(request), None, False)
        except TransientModelError as exc:
            return ("transient", str(exc), exc.retry_after, isinstance(exc, ConnectionFailedError))
        except FatalModelError as exc:
            return ("fatal", str(exc), None, False)
        except ModelError as exc:
            return ("model", str(exc), None, False)
        except Exception:  # a bug: its traceback travels to the driver, which raises it
            return ("bug", traceback.format_exc(), None, False)

    async def aclose(self) -> None:
        if self._model is not None:
            await self._model.aclose()


def _rebuilt(blob: bytes) -> RecWorldError:
    """The user error a replica met while loading its model, as the same class when it can be rebuilt."""
    kind, message = pickle.loads(blob)
    try:
        error = kind(message)
    except TypeError:  # a class whose constructor takes more than a message
        return ConfigError(message)
    return error if isinstance(error, RecWorldError) else ConfigError(message)
