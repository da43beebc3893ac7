"""Ground-truth gates: a signal a measure's answers rest on must be checked before it is asked.

A builder whose signal fails its check raises :class:`WeakGroundTruth` with
the gate's name, a one-line reason and the figures behind it. The suite build
(:func:`recworld.lrworld.suite.build_questions`) then skips that measure,
builds every other one, and the manifest lists the gate
(:class:`~recworld.lrworld.manifest.GateCheck`) with outcome ``skipped``,
unless the gate is required (``BuildConfig.require_neural`` for the neural
gate, ``--require-neural``): then the build stops with the gate's
:class:`WeakGateError` (exit 3) and writes nothing. A weak signal is a
property of the data (a small category, little structure), not an error, so
by default it costs only the measures it would have made meaningless. Gates
that pass are listed too (outcome ``built``), with their figures.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from recworld.errors import RunError
from recworld.lrworld.manifest import GateCheck

NEURAL_GATE = "neural"

Figures = dict[str, float | int | None]


class WeakGateError(RunError):
    """A required gate failed: the build did its work and produced nothing worth reading (exit 3)."""


@dataclass
class WeakGroundTruth(Exception):  # noqa: N818 - a verdict a builder hands up, not an error to show
    """A builder's signal failed its gate: skip the measure (or fail, if the gate is required)."""

    gate: str
    reason: str
    figures: Figures = field(default_factory=dict)
    error: type[WeakGateError] = WeakGateError  # what a required gate raises
    hint: str = ""  # how to build anyway, appended to the fatal message

    def __str__(self) -> str:
        return self.reason

    def fatal(self) -> WeakGateError:
        return self.error(f"{self.reason}; {self.hint}" if self.hint else self.reason)


def required_gates(require_neural: bool) -> frozenset[str]:
    """The gates whose failure stops the build instead of skipping their measures."""
    return frozenset({NEURAL_GATE} if require_neural else ())


class GateLog:
    """Every gate a build checked, one record per gate with the measures it covered."""

    def __init__(self) -> None:
        self._checks: dict[str, GateCheck] = {}

    def note(
        self,
        gate: str,
        measure_id: str,
        *,
        passed: bool,
        outcome: Literal["built", "skipped", "built_weak"],
        reason: str,
        figures: Figures,
    ) -> None:
        old = self._checks.get(gate)
        measures = [*(old.measures if old else []), measure_id]
        self._checks[gate] = GateCheck(
            gate=gate, measures=measures, passed=passed, outcome=outcome, reason=reason, figures=figures
        )

    def skipped(self, measure_id: str, weak: WeakGroundTruth) -> str:
        """Record a measure skipped by a failed gate; returns the skip reason for the manifest."""
        self.note(
            weak.gate, measure_id, passed=False, outcome="skipped", reason=weak.reason, figures=weak.figures
        )
        return f"{weak.gate} gate: {weak.reason}"

    def records(self) -> list[GateCheck]:
        return [self._checks[g] for g in sorted(self._checks)]

    def failed(self) -> Iterable[GateCheck]:
        return (c for c in self.records() if not c.passed)
