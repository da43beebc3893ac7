"""Command-line options and config-file keys generated from one typed config: each setting declared once.

A command's settings live on a pydantic config class (``EvalConfig``, ``SessionConfig``,
…). Each field is the one declaration of a setting: its type and bounds, its default,
its help (the field's ``description``), and, where the command line needs more, a
:class:`Flag` in the field's ``Annotated`` metadata::

    class RunnerConfig(Record):
        timeout_s: Annotated[float, Field(gt=0, description="Seconds per request attempt."),
                             Flag("--timeout")] = 120.0

From that class:

* :func:`with_options` adds one typer option per field (nested configs are walked,
  so ``EvalConfig.runner.timeout_s`` is ``--timeout``) to a command, each defaulting
  to "not given", and hands the command a :class:`Given` of what the user typed;
* :func:`from_file` reads a config file's flat keys (the flag names with ``_``:
  ``timeout = 30``, so moving a setting between the two is a copy) into the same
  nested shape, refusing unknown keys with a did-you-mean;
* :func:`layered` merges the layers (command line over file over defaults), and
  :func:`build` validates the result, naming the flag a bad value came from;
* :func:`identity_settings` lists the settings that change what a run asks or is
  answered (every setting unless marked :class:`Operational`), which is what makes
  two runs the same run.

A nested config field may carry :class:`Nested` to leave some of its settings out
(the parent sets them: ``EvalConfig`` gives the model and the runner its own seed).

inspect_ai's shared ``eval_options`` decorator is the model: one declaration serves
every command that takes the setting.
"""

from recworld.console.options.command import Given, OptionsUse, options_uses, with_options
from recworld.console.options.declare import (
    Flag,
    Flags,
    Nested,
    NoFlag,
    Operational,
    OptionField,
    comma_list,
    config_class,
    identity_settings,
    iter_settings,
    key_values,
    leaf_paths,
    option_fields,
    put_at,
)
from recworld.console.options.files import build, file_keys, from_file, layered
from recworld.console.options.shared import (
    FORCE_HELP,
    IMAGE_ROOT,
    OUT,
    AsJson,
    Force,
    JsonOutput,
    Progress,
)

__all__ = [
    "FORCE_HELP",
    "IMAGE_ROOT",
    "OUT",
    "AsJson",
    "Flag",
    "Flags",
    "Force",
    "Given",
    "JsonOutput",
    "Nested",
    "NoFlag",
    "Operational",
    "OptionField",
    "OptionsUse",
    "Progress",
    "build",
    "comma_list",
    "config_class",
    "file_keys",
    "from_file",
    "identity_settings",
    "iter_settings",
    "key_values",
    "layered",
    "leaf_paths",
    "option_fields",
    "options_uses",
    "put_at",
    "with_options",
]
