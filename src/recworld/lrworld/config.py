"""The build configuration: every knob that changes which questions a suite holds.

It is validated on input (``extra="forbid"`` catches typos) and written whole
into ``manifest.json`` (``SuiteManifest.config``, typed as this class), so a
suite can be rebuilt exactly and its config read back as the same object.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from recworld.console.options import Flag, NoFlag, comma_list
from recworld.lrworld.catalogue import MEASURES_BY_ID
from recworld.mining import NeuMFConfig
from recworld.records import MAX_INT, FrozenRecord, Seed, Settings

# The paper's leave-one-out example is (i1..i5) -> i6: five items of history.
PAPER_HISTORY_LENGTH = 5
# LLaRA's LastFM test sequences (paper §5.5) hold up to ten artists before the next one.
LLARA_HISTORY_LENGTH = 10
# Label margins and support (ours: the paper is silent), declared here so the manifest records them.
MEMORY_MIN_SUPPORT = 3
MEMORY_MARGIN = 0.005
RULE_MARGIN = 0.05
# What a suite built before manifest/4 used (no support floor, no margin, every consequent kept out).
LEGACY_LABEL_RULES: dict[str, object] = {"memory_min_support": 1, "memory_margin": 0.0, "rule_margin": None}
LABEL_RULES = tuple(LEGACY_LABEL_RULES)
_LABEL_RULE = NoFlag("set together through --label-rules KEY=VALUE,... (recworld build)")


class BuildConfig(FrozenRecord, Settings):
    """How to build an LRWorld suite from a dataset.

    Each field's ``description`` is its ``recworld build --help`` text and its flag
    is generated (:mod:`recworld.console.options`); the label rules are set through
    ``--label-rules`` (:class:`~recworld.lrworld.build_options.BuildOptions`) and
    NeuMF's training knobs are the library's (each marked :class:`NoFlag`).
    """

    seed: Annotated[Seed, Field(description="Seed of every random draw in the build.")] = 0
    per_measure: int = Field(
        1000, ge=1, le=MAX_INT, description="Questions per measure (fewer if fewer targets exist)."
    )
    measures: Annotated[
        tuple[str, ...] | None,
        Field(description="Comma-separated measure ids (default: all that apply)."),
        Flag(parse=comma_list, cli_type=str, metavar="IDS"),
    ] = None
    min_support: float = Field(
        0.01, gt=0.0, le=1.0, description="assoc_rule: minimum rule support (the paper's default)."
    )
    min_confidence: float = Field(
        0.01, gt=0.0, le=1.0, description="assoc_rule: minimum rule confidence (the paper's default)."
    )
    min_similarity: float = Field(
        0.01,
        ge=0.0,
        le=1.0,
        description="Memory CF: a target's top cosine must reach this (the paper's default).",
    )
    memory_min_support: Annotated[int, _LABEL_RULE] = Field(
        MEMORY_MIN_SUPPORT,
        ge=1,
        le=1_000_000,
        description="memory CF: the answer must share at least this many users (items) with the target "
        "(ours; the paper states none: two items met by one same user have cosine 1.0)",
    )
    memory_margin: Annotated[float, _LABEL_RULE] = Field(
        MEMORY_MARGIN,
        ge=0.0,
        le=1.0,
        description="memory CF: the top cosine must beat the runner-up (the best below the tie) by this "
        "much (ours; the paper states none)",
    )
    rule_margin: Annotated[float | None, _LABEL_RULE] = Field(
        RULE_MARGIN,
        ge=0.0,
        le=1e6,  # lift is unbounded above; a margin past any real lift is "every consequent"
        description="assoc_rule: consequents of the antecedent within this of the top metric are neither "
        "answer nor negative; weaker ones may be negatives (None: no consequent is ever a negative, "
        "the behaviour before manifest/4)",
    )
    history_length: int = Field(
        PAPER_HISTORY_LENGTH,
        ge=1,
        le=1 << 16,
        description="Items of history shown to the model, most recent last (the paper: 5).",
    )
    min_history: int = Field(
        PAPER_HISTORY_LENGTH,
        ge=1,
        le=MAX_INT,
        description="A user needs this many earlier items to be a question's user.",
    )
    neumf: Annotated[
        NeuMFConfig,
        NoFlag("NeuMF's training knobs are the library's (tests and benches shrink them; docs/mining.md)"),
    ] = Field(default_factory=NeuMFConfig)
    allow_weak_neumf: bool = Field(
        False,
        description="Build the neu_* measures even if the NeuMF cosine space does not beat popularity on "
        "held-out HR@10 (otherwise they are skipped, with the figures in the manifest).",
    )
    kmeans_clusters: int = Field(
        10, ge=1, le=1 << 20, description="Neural measures: targets spread over this many k-means clusters."
    )
    distractors: Literal["uniform", "popularity"] = Field(
        "uniform",
        description="Attribute MCQ wrong values: 'uniform' (the paper, §4) or 'popularity' (weighted by "
        "how often users met items carrying them, so the answers' prior does not point at the answer).",
    )
    negatives: Literal["uniform", "popularity", "matched"] = Field(
        "uniform",
        description="hit@1 negatives: 'uniform' (the paper), 'popularity' (weighted by interaction count) "
        "or 'matched' (from the positive's popularity bin, 1/30 of the catalogue).",
    )

    taxo_level: int = Field(
        1,
        ge=1,
        le=1000,
        description="taxo_interm: category depth asked (1 = directly under the root, the paper's "
        "Figure 2); answer and wrong options come from that one level.",
    )
    rules: Literal["confidence", "lift"] = Field(
        "confidence",
        description="assoc_rule ground truth: rank an antecedent's consequents by 'confidence' (the paper) "
        "or 'lift' (rules still need --min-support and --min-confidence); the positive is the top one.",
    )
    history_text: Literal["text", "title"] = Field(
        "text",
        description="Attribute MCQ history lines: 'text' (title, year, genres / brand, category: the "
        "paper's, which often shows the asked value) or 'title' (so the asked value is not on screen).",
    )
    require_neural: bool = Field(
        False,
        description="Fail (exit 3, nothing written) when the NeuMF cosine space does not beat popularity, "
        "instead of skipping the neu_* measures with the figures in the manifest.",
    )
    lastfm_history: int = Field(
        LLARA_HISTORY_LENGTH,
        ge=1,
        le=1 << 16,
        description="LastFM measures: items of history shown (LLaRA: 10).",
    )

    @field_validator("measures")
    @classmethod
    def _known_measures(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        unknown = [m for m in value if m not in MEASURES_BY_ID]
        if unknown:
            raise ValueError(f"unknown measure(s) {unknown}; known: {', '.join(MEASURES_BY_ID)}")
        if len(set(value)) != len(value):
            raise ValueError("measures are listed twice")
        return value

    @model_validator(mode="after")
    def _one_neural_policy(self) -> BuildConfig:
        """A weak NeuMF space cannot be both fatal and built anyway: neither flag may silently win."""
        if self.require_neural and self.allow_weak_neumf:
            raise ValueError(
                "--require-neural and --allow-weak-neumf contradict each other (fail on a weak NeuMF "
                "space, or build its measures anyway): give one"
            )
        return self
