"""The options of ``recworld lunar``: every setting declared once, one shared decorator for every command.

A setting's type, bounds, default and help live on its config field (the stage
configs of :mod:`recworld.lunar.config`, :class:`~recworld.lunar.llm.config.SessionConfig`,
a context setting's options). How the models of a command show on the command line
is declared once in :mod:`recworld.lunar.cli.flags` (``MODEL``, ``JUDGE``, ``SHARED``,
the embedder, :class:`~recworld.lunar.cli.flags.RunOptions`). The models a context
setting declares (its ``roles``) get their flags from
:func:`~recworld.lunar.cli.flags.role_flags`, read from the registry when the app is
built, as each setting's own options are.

:func:`lunar_options` generates a command's options from its stage config with
:func:`recworld.console.options.with_options` and hands the command a
:class:`LunarCommand`, which builds the typed config. Names, wording and defaults
follow ``recworld eval``. A value the configs reject is one ``invalid value for
--flag`` line (exit 2), never a config field name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import typer
from pydantic import BaseModel, Field, ValidationError, create_model

from recworld.console.options import (
    Flag,
    Given,
    build,
    comma_list,
    config_class,
    layered,
    leaf_paths,
    option_fields,
    put_at,
    with_options,
)
from recworld.errors import ConfigError
from recworld.lunar.cli.flags import EMBEDDER, SESSION_SEED, SHARED, RunOptions, role_flags
from recworld.lunar.contexts import RoleSpec, context_setting, default_contexts, registered
from recworld.lunar.contexts.base import setting_roles
from recworld.lunar.llm.config import EmbedderConfig, SessionConfig
from recworld.records import Settings

C = TypeVar("C", bound=BaseModel)
Path_ = tuple[str, ...]


def _has(config: type[BaseModel], name: str) -> bool:
    return name in config.model_fields


@dataclass(frozen=True)
class Layout:
    """Where a command's models sit in its stage config, and the flags and hidden paths that follow.

    ``settings``: the models context settings declare (``lunar eval``), by role name.
    On the command line each is a field of its own beside the stage's models
    (:attr:`options_config`); the stage config keeps them in ``roles``.
    """

    config: type[BaseModel]
    roles: Mapping[str, Mapping[str, Flag]]  # stage field of each model -> its own flags (first: primary)
    settings: Mapping[str, RoleSpec] = field(default_factory=dict)
    options_config: type[BaseModel] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options_config", _with_roles(self.config, self.settings))

    @property
    def primary(self) -> str:
        return next(iter(self.roles))

    @property
    def models(self) -> dict[str, Mapping[str, Flag]]:
        """Every chat model's field and its own flags: the stage's, then the settings' roles."""
        declared = {r: role_flags(s) for r, s in self.settings.items() if s.kind == "model"}
        return {**self.roles, **declared}

    @property
    def embedders(self) -> list[str]:
        """Every embedder's field: the stage's ``embedder``, then the settings' embedder roles."""
        own = ["embedder"] if _has(self.config, "embedder") else []
        return own + [r for r, s in self.settings.items() if s.kind == "embedder"]

    def optional(self, role: str) -> bool:
        """A setting's model without a default: left out of the config unless its model was given."""
        spec = self.settings.get(role)
        return spec is not None and spec.default is None

    def flags(self, extra: Mapping[str, Flag]) -> dict[str, Flag]:
        out: dict[str, Flag] = {}
        shared = SHARED | ({} if _has(self.config, "seed") else SESSION_SEED)
        for role, own in self.models.items():
            out |= {f"{role}.{path}": flag for path, flag in own.items()}
        out |= {f"{self.primary}.{path}": flag for path, flag in shared.items()}
        if _has(self.config, "embedder"):
            out |= EMBEDDER
        for role, spec in self.settings.items():
            if spec.kind == "embedder":
                out |= {f"{role}.{path}": flag for path, flag in role_flags(spec).items()}
        return out | dict(extra)

    def hidden(self, flags: Mapping[str, Flag]) -> list[str]:
        """Model and embedder settings without a flag here: not on this command line."""
        roots = {*self.models, *self.embedders}
        paths = leaf_paths(self.options_config)
        return [".".join(p) for p in paths if p[0] in roots and ".".join(p) not in flags]


