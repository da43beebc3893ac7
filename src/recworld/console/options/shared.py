"""The flags many commands share, declared once: a command's config uses these as its field types.

``--force``, ``--json`` and ``--progress`` mean the same on every command, so their
type, flag and help live here (one wording each); a config field takes them as
its type (``force: Force = False``). ``--out`` and ``--image-root`` are shared by name
and form but say per command what they hold, so they are a :class:`Flag` the field
adds beside its own description. A command's model settings (``--base-url``,
``--api-key-env``, ``--timeout``, ...) are shared the same way, by nesting the
model registry's ``ModelConfig`` and the engine's ``RunnerConfig``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from recworld.console.options.declare import Flag
from recworld.records import Settings

# The one wording of --force: every command's refusal ("... pass --force") points at it.
FORCE_HELP = (
    "Write even where the target already exists "
    "(in a folder recworld did not write, its other files are kept)."
)

Force = Annotated[bool, Field(description=FORCE_HELP), Flag("--force")]
AsJson = Annotated[
    bool,
    Field(description="Print machine-readable JSON on stdout (nothing else goes there)."),
    Flag("--json"),
]
Progress = Annotated[
    bool,
    Field(
        description="Show progress on stderr: a live display on a terminal, "
        "a plain line now and then elsewhere."
    ),
    Flag("--progress/--no-progress"),
]

OUT = Flag("--out", metavar="DIR")  # beside the field's own description of what goes there
IMAGE_ROOT = Flag("--image-root", metavar="DIR")  # repeatable: a tuple of folders


class JsonOutput(Settings):
    """The settings of a command that only lists something: how to print it."""

    as_json: AsJson = False
