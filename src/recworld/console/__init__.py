"""Terminal conventions every ``recworld`` command shares.

One error style, plain help at 80 columns, Ctrl-C that says how far a run got,
"did you mean" for names a user types, ``--json``, logging, and progress on
stderr. It sits in the foundation layer so that loaders and registries can
suggest names too; this face imports only the standard library, so ``data``
and ``models`` pay nothing for it. The typer/rich parts live in
:mod:`recworld.console.app`, :mod:`~recworld.console.output` and
:mod:`~recworld.console.progress`, imported by command modules only.
"""

from recworld.console.interrupt import Resume, interrupt_message, resumable
from recworld.console.logs import LOG_FILE, LogLevel, configure_logging, log_to_file
from recworld.console.suggest import did_you_mean, phrase, suggestion
from recworld.console.terminal import strip_control

__all__ = [
    "LOG_FILE",
    "LogLevel",
    "Resume",
    "configure_logging",
    "did_you_mean",
    "interrupt_message",
    "log_to_file",
    "phrase",
    "resumable",
    "strip_control",
    "suggestion",
]
