"""``recworld describe-images``: fill ``image_description`` with a vision-language model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

if TYPE_CHECKING:
    from recworld.multimodal.describe import DescribeJob, DescribeReport, KindChoice

OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Dataset cache to write: new, empty or an earlier output (default: the input + '-described').",
    ),
]
StateDirOption = Annotated[
    Path | None,
    typer.Option("--state-dir", help="Journal and response cache (default: .OUT.describe beside OUT)."),
]
ImageRootOption = Annotated[
    list[Path] | None,
    typer.Option("--image-root", help="A folder images may be read from besides the dataset's (repeatable)."),
]
InstructionsOption = Annotated[
    str,
    typer.Option(
        "--instructions",
        help="'paper' (describe the image, never copy printed titles, names or brands) or 'transcribe'.",
    ),
]
InsecureHttpOption = Annotated[
    bool,
    typer.Option(
        "--allow-insecure-http", help="Send the API key over plain http to a host not this machine."
    ),
]
ForceOption = Annotated[
    bool, typer.Option("--force", help="Write into an --out that another command wrote (its files are kept).")
]


def describe_images(
    dataset: Annotated[
        str, typer.Option("--dataset", help="A fetched dataset name, a dataset cache folder, or raw files.")
    ],
    model: Annotated[
        str, typer.Option("--model", help="Vision model spec, e.g. openai:llava-hf/llava-v1.6-mistral-7b-hf.")
    ],
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server URL.")] = None,
    api_key_env: Annotated[
        str, typer.Option("--api-key-env", help="Name of the env var holding the API key.")
    ] = "OPENAI_API_KEY",
    out: OutOption = None,
    in_place: Annotated[
        bool, typer.Option("--in-place", help="Rewrite the input dataset cache instead of a new one.")
    ] = False,
    limit: Annotated[int | None, typer.Option("--limit", help="Describe at most N images.")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Requests in flight.")] = 8,
    kind: Annotated[
        str, typer.Option("--kind", help="poster, product, or auto (posters for movie datasets).")
    ] = "auto",
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Longest description in tokens.")] = 512,
    instructions: InstructionsOption = "paper",
    state_dir: StateDirOption = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per request attempt.")] = 300.0,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on a TTY.")] = True,
    image_root: ImageRootOption = None,
    force: ForceOption = False,
    allow_insecure_http: Annotated[
        bool,
        typer.Option(
            "--allow-insecure-http",
            help="Send the API key over plain http to a host that is not this machine.",
        ),
    ] = False,
) -> None:
    """Describe every local item image with a vision model; rerun the same command to resume."""
    from recworld.multimodal.describe import DescribeConfig, DescribeJob, run_describe
    from recworld.runner import RunnerConfig

    job = _validated(
        lambda: DescribeJob(
            dataset=dataset,
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            allow_insecure_http=allow_insecure_http,
            out=out,
            in_place=in_place,
            force=force,
            image_roots=tuple(image_root or ()),
            state_dir=state_dir,
            config=DescribeConfig.model_validate(
                {"kind": _kind(kind), "limit": limit, "max_tokens": max_tokens, "instructions": instructions}
            ),
            runner=RunnerConfig(concurrency=concurrency, timeout_s=timeout, progress=progress),
        )
    )
    _print_report(run_describe(job))


def _kind(kind: str) -> KindChoice:
    from recworld.errors import ConfigError

    if kind not in ("auto", "poster", "product"):
        raise ConfigError(f"option --kind: {kind!r} is not one of auto, poster, product")
    return cast("KindChoice", kind)


def _validated(make: Callable[[], DescribeJob]) -> DescribeJob:
    """``make()``, with a pydantic error in an option turned into one ConfigError line."""
    from pydantic import ValidationError

    from recworld.errors import ConfigError

    try:
        return make()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"option {field or 'config'}: {first['msg']}") from None


def _print_report(report: DescribeReport) -> None:
    """The summary on stdout; skipped images and failures on stderr (exit 1 when any image failed)."""
    if report.warning:
        typer.echo(report.warning, err=True)
    typer.echo(
        f"{report.dataset}: {report.described} described ({report.kind}), "
        f"{report.sent} sent, {report.cache_hits} from cache, {report.resumed} resumed, "
        f"{report.skipped_remote} skipped (URL only), {report.without_image} without image, "
        f"{sum(report.refused.values())} refused, {len(report.failed)} failed -> {report.out_dir}"
    )
    if report.failed:
        item, error = next(iter(sorted(report.failed.items())))
        typer.echo(f"first failure: item {item}: {error}; rerun to retry the failed images", err=True)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("describe-images")(describe_images)
