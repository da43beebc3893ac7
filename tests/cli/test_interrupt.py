"""Ctrl-C: a message that says what happened and exit 130, from the real entry point and the shared hook."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import typer

from helpers.cli import RECWORLD, cli_env
from recworld.console import resumable
from recworld.console.app import run  # on a typer app built here; recworld's own: helpers.cli
from recworld.errors import RunError


def test_ctrl_c_during_build_says_nothing_was_written(ml100k_fetched: Path, tmp_path: Path) -> None:
    out = tmp_path / "suite"
    argv = [str(RECWORLD), "--log-level", "info", "build", "--dataset", "ml-100k", "--out", str(out)]
    argv += ["--measures", "neu_item2users", "--per-measure", "20"]
    env = cli_env(ml100k_fetched.parents[1])
    with subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None
        seen = []
        deadline = time.monotonic() + 120
        for line in proc.stderr:  # the build narrates its stages at --log-level info
            seen.append(line)
            if "stage: training NeuMF" in line or time.monotonic() > deadline:
                break
        assert any("stage: training NeuMF" in line for line in seen), seen
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=60) == 130
    assert rest.splitlines()[-1] == (
        f"recworld: interrupted: nothing was written to {out} "
        "(a suite is replaced only when its build completes)"
    )
    assert "Traceback" not in rest and not out.exists()


def _app(body: Callable[[], None]) -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command()(body)

    @app.callback()
    def _root() -> None:
        pass

    return app


def test_interrupted_long_command_reports_k_of_n(capsys: pytest.CaptureFixture[str]) -> None:
    def answer() -> None:
        with resumable(total=45) as note:
            note.done = 2
            raise KeyboardInterrupt

    assert run(_app(answer), ["answer"]) == 130
    assert (
        capsys.readouterr().err == "recworld: interrupted: 2/45 answered; rerun the same command to resume\n"
    )

    # the next interrupt without a hook says only that it stopped
    def plain() -> None:
        raise KeyboardInterrupt

    assert run(_app(plain), ["plain"]) == 130
    assert capsys.readouterr().err == "recworld: interrupted\n"


def test_run_errors_exit_3_in_the_one_style(capsys: pytest.CaptureFixture[str]) -> None:
    def failing() -> None:
        raise RunError("server returned HTTP 401")

    assert run(_app(failing), ["failing"]) == 3
    assert capsys.readouterr().err == "recworld: error: server returned HTTP 401\n"
