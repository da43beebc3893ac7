"""Run a typer app the way every ``recworld`` command should behave in a terminal.

* One error style: ``recworld: error: ...`` on stderr for a RecWorld error
  (its own exit code: 2 user error, 3 run failed) and for a usage error (exit
  2, followed by a hint to ``--help``), never typer's boxed panels.
* Plain click help, wrapped at 80 columns and never cut with "…".
* Ctrl-C prints ``recworld: interrupted: k/N answered; ...`` and exits 130.
* No control sequence from data reaches the terminal (:mod:`recworld.console.terminal`).
* Any other exception is a bug: one traceback, one ``recworld: error:`` line, exit 1.
"""

from __future__ import annotations

import errno
import importlib
import inspect
import logging
import sys
import traceback
import weakref
from collections.abc import Iterator
from functools import cache
from typing import Any

import typer

from recworld.console.interrupt import interrupt_message
from recworld.console.terminal import guarded_streams, strip_control
from recworld.errors import ConfigError, RecWorldError

_log = logging.getLogger(__name__)

HELP_WIDTH = 80  # click wraps help at min(terminal, this) columns
INTERRUPTED = 130  # 128 + SIGINT, what shells expect


@cache
def _click() -> Any:
    """The click typer runs on: its vendored copy (typer >= 0.2x) or the click package."""
    try:
        return importlib.import_module("typer._click.exceptions")
    except ImportError:  # pragma: no cover - older typer
        return importlib.import_module("click.exceptions")


def error(message: str) -> None:
    """Print one ``recworld: error: ...`` line on stderr (control sequences from data stripped)."""
    typer.echo(f"recworld: error: {strip_control(message)}", err=True)


@cache
def _aborts() -> tuple[type[BaseException], ...]:
    """typer's Abort, and click's where the click in use has one (typer 0.29's vendored copy has none)."""
    found = {typer.Abort, getattr(_click(), "Abort", typer.Abort)}
    return tuple(sorted(found, key=lambda kind: kind.__qualname__))


def _walk(command: Any) -> Iterator[Any]:
    yield command
    for sub in getattr(command, "commands", {}).values():
        yield from _walk(sub)


def _first_sentence(text: str | None) -> str | None:
    if not text:
        return None
    paragraph = inspect.cleandoc(text).split("\n\n")[0].replace("\n", " ")
    head, dot, _rest = paragraph.partition(". ")
    return head + dot.strip()


def plain_command(app: typer.Typer) -> Any:
    """The click command of ``app`` with rich help switched off in every subcommand.

    typer's rich help cuts long option help with "…" at 80 columns; click's
    formatter wraps it instead. Each sub-app carries its own markup mode, so
    the whole tree is set, not just the root. A command's line in its group's
    list is its first sentence, wrapped, where click would cut it with "...".
    """
    import typer.main

    command = typer.main.get_command(app)
    for cmd in _walk(command):
        if hasattr(cmd, "rich_markup_mode"):
            cmd.rich_markup_mode = None
        if cmd.context_settings.get("max_content_width") is None:
            cmd.context_settings["max_content_width"] = HELP_WIDTH
        if not cmd.short_help:
            cmd.short_help = _first_sentence(cmd.help)
    return command


def _usage_error(exc: Any) -> int:
    # pydantic-backed option types prefix their message with noise.
    message = exc.format_message().replace("Value error, ", "")
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    error(message)
    path = exc.ctx.command_path if exc.ctx is not None else "recworld"
    typer.echo(f"try '{path} --help' for help", err=True)
    return int(exc.exit_code)


def run(app: typer.Typer, argv: list[str] | None = None, *, prog_name: str = "recworld") -> int:
    """Run ``app`` on ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    with guarded_streams():
        return _run(app, argv, prog_name)


def _built(app: typer.Typer) -> Any:
    """:func:`plain_command` of ``app``, built once per shape of the app (12 ms a build).

    The key is the app and the number of commands and groups registered on it,
    so one added to the app itself later (a test's app grown between calls) is
    seen; sub-apps are read once, when the app is first run. Click commands keep
    no state between invocations, so one build serves every call.
    """
    shape = (len(app.registered_commands), len(app.registered_groups))
    built = _BUILT.get(app)
    if built is None or built[0] != shape:
        built = (shape, plain_command(app))
        _BUILT[app] = built
    return built[1]


# Errors of the environment, not of recworld: each is one line wherever it escapes.
_SYSTEM_LIMITS = frozenset(
    {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.ENAMETOOLONG}
)

_BUILT: weakref.WeakKeyDictionary[typer.Typer, tuple[tuple[int, int], Any]] = weakref.WeakKeyDictionary()


def _undecodable(argv: list[str] | None) -> str | None:
    """The first argument that is not valid UTF-8 (bytes the OS gave undecoded), shown escaped."""
    for arg in argv if argv is not None else sys.argv[1:]:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return ascii(arg)
    return None


def _run(app: typer.Typer, argv: list[str] | None, prog_name: str) -> int:
    command = _built(app)
    click = _click()
    if (bad := _undecodable(argv)) is not None:  # it would reach a record and fail there
        error(f"{bad}: is not valid UTF-8 text; recworld writes names and paths into its records (rename it)")
        return ConfigError.exit_code
    try:
        code = command.main(args=argv, prog_name=prog_name, standalone_mode=False)
    except RecWorldError as exc:
        _log.debug("%s", type(exc).__name__, exc_info=True)
        error(str(exc))
        return exc.exit_code
    except click.NoArgsIsHelpError as exc:
        exc.show()
        return int(exc.exit_code)
    except click.UsageError as exc:
        return _usage_error(exc)
    except click.ClickException as exc:
        error(exc.format_message())
        return int(exc.exit_code)
    except _aborts():
        error("aborted")
        return 1
    except KeyboardInterrupt:  # outside a command body (typer maps one inside to exit 130)
        code = INTERRUPTED
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except OSError as exc:  # the file system said no (a read-only folder, a full disk): not a bug
        if exc.errno not in _SYSTEM_LIMITS:
            traceback.print_exc()
            error(f"unexpected {type(exc).__name__} (a bug in recworld; the traceback is above)")
            return 1
        where = f"{exc.filename}: " if exc.filename else ""
        error(f"{where}{exc.strerror or exc}")
        return ConfigError.exit_code
    except Exception as exc:  # a bug: its traceback once, then one line saying so
        traceback.print_exc()
        error(f"unexpected {type(exc).__name__} (a bug in recworld; the traceback is above)")
        return 1
    if code == INTERRUPTED:
        typer.echo(f"recworld: {interrupt_message()}", err=True)
    return code if isinstance(code, int) else 0
