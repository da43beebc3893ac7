"""Typed configs of the LUNAR library API: one per stage, each setting declared once.

Each stage function in :mod:`recworld.lunar.api` takes one of these and writes it into
what it produces (``manifest.json``, ``queries_run.json``, ``eval/*/*/run.json``), so a
folder says how it was made and reads back as the same typed config. Every config
forbids unknown fields, so a typo in a Python caller fails instead of being ignored.

A field here is the one declaration of a setting: type, bounds, default, and its help
(``description``) and flag (:class:`~recworld.console.options.Flag`) for the command
line, which :mod:`recworld.lunar.cli` generates from these classes. The models of a
stage are :class:`~recworld.lunar.llm.config.SessionConfig`\\ s (nesting the backend's
``ModelConfig`` and the Runner's ``RunnerConfig``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    Field,
    SerializeAsAny,
    ValidationError,
    field_validator,
    model_validator,
)

from recworld.console.options import Flag, Force, comma_list
from recworld.lunar.contexts.base import (
    ASSISTANT_PROMPTS,
    DEFAULT_ASSISTANT_PROMPT,
    AssistantPrompt,
    context_setting,
    default_contexts,
    default_privacy_contexts,
    registered,
    setting_roles,
)
from recworld.lunar.contexts.roles import RoleModel
from recworld.lunar.llm.config import EmbedderConfig, SessionConfig
from recworld.records import MAX_INT, MAX_TOKENS, FrozenRecord, Record, Seed, Settings
from recworld.runner import DEFAULT_FAIL_ON_ERROR, FailOnError

# The output marker kind of a LUNAR run folder: lunar synth marks it, later stages require it.
RUN_KIND = "lunar-run"

# The generic baseline answer is written with 256 tokens (rubrics.generic_answer); targets get the same.
AnswerMaxTokens = Annotated[
    int,
    Field(ge=1, le=MAX_TOKENS, description="Answer length cap (the generic baseline's is 256)."),
    Flag("--max-tokens"),
]


def _seed(what: str) -> Any:
    return Field(description=f"Seed of {what}, sampling and backoff jitter.")


# The zone of users whose released profile records none (recworld.lunar.localtime): what a model
# is shown of a record is local time.
UserZone = Annotated[
    str | None,
    Field(description="IANA zone of users whose profile records none, e.g. America/Chicago."),
    Flag("--timezone", default_help="each profile's own zone, else UTC"),
]


class SynthOptions(FrozenRecord, Settings):
    """The generation knobs of synthesis (what the paper's method varies)."""

    weeks: Annotated[int, Field(ge=1, le=52, description="Weeks per user.")] = 1
    max_slots_per_day: Annotated[
        int, Field(ge=1, le=6, description="Slots per day."), Flag("--max-slots")
    ] = 4
    # Days of each week that get slot plans and records (the first N); 7 = all. Tiny runs use 1.
    active_days: Annotated[int, Field(ge=1, le=7, description="Days per week given slots.")] = 7
    max_records_per_slot: Annotated[
        int, Field(ge=1, le=6, description="Records per slot."), Flag("--max-records")
    ] = 3
    consistency_threshold: Annotated[
        float,
        Field(ge=0.0, le=1.0, description="Week consistency needed to accept a plan."),
        Flag("--threshold"),
    ] = 0.6
    max_regenerations: Annotated[
        int, Field(ge=0, le=5, description="Re-plans of a weak week."), Flag("--regenerations")
    ] = 1
    validate_weeks: Annotated[
        bool, Field(description="Run the week consistency checks."), Flag("--validate/--no-validate")
    ] = True
    use_anchors: Annotated[
        bool,
        Field(description="Use the real records (--no-anchors: the JSD ablation)."),
        Flag("--use-anchors/--no-anchors"),
    ] = True


class SynthConfig(FrozenRecord, Settings):
    """``recworld.lunar.synthesize``: anchors in, a de-identified dataset folder out."""

    anchors: Annotated[
        str,
        Field(
            description="Fetched dataset name, dataset folder, CSV/JSONL logs, a comma list of them merged "
            "by user id, or lunar-demo (shipped multi-domain Amazon 2018 fixture)."
        ),
    ]
    min_domains: Annotated[
        int, Field(ge=1, le=13, description="Draw only users active in this many domains.")
    ] = 1
    domain_map: Annotated[
        Path | None, Field(description="JSON table: source category -> domain and type.")
    ] = None
    timezone: Annotated[
        str | None, Field(description="IANA zone of users without one, e.g. America/Chicago.")
    ] = None
    out_dir: Annotated[Path, Field(description="Output folder (the run folder)."), Flag("--out")]
    force: Force = False
    users: Annotated[int, Field(ge=1, le=MAX_INT, description="Anchor users to synthesise.")] = 1
    seed: Annotated[Seed, _seed("the anchor draw, the privacy attacks")] = 0
    llm: SessionConfig
    # Adds an embedding cosine to the backward consistency check.
    embedder: EmbedderConfig | None = None
    options: SynthOptions = SynthOptions()
    fail_on_error: FailOnError = DEFAULT_FAIL_ON_ERROR
    # The release is refused when the upper end of any Anonymeter risk's 95% interval exceeds this.
    max_risk: Annotated[
        float, Field(ge=0.0, le=1.0, description="Highest risk (upper 95% bound) a release may have.")
    ] = 0.05
    accept_risk: Annotated[
        bool, Field(description="Publish dataset/ even when a measured risk is above --max-risk.")
    ] = False


class QueriesConfig(FrozenRecord, Settings):
    """``recworld.lunar.make_queries``: queries and rubrics for a synthesised folder."""

    root: Path
    llm: SessionConfig
    per_user: Annotated[int, Field(ge=1, le=MAX_INT, description="Queries per user.")] = 2
    seed: Annotated[Seed, _seed("the exemplar draw")] = 0
    fail_on_error: FailOnError = DEFAULT_FAIL_ON_ERROR
    # Ranks each domain's records by relevance to the query for evidence; None: word overlap.
    embedder: EmbedderConfig | None = None
    timezone: UserZone = None


def _options_of(name: str, value: Any) -> Record:
    """The options of context ``name``, validated by its registered options type."""
    kind = context_setting(name).options_type
    try:
        return value if isinstance(value, kind) else kind.model_validate(value)
    except ValidationError as exc:  # name the setting: "options.rag.k: ..." rather than "k: ..."
        first = exc.errors()[0]
        where = ".".join(["options", name, *(str(p) for p in first["loc"])])
        raise ValueError(f"{where}: {first['msg']}") from None


def _role_model(role: str, value: Any) -> RoleModel:
    """The model of a setting's declared ``role``, validated as its kind (a chat model or an embedder)."""
    roles = setting_roles()
    spec = roles.get(role)
    if spec is None:
        declared = ", ".join(roles) or "no role"
        raise ValueError(f"unknown role {role!r}; the registered settings declare: {declared}")
    kind = SessionConfig if spec.kind == "model" else EmbedderConfig
    try:
        return value if isinstance(value, kind) else kind.model_validate(value)
    except ValidationError as exc:  # name the role: "ROLE.backend.base_url: ..."
        first = exc.errors()[0]
        raise ValueError(f"{'.'.join([role, *(str(p) for p in first['loc'])])}: {first['msg']}") from None


def stored_eval_config(data: Any) -> Any:
    """A stored eval config (``run.json``'s ``config``) of an older form, with each role in ``roles``.

    Runs before ``roles`` (and the first runs with them) wrote each setting's model as a
    key of its own beside ``answer`` (``"memory": {...}``); only a stored record reads
    that form, never a keyword (see :class:`LunarEvalConfig`).
    """
    if not isinstance(data, Mapping):
        return data
    data = dict(data)
    flat = {role: data.pop(role) for role in setting_roles() if role in data}
    if flat:
        data["roles"] = {**flat, **dict(data.get("roles") or {})}
    return data


class LunarEvalConfig(FrozenRecord, Settings):
    """``recworld.lunar.evaluate_contexts``: answer every query under each context, judge each answer.

    ``contexts`` are registered setting names (:mod:`recworld.lunar.contexts`);
    ``options`` holds each setting's own options record by name (for example
    ``{"rag": RagOptions(k=10)}``, or the plain dict ``{"rag": {"k": 10}}``), and is
    filled with the defaults of every context run, so ``run.json`` says them all.

    ``roles`` holds the models the settings declare (:attr:`ContextSetting.roles
    <recworld.lunar.contexts.ContextSetting.roles>`), by role name:
    ``roles={"memory": SessionConfig(...)}``, the one spelling in Python and in
    ``run.json`` (``"roles": {...}``). A role is no keyword of its own:
    ``LunarEvalConfig(memory=...)`` is refused with an error naming ``roles={...}``
    (a type checker refuses it too). A role with a default is filled in for every
    context run. Run records written before, with each role a key beside ``answer``,
    read through :func:`stored_eval_config`.
    """

    root: Path
    answer: SessionConfig
    judge: SessionConfig
    embedder: EmbedderConfig = EmbedderConfig()
    contexts: Annotated[
        tuple[str, ...],
        Field(default_factory=default_contexts, min_length=1, description="Context settings."),
    ]
    # Each setting's own options, by setting name; on the command line they are the settings' flags.
    options: Annotated[dict[str, SerializeAsAny[Record]], Flag(cli=False)] = Field(default_factory=dict)
    answer_max_tokens: AnswerMaxTokens = 256
    seed: Annotated[Seed, _seed("the judge order")] = 0
    fail_on_error: FailOnError = DEFAULT_FAIL_ON_ERROR
    privacy: Annotated[
        bool,
        Field(description="Also score answers with the privacy judge (the contexts of --privacy-contexts)."),
        Flag("--privacy/--no-privacy"),
    ] = True
    # By default the settings that declare privacy_default (as the paper's Fig. 4); others on request.
    privacy_contexts: Annotated[
        tuple[str, ...],
        Field(min_length=1, description="Context settings whose answers the privacy judge scores."),
        Flag(
            "--privacy-contexts",
            parse=comma_list,
            cli_type=str,
            default_help=",".join(default_privacy_contexts()),
        ),
    ] = Field(default_factory=default_privacy_contexts)
    # The answering model's system prompt by name (contexts.base.ASSISTANT_PROMPTS): plain carries no
    # privacy instruction; discreet adds "do not recite it" (its runs go to eval/<model>@discreet/).
    assistant_prompt: Annotated[
        AssistantPrompt,
        Field(description="Answering system prompt: plain, or discreet (adds 'do not recite it')."),
        Flag("--assistant-prompt"),
    ] = DEFAULT_ASSISTANT_PROMPT
    timezone: UserZone = None
    # The settings' own models by role name (ContextSetting.roles): roles={"ROLE": SessionConfig(...)}.
    roles: Annotated[dict[str, RoleModel], Flag(cli=False)] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _read(cls, data: Any) -> Any:
        """Each setting's options and models typed by its registry entry; older runs' forms read into them."""
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        for setting in registered():  # what older runs wrote elsewhere (ContextSetting.read_old)
            data = setting.read_old(data)
        options = dict(data.get("options") or {})
        data["options"] = {name: _options_of(name, value) for name, value in options.items()}
        for role in setting_roles():
            if role in LunarEvalConfig.model_fields:
                raise TypeError(f"a context setting's role {role!r} is a LunarEvalConfig field; rename it")
            if role in data and role not in cls.model_fields:  # the CLI's options class has a field per role
                raise ValueError(
                    f"{role!r} is a context setting's model: give it as roles={{{role!r}: ...}}, "
                    f"not as {role}=..."
                )
        roles = dict(data.get("roles") or {})
        data["roles"] = {role: _role_model(role, value) for role, value in roles.items() if value is not None}
        return data

    @field_validator("contexts", "privacy_contexts")
    @classmethod
    def _registered(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            context_setting(name)  # an unknown name: a ConfigError naming the known ones
        return value

    @property
    def system_prompt(self) -> str:
        """The answering model's system prompt (:data:`~recworld.lunar.contexts.base.ASSISTANT_PROMPTS`)."""
        return ASSISTANT_PROMPTS[self.assistant_prompt]

    def judges_privacy(self, context: str) -> bool:
        """Whether the privacy judge scores the answers of ``context``."""
        return self.privacy and context in self.privacy_contexts

    @model_validator(mode="after")
    def _with_defaults(self) -> LunarEvalConfig:
        for name in self.contexts:
            if name not in self.options:
                self.options[name] = context_setting(name).options_type()
        for role, spec in setting_roles(self.contexts).items():
            if role not in self.roles and spec.default is not None:
                self.roles[role] = spec.default
        return self

    def options_of(self, name: str) -> Record:
        """The options record of the context setting ``name``."""
        return self.options.get(name) or context_setting(name).options_type()

    def role_models(self) -> list[RoleModel]:
        """The models of the roles the settings run declare, given or defaulted."""
        return [m for role in setting_roles(self.contexts) if (m := self.roles.get(role)) is not None]


class AblateConfig(FrozenRecord, Settings):
    """``recworld.lunar.ablate``: one answer model, one judge, the evidence variants of Table 5 and Fig. 3."""

    root: Path
    answer: SessionConfig
    judge: SessionConfig
    k_max: Annotated[int, Field(ge=1, le=8, description="Largest k of the scaling curve.")] = 4
    answer_max_tokens: AnswerMaxTokens = 256
    seed: Annotated[Seed, _seed("the evidence draws, the judge order")] = 0
    fail_on_error: FailOnError = DEFAULT_FAIL_ON_ERROR
    timezone: UserZone = None


# Records a rater sees per history, evenly spread: the LLM rater and the human sheet alike.
HISTORY_RECORDS = 60


class RateConfig(FrozenRecord, Settings):
    """``recworld.lunar.rate_quality``: which folder, which rater model, how much of each log it sees.

    The LLM rates exactly what the human sheet shows: the same history text (profile,
    weekly summaries and the same evenly spread records) for all seven history
    dimensions. ``max_records`` None takes the annotation sheet's count when one was
    exported (``lunar annotate``), else :data:`HISTORY_RECORDS`; a different count than
    the sheet's is refused, since the agreement would then compare different inputs.
    """

    root: Path
    llm: SessionConfig
    max_records: Annotated[
        int | None,
        Field(ge=1, le=MAX_INT, description="Records shown per history, evenly spread."),
        Flag(default_help=f"the annotation sheet's, else {HISTORY_RECORDS}"),
    ] = None
    queries: Annotated[bool, Field(description="Rate the queries too."), Flag("--queries/--no-queries")] = (
        True
    )
    fail_on_error: FailOnError = DEFAULT_FAIL_ON_ERROR
    timezone: UserZone = None


class ReportConfig(FrozenRecord, Settings):
    """``recworld.lunar.write_lunar_report``: the tables and figures of a LUNAR folder."""

    root: Path
    baseline: Annotated[
        Path | None, Field(description="A --no-anchors synth folder for the JSD ablation.")
    ] = None
    seed: Annotated[Seed, Field(description="Seed of the bootstrap intervals.")] = 0
    reference: Annotated[str | None, Field(description="Another behaviour dataset for the external JSD.")] = (
        None
    )
    reference_timezone: Annotated[str | None, Field(description="IANA zone of --reference's timestamps.")] = (
        None
    )
    # How a reference dataset's domain maps to a behaviour type; None: the table the run was
    # synthesised with (its manifest's domain_map, on top of the shipped domains.json).
    domain_map: Annotated[
        Path | None,
        Field(description="Domain table for --reference."),
        Flag(default_help="the one lunar synth used"),
    ] = None
