"""The CLI's catch-all handler (review case G6; F27).

``console/app.py`` named ``click.Abort``, which typer 0.29's vendored click
lacks, so the handler itself raised ``AttributeError`` while handling any
unexpected error: two tracebacks, and a ``KeyboardInterrupt`` that escaped a
command body never reached its own clause. Now an unexpected error is one
traceback and one ``recworld: error:`` line (exit 1), in process and as the
installed entry point runs it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer

from recworld.console.app import run  # on a typer app built here; recworld's own: helpers.cli


def _app(error: BaseException) -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.command()
    def boom() -> None:
        raise error

    @app.command()
    def fine() -> None:
        typer.echo("ok")

    return app


@pytest.mark.parametrize(
    "error", [RuntimeError("a bug"), AttributeError("'str' object has no attribute 'get'")]
)
def test_an_unexpected_error_is_one_traceback_and_one_line(
    capsys: pytest.CaptureFixture[str], error: Exception
) -> None:
    code = run(_app(error), ["boom"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("Traceback (most recent call last)") == 1
    assert err.count("recworld: error: ") == 1
    assert f"unexpected {type(error).__name__}" in err and "AttributeError: module" not in err


def test_abort_and_interrupt_still_have_their_own_exits(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(_app(typer.Abort()), ["boom"]) == 1
    assert "recworld: error: aborted" in capsys.readouterr().err
    assert run(_app(KeyboardInterrupt()), ["boom"]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "Traceback" not in err


def test_the_entry_point_prints_one_traceback(tmp_path: Path) -> None:
    """As installed: a command that hits a bug (here a patched loader) gives exit 1 and one traceback."""
    child = (
        "import importlib, sys\n"
        # the module, not the package's ``fetch`` function of the same name
        "d = importlib.import_module('recworld.data.fetch')\n"
        "def broken(*a, **k):\n    raise AttributeError(\"'str' object has no attribute 'get'\")\n"
        "d.resolve_dataset = broken\n"
        "from recworld.cli import main\nsys.exit(main(['data', 'info', 'ml-100k']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("Traceback (most recent call last)") == 1
    assert "recworld: error: unexpected AttributeError" in done.stderr
