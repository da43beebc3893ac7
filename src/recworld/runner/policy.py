"""The failure policy a run ends with, for every suite: did it work, and if not, why (exit 3).

The runner decides each request (:mod:`recworld.runner.sending`); this module
decides the run from the counts, after its outputs were written, the same way
for ``recworld eval`` and every LUNAR stage (inspect_ai's ``fail_on_error`` is
the reference):

1. **stopped**: a fatal failure (rejected key, no such model, a server that
   refuses every connection) stopped the run early;
2. **produced nothing**: a stage that must produce something (LUNAR: users,
   queries, judgments) produced none, whatever share failed, because an empty
   output that exits 0 only moves the failure to the next step. A caller that
   has no such count passes ``produced=None``;
3. **too many errors**: more than ``limit`` (a share, 0 to 1) of the asked
   pieces failed.

The first that applies is the verdict; None means the run worked. The
reason is one line a user can act on: the counts, the share, the limit and
the first error. ``limit`` is the run's ``fail_on_error`` setting, declared
once here (:data:`FailOnError`) for every config that has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from recworld.console.options import Flag

FailureStatus = Literal["stopped", "produced_nothing", "too_many_errors"]

DEFAULT_FAIL_ON_ERROR = 0.05
# The field of a config whose run ends with judge(): ``fail_on_error: FailOnError = DEFAULT_FAIL_ON_ERROR``.
FailOnError = Annotated[
    float,
    Field(
        ge=0.0,
        le=1.0,
        description="Exit 3 (after writing what finished) when more than this share of the run failed.",
    ),
    Flag(metavar="FRACTION"),
]

ERROR_CHARS = 300  # of the first error, in the reason


@dataclass(frozen=True)
class Failure:
    """Why a run did not work: its status and a one-line reason."""

    status: FailureStatus
    reason: str


def judge(
    *,
    asked: int,
    failed: int,
    limit: float,
    stopped: BaseException | str | None = None,
    first_error: str | None = None,
    produced: int | None = None,
    noun: str = "samples",
    product: str = "results",
    retry: str = "rerun the same command to retry the failed ones",
) -> Failure | None:
    """The verdict on a run of ``asked`` pieces of which ``failed`` failed (see the module docstring).

    ``noun`` names the pieces ("samples", "pieces"), ``product`` what a stage
    produces ("users"), ``retry`` how to try the failed ones again.
    """
    if not 0.0 <= limit <= 1.0:
        raise ValueError(f"limit is a share of failed pieces, 0 to 1; got {limit}")
    if stopped is not None:
        return Failure("stopped", str(stopped))
    if produced is not None and produced <= 0:
        why = f"{failed} of {asked} {noun} failed" if failed else f"nothing was asked: 0 {noun}"
        return Failure("produced_nothing", f"produced no {product} ({why})" + _first(first_error))
    if asked <= 0 or failed / asked <= limit:
        return None
    return Failure(
        "too_many_errors",
        f"{failed} of {asked} {noun} failed ({failed / asked:.1%}), more than --fail-on-error "
        f"{limit:g} allows{_first(first_error)}; {retry}",
    )


def _first(error: str | None) -> str:
    if not error:
        return ""
    text = " ".join(error.split())
    return f"; first error: {text[:ERROR_CHARS]}"
