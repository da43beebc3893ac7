"""The models a context setting needs beside the answer and judge models: :class:`RoleSpec`.

A setting declares them in its own module (``ContextSetting.roles``); the flags, the
key in ``LunarEvalConfig.roles``, the missing-model check and the dry-run plan are all
generated from the declaration (see :mod:`recworld.lunar.contexts.base`). :class:`Sessions`
carries the configured models of one eval to the settings, by role name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from recworld.lunar.llm.config import EmbedderConfig, SessionConfig

__all__ = ["ROLE_FLAG_SUFFIX", "RoleKind", "RoleModel", "RoleSpec", "Sessions"]

RoleKind = Literal["model", "embedder"]
# A role's model as configured: a chat model (SessionConfig) or an embedder (EmbedderConfig).
RoleModel: TypeAlias = SessionConfig | EmbedderConfig
# The suffix a role's flag ends with, by kind: the other flags of the role are named from its stem.
ROLE_FLAG_SUFFIX: dict[RoleKind, str] = {"model": "-model", "embedder": "-embedder"}


@dataclass(frozen=True)
class RoleSpec:
    """A model a context setting needs beside the answer and judge models, as it declares it.

    The role's name (its key in :attr:`ContextSetting.roles`) is its key in
    ``LunarEvalConfig.roles`` (``roles={"NAME": SessionConfig(...)}``); it is unique
    among the registered settings. ``flag`` is the option that names the model: it ends in
    ``-model`` for a chat model (``kind="model"``: a
    :class:`~recworld.lunar.llm.config.SessionConfig`) and in ``-embedder`` for an
    embedder (``kind="embedder"``: an :class:`~recworld.lunar.llm.config.EmbedderConfig`);
    the server, key-variable and backend-option flags are named after it
    (``--X-model``: ``--X-base-url``, ``--X-api-key-env``, ``--X-model-option``;
    ``--X-embedder``: ``--X-embed-base-url``, ``--X-embed-api-key-env``,
    ``--X-embedder-option``). ``why`` says what the model does: the flag's help, and
    the one error a run without a required model gets before any call. ``default``
    is used when none is given (a role with a default is never missing).
    """

    flag: str
    why: str
    required: bool = True
    kind: RoleKind = "model"
    default: RoleModel | None = None

    def problems(self) -> list[str]:
        """What is wrong with this declaration (empty when it is complete)."""
        out = []
        suffix = ROLE_FLAG_SUFFIX.get(self.kind)
        if suffix is None:
            out.append(f"kind: one of {', '.join(ROLE_FLAG_SUFFIX)} (got {self.kind!r})")
        elif not (self.flag.startswith("--") and self.flag.endswith(suffix) and self.flag != f"--{suffix}"):
            out.append(f"flag: --NAME{suffix} for a {self.kind} role (got {self.flag!r})")
        if not self.why:
            out.append("why: what the model does")
        expected = SessionConfig if self.kind == "model" else EmbedderConfig
        if self.default is not None and not isinstance(self.default, expected):
            out.append(f"default: a {expected.__name__}")
        return out


@dataclass(frozen=True)
class Sessions:
    """The models of one eval as configured (a dry run has no model open).

    ``roles``: the models of the settings' declared roles, by role name.
    """

    answer: SessionConfig
    judge: SessionConfig
    roles: Mapping[str, RoleModel] = field(default_factory=dict)

    def model(self, role: str) -> SessionConfig | None:
        """The chat model configured for a setting's declared ``role`` (None: not given)."""
        found = self.roles.get(role)
        return found if isinstance(found, SessionConfig) else None

    def embedder(self, role: str) -> EmbedderConfig | None:
        """The embedder configured for a setting's declared ``role`` (None: not given)."""
        found = self.roles.get(role)
        return found if isinstance(found, EmbedderConfig) else None
