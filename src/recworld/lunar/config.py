"""Typed configs of the LUNAR library API: one per stage, one :class:`SessionConfig` per model.

Each stage function in :mod:`recworld.lunar.api` takes one of these and writes it into
what it produces (``manifest.json``, ``queries_run.json``, ``eval/*/*/run.json``), so a
folder says how it was made. Every config forbids unknown fields, so a typo in a
Python caller or a config file fails instead of being ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field

from recworld.lunar.contexts import ContextSetting

if TYPE_CHECKING:
    from recworld.models import ModelConfig
    from recworld.runner import RunnerConfig

# Above this fraction of failed pieces a stage writes what it has and exits 3 (as ``recworld eval``).
DEFAULT_FAIL_ON_ERROR = 0.05
Fraction = Annotated[float, Field(ge=0.0, le=1.0)]


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SessionConfig(_Config):
    """How to reach one model (answer model, judge or generator), built once per model.

    Each model has its own ``base_url`` and ``api_key_env``: a key goes only to the
    server of the model it belongs to. ``api_key_env`` is the NAME of the variable;
    the key itself is never stored.
    """

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    allow_insecure_http: bool = False
    n_ctx: int = Field(default=4096, ge=256)
    concurrency: int = Field(default=4, ge=1)
    # Local CPU models under load can need minutes per structured call; a runner timeout
    # shorter than that retries forever behind the busy model, so the default is generous.
    timeout_s: float = Field(default=900.0, gt=0)
    max_retries: int = Field(default=6, ge=0)
    # Tries per structured output (invalid replies), on top of the runner's transport retries.
    max_attempts: int = Field(default=3, ge=1, le=10)
    max_tokens: int = Field(default=512, ge=1)
    seed: int = 0
    # None: compact decoding (short strings, fixed-length arrays) for local llama.cpp models,
    # which loop under greedy decoding of a full schema; full schemas for servers.
    compact: bool | None = None
    # --retry-failures: a cached reply that is rejected again is asked anew past the cache
    # (recworld.lunar.fresh). Off by default, so a rerun replays cached replies for free.
    retry_failures: bool = False

    @property
    def compact_decoding(self) -> bool:
        return self.compact if self.compact is not None else self.model.startswith("llamacpp:")

    def backend_config(self) -> ModelConfig:
        from recworld.models import ModelConfig

        options: dict[str, object] = {
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "n_ctx": self.n_ctx,
            "seed": self.seed,
        }
        if self.allow_insecure_http:  # only sent when asked for: older ModelConfigs lack the field
            options["allow_insecure_http"] = True
        return ModelConfig.model_validate(options)

    def runner_config(self) -> RunnerConfig:
        from recworld.runner import RunnerConfig

        return RunnerConfig(
            concurrency=self.concurrency,
            max_retries=self.max_retries,
            timeout_s=self.timeout_s,
            progress=False,  # LUNAR draws its own progress per piece (recworld.lunar.tracking)
            seed=self.seed,
        )


class EmbedderConfig(_Config):
    """A text embedder (``minilm``, ``st:NAME`` or ``openai:MODEL``) and, for ``openai:``, its server."""

    spec: str = "minilm"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    allow_insecure_http: bool = False
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=6, ge=0)


class SynthOptions(_Config):
    """The generation knobs of synthesis (what the paper's method varies)."""

    weeks: int = Field(default=2, ge=1, le=52)
    max_slots_per_day: int = Field(default=4, ge=1, le=6)
    # Days of each week that get slot plans and records (the first N); 7 = all. Tiny runs use 1.
    active_days: int = Field(default=7, ge=1, le=7)
    max_records_per_slot: int = Field(default=3, ge=1, le=6)
    consistency_threshold: float = Field(default=0.6, ge=0.0, le=1.0)
    max_regenerations: int = Field(default=1, ge=0, le=5)
    validate_weeks: bool = True
    use_anchors: bool = True


class SynthConfig(_Config):
    """``recworld.lunar.synthesize``: anchors in, a de-identified dataset folder out."""

    anchors: str  # a fetched dataset name, a dataset folder, CSV/JSONL logs, or a comma list (lunar-demo)
    # Only users active in at least this many domains are drawn (multi-domain anchors).
    min_domains: int = Field(default=1, ge=1, le=13)
    # An editable source-category -> domain table on top of recworld/lunar/domains.json.
    domain_map: Path | None = None
    # IANA zone for users whose demographic record has none (hours, weekdays, week starts).
    timezone: str | None = None
    out_dir: Path
    users: int = Field(default=1, ge=1)
    seed: int = 0  # which anchor users are drawn
    llm: SessionConfig
    # Adds an embedding cosine to the backward consistency check.
    embedder: EmbedderConfig | None = None
    options: SynthOptions = SynthOptions()
    fail_on_error: Fraction = DEFAULT_FAIL_ON_ERROR


class QueriesConfig(_Config):
    """``recworld.lunar.make_queries``: queries and rubrics for a synthesised folder."""

    root: Path
    llm: SessionConfig
    per_user: int = Field(default=2, ge=1)
    seed: int = 0
    fail_on_error: Fraction = DEFAULT_FAIL_ON_ERROR
    # Ranks each domain's records by relevance to the query for evidence; None: word overlap.
    embedder: EmbedderConfig | None = None


ALL_CONTEXTS = (ContextSetting.NONE, ContextSetting.FULL, ContextSetting.CURATED, ContextSetting.RAG)


class LunarEvalConfig(_Config):
    """``recworld.lunar.evaluate``: answer every query under each context, judge each answer."""

    root: Path
    answer: SessionConfig
    judge: SessionConfig
    embedder: EmbedderConfig = EmbedderConfig()
    contexts: tuple[ContextSetting, ...] = Field(default=ALL_CONTEXTS, min_length=1)
    # A cap on the full context's budget; None: the answer model's window minus the answer,
    # system prompt and request, counted with its tokenizer (recworld.lunar.budget).
    budget_tokens: int | None = Field(default=None, ge=1)
    rag_k: int = Field(default=30, ge=1)
    # The generic baseline answer is written with 256 tokens (rubrics.generic_answer); targets get the same.
    answer_max_tokens: int = Field(default=256, ge=1)
    seed: int = 0
    fail_on_error: Fraction = DEFAULT_FAIL_ON_ERROR
    # Score every answer with the single-response privacy judge too (privacy.jsonl).
    privacy: bool = True
    memory_k: int = Field(default=50, ge=1)  # facts retrieved for the memory context
    qdrant_url: str | None = None  # a Qdrant server for the memory context; None: embedded under root


class ReportConfig(_Config):
    """``recworld.lunar.write_report``: the tables and figures of a LUNAR folder."""

    root: Path
    # A --no-anchors synth folder for the JSD ablation.
    baseline: Path | None = None
    seed: int = 0
    # Another behaviour dataset for the external JSD (Table 3), and the zone of its timestamps.
    reference: str | None = None
    reference_timezone: str | None = None
