"""``build_suite``: turn a dataset and a build config into a suite directory, atomically.

The suite is assembled in a temporary sibling and renamed into place, so a
failure leaves no partial directory. Question files are canonical JSON lines
and depend only on (data, config, seed); everything that varies between runs
(timings) is confined to ``manifest.json``.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from recworld import __version__
from recworld.data.dataset import Dataset
from recworld.errors import ConfigError, DataError
from recworld.io import atomic_directory, atomic_write_json, dumps_canonical
from recworld.lrworld.builders import BUILDERS
from recworld.lrworld.catalogue import MEASURES, MEASURES_BY_ID, Measure
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.context import BuildContext
from recworld.lrworld.schema import Question
from recworld.seeding import rng

MANIFEST_SCHEMA = "recworld.manifest/1"
# Bump when a builder change alters the questions produced for the same data, config and seed.
# 2: neu_* targets come from k-means fitted on a 20k-point sample when more than 20k users or
#    items qualify (recworld.mining.clusters); smaller datasets give the same questions as 1.
GENERATOR_VERSION = "lrworld-builder/2"


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
        elif measure.id not in BUILDERS:
            skipped[measure.id] = "no builder registered"
        else:
            planned.append(measure)
    return planned, skipped


def build_questions(
    ctx: BuildContext, planned: list[Measure], skipped: dict[str, str]
) -> dict[str, list[Question]]:
    """Run each planned builder with its own child RNG; record skips and exclusive timings."""
    built: dict[str, list[Question]] = {}
    for measure in planned:
        builder = BUILDERS[measure.id]
        before = sum(ctx.timings.values())
        start = time.perf_counter()
        reason = builder.unavailable(ctx)
        questions = [] if reason else builder.build(ctx, measure, rng(ctx.config.seed, "build", measure.id))
        # Shared signals computed on first use are timed under their own stage names.
        shared = sum(ctx.timings.values()) - before
        ctx.timings[f"measure:{measure.id}"] = time.perf_counter() - start - shared
        if reason:
            skipped[measure.id] = reason
        elif not questions:
            skipped[measure.id] = "no target qualified (see docs/lrworld.md for the rules)"
        else:
            built[measure.id] = questions
    return built


def _check_out_dir(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"{out_dir}: exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / "manifest.json").exists():
        raise ConfigError(f"{out_dir}: exists, is not empty and is not a suite; refusing to replace it")


def build_suite(dataset: Dataset, config: BuildConfig, out_dir: Path) -> dict[str, Any]:
    """Build every applicable measure of ``dataset`` into ``out_dir``; returns the manifest."""
    out_dir = Path(out_dir)
    _check_out_dir(out_dir)
    started = time.perf_counter()
    planned, skipped = plan_measures(dataset, config)
    if not planned:
        raise DataError(f"dataset {dataset.name!r}: no measure can be built: {skipped}")
    ctx = BuildContext(dataset, config)
    built = build_questions(ctx, planned, skipped)
    if not built:
        raise DataError(f"dataset {dataset.name!r}: every measure was skipped: {skipped}")

    short = int((ctx.sequences.lengths < config.min_history + 1).sum())
    manifest: dict[str, Any] = {
        "schema": MANIFEST_SCHEMA,
        "dataset": dataset.name,
        "domain": dataset.domain.value,
        "fingerprint": dataset.fingerprint(),
        "summary": dataset.summary(),
        "config": config.model_dump(mode="json"),
        "seed": config.seed,
        "counts": {m: len(qs) for m, qs in built.items()},
        "skipped": dict(sorted(skipped.items())),
        "users_skipped": {
            "too_short_history": short,
            "rule": f"a user needs at least {config.min_history + 1} interactions "
            f"({config.min_history} earlier items and a next item) to be a question's user",
        },
        "created_by": f"recworld {__version__}",
        "generator": GENERATOR_VERSION,
    }
    with atomic_directory(out_dir) as tmp:
        hashes: dict[str, str] = {}
        with ctx.stage("write_questions"):
            (tmp / "questions").mkdir()
            for measure_id, questions in built.items():
                data = "".join(dumps_canonical(q.to_json()) + "\n" for q in questions).encode("utf-8")
                (tmp / "questions" / f"{measure_id}.jsonl").write_bytes(data)
                hashes[measure_id] = hashlib.sha256(data).hexdigest()
        with ctx.stage("write_dataset"):
            dataset.save(tmp / "dataset")
        manifest["questions_sha256"] = hashes
        manifest["timings"] = {k: round(v, 4) for k, v in ctx.timings.items()}
        manifest["timings"]["total"] = round(time.perf_counter() - started, 4)
        atomic_write_json(tmp / "manifest.json", manifest)
    return manifest