def _with_roles(config: type[BaseModel], settings: Mapping[str, RoleSpec]) -> type[BaseModel]:
    """``config`` with each declared role as a field of its own, for its options (``--X-model``)."""
    if not settings:
        return config
    fields: dict[str, Any] = {}
    for role, spec in settings.items():
        kind = SessionConfig if spec.kind == "model" else EmbedderConfig
        fields[role] = (kind | None, None) if spec.default is None else (kind, spec.default)
    return create_model(f"{config.__name__}Options", __base__=config, **fields)


@dataclass(frozen=True)
class LunarCommand(Generic[C]):
    """What one LUNAR command was given on its command line, and the typed config it makes."""

    layout: Layout
    flags: Mapping[str, Flag]
    hidden: Sequence[str]
    stage: Given
    run: RunOptions
    contexts: Given | None = None

    def build(self, config: type[C], **fixed: Any) -> C:
        """The stage config: ``fixed`` (the command's arguments) under what was typed, over the defaults."""
        if config is not self.layout.config:
            raise TypeError(
                f"options were generated for {self.layout.config.__name__}, not {config.__name__}"
            )
        values = self.stage.nested()
        if self.run.smoke:
            values = layered(values, self._smoke(config))
        self._share(values)
        roles: dict[str, Any] = {}
        for role, spec in self.layout.settings.items():  # each declared model alone: errors name its flag
            if role not in values:
                continue
            kind = SessionConfig if spec.kind == "model" else EmbedderConfig
            raw = values.pop(role)
            if spec.default is not None:
                raw = layered(raw, spec.default.model_dump())
            try:
                roles[role] = kind.model_validate(raw)
            except ValidationError as exc:
                raise self._named(exc, (role,)) from None
        if roles:  # a field each on the command line (options_config), keys of roles in the stage config
            values["roles"] = roles
        if self.contexts is not None:  # each setting's options on their own, so an error has its flag
            values["options"] = {}
            for name, raw in self.contexts.nested().items():
                try:
                    values["options"][name] = context_setting(name).options_type.model_validate(raw)
                except ValidationError as exc:
                    raise self._named(exc, ("options", name)) from None
        try:
            return config.model_validate(layered(fixed, values))
        except ValidationError as exc:
            raise self._named(exc) from None

    def _smoke(self, config: type[BaseModel]) -> dict[str, Any]:
        """The ``--smoke`` preset under what was typed, said on stderr (stdout stays for results)."""
        from recworld.lunar.cli.smoke import described, preset

        typed = self.stage.values
        shown = described(config, typed, self.flags, self.hidden)
        if shown:
            typer.echo(f"recworld: smoke preset: {shown} (a flag you type wins)", err=True)
        return preset(config, typed)

    def _named(self, exc: ValidationError, prefix: tuple[str, ...] = ()) -> ConfigError:
        """``invalid value for --flag: ...``; a setting copied to another model is named by its own flag."""
        first = exc.errors()[0]
        loc = (*prefix, *(str(p) for p in first.get("loc", ())))
        if loc and loc[0] in {*self.layout.models, *self.layout.settings} and ".".join(loc[1:]) in SHARED:
            loc = (self.layout.primary, *loc[1:])
        shown = option_fields(self.layout.options_config, flags=self.flags, exclude=self.hidden)
        flags = {".".join(o.path): o.flag for o in shown}
        flags |= {f"options.{k}": f for k, f in _context_flags().items()}
        dotted = [".".join(loc[:n]) for n in range(len(loc), 0, -1)]
        flag = next((flags[d] for d in dotted if d in flags), None)
        if flag and first.get("type") == "missing":
            return ConfigError(f"missing option {flag}")
        message = str(first.get("msg") or exc).removeprefix("Value error, ")
        return ConfigError(f"invalid value for {flag}: {message}" if flag else f"{'.'.join(loc)}: {message}")

    def _share(self, values: dict[str, Any]) -> None:
        """Shared settings reach every model (and the embedder); the seed seeds each model."""
        layout, primary = self.layout, self.layout.primary
        typed = {path[1:]: v for path, v in self.stage.values.items() if path[0] == primary}
        shared = {p: typed[p] for p in (tuple(k.split(".")) for k in SHARED) if p in typed}
        seed = values.get("seed") if _has(layout.config, "seed") else typed.get(("backend", "seed"))
        for role in layout.models:
            if layout.optional(role) and (role, "model") not in self.stage.values:
                given = sorted(
                    str(f.name)
                    for p, f in self.flags.items()
                    if p.startswith(f"{role}.") and tuple(p.split(".")) in self.stage.values
                )
                if given:
                    raise ConfigError(f"{given[0]} needs {self.flags[f'{role}.model'].name}")
                values.pop(role, None)
                continue
            node = values.setdefault(role, {})
            for path, value in shared.items():
                put_at(node, path, value)
            if seed is not None:
                put_at(node, ("backend", "seed"), seed)
                put_at(node, ("runner", "seed"), seed)
        fields = layout.options_config.model_fields
        embedder = fields.get("embedder")
        if (
            embedder is not None
            and embedder.default is None
            and ("embedder", "model") not in self.stage.values
        ):
            values.pop("embedder", None)  # --embed-base-url alone does not turn an optional embedder on
        for name in layout.embedders:  # a shared setting reaches every embedder that has it, as every model
            kind = config_class(fields[name].annotation)
            if kind is None or (name not in values and fields[name].default is None):
                continue
            own = set(leaf_paths(kind))
            for path, value in shared.items():
                if path in own:
                    put_at(values.setdefault(name, {}), path, value)


