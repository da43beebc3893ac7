"""Defaults that work and hints that help: conflicting flags, did-you-mean, default places, piped stages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers.cli import Recworld
from recworld.errors import ConfigError


def test_contradicting_neural_flags_are_a_usage_error(recworld: Recworld, tmp_path: Path) -> None:
    done = recworld(
        "build", "--dataset", str(tmp_path / "none"), "--out", "s", "--require-neural", "--allow-weak-neumf"
    )
    assert done.returncode == 2
    assert "--require-neural and --allow-weak-neumf contradict" in done.stderr
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("spec", "hint"),
    [("smollm2-135m", "'llamacpp:smollm2-135m'"), ("gemma3-270m", "'llamacpp:gemma3-270m'")],
)
def test_a_bare_local_model_name_suggests_llamacpp(spec: str, hint: str) -> None:
    from recworld.models.registry import ModelSpec

    with pytest.raises(ConfigError, match=re.escape(f"(did you mean {hint}?)")):
        ModelSpec.parse(spec)


def test_llamacpp_names_in_the_registry_are_the_backends_own() -> None:
    from recworld.models.llamacpp import KNOWN_MODELS
    from recworld.models.registry import LLAMACPP_NAMES

    assert tuple(KNOWN_MODELS) == LLAMACPP_NAMES


def test_enumerated_values_get_did_you_mean(tmp_path: Path) -> None:
    from recworld.lrworld.prompts import get_variant
    from recworld.lunar.contexts.base import context_setting
    from recworld.models.llamacpp import resolve_model_path
    from recworld.models.options import ItemKNNOptions, parse_options

    cases = [
        (lambda: get_variant("fewshot-1"), "'few-shot-1'"),
        (lambda: context_setting("ful"), "'full'"),
        (lambda: parse_options(ItemKNNOptions, {"neighbors": 10}, "itemknn"), "'neighbours'"),
        (lambda: resolve_model_path("smollm"), "'smollm2-135m'"),
    ]
    for call, hint in cases:
        with pytest.raises(ConfigError, match=re.escape(f"did you mean {hint}")):
            call()


def test_a_mistyped_measure_gets_did_you_mean(tmp_path: Path) -> None:
    from recworld.evaluation.questions import load_questions

    (tmp_path / "questions").mkdir()
    (tmp_path / "questions" / "assoc_rule.jsonl").write_text("")
    with pytest.raises(ConfigError, match=re.escape("assoc_rules (did you mean 'assoc_rule'?)")):
        load_questions(tmp_path, ["assoc_rules"])


def test_models_lists_backends_plugins_and_local_models(recworld: Recworld) -> None:
    done = recworld("models", "--json")
    assert done.returncode == 0
    specs = {row["spec"]: row for row in json.loads(done.stdout)["models"]}
    assert {"popularity", "openai:NAME", "llamacpp:NAME", "llamacpp:smollm2-135m", "minilm"} <= set(specs)
    assert "neighbours" in specs["itemknn"]["options"]


def test_agreement_by_default_writes_beside_a_users_own_files(recworld: Recworld, tmp_path: Path) -> None:
    sheets = tmp_path / "my-study"
    sheets.mkdir()
    (sheets / "notes.txt").write_text("mine")
    rows = ["item_id,rater,dimension,score"] + [
        f"i{i},{rater},realism,{(i + k) % 5 + 1}" for i in range(6) for k, rater in enumerate(("ann", "bob"))
    ]
    (sheets / "ratings.csv").write_text("\n".join(rows) + "\n")
    done = recworld("lunar", "agreement", str(sheets / "ratings.csv"))
    assert done.returncode == 0, done.stderr
    assert (sheets / "agreement" / "agreement.json").is_file()
    assert (sheets / "notes.txt").read_text() == "mine"


def test_plain_stages_say_what_done_total_and_how_long(capsys: pytest.CaptureFixture[str]) -> None:
    import time

    from recworld.console.progress import StageProgress

    with StageProgress(enabled=True, plain=True, label="build", every_s=0.05) as view:
        view.overall("measures", 0, 4)
        view.step("building assoc_rule")
        time.sleep(0.02)
        view.overall("measures", 1, 4)
        view.step("building kg_movie_genre")
        time.sleep(0.2)  # the timer's lines, with nothing changing
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("recworld: progress: build: ")]
    assert lines[0].startswith("recworld: progress: build: measures 0/4 (0.0%), building assoc_rule, ")
    assert any("measures 1/4 (25.0%), building kg_movie_genre" in x and "left" in x for x in lines)
    assert len(lines) >= 4  # the heartbeat, not only the changes


def test_agreement_default_never_writes_through_a_linked_folder(recworld: Recworld, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    rows = ["item_id,rater,dimension,score"] + [
        f"i{i},{r},realism,{i % 5 + 1}" for i in range(4) for r in "ab"
    ]
    (real / "ratings.csv").write_text("\n".join(rows) + "\n")
    (real / "notes.txt").write_text("mine")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    done = recworld("lunar", "agreement", str(tmp_path / "link" / "ratings.csv"))
    assert done.returncode == 2 and "symbolic link" in done.stderr
    assert sorted(p.name for p in real.iterdir()) == ["notes.txt", "ratings.csv"]
