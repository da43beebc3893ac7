"""Run folder names from hostile model specs, and a variant with nothing to attach (review cases M1, M2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from recworld import paths
from recworld.evaluation.config import EvalConfig, default_run_dir


@pytest.mark.parametrize(
    "spec", ["openai:../../../etc/x", "openai:..", "hf:/abs/path", "openai:a\nb", "openai:.", "x:" + "/" * 40]
)
def test_m1_a_model_spec_makes_one_safe_path_component(spec: str, tmp_path: Path) -> None:
    slug = paths.slug(spec)
    assert slug and "/" not in slug and "\n" not in slug and slug not in (".", "..")
    run_dir = default_run_dir(EvalConfig(suite_dir=tmp_path / "suite", model=spec))
    assert run_dir.parent == tmp_path / "suite" / "runs"
    assert run_dir.resolve().is_relative_to((tmp_path / "suite" / "runs").resolve())


def test_m2_describe_image_on_a_suite_without_image_measures_runs_as_rendered(
    evil_suite: Path, work: Path
) -> None:
    out = work / "run"
    argv = [
        "eval",
        evil_suite,
        "--model",
        "random",
        "--variant",
        "describe+image",
        "--out",
        out,
        "--no-progress",
    ]
    ran = run_recworld(*argv)
    assert ran.returncode == 0, ran.stderr
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert samples and all(s["error"] is None for s in samples)
    assert all(not m.get("images") for s in samples for m in s["prompt"])
