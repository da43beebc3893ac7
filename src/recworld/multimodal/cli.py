"""``recworld describe-images``: fill ``image_description`` with a vision-language model.

The command's options are generated from :class:`~recworld.multimodal.job.DescribeJob`
(its model and runner settings nested): this module declares none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from recworld.console.options import Flag, Given, with_options
from recworld.multimodal.job import DESCRIBE_TIMEOUT_S, DescribeJob

if TYPE_CHECKING:
    from recworld.multimodal.describe import DescribeReport


# The one setting whose default here is not its class's (DescribeJob._describe_timeout).
@with_options(
    DescribeJob,
    required=True,
    flags={"runner.timeout_s": Flag("--timeout", default_help=f"{DESCRIBE_TIMEOUT_S:g}")},
)
def describe_images(*, given: Given) -> None:
    """Describe every local item image with a vision model; rerun the same command to resume."""
    from recworld.multimodal.describe import DescribeFailedError, run_describe

    try:
        report = run_describe(given.build())
    except DescribeFailedError as exc:  # the summary still; the error (exit 3) is the app's to print
        _print_report(exc.report)
        raise
    _print_report(report)
    if report.failed:  # fewer than --fail-on-error allows: a warning, exit 0
        item, error = min(report.failed.items())
        typer.echo(f"first failure: item {item}: {error}; rerun to retry the failed images", err=True)


def _print_report(report: DescribeReport) -> None:
    """The summary on stdout, skipped images on stderr."""
    if report.warning:
        typer.echo(report.warning, err=True)
    typer.echo(
        f"{report.dataset}: {report.described} described ({report.kind}), "
        f"{report.sent} sent, {report.cache_hits} from cache, {report.resumed} resumed, "
        f"{report.skipped_remote} skipped (URL only), {report.without_image} without image, "
        f"{sum(report.refused.values())} refused, {len(report.failed)} failed -> {report.out_dir}"
    )


def register(app: typer.Typer) -> None:
    app.command("describe-images")(describe_images)
