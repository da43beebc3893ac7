"""What a person sees from the real ``recworld`` at 80 columns: help, errors, ``--version``, tables, JSON.

The checks call the entry point in process (the ``recworld`` fixture); the first one
runs the installed script once, to show it is that entry point.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from helpers.cli import RECWORLD, Recworld, cli_env
from recworld import __version__
from recworld.data.dataset import Dataset
from recworld.lrworld.catalogue import MEASURES

HELP_PAGES = [
    ["--help"],
    ["eval", "--help"],
    ["build", "--help"],
    ["data", "--help"],
    ["data", "info", "--help"],
    ["lunar", "--help"],
    ["report", "--help"],
]


def test_the_installed_script_is_the_entry_point(tmp_path: Path) -> None:
    assert RECWORLD.is_file(), f"the entry point is not installed at {RECWORLD}"
    done = subprocess.run(
        [str(RECWORLD), "eval", "--limt", "3"],
        env=cli_env(tmp_path / "home"), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("recworld: error: no such option: --limt")
    assert done.stderr.splitlines()[-1] == "try 'recworld eval --help' for help"


@pytest.mark.parametrize("argv", HELP_PAGES, ids=" ".join)
def test_help_wraps_at_80_columns_and_is_never_cut(recworld: Recworld, argv: list[str]) -> None:
    done = recworld(*argv)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert "…" not in done.stdout
    assert not any(ch in done.stdout for ch in "╭│╰"), "rich panels instead of plain help"


def test_command_list_shows_each_first_sentence_whole(recworld: Recworld) -> None:
    words = " ".join(recworld("--help").stdout.split())
    # click would cut these at ~45 characters with "..."
    assert "Evaluate a model on an LRWorld suite; rerun the same command to resume." in words
    assert "List the LRWorld measure catalogue: id, scale, factor, format, domains, required fields." in words


def test_version(recworld: Recworld) -> None:
    done = recworld("--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"recworld {__version__}\n", "")


def _error_lines(stderr: str) -> list[str]:
    assert "Traceback" not in stderr
    assert not any(ch in stderr for ch in "╭│╰─"), "typer's boxed panel"
    return stderr.splitlines()


def test_unknown_option_is_one_error_line_and_a_help_hint(recworld: Recworld) -> None:
    done = recworld("eval", "suite", "--limt", "3")
    assert done.returncode == 2
    first, hint = _error_lines(done.stderr)
    assert first.startswith("recworld: error: no such option: --limt") and "--limit" in first
    assert hint == "try 'recworld eval --help' for help"
    assert done.stdout == ""


def test_missing_required_option_is_a_usage_error(recworld: Recworld) -> None:
    done = recworld("build", "--out", "suite")
    assert done.returncode == 2
    first, hint = _error_lines(done.stderr)
    assert first == "recworld: error: missing option '--dataset'."
    assert hint == "try 'recworld build --help' for help"


def test_bad_option_value_names_the_flag_not_the_field(recworld: Recworld) -> None:
    done = recworld("build", "--dataset", "x", "--out", "suite", "--per-measure", "0")
    assert done.returncode == 2
    assert _error_lines(done.stderr) == [
        "recworld: error: invalid value for --per-measure: Input should be greater than or equal to 1"
    ]


def test_missing_path_is_not_offered_for_fetching(recworld: Recworld) -> None:
    done = recworld("data", "info", "./nowhere/ml-100k")
    assert done.returncode == 2
    assert _error_lines(done.stderr) == ["recworld: error: nowhere/ml-100k: no such file or folder"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["data", "info", "ml100k"], "unknown dataset 'ml100k' (did you mean 'ml-100k'?)"),
        (["data", "info", "ml100k"], "run `recworld data fetch ml-100k`"),
        (["build", "--dataset", "ml-100", "--out", "s"], "(did you mean 'ml-100k'?)"),
        (["data", "fetch", "ml-25"], "unknown dataset 'ml-25' (did you mean 'ml-25m'"),
    ],
)
def test_dataset_names_get_did_you_mean(recworld: Recworld, argv: list[str], expected: str) -> None:
    done = recworld(*argv)
    assert done.returncode == 2
    assert expected in done.stderr, done.stderr


def test_measures_piped_shows_every_id_whole(recworld: Recworld) -> None:
    done = recworld("measures")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split("\t") == ["measure", "scale", "factor", "format", "domains", "requires"]
    assert [line.split("\t")[0] for line in lines[1:]] == [m.id for m in MEASURES]
    assert "…" not in done.stdout


def test_measures_json_is_the_catalogue(recworld: Recworld) -> None:
    done = recworld("measures", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["measure"] for r in rows] == [m.id for m in MEASURES]
    kg_cast = next(r for r in rows if r["measure"] == "kg_movie_cast")
    assert kg_cast["requires"] == ["cast"] and kg_cast["domains"] == ["movie"]


def test_data_info_json(recworld: Recworld, tmp_path: Path) -> None:
    inter = pd.DataFrame({"user_id": ["u1", "u1", "u2"], "item_id": ["a", "b", "a"], "timestamp": [1, 2, 3]})
    items = pd.DataFrame({"item_id": ["a", "b"], "title": ["Alpha", "Beta"]})
    folder = Dataset.from_frames("tiny", "movie", inter, items).save(tmp_path / "tiny")
    done = recworld("data", "info", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)  # nothing but JSON on stdout
    assert (info["name"], info["users"], info["items"], info["interactions"]) == ("tiny", 2, 2, 3)
    assert "title" in info["item_fields"]


def test_log_level_is_validated(recworld: Recworld) -> None:
    done = recworld("--log-level", "loud", "measures")
    assert done.returncode == 2
    assert done.stderr.startswith("recworld: error: invalid value for '--log-level'")
