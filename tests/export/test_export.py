"""``recworld export``: content, provenance, reproducibility and output-folder safety (no harness needed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from helpers.cli import run_recworld
from recworld.errors import ConfigError, DataError
from recworld.export.common import ANSWER_CUE, PROVENANCE_NAME, load_suite
from recworld.export.run import TARGETS, export_suite
from recworld.lrworld.manifest import read_manifest
from recworld.lrworld.prompts import render_prompt
from recworld.models._common import ANSWER_CUE as MODEL_ANSWER_CUE
from recworld.models._common import completion_choice, flatten_messages


def safe_yaml(path: Path) -> dict[str, Any]:
    """A YAML file read with PyYAML's safe loader plus lm-eval's one tag, ``!function`` (kept as a pair)."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: ("!function", loader.construct_scalar(node)))
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
    assert isinstance(data, dict)
    return data


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_export_is_byte_reproducible(ml100k_suite: Path, tmp_path: Path, target: str) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    export_suite(ml100k_suite, target, first)
    export_suite(ml100k_suite, target, second)
    export_suite(ml100k_suite, target, first)  # re-export over itself: still the same bytes
    assert _tree(first) == _tree(second)
    assert len(_tree(first)) >= 4


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_export_carries_provenance(ml100k_suite: Path, tmp_path: Path, target: str) -> None:
    manifest = read_manifest(ml100k_suite)
    export_suite(ml100k_suite, target, tmp_path / "x")
    record = json.loads((tmp_path / "x" / PROVENANCE_NAME).read_text())
    assert record["suite"]["fingerprint"] == manifest.fingerprint
    assert record["suite"]["seed"] == manifest.seed == 0
    assert record["recworld_version"]
    assert record["counts"] == {"kg_movie_genre": 50, "mem_item_item": 50}
    # Each listed file exists with the hash recorded for it.
    assert all((tmp_path / "x" / name).is_file() for name in record["files"])
    # The provenance is also inside the files a harness reads.
    main_file = {
        "lm-eval": "recworld_ml_100k_kg_movie_genre.yaml",
        "inspect": "recworld_inspect.py",
        "hf": "README.md",
    }[target]
    assert manifest.fingerprint in (tmp_path / "x" / main_file).read_text()


def test_rows_hold_recworld_prompt_and_gold(ml100k_suite: Path, tmp_path: Path) -> None:
    export_suite(ml100k_suite, "lm-eval", tmp_path / "x")
    suite = load_suite(ml100k_suite)
    lines = (tmp_path / "x" / "data" / "kg_movie_genre.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["id"] for r in rows] == [q.id for q in suite.questions["kg_movie_genre"]]
    for row, question in zip(rows, suite.questions["kg_movie_genre"], strict=True):
        rendered = render_prompt(question, "zero-shot")
        assert row["prompt"] == rendered.messages[0].content
        assert row["labels"] == ["A", "B", "C", "D"]
        assert row["answer"] == "ABCD"[question.answer_index]
        assert row["options"][row["answer_index"]] == question.answer.text


def test_lm_eval_prompt_is_recworlds_completion_prompt(ml100k_suite: Path, tmp_path: Path) -> None:
    """lm-eval builds context + delimiter + choice; it must equal what recworld's loglik scores."""
    export_suite(ml100k_suite, "lm-eval", tmp_path / "x")
    assert ANSWER_CUE == MODEL_ANSWER_CUE
    task = safe_yaml(tmp_path / "x" / "recworld_ml_100k_kg_movie_genre.yaml")
    template, delimiter = task["doc_to_text"], task["target_delimiter"]
    assert task["custom_dataset"] == ("!function", "recworld_lm_eval.load_docs")
    question = load_suite(ml100k_suite).questions["kg_movie_genre"][0]
    rendered = render_prompt(question, "zero-shot")
    context = template.replace("{{prompt}}", rendered.messages[0].content)
    assert context == flatten_messages(rendered.messages)
    assert delimiter + "B" == completion_choice("B")


def test_hf_parquet_schema_and_card(ml100k_suite: Path, tmp_path: Path) -> None:
    export_suite(ml100k_suite, "hf", tmp_path / "x")
    table = pq.read_table(tmp_path / "x" / "mem_item_item" / "test.parquet")
    assert table.num_rows == 50
    assert table.column("labels")[0].as_py() == list("ABCDEFGHIJ")
    meta = json.loads(table.schema.metadata[b"recworld"])
    assert meta["suite"]["fingerprint"] == read_manifest(ml100k_suite).fingerprint
    card = (tmp_path / "x" / "README.md").read_text()
    header = card.split("---")[1]
    for needed in (
        "license: other",
        "source_datasets:",
        "config_name: mem_item_item",
        "path: mem_item_item/",
    ):
        assert needed in header
    assert "How the ground truth was built" in card


def test_out_must_be_new_empty_or_a_previous_export(ml100k_suite: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("keep me")
    with pytest.raises(ConfigError, match="refusing"):
        export_suite(ml100k_suite, "hf", foreign)
    assert _tree(foreign) == {"thesis.tex": b"keep me"}
    empty = tmp_path / "empty"
    empty.mkdir()
    export_suite(ml100k_suite, "hf", empty)
    assert (empty / "README.md").is_file()


def test_reexport_replaces_its_own_files_and_keeps_the_rest(ml100k_suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "x"
    export_suite(ml100k_suite, "lm-eval", out)
    (out / "notes.md").write_text("mine")
    (out / "data" / "extra.jsonl").write_text("{}\n")
    export_suite(ml100k_suite, "lm-eval", out, measures=("kg_movie_genre",))
    assert not (out / "data" / "mem_item_item.jsonl").exists()  # written by the old export: replaced
    assert not (out / "recworld_ml_100k_mem_item_item.yaml").exists()
    assert (out / "notes.md").read_text() == "mine"
    assert (out / "data" / "extra.jsonl").read_text() == "{}\n"
    listed = json.loads((out / PROVENANCE_NAME).read_text())["files"]
    assert "notes.md" not in listed and "data/kg_movie_genre.jsonl" in listed


def test_suite_edited_after_build_is_refused(ml100k_suite: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "suite"
    shutil.copytree(ml100k_suite, copy)
    path = copy / "questions" / "kg_movie_genre.jsonl"
    path.write_text("\n".join(path.read_text().splitlines()[1:]) + "\n")
    with pytest.raises(DataError, match="hash"):
        export_suite(copy, "hf", tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_cli_exports_and_rejects_unknown_target(ml100k_suite: Path, tmp_path: Path) -> None:
    ran = run_recworld("export", str(ml100k_suite), "--to", "inspect", "--out", str(tmp_path / "i"))
    assert ran.returncode == 0, ran.stderr
    assert "recworld_ml_100k_kg_movie_genre" in ran.stdout
    ran = run_recworld("export", str(ml100k_suite), "--to", "helm", "--out", str(tmp_path / "h"))
    assert ran.returncode == 2
    assert "unknown export target" in ran.stderr
    assert not (tmp_path / "h").exists()


def test_export_never_imports_harnesses_runner_or_backends() -> None:
    code = (
        "import sys, recworld.export.run, recworld.export.cli; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('lm_eval', 'inspect_ai', 'datasets', 'torch') "
        "or m.startswith(('recworld.runner', 'recworld.evaluation', 'recworld.models'))]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"
