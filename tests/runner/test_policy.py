"""The run-level failure policy both suites share (recworld.runner.policy.judge)."""

from __future__ import annotations

import itertools

import pytest

from recworld.models import FatalModelError
from recworld.runner import judge


def reference(asked: int, failed: int, limit: float, stopped: bool, produced: int | None) -> str | None:
    """The rule, written out plainly: stopped, then produced nothing, then the failed share."""
    if stopped:
        return "stopped"
    if produced is not None and produced == 0:
        return "produced_nothing"
    if asked and failed / asked > limit:
        return "too_many_errors"
    return None


@pytest.mark.parametrize("limit", [0.0, 0.05, 0.5, 1.0])
def test_verdicts_match_the_rule_on_every_small_case(limit: float) -> None:
    for asked, stopped, produced in itertools.product(range(6), (False, True), (None, 0, 1)):
        for failed in range(asked + 1):
            got = judge(
                asked=asked, failed=failed, limit=limit, stopped="401" if stopped else None, produced=produced
            )
            assert (got.status if got else None) == reference(asked, failed, limit, stopped, produced), (
                asked,
                failed,
                limit,
                stopped,
                produced,
            )


def test_the_share_is_strictly_above_the_limit() -> None:
    assert judge(asked=20, failed=1, limit=0.05) is None  # exactly 5 %: allowed
    failure = judge(asked=20, failed=2, limit=0.05, first_error="ModelError:  HTTP 400\n bad request")
    assert failure is not None and failure.status == "too_many_errors"
    assert failure.reason == (
        "2 of 20 samples failed (10.0%), more than --fail-on-error 0.05 allows; "
        "first error: ModelError: HTTP 400 bad request; rerun the same command to retry the failed ones"
    )


def test_reasons_name_what_stopped_and_what_was_not_produced() -> None:
    stopped = judge(asked=5, failed=1, limit=1.0, stopped=FatalModelError("the server rejected the API key"))
    assert stopped is not None and (stopped.status, stopped.reason) == (
        "stopped",
        "the server rejected the API key",
    )
    empty = judge(
        asked=4, failed=4, limit=1.0, produced=0, noun="pieces", product="users", first_error="boom"
    )
    assert empty is not None and empty.reason == "produced no users (4 of 4 pieces failed); first error: boom"
    nothing = judge(asked=0, failed=0, limit=0.05, produced=0, noun="pieces", product="queries")
    assert nothing is not None and nothing.reason == "produced no queries (nothing was asked: 0 pieces)"


def test_a_limit_outside_zero_to_one_is_a_bug() -> None:
    with pytest.raises(ValueError, match="share"):
        judge(asked=1, failed=0, limit=1.5)
