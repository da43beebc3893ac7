"""``recworld lunar synth | queries | eval | report | ablate``: parse options, build configs, call the API.

Every command only validates its options into the typed configs of :mod:`recworld.lunar.config`
(:mod:`recworld.lunar.cli_options`) and calls :mod:`recworld.lunar.api`; nothing here
orchestrates. Output is :mod:`recworld.lunar.cli_output`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from recworld.console.output import JsonOption, ProgressOption
from recworld.lunar import cli_options as o
from recworld.lunar import cli_output as show
from recworld.lunar.config import DEFAULT_FAIL_ON_ERROR

lunar_app = typer.Typer(
    help="LUNAR: synthesise anchored behaviour logs, write queries and rubrics, evaluate and judge.",
    no_args_is_help=True,
)

Anchors = Annotated[
    str,
    typer.Option(
        "--anchors",
        help="Fetched dataset name, dataset folder, CSV/JSONL logs, a comma list of them merged by "
        "user id, or lunar-demo (shipped multi-domain Amazon 2018 fixture).",
    ),
]
Out = Annotated[Path, typer.Option("--out", help="Output folder (the run folder).")]
Users = Annotated[int, typer.Option("--users", min=1, help="Anchor users to synthesise.")]
Weeks = Annotated[int, typer.Option("--weeks", min=1, help="Weeks per user.")]
MaxSlots = Annotated[int, typer.Option("--max-slots", min=1, max=6, help="Slots per day.")]
ActiveDays = Annotated[int, typer.Option("--active-days", min=1, max=7, help="Days per week given slots.")]
MaxRecords = Annotated[int, typer.Option("--max-records", min=1, max=6, help="Records per slot.")]
Regenerations = Annotated[int, typer.Option("--regenerations", min=0, help="Re-plans of a weak week.")]
Threshold = Annotated[
    float, typer.Option("--threshold", min=0.0, max=1.0, help="Week consistency needed to accept a plan.")
]
NoAnchors = Annotated[bool, typer.Option("--no-anchors", help="Ablation: ignore the real records.")]
MinDomains = Annotated[
    int, typer.Option("--min-domains", min=1, max=13, help="Draw only users active in this many domains.")
]
DomainMap = Annotated[
    Path | None, typer.Option("--domain-map", help="JSON table: source category -> domain and type.")
]
Timezone = Annotated[
    str | None, typer.Option("--timezone", help="IANA zone of users without one, e.g. America/Chicago.")
]
NoValidate = Annotated[bool, typer.Option("--no-validate", help="Skip the week consistency checks.")]
SynthEmbedder = Annotated[
    str | None, typer.Option("--embedder", help="Add an embedding cosine to the backward check.")
]


@lunar_app.command("synth")
def synth(
    anchors: Anchors,
    out: Out,
    model: o.Model,
    users: Users = 1,
    weeks: Weeks = 1,
    max_slots: MaxSlots = 4,
    active_days: ActiveDays = 7,
    max_records: MaxRecords = 3,
    regenerations: Regenerations = 1,
    threshold: Threshold = 0.6,
    no_anchors: NoAnchors = False,
    min_domains: MinDomains = 1,
    domain_map: DomainMap = None,
    timezone: Timezone = None,
    no_validate: NoValidate = False,
    embedder: SynthEmbedder = None,
    embed_base_url: o.EmbedBaseUrl = None,
    embed_key_env: o.EmbedKeyEnv = "OPENAI_API_KEY",
    base_url: o.BaseUrl = None,
    api_key_env: o.ApiKeyEnv = "OPENAI_API_KEY",
    attempts: o.Attempts = 3,
    concurrency: o.Concurrency = 4,
    timeout: o.Timeout = 900.0,
    max_retries: o.MaxRetries = 6,
    seed: o.Seed = 0,
    compact: o.Compact = None,
    allow_insecure_http: o.Insecure = False,
    fail_on_error: o.FailOnError = DEFAULT_FAIL_ON_ERROR,
    retry_failures: o.RetryFailures = False,
    dry_run: o.DryRun = False,
    prices: o.Prices = None,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """Synthesise profiles, trajectories and records anchored on real users."""
    from recworld.lunar import api
    from recworld.lunar.config import SynthConfig

    config = o.build(SynthConfig, _synth_fields(dict(locals())))
    if dry_run:
        from recworld.lunar.dry_run import plan_synth

        show.dry_run("synth", plan_synth(config), model, prices, as_json=as_json)
        return
    manifest = show.tracked("synth", progress, lambda: api.synthesize(config))
    show.synth_done(out, manifest, as_json=as_json)


def _synth_fields(v: dict[str, Any]) -> dict[str, Any]:
    """SynthConfig's fields from ``synth``'s option values."""
    from recworld.lunar.config import SynthOptions

    options = {
        "weeks": v["weeks"],
        "max_slots_per_day": v["max_slots"],
        "active_days": v["active_days"],
        "max_records_per_slot": v["max_records"],
        "consistency_threshold": v["threshold"],
        "max_regenerations": v["regenerations"],
        "validate_weeks": not v["no_validate"],
        "use_anchors": not v["no_anchors"],
    }
    keep = ("anchors", "timezone", "min_domains", "domain_map", "users", "seed", "fail_on_error")
    return {k: v[k] for k in keep} | {
        "out_dir": v["out"],
        "llm": o.session(v),
        "embedder": o.embedder(v),
        "options": o.build(SynthOptions, options),
    }


@lunar_app.command("queries")
def queries(
    root: o.Root,
    model: o.Model,
    per_user: Annotated[int, typer.Option("--per-user", min=1, help="Queries per user.")] = 2,
    embedder: Annotated[
        str | None,
        typer.Option("--embedder", help="Rank evidence candidates by embedding (default: word overlap)."),
    ] = None,
    embed_base_url: o.EmbedBaseUrl = None,
    embed_key_env: o.EmbedKeyEnv = "OPENAI_API_KEY",
    base_url: o.BaseUrl = None,
    api_key_env: o.ApiKeyEnv = "OPENAI_API_KEY",
    attempts: o.Attempts = 3,
    concurrency: o.Concurrency = 4,
    timeout: o.Timeout = 900.0,
    max_retries: o.MaxRetries = 6,
    seed: o.Seed = 0,
    compact: o.Compact = None,
    allow_insecure_http: o.Insecure = False,
    fail_on_error: o.FailOnError = DEFAULT_FAIL_ON_ERROR,
    retry_failures: o.RetryFailures = False,
    dry_run: o.DryRun = False,
    prices: o.Prices = None,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """Generate queries (seed exemplars) and build their rubrics and evidence sets."""
    from recworld.lunar import api
    from recworld.lunar.config import QueriesConfig

    v = dict(locals())
    fields = {"root": root, "per_user": per_user, "seed": seed, "fail_on_error": fail_on_error}
    config = o.build(QueriesConfig, fields | {"llm": o.session(v), "embedder": o.embedder(v)})
    if dry_run:
        from recworld.lunar.dry_run import plan_queries

        show.dry_run("queries", plan_queries(config), model, prices, as_json=as_json)
        return
    run = show.tracked("queries", progress, lambda: api.make_queries(config))
    show.queries_done(root, run, as_json=as_json)


Context = Annotated[str, typer.Option("--context", help="Comma list of none, full, curated, rag, memory.")]
EvalEmbedder = Annotated[str, typer.Option("--embedder", help="minilm, st:NAME or openai:MODEL.")]
BudgetTokens = Annotated[
    int | None,
    typer.Option(
        "--budget-tokens",
        min=1,
        help="Cap on the full-context budget [default: the answer model's window less answer, prompt].",
    ),
]
NCtx = Annotated[
    int, typer.Option("--n-ctx", min=256, help="Context window of local answer models (llamacpp, vllm).")
]
RagK = Annotated[int, typer.Option("--rag-k", min=1, help="Records retrieved for the rag context.")]
MemoryK = Annotated[int, typer.Option("--memory-k", min=1, help="Facts retrieved for the memory context.")]
QdrantUrl = Annotated[
    str | None, typer.Option("--qdrant-url", help="Qdrant server for memory [default: embedded in ROOT].")
]
Privacy = Annotated[
    bool, typer.Option("--privacy/--no-privacy", help="Also score every answer with the privacy judge.")
]


@lunar_app.command("eval")
def evaluate(
    root: o.Root,
    model: o.Model,
    judge: o.Judge,
    context: Context = "none,full,curated,rag",
    embedder: EvalEmbedder = "minilm",
    embed_base_url: o.EmbedBaseUrl = None,
    embed_key_env: o.EmbedKeyEnv = "OPENAI_API_KEY",
    budget_tokens: BudgetTokens = None,
    n_ctx: NCtx = 4096,
    rag_k: RagK = 30,
    memory_k: MemoryK = 50,
    qdrant_url: QdrantUrl = None,
    privacy: Privacy = True,
    max_tokens: o.MaxTokens = 256,
    base_url: o.BaseUrl = None,
    api_key_env: o.ApiKeyEnv = "OPENAI_API_KEY",
    judge_base_url: o.JudgeBaseUrl = None,
    judge_key_env: o.JudgeKeyEnv = "OPENAI_API_KEY",
    attempts: o.Attempts = 3,
    concurrency: o.Concurrency = 4,
    timeout: o.Timeout = 900.0,
    max_retries: o.MaxRetries = 6,
    seed: o.Seed = 0,
    compact: o.Compact = None,
    allow_insecure_http: o.Insecure = False,
    fail_on_error: o.FailOnError = DEFAULT_FAIL_ON_ERROR,
    retry_failures: o.RetryFailures = False,
    dry_run: o.DryRun = False,
    prices: o.Prices = None,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """Answer every query under each context setting and judge it against the generic baseline."""
    from recworld.lunar import api
    from recworld.lunar.config import LunarEvalConfig

    config = o.build(LunarEvalConfig, _eval_fields(dict(locals())))
    if dry_run:
        from recworld.lunar.dry_run import plan_eval

        stages = plan_eval(config)
        models = {k: (judge if k in ("judge", "privacy") else model) for k in stages}
        show.dry_run("eval", stages, models, prices, as_json=as_json)
        return
    runs = show.tracked("eval", progress, lambda: api.evaluate(config))
    show.eval_done("eval", {r.context: r for r in runs}, as_json=as_json)


def _eval_fields(v: dict[str, Any]) -> dict[str, Any]:
    """LunarEvalConfig's fields from ``eval``'s option values."""
    from recworld.lunar.contexts import parse_settings

    keep = ("root", "budget_tokens", "rag_k", "memory_k", "qdrant_url", "privacy", "seed", "fail_on_error")
    return {k: v[k] for k in keep} | {
        "answer": o.session(v, n_ctx=v["n_ctx"]),
        "judge": o.session(v, judge=True),
        "embedder": o.embedder(v),
        "contexts": tuple(parse_settings(v["context"])),
        "answer_max_tokens": v["max_tokens"],
    }


@lunar_app.command("report")
def report(
    root: Annotated[Path, typer.Argument(metavar="ROOT", help="LUNAR folder.")],
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="A --no-anchors synth folder for the JSD ablation.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap intervals.")] = 0,
    reference: Annotated[
        str | None, typer.Option("--reference", help="Another behaviour dataset for the external JSD.")
    ] = None,
    reference_timezone: Annotated[
        str | None, typer.Option("--reference-timezone", help="IANA zone of --reference's timestamps.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Write report.md / report.csv / quality.json: models × contexts, plus data-quality figures."""
    from recworld.lunar import api
    from recworld.lunar.config import ReportConfig

    fields = {"reference": reference, "reference_timezone": reference_timezone}
    written = api.write_report(
        o.build(ReportConfig, {"root": root, "baseline": baseline, "seed": seed, **fields})
    )
    if as_json:
        show.emit(True, {"command": "report", "root": str(root), "rows": written.get("rows", [])}, [])
    else:
        typer.echo((root / "report.md").read_text(encoding="utf-8"))


