"""The failure policy every LUNAR stage ends with: say what failed, and exit 3 when the run did not work.

The same rule as ``recworld eval``: pieces given up on are counted, a stage whose
failed share is above ``--fail-on-error`` exits 3, and so does a stage that produced
nothing at all (0 users, 0 queries, 0 judgments) whatever the share, because an
empty output that exits 0 only moves the failure to the next step. In every case
the outputs are written first, so a rerun resumes from the cache.

The summary goes to the ``recworld.lunar`` logger at WARNING: on stderr as
``recworld: warning: ...`` and into the run folder's ``recworld.log``. It names the
stage of each piece, the first distinct errors and the start of the rejected reply,
de-identified, so nobody has to open ``failures.jsonl`` to learn that the model
answered ``Answer: X`` to a JSON request.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from recworld.errors import RunError
from recworld.lunar.llm import FailureRecord
from recworld.runner.policy import judge

_log = logging.getLogger("recworld.lunar")

SHOWN_ERRORS = 3  # distinct errors shown in the summary
SHOWN_REPLY = 200  # characters of the rejected reply shown


def summary_lines(
    stage: str, asked: int, failures: Sequence[FailureRecord], where: str | None = None
) -> list[str]:
    """The failure summary of one stage, one string per line (empty when nothing failed)."""
    if not failures:
        return []
    by_stage: dict[str, int] = {}
    for f in failures:
        by_stage[f.stage] = by_stage.get(f.stage, 0) + 1
    parts = ", ".join(f"{name} {n}" for name, n in by_stage.items())
    lines = [f"lunar {stage}: {len(failures)} of {asked} pieces failed ({parts})"]
    distinct: dict[str, list[FailureRecord]] = {}
    for f in failures:
        distinct.setdefault(f.error, []).append(f)
    for error, group in list(distinct.items())[:SHOWN_ERRORS]:
        first = group[0]
        lines.append(
            f"  {len(group)}x [{first.stage} {first.key}, {first.kind}, {first.attempts} attempts] {error}"
        )
        if first.reply is not None:
            reply = " ".join(first.reply[:SHOWN_REPLY].split())
            lines.append(f"     rejected reply: {reply!r}")
    if len(distinct) > SHOWN_ERRORS:
        lines.append(f"  ... and {len(distinct) - SHOWN_ERRORS} other errors")
    if where:
        lines.append(f"  every failure: {where}; --retry-failures asks the rejected ones again")
    return lines


def check_failures(
    stage: str,
    asked: int,
    failures: Sequence[FailureRecord],
    limit: float,
    *,
    produced: tuple[int, str] | None = None,
    where: str | None = None,
) -> None:
    """Log the failure summary, then raise :class:`RunError` (exit 3) if the stage did not work.

    The verdict is :func:`recworld.runner.policy.judge`'s, the same as ``recworld eval``'s:
    it did not work when ``produced`` (a count and its noun, e.g. ``(0, "users")``) is
    zero, or when more than ``limit`` of the ``asked`` pieces failed. Called after the
    stage wrote its outputs, so what finished is kept and a rerun resumes from the cache.
    """
    lines = summary_lines(stage, asked, failures, where)
    if lines:
        _log.warning("%s", "\n".join(lines))
    first = failures[0] if failures else None
    verdict = judge(
        asked=asked,
        failed=len(failures),
        limit=limit,
        produced=produced[0] if produced else None,
        noun="pieces",
        product=produced[1] if produced else "results",
        first_error=f"[{first.stage} {first.key}, {first.kind}] {first.error}" if first else None,
        retry="--retry-failures asks the rejected ones again",
    )
    if verdict is not None:
        raise RunError(f"lunar {stage} {verdict.reason}")
