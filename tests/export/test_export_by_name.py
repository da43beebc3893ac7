"""LastFM as LLaRA in exports: the gold is a candidate name, and replies are read by name."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from helpers.lrworld.catalogue_data import music_dataset  # tests/ is on sys.path (rootdir-relative packages)
from recworld.export.inspect import _HEAD
from recworld.export.lm_eval import _LOADER
from recworld.export.run import export_suite
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.prompts import read_name_reply
from recworld.lrworld.suite import build_suite

NAMES = ["Coldplay", "Artist 1", "Artist 12", "Sigur Rós"]
REPLIES = [
    "Coldplay",
    "The answer is Coldplay.",
    "artist 12",
    "Answer: Artist 1",
    "Coldplay and Artist 1",  # two names: LLaRA's rule reads no answer
    "'Artist 12'.",
    "Answer：sigur rós",
    "I think\nArtist 1",
    "",
    "Radiohead",
]


@pytest.fixture(scope="module")
def music_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lastfm-export") / "suite"
    config = BuildConfig(measures=("lastfm_next_artist", "lastfm_artist_genre"), per_measure=12)
    build_suite(music_dataset(), config, out)
    return out


def _rows(folder: Path, measure: str) -> list[dict[str, Any]]:
    path = folder / "data" / f"{measure}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_gold_is_the_answers_name_and_the_choices_are_names(music_suite: Path, tmp_path: Path) -> None:
    export_suite(music_suite, "lm-eval", tmp_path / "lm")
    for measure in ("lastfm_next_artist", "lastfm_artist_genre"):
        rows = _rows(tmp_path / "lm", measure)
        assert rows
        for row in rows:
            assert row["answer_by"] == "name"
            assert row["answer"] == row["options"][row["answer_index"]]
            assert row["choices"] == row["options"]  # loglik scores the names, not letters never shown
            assert row["answer"] in row["prompt"]
        task = (tmp_path / "lm" / f"recworld_fm_{measure}_gen.yaml").read_text(encoding="utf-8")
        assert "!function 'recworld_lm_eval.name_match'" in task and "regex_pattern" not in task
        assert "Answer:" not in (tmp_path / "lm" / f"recworld_fm_{measure}.yaml").read_text(encoding="utf-8")


def _exported_function(source: str, name: str) -> Any:
    namespace: dict[str, Any] = {"re": re, "__file__": "/x/recworld_export.py"}
    start = source.index(f"def {name}(")
    end = source.find("\n\n\n", start)
    exec(source[start : end if end != -1 else None], namespace)  # the function exactly as exported
    return namespace[name]


@pytest.mark.parametrize("reply", REPLIES)
def test_exported_readers_agree_with_recworlds_name_reader(reply: str) -> None:
    ours = read_name_reply(reply, NAMES)
    name_match = _exported_function(_LOADER, "name_match")
    named = _exported_function(_HEAD.format(task_file="t.py", provenance="'{}'", max_tokens=16), "_named")
    assert named(reply, NAMES) == ours
    for answer in range(len(NAMES)):
        doc = {"options": NAMES, "answer_index": answer}
        assert name_match(doc, [reply]) == {"exact_match": float(ours == answer)}


def test_letter_measures_keep_letters(ml100k_suite: Path, tmp_path: Path) -> None:
    export_suite(ml100k_suite, "lm-eval", tmp_path / "lm")
    row = _rows(tmp_path / "lm", "kg_movie_genre")[0]
    assert row["answer_by"] == "letter" and row["answer"] == row["labels"][row["answer_index"]]
    assert row["choices"] == row["labels"]
