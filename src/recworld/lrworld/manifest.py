"""``manifest.json``: the versioned record of how a suite was built, written and read by one class.

``recworld.manifest/2`` adds the image roots the build was given (the
``describe+image`` variant resolves item images against them at eval time)
and the count of item images the build refused. A ``/1`` manifest still reads:
its suite allows images from ``SUITE/dataset`` only.

``config`` is the :class:`~recworld.lrworld.config.BuildConfig` itself, so a
suite's config reads back as the object it was built with (fields added to the
config since a suite was built take their defaults, which are the old behaviour).
A later section of the build record is one more optional field here, defaulting
to None for suites built before it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from recworld.data.metadata_match import MetadataSummary
from recworld.errors import DataError
from recworld.lrworld.config import BuildConfig
from recworld.records import FrozenRecord

MANIFEST_NAME = "manifest.json"
MANIFEST_SCHEMA: Literal["recworld.manifest/2"] = "recworld.manifest/2"


class UsersSkipped(FrozenRecord):
    too_short_history: int = Field(ge=0)
    rule: str


class ImageCheck(FrozenRecord):
    """What the build found among the item images the ``describe+image`` variant may attach."""

    roots: list[str] = Field(default_factory=list)  # folders images may come from, besides SUITE/dataset
    checked: int = Field(default=0, ge=0)  # local image references checked (0 when no image measure)
    refused: dict[str, int] = Field(default_factory=dict)  # reason -> count
    warning: str | None = None  # one line: counts and the first refusal in full


class NeuMFEpoch(FrozenRecord):
    """One training epoch: mean loss, what it trained on, and the validation HR@10 early stopping watched."""

    epoch: int = Field(ge=1)
    loss: float
    positives: int = Field(ge=0)
    examples: int = Field(ge=0)
    hr_at_10: float | None = None  # validation items, the model's own scores
    hr_at_10_embedding: float | None = None  # validation items, cosine in the published space


class NeuMFCheck(FrozenRecord):
    """How well the NeuMF behind the neu_* ground truth learned, against popularity on held-out items.

    ``verdict``: ``beats_popularity`` when the test HR@10 exceeds popularity's
    by more than ``WEAK_NEUMF_Z`` standard errors of the paired per-user gap;
    ``weak`` otherwise (the build fails unless ``allow_weak_neumf``);
    ``unchecked`` when no user could be held out (``eval_users=0`` or tiny data).
    """

    eval_users: int = Field(ge=0)
    eval_candidates: int | None = None
    epochs_run: int = Field(ge=0)
    best_epoch: int = Field(ge=0)
    stopped_early: bool
    curve: list[NeuMFEpoch] = Field(default_factory=list)
    hr_at_10: float | None = None  # test items, kept apart from early stopping
    hr_at_10_popularity: float | None = None
    hr_at_10_embedding: float | None = None
    gap_se: float | None = None
    verdict: Literal["beats_popularity", "weak", "unchecked"]
    allowed_weak: bool = False


class SuiteManifest(FrozenRecord):
    """One suite's build record: data identity, config, counts, skips, hashes and timings."""

    schema_id: Literal["recworld.manifest/1", "recworld.manifest/2"] = Field(
        default=MANIFEST_SCHEMA, alias="schema"
    )
    dataset: str
    domain: str
    fingerprint: str
    summary: dict[str, Any] = Field(default_factory=dict)
    config: BuildConfig
    seed: int
    counts: dict[str, int]
    skipped: dict[str, str] = Field(default_factory=dict)
    users_skipped: UsersSkipped
    created_by: str = ""
    generator: str = ""
    questions_sha256: dict[str, str] = Field(default_factory=dict)
    timings: dict[str, float] = Field(default_factory=dict)
    images: ImageCheck = Field(default_factory=ImageCheck)
    neumf: NeuMFCheck | None = None  # None when no neural measure trained NeuMF
    metadata: MetadataSummary | None = None  # --metadata coverage; full report: metadata_match.json


def read_manifest(suite_dir: str | Path) -> SuiteManifest:
    """The manifest of ``suite_dir``; a missing or malformed one is one DataError naming the field."""
    path = Path(suite_dir) / MANIFEST_NAME
    return SuiteManifest.read(path, missing=f"{MANIFEST_NAME} not found: is this a suite directory?")


def is_suite(folder: Path) -> bool:
    """True when ``folder`` holds a readable LRWorld manifest (suites built before output markers)."""
    try:
        read_manifest(folder)
    except DataError:
        return False
    return True
