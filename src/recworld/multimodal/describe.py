"""Describe item images with a vision-language model and store the text as ``image_description``.

LRWorld's multimodal measures (paper §3 item j) show history and options as
detailed text descriptions of posters / product images written by a large
multimodal model, because most such models take one image per prompt. This
module produces that field:

1. plan: every item whose ``image`` is a local file inside the allowed image
   roots is checked (signature, size caps, Pillow verify and decode; see
   :mod:`recworld.data.image_refs`) and hashed; refused files are skipped and
   counted, URLs are counted and skipped, since nothing here downloads;
2. send: one request per image (the instruction for its kind, the image in
   ``Message.images``) through :class:`~recworld.runner.Runner`, so the shared
   response cache, bounded concurrency and retries apply;
3. journal: each non-empty description is appended (fsynced) to a journal
   keyed by item, image SHA-256 and model setup, so a killed run resumes
   without re-sending what it already has;
4. write: a new canonical dataset cache with the field filled in, plus
   ``descriptions.jsonl``, as one atomic, marked output
   (:func:`recworld.io.output_directory`: never over a folder another command wrote).

The journal and response cache live in a state folder next to the output
(``.<out>.describe/``), because the output folder is replaced as a whole.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from recworld import paths
from recworld.chat import AnswerMode, Message, Request
from recworld.data.dataset import Dataset, Domain
from recworld.data.image_refs import ImageFile, ImageRoots, ImageScreen, dataset_folder, screen_images
from recworld.errors import ConfigError, DataError, RunError
from recworld.io import atomic_write_jsonl, check_output_dir, dumps_canonical, normal, output_directory
from recworld.models.base import Model
from recworld.multimodal.job import DescribeConfig, DescribeJob, InstructionStyle, KindChoice
from recworld.multimodal.journal import DescriptionJournal
from recworld.runner import Completion, Runner, judge, open_runner

DESCRIPTIONS_NAME = "descriptions.jsonl"
JOURNAL_NAME = "journal.jsonl"
CACHE_NAME = "cache.sqlite"
FIELD = "image_description"
OUTPUT_KIND = "described-dataset"  # the marker kind of a describe-images output


class ImageKind(StrEnum):
    """Which instruction an image gets."""

    POSTER = "poster"
    PRODUCT = "product"


@cache
def instruction(kind: ImageKind, style: InstructionStyle = "paper") -> str:
    """The instruction sent with every image of ``kind``: ``instructions/<kind>[-transcribe].txt``."""
    folder = resources.files("recworld.multimodal.instructions")
    name = kind.value if style == "paper" else f"{kind.value}-{style}"
    return folder.joinpath(f"{name}.txt").read_text(encoding="utf-8").strip()


def kind_for(choice: KindChoice, domain: Domain) -> ImageKind:
    """``auto`` picks posters for movie datasets and product images for everything else."""
    if choice != "auto":
        return ImageKind(choice)
    return ImageKind.POSTER if domain is Domain.MOVIE else ImageKind.PRODUCT


@dataclass(frozen=True)
class ImageJob:
    """One item whose local image will be described."""

    item_id: str
    reference: str  # the item's ``image`` value as stored in the dataset
    image: ImageFile


def plan_jobs(screen: ImageScreen) -> list[ImageJob]:
    """One job per usable local image, by item order."""
    return [ImageJob(item_id, reference, image) for item_id, (reference, image) in screen.kept.items()]


def setup_key(
    identity: Mapping[str, str], kind: ImageKind, max_tokens: int, style: InstructionStyle = "paper"
) -> str:
    """Names everything besides the image that shapes a description; a journal hit must match it."""
    document = {"model": dict(identity), "instruction": instruction(kind, style), "max_tokens": max_tokens}
    return hashlib.sha256(dumps_canonical(document).encode("utf-8")).hexdigest()


def describe_request(
    job: ImageJob, kind: ImageKind, max_tokens: int, style: InstructionStyle = "paper"
) -> Request:
    """The request for one image: the kind's instruction with the local file attached."""
    message = Message(role="user", content=instruction(kind, style), images=(str(job.image.path),))
    return Request(messages=(message,), mode=AnswerMode.GENERATE, max_tokens=max_tokens, temperature=0.0)


@dataclass
class DescribeReport:
    """What a describe run did; printed by the CLI and returned to callers."""

    dataset: str
    kind: str
    model: str
    items: int
    with_local_image: int
    skipped_remote: int
    without_image: int
    refused: dict[str, int] = field(default_factory=dict)  # reason -> images skipped for it
    warning: str | None = None  # one line naming the counts and the first refused image
    described: int = 0  # items holding a description from this model after the run
    sent: int = 0  # requests that reached the model in this run (not answered by the cache)
    resumed: int = 0  # taken from the journal without a request
    cache_hits: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # item id -> error
    out_dir: Path | None = None

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "out_dir"}
        out["out_dir"] = None if self.out_dir is None else str(self.out_dir)
        return out


