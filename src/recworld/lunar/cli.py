"""``recworld lunar synth | queries | eval | report``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

lunar_app = typer.Typer(
    help="LUNAR: synthesise anchored behaviour logs, write queries and rubrics, evaluate and judge.",
    no_args_is_help=True,
)

ModelOpt = Annotated[
    str, typer.Option("--model", help="model spec, e.g. llamacpp:smollm2-135m or openai:gpt-4o-mini")
]
BaseUrl = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server URL")]
Concurrency = Annotated[int, typer.Option("--concurrency", min=1)]
Attempts = Annotated[
    int, typer.Option("--attempts", min=1, help="tries per structured output before giving up")
]
# None (neither flag): SessionConfig decides per model spec, compact for llamacpp: only.
Compact = Annotated[
    bool | None,
    typer.Option(
        "--compact/--no-compact",
        help="decode structured outputs with short strings and fixed-length arrays "
        "[default: on for llamacpp: models, off otherwise]",
        show_default=False,
    ),
]


@lunar_app.command("synth")
def synth(
    anchors: Annotated[
        str, typer.Option("--anchors", help="fetched dataset name, dataset folder, or CSV/JSONL logs")
    ],
    out: Annotated[Path, typer.Option("--out", help="output folder")],
    model: ModelOpt,
    users: Annotated[int, typer.Option("--users", min=1)] = 1,
    weeks: Annotated[int, typer.Option("--weeks", min=1)] = 1,
    max_slots: Annotated[int, typer.Option("--max-slots", min=1, max=6)] = 4,
    active_days: Annotated[
        int, typer.Option("--active-days", min=1, max=7, help="days per week given slots")
    ] = 7,
    max_records: Annotated[int, typer.Option("--max-records", min=1, max=6)] = 3,
    attempts: Attempts = 3,
    regenerations: Annotated[int, typer.Option("--regenerations", min=0)] = 1,
    threshold: Annotated[float, typer.Option("--threshold", min=0.0, max=1.0)] = 0.6,
    no_anchors: Annotated[bool, typer.Option("--no-anchors", help="ablation: ignore real records")] = False,
    no_validate: Annotated[bool, typer.Option("--no-validate", help="skip week consistency checks")] = False,
    embedder: Annotated[
        str | None, typer.Option("--embedder", help="add embedding cosine to the backward check")
    ] = None,
    base_url: BaseUrl = None,
    concurrency: Concurrency = 4,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    compact: Compact = None,
) -> None:
    """Synthesise profiles, trajectories and records anchored on real users."""
    import asyncio
    import time

    from recworld.lunar.anchors import load_anchors
    from recworld.lunar.embed import load_embedder
    from recworld.lunar.session import SessionConfig, open_llm
    from recworld.lunar.synth.pipeline import SynthConfig, synthesize, write_dataset

    config = SynthConfig(
        weeks=weeks,
        max_slots_per_day=max_slots,
        active_days=active_days,
        max_records_per_slot=max_records,
        max_attempts=attempts,
        consistency_threshold=threshold,
        max_regenerations=regenerations,
        validate_weeks=not no_validate,
        use_anchors=not no_anchors,
        seed=seed,
    )
    started = time.perf_counter()
    real = load_anchors(anchors, users, seed=seed)
    emb = load_embedder(embedder, cache=out / "embeddings.sqlite") if embedder else None

    async def run() -> dict[str, object]:
        async with open_llm(
            model,
            out,
            SessionConfig(
                base_url=base_url,
                concurrency=concurrency,
                max_attempts=attempts,
                seed=seed,
                compact=compact,
            ),
        ) as llm:
            result = await synthesize(llm, real, config, emb)
            return write_dataset(out, result, llm, config, {"model": model, "anchors": anchors}, started)

    manifest = asyncio.run(run())
    typer.echo(f"wrote {out}: {manifest['counts']}")


@lunar_app.command("queries")
def queries(
    root: Annotated[Path, typer.Argument(help="folder written by lunar synth")],
    model: ModelOpt,
    per_user: Annotated[int, typer.Option("--per-user", min=1)] = 2,
    attempts: Attempts = 3,
    base_url: BaseUrl = None,
    concurrency: Concurrency = 4,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    compact: Compact = None,
) -> None:
    """Generate queries (seed exemplars) and build their rubrics and evidence sets."""
    import asyncio

    from recworld.io import atomic_write_jsonl
    from recworld.lunar import store
    from recworld.lunar.llm import failures_json
    from recworld.lunar.queries import generate_queries
    from recworld.lunar.rubrics import build_rubric
    from recworld.lunar.session import SessionConfig, open_llm

    profiles, records = store.profiles(root), store.records(root)

    async def run() -> tuple[int, int]:
        async with open_llm(
            model,
            root,
            SessionConfig(
                base_url=base_url,
                concurrency=concurrency,
                max_attempts=attempts,
                seed=seed,
                compact=compact,
            ),
        ) as llm:
            made = await generate_queries(llm, profiles, records, per_user=per_user, seed=seed)
            rubrics = await asyncio.gather(
                *(build_rubric(llm, q, [r for r in records if r.user_id == q.user_id]) for q in made)
            )
            kept = [(q, r) for q, r in zip(made, rubrics, strict=True) if r is not None]
            atomic_write_jsonl(root / "queries.jsonl", [q.to_json() for q, _ in kept])
            atomic_write_jsonl(root / "rubrics.jsonl", [r.to_json() for _, r in kept])
            atomic_write_jsonl(root / "query_failures.jsonl", failures_json(llm.failures))
            return len(kept), len(llm.failures)

    n, failures = asyncio.run(run())
    typer.echo(f"wrote {n} queries with rubrics to {root} ({failures} failures)")


@lunar_app.command("eval")
def evaluate(
    root: Annotated[Path, typer.Argument(help="folder with queries and rubrics")],
    model: ModelOpt,
    judge: Annotated[str, typer.Option("--judge", help="judge model spec")],
    context: Annotated[
        str, typer.Option("--context", help="comma list of none,full,curated,rag")
    ] = "none,full,curated,rag",
    embedder: Annotated[str, typer.Option("--embedder", help="minilm, st:NAME or openai:MODEL")] = "minilm",
    embed_base_url: Annotated[str | None, typer.Option("--embed-base-url")] = None,
    budget_tokens: Annotated[int, typer.Option("--budget-tokens", help="full-context token budget")] = 3000,
    rag_k: Annotated[int, typer.Option("--rag-k", min=1)] = 30,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="answer length cap")] = 384,
    base_url: BaseUrl = None,
    judge_base_url: Annotated[str | None, typer.Option("--judge-base-url")] = None,
    attempts: Attempts = 3,
    concurrency: Concurrency = 4,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    compact: Compact = None,
) -> None:
    """Answer every query under each context setting and judge it against the generic baseline."""
    import asyncio

    from recworld.lunar import store
    from recworld.lunar.contexts import ContextSetting, UserData, make_builder, parse_settings
    from recworld.lunar.embed import load_embedder
    from recworld.lunar.evaluate import evaluate_setting
    from recworld.lunar.judge import PersonalizationJudge
    from recworld.lunar.session import SessionConfig, open_llm

    settings = parse_settings(context)
    emb = (
        load_embedder(embedder, base_url=embed_base_url, cache=root / "embeddings.sqlite")
        if ContextSetting.RAG in settings
        else None
    )
    builders = [make_builder(s, embedder=emb, budget_tokens=budget_tokens, rag_k=rag_k) for s in settings]
    profiles = {p.user_id: p for p in store.profiles(root)}
    records = store.records(root)
    users = {u: UserData(p, tuple(r for r in records if r.user_id == u)) for u, p in profiles.items()}
    rubric_of = {r.query_id: r for r in store.rubrics(root)}
    pairs = [(q, rubric_of[q.query_id]) for q in store.queries(root) if q.query_id in rubric_of]

    async def run() -> None:
        async with (
            open_llm(
                model,
                root,
                SessionConfig(
                    base_url=base_url,
                    concurrency=concurrency,
                    max_attempts=attempts,
                    seed=seed,
                    compact=compact,
                ),
            ) as answer_llm,
            open_llm(
                judge,
                root,
                SessionConfig(
                    base_url=judge_base_url,
                    concurrency=concurrency,
                    max_attempts=attempts,
                    seed=seed,
                    compact=compact,
                ),
            ) as judge_llm,
        ):
            grader = PersonalizationJudge(judge_llm)
            for builder in builders:
                result = await evaluate_setting(
                    root,
                    builder,
                    answer_llm,
                    grader,
                    model=model,
                    judge_model=judge,
                    pairs=pairs,
                    users=users,
                    seed=seed,
                    max_tokens=max_tokens,
                )
                typer.echo(f"{model} / {builder.setting.value}: {result['counts']}")

    asyncio.run(run())


@lunar_app.command("report")
def report(
    root: Annotated[Path, typer.Argument(help="LUNAR folder")],
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="a --no-anchors synth folder for the JSD ablation")
    ] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Write report.md / report.csv / quality.json: models × contexts, plus data-quality figures."""
    from recworld.lunar.report import write_report

    write_report(root, baseline=baseline, seed=seed)
    typer.echo((root / "report.md").read_text(encoding="utf-8"))


def register(app: typer.Typer) -> None:
    """Add ``recworld lunar ...`` to the ``recworld`` app."""
    app.add_typer(lunar_app, name="lunar")
