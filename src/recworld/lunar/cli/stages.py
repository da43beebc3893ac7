"""``recworld lunar synth | queries | eval | ablate | report``: build the typed config, call the API, print.

Every option is generated from the stage's config (:mod:`recworld.lunar.config`) by
:func:`~recworld.lunar.cli.options.lunar_options`; nothing here declares a default or
orchestrates. ``eval``'s ``--context`` choices and each setting's own options come from
the registered context settings, read when the app is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from recworld.console.options import Flag, Given, build, with_options
from recworld.lunar.cli import output as show
from recworld.lunar.cli.flags import RunOptions, session_roles
from recworld.lunar.cli.options import LunarCommand, context_flag, lunar_options
from recworld.lunar.config import AblateConfig, LunarEvalConfig, QueriesConfig, ReportConfig, SynthConfig

Root = Annotated[Path, typer.Argument(metavar="ROOT", help="LUNAR folder (written by lunar synth).")]
SYNTH_EMBEDDER = {"embedder.model": Flag("--embedder", help="Add an embedding cosine to the backward check.")}
CONTEXT_WINDOW = Flag(
    "--context-window",
    help="Context window of --model in tokens, when its backend cannot say (a truncating context's budget).",
    default_help="what the model or its server reports, else the known-model table, else --n-ctx",
)
QUERIES_EMBEDDER = {
    "embedder.model": Flag(
        "--embedder", help="Rank evidence candidates by embedding (default: word overlap)."
    )
}


def add_synth(app: typer.Typer) -> None:
    @app.command("synth")
    @lunar_options(SynthConfig, roles=session_roles(judge=False), flags=SYNTH_EMBEDDER, dry_run=True)
    def synth(given: LunarCommand[SynthConfig]) -> None:
        """Synthesise profiles, trajectories and records anchored on real users."""
        from recworld.lunar import api
        from recworld.lunar.synth.plan import plan_synth

        config, run = given.build(SynthConfig), given.run
        if run.dry_run:
            show.dry_run("synth", plan_synth(config), run.prices, as_json=run.as_json)
            return
        manifest = show.tracked(
            "synth", run.progress, lambda: api.synthesize(config), lambda: plan_synth(config)
        )
        show.synth_done(config.out_dir, manifest, as_json=run.as_json)


def add_queries(app: typer.Typer) -> None:
    @app.command("queries")
    @lunar_options(
        QueriesConfig,
        roles=session_roles(judge=False),
        flags=QUERIES_EMBEDDER,
        exclude=["root"],
        dry_run=True,
    )
    def queries(root: Root, given: LunarCommand[QueriesConfig]) -> None:
        """Generate queries (seed exemplars) and build their rubrics and evidence sets."""
        from recworld.lunar import api
        from recworld.lunar.queries.plan import plan_queries

        config, run = given.build(QueriesConfig, root=root), given.run
        if run.dry_run:
            show.dry_run("queries", plan_queries(config), run.prices, as_json=run.as_json)
            return
        result = show.tracked(
            "queries", run.progress, lambda: api.make_queries(config), lambda: plan_queries(config)
        )
        show.queries_done(root, result, as_json=run.as_json)


def add_eval(app: typer.Typer) -> None:
    @app.command("eval")
    @lunar_options(
        LunarEvalConfig,
        roles=session_roles(judge=True),
        flags={"contexts": context_flag(), "answer.context_window": CONTEXT_WINDOW},
        exclude=["root"],
        dry_run=True,
        contexts=True,
    )
    def eval_command(root: Root, given: LunarCommand[LunarEvalConfig]) -> None:
        """Answer every query under each context setting and judge it against the generic baseline."""
        from recworld.lunar import api
        from recworld.lunar.answering.plan import plan_eval

        config, run = given.build(LunarEvalConfig, root=root), given.run
        if run.dry_run:
            show.dry_run("eval", plan_eval(config), run.prices, as_json=run.as_json)
            return
        runs = show.tracked(
            "eval", run.progress, lambda: api.evaluate_contexts(config), lambda: plan_eval(config)
        )
        show.eval_done("eval", {r.context: r for r in runs}, as_json=run.as_json)


def add_ablate(app: typer.Typer) -> None:
    @app.command("ablate")
    @lunar_options(AblateConfig, roles=session_roles(judge=True), exclude=["root"])
    def ablate(root: Root, given: LunarCommand[AblateConfig]) -> None:
        """Evidence ablations: Full-E vs Single-E on multi-domain queries, and k-scaling (Table 5, Fig. 3)."""
        from recworld.lunar import api
        from recworld.lunar.cli.plans import plan_ablate

        config, run = given.build(AblateConfig, root=root), given.run
        runs = show.tracked("ablate", run.progress, lambda: api.ablate(config), lambda: plan_ablate(config))
        show.ablate_done(root, runs, as_json=run.as_json)


def add_report(app: typer.Typer) -> None:
    @app.command("report")
    @with_options(ReportConfig, exclude=["root"])
    @with_options(RunOptions, exclude=["dry_run", "prices", "smoke"], given="run")
    def report(
        root: Annotated[Path, typer.Argument(metavar="ROOT", help="LUNAR folder.")],
        *,
        given: Given,
        run: Given,
    ) -> None:
        """Write report.html (tables, figures, a sample viewer), report.md, two CSVs and quality.json."""
        from recworld.lunar import api

        options = build(RunOptions, run.nested())
        config = build(ReportConfig, {"root": root, **given.nested()})
        written = api.write_lunar_report(config, progress=options.progress)
        show.report_done(root, written, as_json=options.as_json)


def add_stage_commands(app: typer.Typer) -> None:
    for add in (add_synth, add_queries, add_eval, add_report, add_ablate):
        add(app)
