"""``build_suite``: turn a dataset and a build config into a suite directory, atomically.

The suite is assembled in a temporary sibling and swapped into place
(:func:`recworld.io.output_directory`), so a failure or a kill leaves no partial
directory and an old suite intact. Rebuilding over a suite (a folder carrying
its marker) keeps what the build does not write (``runs/``, ``report/``, a
user's notes, at any depth); any other non-empty directory is refused unless
``force``, which keeps its files too. Question files are canonical JSON lines and depend only on (data,
config, seed); everything that varies between runs (timings) is confined to
``manifest.json`` (:class:`~recworld.lrworld.manifest.SuiteManifest`), which
:func:`build_suite` also returns.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from recworld import __version__
from recworld.data.dataset import Dataset
from recworld.data.image_refs import ImageRoots, screen_images
from recworld.data.metadata_match import REPORT_NAME, read_report
from recworld.errors import DataError
from recworld.io import atomic_write_json, check_output_dir, dumps_canonical, output_directory
from recworld.lrworld.builders import builder_for
from recworld.lrworld.builders.neural import neumf_record
from recworld.lrworld.catalogue import MEASURES, MEASURES_BY_ID, Measure
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.context import BuildContext, MeasureFilter
from recworld.lrworld.embeddings import FOLDER as EMBEDDINGS_FOLDER
from recworld.lrworld.embeddings import SavedSpace, save_space
from recworld.lrworld.gates import WeakGroundTruth, required_gates
from recworld.lrworld.manifest import (
    MANIFEST_NAME,
    MANIFEST_SCHEMA,
    ImageCheck,
    MeasureFilters,
    SuiteManifest,
    UsersSkipped,
)
from recworld.lrworld.schema import Question
from recworld.lrworld.shortcuts import run_battery
from recworld.seeding import rng

OUTPUT_KIND = "lrworld-suite"  # the marker kind of a suite directory
__all__ = [
    "MANIFEST_SCHEMA",
    "BuildProgress",
    "SuiteManifest",
    "build_questions",
    "build_suite",
    "plan_measures",
]
# Bump when a builder change alters the questions produced for the same data, config and seed.
# 2: neu_* targets come from k-means fitted on a 20k-point sample when more than 20k users or
#    items qualify (recworld.mining.clusters); smaller datasets give the same questions as 1.
# 3: the paper's defaults (uniform distractors, taxo_interm at one depth), options that never
#    read alike, LastFM as LLaRA (20 candidates, 10 of history, names only), ties in file order.
# 4: NeuMF's cosine GMF space and spherical k-means; same-time ties ordered by item id and never
#    asked as "next"; no option (positive included) reads like the target or a shown item by title.
# 5: next events as sets (any same-time item right, none wrong), histories cut at time boundaries,
#    tied positives drawn with the seed, memory support and margin, assoc near-ties (issue 24).
GENERATOR_VERSION = "lrworld-builder/5"


class BuildProgress(Protocol):
    """What :func:`build_suite` reports while it works; the command line draws it on stderr."""

    def stage(self, name: str, started: bool) -> None:
        """A shared stage (``matrix``, ``rules``, ``cosine_items``, ``neumf``, ``write_*``) starts or ends."""

    def measure(self, measure_id: str | None, done: int, total: int) -> None:
        """Measure ``measure_id`` starts after ``done`` of ``total``; ``None`` once all are built."""

    def epoch(self, epoch: int, epochs: int) -> None:
        """NeuMF finished ``epoch`` of at most ``epochs``."""


def plan_measures(dataset: Dataset, config: BuildConfig) -> tuple[list[Measure], dict[str, str]]:
    """The measures to build, and the reason each requested-but-impossible one is skipped."""
    requested = config.measures
    candidates = [MEASURES_BY_ID[m] for m in requested] if requested else list(MEASURES)
    planned: list[Measure] = []
    skipped: dict[str, str] = {}
    for measure in candidates:
        if dataset.domain not in measure.domains:
            if requested:  # silently out of scope unless the user asked for it
                domains = ",".join(sorted(d.value for d in measure.domains))
                skipped[measure.id] = f"applies to {domains} data; this dataset is {dataset.domain.value}"
            continue
        missing = [f for f in measure.requires if not dataset.has_item_field(f)]
        if missing:
            skipped[measure.id] = f"dataset has no item field {', '.join(missing)}"
        else:
            planned.append(measure)
    return planned, skipped


def build_questions(
    ctx: BuildContext,
    planned: list[Measure],
    skipped: dict[str, str],
    progress: BuildProgress | None = None,
) -> dict[str, list[Question]]:
    """Run each planned builder with its own child RNG; record skips and exclusive timings."""
    built: dict[str, list[Question]] = {}
    for done, measure in enumerate(planned):
        if progress is not None:
            progress.measure(measure.id, done, len(planned))
        builder = builder_for(measure.builder)
        before = sum(ctx.timings.values())
        start = time.perf_counter()
        reason = builder.unavailable(ctx)
        generator = rng(ctx.config.seed, "build", measure.id)
        try:
            questions = [] if reason else builder.build(ctx, measure, generator)
        except WeakGroundTruth as weak:  # a gate failed: skip this measure, or stop if the gate is required
            if weak.gate in required_gates(ctx.config.require_neural):
                raise weak.fatal() from None
            questions, reason = [], ctx.gates.skipped(measure.id, weak)
        # Shared signals computed on first use are timed under their own stage names.
        shared = sum(ctx.timings.values()) - before
        ctx.timings[f"measure:{measure.id}"] = time.perf_counter() - start - shared
        if reason:
            skipped[measure.id] = reason
        elif not questions:
            skipped[measure.id] = "no target qualified (see docs/lrworld.md for the rules)"
        else:
            built[measure.id] = questions
    if progress is not None:
        progress.measure(None, len(planned), len(planned))
    return built


def check_images(
    dataset: Dataset, built: dict[str, list[Question]], roots: ImageRoots, out_dir: Path
) -> ImageCheck:
    """Screen the item images the ``describe+image`` variant may attach (when an image measure is built).

    Nothing is decoded here (eval checks each image it attaches in full); the
    counts go to the manifest so a refused image is known before any eval.
    """
    if not any(MEASURES_BY_ID[m].uses_images for m in built):
        return ImageCheck(roots=roots.to_json())
    allowed = ImageRoots.of([out_dir / "dataset"]) + roots
    screen = screen_images(dataset, allowed, out_dir / "dataset", decode=False)
    return ImageCheck(
        roots=roots.to_json(),
        checked=len(screen.kept) + len(screen.refused),
        refused=screen.reasons(),
        warning=screen.warning(),
    )


def build_suite(
    dataset: Dataset,
    config: BuildConfig,
    out_dir: Path,
    *,
    image_roots: ImageRoots | None = None,
    force: bool = False,
    progress: BuildProgress | None = None,
) -> SuiteManifest:
    """Build every applicable measure of ``dataset`` into ``out_dir``; returns the manifest as written.

    ``image_roots`` are the folders (besides ``SUITE/dataset``) item images may
    come from at eval time; the build records them and counts refused images.
    ``progress`` hears of each stage, measure and NeuMF epoch as it happens.
    """
    out_dir = Path(out_dir).expanduser().absolute()
    check_output_dir(out_dir, OUTPUT_KIND, force=force)  # refused before the work, not after
    started = time.perf_counter()
    planned, skipped = plan_measures(dataset, config)
    if not planned:
        raise DataError(f"dataset {dataset.name!r}: no measure can be built: {skipped}")
    ctx = BuildContext(
        dataset,
        config,
        on_stage=progress.stage if progress is not None else None,
        on_epoch=progress.epoch if progress is not None else None,
    )
    built = build_questions(ctx, planned, skipped, progress)
    if not built:
        raise DataError(f"dataset {dataset.name!r}: every measure was skipped: {skipped}")
    images = check_images(dataset, built, image_roots or ImageRoots(), out_dir)
    with output_directory(out_dir, OUTPUT_KIND, force=force) as tmp:
        with ctx.stage("write_questions"):
            hashes = _write_questions(tmp / "questions", built)
        with ctx.stage("write_dataset"):
            dataset.save(tmp / "dataset")
        if "neumf" in ctx.__dict__:  # trained for a neural measure: keep the space it ranked in
            emb = ctx.neumf
            space = SavedSpace(emb.user, emb.item, ctx.matrix.user_ids, ctx.matrix.item_ids)
            save_space(tmp / EMBEDDINGS_FOLDER, space)
        shortcuts = run_battery(ctx, built)  # timed as the "shortcuts" stage
        timings = {k: round(v, 4) for k, v in ctx.timings.items()}
        timings["total"] = round(time.perf_counter() - started, 4)
        manifest = _manifest(ctx, _Outcome(built, skipped, images, hashes, timings))
        manifest = manifest.model_copy(update={"shortcuts": shortcuts})
        match = read_report(dataset.source)
        if match is not None:  # the item-metadata join: full report beside the manifest, summary in it
            atomic_write_json(tmp / REPORT_NAME, match.to_json())
            manifest = manifest.model_copy(update={"metadata": match.summary()})
        manifest.write(tmp / MANIFEST_NAME)
    return manifest


def _write_questions(folder: Path, built: dict[str, list[Question]]) -> dict[str, str]:
    """One canonical JSON-lines file per measure; returns the SHA-256 of each."""
    folder.mkdir()
    hashes: dict[str, str] = {}
    for measure_id, questions in built.items():
        data = "".join(dumps_canonical(q.to_json()) + "\n" for q in questions).encode("utf-8")
        (folder / f"{measure_id}.jsonl").write_bytes(data)
        hashes[measure_id] = hashlib.sha256(data).hexdigest()
    return hashes


@dataclass(frozen=True)
class _Outcome:
    """What a build produced, for its manifest: questions, skips, the image check, hashes, timings."""

    built: dict[str, list[Question]]
    skipped: dict[str, str]
    images: ImageCheck
    hashes: dict[str, str]
    timings: dict[str, float]


def _manifest(ctx: BuildContext, outcome: _Outcome) -> SuiteManifest:
    dataset, config = ctx.dataset, ctx.config
    if ctx.imported_sequences:  # asked once at the last item: a sequence needs a history and that item
        short = int((ctx.sequences.lengths < 2).sum())
        rule = "an imported sequence needs at least 2 items (a history and the item asked about)"
    else:
        short = int((ctx.sequences.lengths < config.min_history + 1).sum())
        rule = (
            f"a user needs at least {config.min_history + 1} interactions "
            f"({config.min_history} earlier items and a next item) to be a question's user"
        )
    return SuiteManifest(
        dataset=dataset.name,
        domain=dataset.domain.value,
        fingerprint=dataset.fingerprint(),
        summary=dataset.summary(),
        config=config,
        seed=config.seed,
        counts={m: len(qs) for m, qs in outcome.built.items()},
        skipped=dict(sorted(outcome.skipped.items())),
        users_skipped=UsersSkipped(too_short_history=short, rule=rule),
        created_by=f"recworld {__version__}",
        generator=GENERATOR_VERSION,
        questions_sha256=outcome.hashes,
        timings=outcome.timings,
        images=outcome.images,
        neumf=neumf_record(ctx),
        gates=ctx.gates.records(),
        filters={m: _filters(f) for m, f in sorted(ctx.filters.items())},
    )


def _filters(record: MeasureFilter) -> MeasureFilters:
    dropped = dict(sorted(record.dropped.items()))
    merged = dict(sorted(record.merged.items()))
    return MeasureFilters(
        windows=record.windows, tied_windows=record.tied_windows, dropped=dropped, merged=merged
    )