@lunar_app.command("ablate")
def ablate(
    root: o.Root,
    model: o.Model,
    judge: o.Judge,
    k_max: Annotated[int, typer.Option("--k-max", min=1, max=8, help="Largest k of the scaling curve.")] = 4,
    max_tokens: o.MaxTokens = 256,
    base_url: o.BaseUrl = None,
    api_key_env: o.ApiKeyEnv = "OPENAI_API_KEY",
    judge_base_url: o.JudgeBaseUrl = None,
    judge_key_env: o.JudgeKeyEnv = "OPENAI_API_KEY",
    attempts: o.Attempts = 3,
    concurrency: o.Concurrency = 4,
    timeout: o.Timeout = 900.0,
    max_retries: o.MaxRetries = 6,
    seed: o.Seed = 0,
    compact: o.Compact = None,
    allow_insecure_http: o.Insecure = False,
    fail_on_error: o.FailOnError = DEFAULT_FAIL_ON_ERROR,
    retry_failures: o.RetryFailures = False,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """Evidence ablations: Full-E vs Single-E on multi-domain queries, and k-scaling (Table 5, Fig. 3)."""
    from recworld.lunar.ablate import AblateConfig
    from recworld.lunar.ablate import ablate as run_ablation

    v = dict(locals())
    fields = {"root": root, "k_max": k_max, "answer_max_tokens": max_tokens, "seed": seed}
    answer, judged = o.session(v), o.session(v, judge=True)
    config = o.build(
        AblateConfig, fields | {"answer": answer, "judge": judged, "fail_on_error": fail_on_error}
    )
    runs = show.tracked("ablate", progress, lambda: run_ablation(config))
    show.eval_done("ablate", runs, as_json=as_json)


def register(app: typer.Typer) -> None:
    """Add ``recworld lunar ...`` to the ``recworld`` app."""
    from recworld.lunar import cli_quality

    cli_quality.register(lunar_app)
    app.add_typer(lunar_app, name="lunar")