@dataclass(frozen=True)
class DescribeResult:
    dataset: Dataset
    records: list[dict[str, Any]]  # one per described item, sorted by item id
    report: DescribeReport


def _record(job: ImageJob, model: str, kind: ImageKind, setup: str, text: str) -> dict[str, Any]:
    return {
        "item_id": job.item_id,
        "image": job.reference,
        "sha256": job.image.sha256,
        "model": model,
        "kind": kind.value,
        "setup": setup,
        "description": text,
    }


def _new_report(dataset: Dataset, kind: ImageKind, model: str, screen: ImageScreen) -> DescribeReport:
    return DescribeReport(
        dataset=dataset.name,
        kind=kind.value,
        model=model,
        items=len(dataset.items),
        with_local_image=len(screen.kept),
        skipped_remote=len(screen.remote),
        without_image=screen.without_image,
        refused=screen.reasons(),
        warning=screen.warning(),
    )


async def describe_dataset(
    dataset: Dataset,
    runner: Runner,
    journal: DescriptionJournal,
    *,
    model: str,
    roots: ImageRoots,
    config: DescribeConfig | None = None,
    base_dir: Path | None = None,
) -> DescribeResult:
    """Describe every usable local item image not already in ``journal``; returns the updated dataset.

    Only images inside ``roots`` that pass :func:`~recworld.data.image_refs.check_image`
    are sent; the rest are skipped and counted in the report.
    """
    config = config or DescribeConfig()
    if AnswerMode.GENERATE not in runner.model.supports:
        raise ConfigError(f"model {model!r} cannot generate text, so it cannot describe images")
    kind = kind_for(config.kind, dataset.domain)
    if "image" not in dataset.items.columns:
        raise DataError(f"dataset {dataset.name!r} has no item images", field="image")
    screen = screen_images(dataset, roots, base_dir, limit=config.limit)
    if screen.refused and not screen.kept:
        raise RunError(f"nothing to describe: every local image was refused: {screen.summary()}")
    jobs = plan_jobs(screen)
    setup = setup_key(runner.model.identity, kind, config.max_tokens, config.instructions)
    report = _new_report(dataset, kind, model, screen)
    done = journal.load()

    def reusable(job: ImageJob) -> bool:
        old = done.get(job.item_id)
        return old is not None and old.get("sha256") == job.image.sha256 and old.get("setup") == setup

    todo = [job for job in jobs if not reusable(job)]
    report.resumed = len(jobs) - len(todo)

    def on_result(index: int, completion: Completion) -> None:
        job = todo[index]
        text = completion.response.text.strip() if completion.response is not None else ""
        if completion.error is not None or not text:
            report.failed[job.item_id] = completion.error or "the model returned an empty description"
            return
        record = _record(job, model, kind, setup, text)
        done[job.item_id] = record
        journal.append(record)

    requests = [describe_request(job, kind, config.max_tokens, config.instructions) for job in todo]
    completions = (
        await runner.map(requests, description=f"describe {dataset.name}", on_result=on_result)
        if requests
        else []
    )
    report.cache_hits = sum(1 for c in completions if c.cache_hit)
    report.sent = len(completions) - report.cache_hits

    records = [done[j.item_id] for j in jobs if j.item_id in done and reusable(j)]
    report.described = len(records)
    return DescribeResult(_described(dataset, records, model, kind, setup), records, report)


def _described(
    dataset: Dataset, records: list[dict[str, Any]], model: str, kind: ImageKind, setup: str
) -> Dataset:
    """``dataset`` with the descriptions filled in and their provenance in ``source``."""
    described = with_descriptions(dataset, {r["item_id"]: r["description"] for r in records})
    source = dict(described.source)
    source["image_descriptions"] = {"model": model, "kind": kind.value, "setup": setup, "count": len(records)}
    return replace(described, source=source)


def with_descriptions(dataset: Dataset, descriptions: Mapping[str, str]) -> Dataset:
    """A copy of ``dataset`` whose items carry ``descriptions`` in :data:`FIELD` (others keep theirs)."""
    items = dataset.items.copy()
    previous = items[FIELD] if FIELD in items.columns else pd.Series([None] * len(items), index=items.index)
    values = [
        descriptions.get(str(item_id), None if old is None or pd.isna(old) else str(old))
        for item_id, old in zip(items["item_id"], previous, strict=True)
    ]
    items[FIELD] = pd.Series(values, index=items.index, dtype=object)
    out = replace(dataset, items=items)
    out.validate()
    return out


# -- the command's whole job: resolve, run, write ------------------------------------------------


def cache_dir_of(name_or_path: str) -> Path | None:
    """The dataset cache folder ``name_or_path`` names (as ``resolve_dataset`` finds it), else None."""
    fetched = paths.datasets_dir() / name_or_path
    if "/" not in name_or_path and (fetched / "dataset.json").exists():
        return fetched
    path = Path(name_or_path).expanduser()
    if (path / "dataset.json").exists():
        return path.resolve()
    return None


