"""``recworld init``: the starter names every eval option, loads back, and each line gives its default.

Invariant (``recworld.evaluation.starter``): every file key of ``EvalConfig`` appears
once as a commented ``# key = DEFAULT`` line, no other key does, the file loads as
written, and any subset of its lines uncommented loads to the defaults.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.cli import run_recworld
from recworld.console.options import build, file_keys, layered
from recworld.evaluation.config import EvalConfig
from recworld.evaluation.config_file import read_eval_file
from recworld.evaluation.starter import NO_DEFAULT, starter_toml

TEXT = starter_toml()
TOP = TEXT.split("\n[[models]]", 1)[0]
LINE = re.compile(r"^# ([a-z_]+) = (.*)$", re.MULTILINE)  # the checker's own reading of a key line
SETTABLE = [(k, v) for k, v in LINE.findall(TOP) if NO_DEFAULT not in v]


def test_every_option_appears_once_and_nothing_else() -> None:
    keys = [k for k, _ in LINE.findall(TOP)]
    assert keys == file_keys(EvalConfig, exclude=["suite_dir", "model", "config_file"])
    assert sorted(set(keys)) == sorted(keys)


def test_it_loads_as_written_and_runs_a_baseline(tmp_path: Path) -> None:
    path = tmp_path / "eval.toml"
    path.write_text(TEXT)
    loaded = read_eval_file(path)
    assert loaded.top == {} and [m.values["model"] for m in loaded.models] == ["popularity"]


def _defaults(top: dict[str, object]) -> dict[str, object]:
    base = {"suite_dir": Path("suite"), "model": "popularity"}
    return build(EvalConfig, layered(top, base)).model_dump(mode="json")


@settings(max_examples=30, deadline=None)
@given(chosen=st.sets(st.sampled_from([k for k, _ in SETTABLE])))
def test_uncommenting_any_lines_gives_their_defaults(
    tmp_path_factory: pytest.TempPathFactory, chosen: set[str]
) -> None:
    text = "\n".join(
        line[2:] if (m := LINE.match(line)) and m.group(1) in chosen else line for line in TOP.splitlines()
    )
    assert set(tomllib.loads(text)) == chosen
    path = tmp_path_factory.mktemp("s") / "eval.toml"
    path.write_text(text)
    top = read_eval_file(path).top
    assert _defaults(top) == _defaults({})


def test_init_writes_refuses_to_overwrite_and_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    ran = run_recworld("init")
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "eval.toml").read_text() == TEXT
    ran = run_recworld("init")
    assert ran.returncode == 2
    assert "exists; give another --out, or --force" in ran.stderr
    ran = run_recworld("init", "--force", "--out", "other.toml")
    assert ran.returncode == 0, ran.stderr
    ran = run_recworld("init", "--out", "-")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == TEXT