def context_options() -> tuple[type[BaseModel], list[str]]:
    """One nested config of every registered setting's options (each with the flag it declares).

    Also the paths to leave off the command line: options that are nested configs marked
    ``Flag(cli=False)`` (a model object only Python can give).
    """
    fields: dict[str, Any] = {}
    hidden: list[str] = []
    for s in registered():
        if not s.options_type.model_fields:
            continue
        fields[s.name] = (s.options_type, Field(default_factory=s.options_type))
        for name, info in s.options_type.model_fields.items():
            flag = next((m for m in info.metadata if isinstance(m, Flag)), None)
            if flag is not None and not flag.cli and config_class(info.annotation) is not None:
                hidden.append(f"{s.name}.{name}")
    return create_model("ContextOptions", __base__=Settings, **fields), hidden


def _context_flags() -> dict[str, str]:
    model, hidden = context_options()
    return {".".join(o.path): o.flag for o in option_fields(model, exclude=hidden)}


def context_flag() -> Flag:
    """``--context``, its choices and default read from the registry."""
    names = ", ".join(s.name for s in registered())
    return Flag(
        "--context",
        help=f"Comma list of context settings: {names}.",
        parse=comma_list,
        cli_type=str,
        default_help=",".join(default_contexts()),
    )


def lunar_options(
    config: type[BaseModel],
    *,
    roles: Mapping[str, Mapping[str, Flag]],
    flags: Mapping[str, Flag] | None = None,
    exclude: Sequence[str] = (),
    dry_run: bool = False,
    contexts: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A typer command decorator: ``config``'s options (its models laid out by ``roles``) and the run options.

    The command keeps its own parameters (``ROOT``) and gets ``given``: a :class:`LunarCommand`.
    ``contexts`` adds every registered context setting's options and the flags of the
    models they declare (their ``roles``; ``lunar eval``).
    """
    layout = Layout(config, roles, setting_roles() if contexts else {})
    table = layout.flags(flags or {})
    hidden = [*exclude, *layout.hidden(table)]

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        own = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.name != "given"]
        extra = ["_stage", "_run", *(["_contexts"] if contexts else [])]

        def inner(**kwargs: Any) -> Any:
            stage, run, ctx = kwargs.pop("_stage"), kwargs.pop("_run"), kwargs.pop("_contexts", None)
            options = build(RunOptions, run.nested())
            parsed: LunarCommand[Any] = LunarCommand(layout, table, hidden, stage, options, ctx)
            return command(**kwargs, given=parsed)

        kw = inspect.Parameter.KEYWORD_ONLY
        inner.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [*own, *(inspect.Parameter(n, kw, annotation=Given) for n in extra)]
        )
        inner.__name__, inner.__doc__ = command.__name__, command.__doc__
        wrapped = with_options(layout.options_config, exclude=hidden, flags=table, given="_stage")(inner)
        run_exclude = () if dry_run else ("dry_run", "prices")
        wrapped = with_options(RunOptions, exclude=run_exclude, given="_run")(wrapped)
        if contexts:
            model, hidden_options = context_options()
            wrapped = with_options(model, exclude=hidden_options, given="_contexts")(wrapped)
        return wrapped

    return decorate