def default_out_dir(name_or_path: str, dataset: Dataset) -> Path:
    """``<cache>-described`` beside the input cache, or under the datasets folder for raw input."""
    source = cache_dir_of(name_or_path)
    if source is not None:
        return source.with_name(f"{source.name}-described")
    return paths.datasets_dir() / f"{dataset.name}-described"


def state_dir_for(out_dir: Path) -> Path:
    """Where the journal and response cache of a describe run into ``out_dir`` live."""
    return out_dir.parent / f".{out_dir.name}.describe"


class DescribeFailedError(RunError):
    """More images failed than ``fail_on_error`` allows (exit 3); ``report`` is what the run wrote."""

    def __init__(self, message: str, report: DescribeReport) -> None:
        super().__init__(message)
        self.report = report


def run_describe(job: DescribeJob, *, model: Model | None = None) -> DescribeReport:
    """Resolve the dataset, describe its images (resumably) and write the described dataset.

    ``model``: a model object to ask instead of loading ``job.model`` (as
    :func:`recworld.evaluation.run.evaluate_config` takes one): it is never closed
    here, and ``job.model`` is the name the journal and the output record it by.
    Raises :class:`DescribeFailedError` after writing when too many images failed.
    """
    return asyncio.run(run_describe_async(job, model=model))


def _out_dir(job: DescribeJob, dataset: Dataset) -> Path:
    source = cache_dir_of(job.dataset)
    if job.in_place and job.out is not None:
        raise ConfigError("--in-place and --out exclude each other")
    if job.in_place:
        if source is None:
            raise ConfigError(f"--in-place needs a dataset cache folder; {job.dataset!r} is not one")
        return source
    return normal(job.out or default_out_dir(job.dataset, dataset))  # a link is refused, not followed


async def run_describe_async(job: DescribeJob, *, model: Model | None = None) -> DescribeReport:
    """:func:`run_describe` for callers already inside an event loop."""
    from recworld.data import resolve_dataset
    from recworld.models.registry import ModelSpec, resolve_model

    backend = job.backend  # a key inside --base-url was refused when the job was made (recworld.models._urls)
    dataset = resolve_dataset(job.dataset)
    out_dir = _out_dir(job, dataset)
    if not job.in_place:  # --in-place names the input cache itself; its other files are kept
        check_output_dir(out_dir, OUTPUT_KIND, force=job.force)  # refused before any request
    base_dir = dataset_folder(job.dataset)
    roots = ImageRoots.of([base_dir]) + ImageRoots.of(job.image_roots, check=True)
    state = (job.state_dir or state_dir_for(out_dir)).expanduser()

    spec = str(ModelSpec.parse(job.model)) if model is None else job.model
    state.mkdir(parents=True, exist_ok=True)
    opened, owned = resolve_model(spec if model is None else model, backend)
    # The cache is opened (and confined) before the journal, so a refused state folder closes the model.
    async with open_runner(opened, job.runner, state / CACHE_NAME, owned=owned) as runner:
        journal = DescriptionJournal(state / JOURNAL_NAME)
        try:
            result = await describe_dataset(
                dataset, runner, journal, model=spec, roots=roots, config=job.config, base_dir=base_dir
            )
        finally:
            journal.close()
    write_described(result, out_dir, force=True if job.in_place else job.force)
    result.report.out_dir = out_dir
    _judge(result.report, job.fail_on_error)
    return result.report


def _judge(report: DescribeReport, limit: float) -> None:
    """The run-level failure policy of ``recworld eval`` and LUNAR (:func:`~recworld.runner.judge`)."""
    first = min(report.failed.items(), default=None)
    verdict = judge(
        asked=report.described + len(report.failed),
        failed=len(report.failed),
        limit=limit,
        first_error=None if first is None else f"item {first[0]}: {first[1]}",
        noun="images",
        retry="rerun the same command to retry the failed images",
    )
    if verdict is not None:
        raise DescribeFailedError(
            f"{report.model}: {verdict.reason}; what finished is in {report.out_dir}", report
        )


def write_described(result: DescribeResult, out_dir: Path, *, force: bool = False) -> Path:
    """Write the dataset cache and ``descriptions.jsonl`` as one atomic, marked output.

    ``out_dir`` must be new, empty, or an earlier describe output (its marker;
    else ``force``); files in it that this does not write are kept, at any depth.
    """
    public = ("item_id", "image", "sha256", "model", "kind", "description")
    with output_directory(out_dir, OUTPUT_KIND, force=force) as staging:
        result.dataset.save(staging)
        atomic_write_jsonl(staging / DESCRIPTIONS_NAME, ({k: r[k] for k in public} for r in result.records))
    return out_dir
