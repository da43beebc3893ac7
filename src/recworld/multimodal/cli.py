"""``recworld describe-images``: fill ``image_description`` with a vision-language model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer


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
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Dataset cache to write (default: the input cache + '-described')."),
    ] = None,
    in_place: Annotated[
        bool, typer.Option("--in-place", help="Rewrite the input dataset cache instead of a new one.")
    ] = False,
    limit: Annotated[int | None, typer.Option("--limit", help="Describe at most N images.")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Requests in flight.")] = 8,
    kind: Annotated[
        str, typer.Option("--kind", help="poster, product, or auto (posters for movie datasets).")
    ] = "auto",
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Longest description in tokens.")] = 512,
    state_dir: Annotated[
        Path | None,
        typer.Option("--state-dir", help="Journal and response cache (default: .OUT.describe beside OUT)."),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per request attempt.")] = 300.0,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on a TTY.")] = True,
) -> None:
    """Describe every local item image with a vision model; rerun the same command to resume."""
    from pydantic import ValidationError

    from recworld.errors import ConfigError
    from recworld.multimodal.describe import DescribeConfig, DescribeJob, KindChoice, run_describe
    from recworld.runner import RunnerConfig

    if kind not in ("auto", "poster", "product"):
        raise ConfigError(f"option --kind: {kind!r} is not one of auto, poster, product")
    chosen = cast(KindChoice, kind)
    try:
        job = DescribeJob(
            dataset=dataset,
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            out=out,
            in_place=in_place,
            state_dir=state_dir,
            config=DescribeConfig(kind=chosen, limit=limit, max_tokens=max_tokens),
            runner=RunnerConfig(concurrency=concurrency, timeout_s=timeout, progress=progress),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"option {field or 'config'}: {first['msg']}") from None
    report = run_describe(job)
    typer.echo(
        f"{report.dataset}: {report.described} described ({report.kind}), "
        f"{report.sent} sent, {report.cache_hits} from cache, {report.resumed} resumed, "
        f"{report.skipped_remote} skipped (URL only), {report.without_image} without image, "
        f"{len(report.failed)} failed -> {report.out_dir}"
    )
    if report.failed:
        item, error = next(iter(sorted(report.failed.items())))
        typer.echo(f"first failure: item {item}: {error}; rerun to retry the failed images", err=True)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("describe-images")(describe_images)
