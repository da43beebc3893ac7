"""The options of ``recworld eval``, declared once as typed aliases.

Options a ``--config`` file can also set default to ``None`` ("not given"),
so a file value can come through; the help says what the default is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from recworld.chat import AnswerMode

SPECS = "openai:NAME, hf:ORG/NAME, llamacpp:NAME, vllm:NAME, or a baseline: random, popularity, itemknn"

Suite = Annotated[
    Path, typer.Argument(metavar="SUITE", help="Suite directory (holds manifest.json, questions/).")
]
Models = Annotated[
    list[str] | None,
    typer.Option("--model", metavar="SPEC", help=f"Model spec; repeat for several models. Forms: {SPECS}."),
]
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config", metavar="FILE", help="TOML file of settings and [[models]] (see docs/evaluation.md)."
    ),
]
BaseUrl = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server URL.")]
ApiKeyEnv = Annotated[
    str | None,
    typer.Option("--api-key-env", help="Name of the env var holding the API key (default OPENAI_API_KEY)."),
]
Out = Annotated[
    Path | None,
    typer.Option("--out", help="Run directory (default SUITE/runs/MODEL__MODE__VARIANT); one model only."),
]
Limit = Annotated[int | None, typer.Option("--limit", help="First N questions per measure (default all).")]
Measures = Annotated[
    str | None, typer.Option("--measures", help="Comma-separated measure ids (default all).")
]
Concurrency = Annotated[int | None, typer.Option("--concurrency", help="Requests in flight (default 8).")]
Mode = Annotated[
    AnswerMode | None,
    typer.Option("--mode", help="generate (default), loglik (score the letters) or rank (score the texts)."),
]
Variant = Annotated[
    str | None,
    typer.Option("--variant", help="zero-shot (default), cot, few-shot-1..5, noisy or describe+image."),
]
MaxTokens = Annotated[
    int | None, typer.Option("--max-tokens", help="Reply length (default 16; 512 for --variant cot).")
]
Temperature = Annotated[
    float | None, typer.Option("--temperature", help="Sampling temperature, 0 to 2 (default 0: greedy).")
]
System = Annotated[str | None, typer.Option("--system", help="A system message sent before every prompt.")]
ModelOption = Annotated[
    list[str] | None,
    typer.Option(
        "--model-option",
        metavar="KEY=VALUE",
        help="KEY=VALUE for the backend, checked against its options (repeatable).",
    ),
]
Orders = Annotated[
    int | None, typer.Option("--orders", help="Ask each question in N seeded option orders (default 1).")
]
Seed = Annotated[
    int | None, typer.Option("--seed", help="Request seed, backoff jitter, bootstrap CIs (default 0).")
]
Timeout = Annotated[
    float | None, typer.Option("--timeout", help="Seconds per request attempt (default 120).")
]
MaxRetries = Annotated[int | None, typer.Option("--max-retries", help="Retries per request (default 6).")]
Backoff = Annotated[
    float | None, typer.Option("--backoff", help="First retry waits up to this, s (default 0.5).")
]
BackoffMax = Annotated[
    float | None, typer.Option("--backoff-max", help="Longest retry wait, s (default 60).")
]
FailOnError = Annotated[
    float | None,
    typer.Option(
        "--fail-on-error", help="Exit 3 when more than this share of samples failed (default 0.05)."
    ),
]
DryRun = Annotated[
    bool,
    typer.Option("--dry-run", help="Print request counts and the first prompt per measure; send nothing."),
]
Prices = Annotated[
    Path | None,
    typer.Option(
        "--prices", help="With --dry-run: JSON lines or CSV of model, input, output USD per 1M tokens."
    ),
]
