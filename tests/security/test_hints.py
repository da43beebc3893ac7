"""Hints that name real options (issue 16): every option a refusal names is in that command's ``--help``.

The review found "pass --force" in refusals of ``report`` and ``lunar synth``,
which had no ``--force``. Each refusal below is produced by running the
command; every ``--option`` its message names must appear in the help of the
same command.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.security.commands import WRITERS, World, Writer, prepare
from recworld.io import OUTPUT_MARKER

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def command_of(argv: list[object]) -> list[str]:
    words = [str(a) for a in argv]
    return words[:2] if words[0] in ("lunar", "data") else words[:1]


def help_options(command: list[str]) -> set[str]:
    ran = run_recworld(*command, "--help")
    assert ran.returncode == 0
    return set(OPTION.findall(ran.stdout))


def assert_real(command: list[str], message: str, *, named_one: bool = True) -> None:
    named = set(OPTION.findall(message))
    assert named or not named_one, f"the refusal names no option to take: {message}"
    missing = named - help_options(command)
    assert not missing, f"`recworld {' '.join(command)}` has no {sorted(missing)}; its message: {message}"


@pytest.mark.parametrize("writer", [w for w in WRITERS if w.name != "data-fetch"], ids=lambda w: w.name)
def test_an_ownership_refusal_names_options_the_command_has(
    writer: Writer,
    world: World,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "home"))
    prepare(writer, world, tmp_path, with_previous=False)
    out = writer.out(tmp_path)
    if out == tmp_path / "lun" and out.is_dir():
        (out / OUTPUT_MARKER).unlink()
    elif out.is_dir():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "theirs.txt").write_text("not recworld's\n")
    if writer.name == "lunar-agreement":
        shutil.copy(world.lunar / "annotation" / "ratings.csv", out / "ratings.csv")
    ran = run_recworld(*writer.argv(world, tmp_path))
    err = ran.stderr
    assert ran.returncode == 2, err
    takes_out = "--out" in [str(a) for a in writer.argv(world, tmp_path)] or writer.name == "lunar-agreement"
    assert_real(command_of(writer.argv(world, tmp_path)), err, named_one=takes_out)
    if writer.force is not None:
        assert writer.force in err  # the way past it is offered, and it exists
    else:
        assert "--force" not in err


def test_other_refusals_name_real_options(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "home"))
    run_dir = tmp_path / "run"
    base = ["eval", str(world.suite), "--model", "random", "--out", str(run_dir), "--no-progress"]
    cases: list[list[str]] = [
        [*base[:-1], "--system", "Be brief.", "--no-progress"],  # after the run below: other settings
        ["eval", str(world.suite), "--model", "random", "--prices", str(tmp_path / "p.csv")],
        ["eval", str(world.suite), "--model", "random", "--measures", "no_such_measure"],
        ["report", str(world.suite), "--pair", "nonsense", "--out", str(tmp_path / "r")],
        [
            *["describe-images", "--dataset", str(world.posters), "--model", "scripted"],
            "--in-place",
            "--out",
            "d",
        ],
        [
            "describe-images",
            "--dataset",
            str(world.posters),
            "--model",
            "scripted",
            "--out",
            str(tmp_path / "d"),
        ],
    ]
    assert run_recworld(*base).returncode == 0
    (tmp_path / "p.csv").write_text("model,input,output\nx,1,1\n")
    for argv in cases:
        ran = run_recworld(*argv)
        assert ran.returncode in (2, 3), (argv, ran.stderr)
        assert_real(command_of(argv), ran.stderr)
    assert run_recworld("data", "fetch", "ml-latest-small", "--from", world.zip).returncode == 0
    ran = run_recworld("data", "fetch", "ml-latest-small", "--from", world.zip)
    assert ran.returncode == 0 and "--force" in ran.stdout
    assert_real(["data", "fetch"], ran.stdout)


# Hints the model layer gives for any command that loads an ``openai:`` model (recworld.models._keys):
# "(or a --base-url for a local server)", "use https, or --allow-insecure-http".
MODEL_HINTS = {"--base-url", "--allow-insecure-http"}
MODEL_COMMANDS = [
    ["eval"],
    ["analyze"],
    ["describe-images"],
    ["lunar", "synth"],
    ["lunar", "queries"],
    ["lunar", "eval"],
    ["lunar", "ablate"],
    ["lunar", "rate"],
]


@pytest.mark.parametrize("command", MODEL_COMMANDS, ids=" ".join)
def test_the_model_layers_key_hints_name_options_every_model_command_has(command: list[str]) -> None:
    assert help_options(command) >= MODEL_HINTS
