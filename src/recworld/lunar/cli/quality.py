"""``recworld lunar rate | annotate | agreement``: the quality validation of a LUNAR folder.

``rate`` asks an LLM for the paper's quality scores (Tables 1, 9); ``annotate`` exports a blind
sheet for human raters; ``agreement`` compares raters (Tables 2, 10). ``lunar report`` then
shows whatever of these exists in the folder. Every option is generated from a config
(``RateConfig``; :mod:`recworld.lunar.quality.options` for the two others).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from recworld.console.options import Given, with_options
from recworld.lunar.cli import output as show
from recworld.lunar.cli.flags import session_roles
from recworld.lunar.cli.options import LunarCommand, lunar_options
from recworld.lunar.config import RateConfig
from recworld.lunar.quality.options import AgreementOptions, AnnotateOptions


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def add_rate(app: typer.Typer) -> None:
    @app.command("rate")
    @lunar_options(RateConfig, roles=session_roles(judge=False), exclude=["root"])
    def rate(
        root: Annotated[
            Path, typer.Argument(metavar="ROOT", help="LUNAR folder (after lunar synth; queries optional).")
        ],
        given: LunarCommand[RateConfig],
    ) -> None:
        """LLM-rated log plausibility and profile consistency (paper Tables 1, 9), plus query quality."""
        from recworld.lunar import api
        from recworld.lunar.cli.plans import plan_rate

        config, options = given.build(RateConfig, root=root), given.run
        run = show.tracked(
            "rate", options.progress, lambda: api.rate_quality(config), lambda: plan_rate(config)
        )
        overall = run.summary.overall
        text = (
            f"rated {root}: plausibility {_fmt(overall.get('plausibility'))}, profile consistency "
            f"{_fmt(overall.get('profile'))}, queries {_fmt(overall.get('query'))} "
            f"({run.counts.failures} failures of {run.counts.asked})"
        )
        data = {
            "command": "rate",
            "root": str(root),
            "counts": run.counts.to_json(),
            "summary": run.summary.to_json(),
        }
        show.emit(options.as_json, data, [text])


def add_annotate(app: typer.Typer) -> None:
    @app.command("annotate")
    @with_options(AnnotateOptions)
    def annotate(
        root: Annotated[Path, typer.Argument(metavar="ROOT", help="LUNAR folder.")],
        *,
        given: Given,
    ) -> None:
        """Export a blind rating sheet (CSV + static HTML form); the id key stays in ROOT."""
        from recworld.lunar.quality.annotate import export_sheet

        job: AnnotateOptions = given.build()
        done = export_sheet(
            root,
            job.out,
            histories=job.histories,
            queries=job.queries,
            seed=job.seed,
            max_records=job.max_records,
            timezone=job.timezone,
            force=job.force,
        )
        text = (
            f"wrote {done.out}/sheet.csv and form.html ({done.histories} histories, "
            f"{done.queries} queries); key: {done.key} (keep it from the raters)"
        )
        data = {
            "command": "annotate",
            "out": str(done.out),
            "key": str(done.key),
            "histories": done.histories,
            "queries": done.queries,
        }
        show.emit(job.as_json, data, [text])


def add_agreement(app: typer.Typer) -> None:
    @app.command("agreement")
    @with_options(AgreementOptions)
    def agreement(
        ratings: Annotated[
            list[Path], typer.Argument(help="Long-format CSVs: item_id,rater,dimension,score.")
        ],
        *,
        given: Given,
    ) -> None:
        """Exact, within-one agreement and Gwet's AC1 per dimension and rater pair (Tables 2, 10)."""
        from recworld.lunar.quality.agreement import rows_text, write_agreement

        job: AgreementOptions = given.build()
        target = job.out or _default_out(ratings[0])
        report = write_agreement(ratings, set(job.llm_raters), target, force=job.force)
        lines = [rows_text(report.rows) if report.rows else "no rater pair shares an item"]
        data = {"command": "agreement", **report.to_json()}
        show.emit(job.as_json, data, [*lines, f"wrote {target / 'agreement.json'} and agreement.csv"])


def _default_out(sheet: Path) -> Path:
    """The sheet's folder when recworld wrote it (an agreement may go there), else ``agreement/`` in it.

    A user's own folder of sheets is never refused for holding other files: the
    default is a place the command may write. A folder that is a symbolic link
    is kept, so the claim refuses it rather than writing through the link.
    """
    from recworld.errors import ConfigError
    from recworld.io import check_output_dir
    from recworld.lunar.quality.agreement import AGREEMENT_JOINS, AGREEMENT_KIND

    folder = sheet.parent
    if folder.is_symlink() or not folder.is_dir():
        return folder
    try:
        return check_output_dir(folder, AGREEMENT_KIND, joins=AGREEMENT_JOINS)
    except ConfigError:
        return folder / "agreement"


def add_quality_commands(app: typer.Typer) -> None:
    for add in (add_rate, add_annotate, add_agreement):
        add(app)
