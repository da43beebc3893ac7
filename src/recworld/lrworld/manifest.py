"""``manifest.json``: the versioned record of how a suite was built, written and read by one class.

``recworld.manifest/2`` adds the image roots the build was given (the
``describe+image`` variant resolves item images against them at eval time)
and the count of item images the build refused. ``/3`` adds what the build
checked and left out: ``gates`` (ground-truth gates and what they skipped),
``filters`` (per measure: tied windows never asked, questions dropped by
reason) and ``shortcuts`` (the shortcut battery). Older manifests still read:
a ``/1`` suite allows images from ``SUITE/dataset`` only, and ``/1``/``/2``
suites have no gates, filters or shortcuts recorded. ``/4`` (issue 24) asks
next events as sets and cuts histories at time boundaries (``filters.merged``
counts it), adds label support and margins to the config (a ``/1``-``/3``
config reads back with the values those builds used,
:data:`~recworld.lrworld.config.LEGACY_LABEL_RULES`), and adds to
``shortcuts`` the option-only rows (answer priors, a cross-fitted option
model), the 2-SE flag rule and each measure's verdict and debiased subset.

``config`` is the :class:`~recworld.lrworld.config.BuildConfig` itself, so a
suite's config reads back as the object it was built with (fields added to the
config since a suite was built take their defaults, which are the old behaviour).
A later section of the build record is one more optional field here, defaulting
to None for suites built before it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from recworld.data.metadata_match import MetadataSummary
from recworld.lrworld.config import LEGACY_LABEL_RULES, BuildConfig
from recworld.records import FrozenRecord

MANIFEST_NAME = "manifest.json"
MANIFEST_SCHEMA: Literal["recworld.manifest/4"] = "recworld.manifest/4"


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
    """How well the space behind the neu_* ground truth ranks held-out items, against popularity.

    The questions rank by cosine in ``space`` (``gmf_cosine``: NeuMF's GMF
    factors, trained to rank by cosine; docs/mining.md), so the gate is on
    that space: ``verdict`` is ``beats_popularity`` when ``hr_at_10_embedding``
    exceeds ``hr_at_10_popularity`` by more than ``WEAK_NEUMF_Z`` standard
    errors of the paired per-user gap (``embedding_gap_se``); ``weak``
    otherwise (the neu_* measures are skipped, unless ``allow_weak_neumf``;
    ``require_neural`` makes it fatal); ``unchecked`` when no user could be
    held out (``eval_users=0`` or tiny data). ``hr_at_10`` and ``gap_se`` are
    the fused model's, for reference.
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
    space: str | None = None  # what the questions rank in (None: a manifest from before the gate moved)
    embedding_gap_se: float | None = None
    gmf_tau: float | None = None  # the GMF branch's learned temperature (its logit is tau * cosine)


# -- what the build checked and left out ------------------------------------


class GateCheck(FrozenRecord):
    """One ground-truth gate: a signal the measures rest on, checked before they are built.

    ``outcome``: ``built`` (passed), ``skipped`` (failed: the measures are in
    ``SuiteManifest.skipped``, the rest of the suite was written), or
    ``built_weak`` (failed, built anyway on request). ``figures`` are the
    numbers the verdict came from.
    """

    gate: str  # "neural": the NeuMF cosine space against popularity on held-out HR@10
    measures: list[str] = Field(default_factory=list)
    passed: bool
    outcome: Literal["built", "skipped", "built_weak"]
    reason: str
    figures: dict[str, float | int | None] = Field(default_factory=dict)


class MeasureFilters(FrozenRecord):
    """What one measure's builder left out, so a reader knows what the questions are a sample of.

    ``windows`` counts the leave-one-out windows that met the history rule
    (``None`` for measures without windows); ``tied_windows`` of them lie
    inside a next event that starts earlier (same user and timestamp as the
    item before) and are asked as that event (before manifest/4: never asked).
    ``merged`` counts asked questions a tie rule reshaped (``next_event_set``:
    the next event had several items, all right; ``history_cut_at_tie``;
    ``tied_top_rules``; ``weaker_consequents_may_be_negatives``).
    ``dropped`` counts visited targets or windows that gave no question, by
    reason (``positive_reads_like_target``, ``next_item_twin_in_history``,
    ``too_few_negatives``, ...; docs/lrworld.md lists them).
    """

    windows: int | None = None
    tied_windows: int = Field(default=0, ge=0)
    dropped: dict[str, int] = Field(default_factory=dict)
    merged: dict[str, int] = Field(default_factory=dict)  # manifest/4: asked questions a tie rule reshaped


