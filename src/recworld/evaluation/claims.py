"""A model object whose answers claim a mode its ``supports`` does not declare: one warning per run.

Before anything is sent, a run checks its ``mode`` against the object's
``supports`` (a ``ConfigError``). What that check cannot see is an object whose
``complete`` returns per-choice scores (``choice_logprobs``, what ``loglik`` and
``rank`` answers are made of) while ``supports`` declares neither: its answers
say it scores choices, its declaration says it does not, so one of the two is
wrong (``--mode loglik`` would be refused, and the contract tests never check
those scores). ``recworld.evaluate`` warns (a ``UserWarning``, once per run)
instead of failing, because the run itself is still right: it scores the text.
Registry backends are not watched; their contract tests pin what they declare.
"""

from __future__ import annotations

import warnings

from recworld.chat import AnswerMode, Response
from recworld.models.base import Model

__all__ = ["ClaimWatch", "undeclared_claim"]

SCORING = frozenset({AnswerMode.LOGLIK, AnswerMode.RANK})


def undeclared_claim(name: str, model: Model, response: Response) -> str | None:
    """Why ``response`` claims a mode ``model`` does not declare, or None when it claims none."""
    if response.choice_logprobs is None or model.supports & SCORING:
        return None
    declared = ", ".join(sorted(m.value for m in model.supports)) or "nothing"
    return (
        f"model {name!r} answers with per-choice scores (choice_logprobs: loglik or rank answers), "
        f"but its supports declares only {declared}; declare the modes it serves, or drop the scores"
    )


class ClaimWatch:
    """Looks at each answer of one run's model object and warns at the first that claims too much."""

    def __init__(self, name: str, model: Model | None) -> None:
        self._name = name
        self._model = model
        self._warned = False

    def see(self, response: Response | None) -> None:
        if self._warned or response is None or self._model is None:  # None: a spec's backend, unwatched
            return
        claim = undeclared_claim(self._name, self._model, response)
        if claim is not None:
            self._warned = True
            warnings.warn(claim, UserWarning, stacklevel=2)