class ShortcutScore(FrozenRecord):
    """One shortcut baseline's score on one measure's questions, against chance.

    ``score`` is the mean hit (a tie among k options counts 1/k when the answer
    is among them), computed exactly and reported 0.5e-9 to 1.5e-9 above it, so
    that a float sum in another order never exceeds it; ``ci_low``/``ci_high``
    are the 95 % Wilson score interval over the ``n`` questions. ``flagged``
    when the score beats chance by more than 2 standard errors of a chance
    guesser (``se``: sqrt(c(1 - c)/n)); suites built before manifest/4
    flagged when the Wilson interval lay above chance.
    ``option_only``: the shortcut reads the options alone (no target, no
    history). ``remedy`` names what works against it.
    """

    measure: str
    shortcut: str
    n: int = Field(ge=0)
    score: float
    chance: float
    ci_low: float
    ci_high: float
    flagged: bool
    remedy: str | None = None
    se: float | None = None
    option_only: bool = False


class MeasureShortcuts(FrozenRecord):
    """One measure's verdict: its strongest shortcut, whether any row is flagged, and the debiased subset.

    ``solved`` lists the questions (their line in the measure's file, which is
    the number their id ends with) whose answer a flagged option-only shortcut
    picks (is among its top-scored options); the other ``debiased_n``
    questions are the debiased subset the report scores models on too.
    """

    measure: str
    n: int = Field(ge=0)
    chance: float
    strongest: str
    strongest_score: float
    flagged: bool
    flagged_shortcuts: list[str] = Field(default_factory=list)
    remedy: str | None = None
    solved: list[int] = Field(default_factory=list)
    debiased_n: int = Field(ge=0)


class ShortcutReport(FrozenRecord):
    """The shortcut battery run on a suite's own questions at build time (nothing model-based)."""

    interval: str = "95% Wilson score interval over questions"
    flag_rule: str = "score - chance > 2 * sqrt(chance * (1 - chance) / n)"
    rows: list[ShortcutScore] = Field(default_factory=list)
    measures: dict[str, MeasureShortcuts] = Field(default_factory=dict)  # empty before manifest/4

    @property
    def flagged(self) -> list[ShortcutScore]:
        return [row for row in self.rows if row.flagged]


class SuiteManifest(FrozenRecord):
    """One suite's build record: data identity, config, counts, skips, hashes and timings."""

    schema_id: Literal[
        "recworld.manifest/1", "recworld.manifest/2", "recworld.manifest/3", "recworld.manifest/4"
    ] = Field(default=MANIFEST_SCHEMA, alias="schema")
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
    gates: list[GateCheck] = Field(default_factory=list)  # ground-truth gates checked (neural, ...)
    filters: dict[str, MeasureFilters] = Field(default_factory=dict)  # per measure: what was left out
    shortcuts: ShortcutReport | None = None  # the shortcut battery on the suite's own questions

    @model_validator(mode="before")
    @classmethod
    def _legacy_label_rules(cls, data: Any) -> Any:
        """A suite from before manifest/4 was built without support, margins or rule near-ties: say so."""
        if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
            return data
        if data.get("schema", data.get("schema_id")) in (None, MANIFEST_SCHEMA):
            return data
        config = {**LEGACY_LABEL_RULES, **data["config"]}
        return {**data, "config": config}


def read_manifest(suite_dir: str | Path) -> SuiteManifest:
    """The manifest of ``suite_dir``; a missing or malformed one is one DataError naming the field."""
    path = Path(suite_dir) / MANIFEST_NAME
    return SuiteManifest.read(path, missing=f"{MANIFEST_NAME} not found: is this a suite directory?")
