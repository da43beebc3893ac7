"""Every release attacked: Anonymeter's singling-out, linkability and inference risks, with intervals.

Invariant: ``RUN/dataset/`` is published only when the upper end of each risk's 95%
interval is at most the declared threshold (``--max-risk``, default 0.05), or when
``--accept-risk`` is given; a refusal names the columns that drive the risk.

The attacks (Anonymeter, Giomi et al. 2023) read the behavioural columns of records only
(:data:`COLUMNS`: domain, behaviour type, local weekday and hour): the anchors the model saw
are the original data, the released records the synthetic data, and the same users' anchors
the model never saw (outside the synthesised weeks) the control set, so each risk is the
attack's success beyond what the population's rhythm alone gives away. Singling out runs
univariate predicates; linkability links (domain, type) to (weekday, hour); inference takes
each column in turn as the secret and reports the worst, naming it.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from recworld.lunar import localtime
from recworld.lunar.schemas import BehaviourRecord

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ("domain", "type", "weekday", "hour")
MAX_ATTACKS = 300
MIN_ROWS = 1
# Below this many attacks even a perfect release's interval stays above 0.05: the risk is printed, not gated.
MIN_GATED = 30


class Risk(BaseModel):
    """One attack's risk: the estimate, its 95% interval, and the columns that drive it."""

    value: float
    low: float
    high: float
    attacks: int
    drivers: list[str]
    # singling out only: how many distinct queries Anonymeter could write (fewer than attacks:
    # the risk is likely underestimated, and lines() says so)
    queries: int | None = None


class RiskReport(BaseModel):
    """The three risks of a release (None: too few records to attack, and why)."""

    singling_out: Risk | None = None
    linkability: Risk | None = None
    inference: Risk | None = None
    threshold: float = 0.05
    original: int = 0
    synthetic: int = 0
    control: int = 0
    note: str | None = None

    def over(self) -> list[tuple[str, Risk]]:
        """The risks whose interval reaches above the threshold."""
        named = (
            ("singling out", self.singling_out),
            ("linkability", self.linkability),
            ("inference", self.inference),
        )
        return [
            (n, r) for n, r in named if r is not None and r.attacks >= MIN_GATED and r.high > self.threshold
        ]

    def unmeasured(self) -> bool:
        return self.singling_out is None or self.linkability is None or self.inference is None

    def lines(self) -> list[str]:
        out = []
        for name, risk in (
            ("singling out", self.singling_out),
            ("linkability", self.linkability),
            ("inference", self.inference),
        ):
            if risk is None:
                out.append(f"{name}: not measured ({self.note or 'too few records'})")
            else:
                out.append(
                    f"{name}: {risk.value:.3f} (95% CI {risk.low:.3f}-{risk.high:.3f}, "
                    f"{risk.attacks} attacks; "
                    f"driven by {', '.join(risk.drivers) or 'no column'})"
                    + _few_queries(risk)
                    + ("" if risk.attacks >= MIN_GATED else f"; not gated: fewer than {MIN_GATED} attacks")
                )
        return out


def _few_queries(risk: Risk) -> str:
    if risk.queries is None or risk.queries >= risk.attacks:
        return ""
    return f"; only {risk.queries} distinct queries for {risk.attacks} attacks: likely an underestimate"


def frame(records: Sequence[BehaviourRecord], zones: dict[str, tzinfo]) -> pd.DataFrame:
    import pandas as pd

    rows = [
        {
            "domain": r.domain.value,
            "type": r.type.value,
            "weekday": str(localtime.weekday(r.timestamp, zones.get(r.user_id, localtime.zone(None)))),
            "hour": str(localtime.hour(r.timestamp, zones.get(r.user_id, localtime.zone(None)))),
        }
        for r in records
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _risk(result: Any, attacks: int, drivers: list[str]) -> Risk:
    low, high = result.ci
    return Risk(value=float(result.value), low=float(low), high=float(high), attacks=attacks, drivers=drivers)


def attack(
    original: pd.DataFrame, synthetic: pd.DataFrame, control: pd.DataFrame, threshold: float, *, seed: int
) -> RiskReport:
    """Run the three attacks (module docstring), their draws all from ``seed`` (the run's, derived).

    Singling out takes ``seed`` itself; linkability and inference draw their targets with
    pandas' ``sample``, i.e. numpy's global generator, which is seeded from it for the
    attacks and then restored, so no caller's global draws change.
    """
    report = RiskReport(
        threshold=threshold, original=len(original), synthetic=len(synthetic), control=len(control)
    )
    if min(len(original), len(synthetic), len(control)) < MIN_ROWS:
        report.note = "no original, released or held-out control record"
        return report
    import numba
    import numpy as np

    # Anonymeter's two distance kernels are numba functions compiled on first use: 2 s on an idle
    # core, two minutes on a shared one, for kernels that here see at most MAX_ATTACKS rows. Run
    # as Python (numba's documented switch, read when anonymeter decorates them at import).
    numba.config.DISABLE_JIT = True  # type: ignore[attr-defined]
    n = min(MAX_ATTACKS, len(original), len(control))
    state = np.random.get_state()  # the attacks sample with numpy's global generator: seeded, then restored
    np.random.seed(seed % 2**32)  # the legacy generator takes 32 bits
    try:
        with _polars_in_order():
            _attacks(report, original, synthetic, control, n, seed)
    finally:
        np.random.set_state(state)
    return report


@contextmanager
def _polars_in_order() -> Iterator[None]:
    """Polars' ``group_by`` and ``Series.unique`` keep first-seen order while the attacks run.

    Anonymeter 1.1.0's singling-out attack lists rare values with ``df.group_by(col)`` and
    candidate values with ``Series.unique()``, then shuffles them with its seeded generator.
    Polars returns both in a random hash order on every call (even single-threaded), so the
    same seed gave different queries and risks run to run. With order kept, the queries are a
    function of the data and the seed, and a release card is byte-identical on a rerun.
    """
    import polars as pl

    group_by, unique = pl.DataFrame.group_by, pl.Series.unique

    def ordered_group_by(self: pl.DataFrame, *by: Any, maintain_order: bool = True, **named: Any) -> Any:
        return group_by(self, *by, maintain_order=True, **named)

    def ordered_unique(self: pl.Series, *, maintain_order: bool = True) -> pl.Series:
        return unique(self, maintain_order=True)

    pl.DataFrame.group_by = ordered_group_by  # type: ignore[method-assign]
    pl.Series.unique = ordered_unique  # type: ignore[method-assign]
    try:
        yield
    finally:
        pl.DataFrame.group_by, pl.Series.unique = group_by, unique  # type: ignore[method-assign]


def _attacks(report: RiskReport, original: Any, synthetic: Any, control: Any, n: int, seed: int) -> None:
    written = _WrittenQueries()
    # a logger's filter sees only what is logged on that logger, not on its children
    source = logging.getLogger("anonymeter.evaluators.singling_out_evaluator")
    source.addFilter(written)
    try:
        _attack_all(report, original, synthetic, control, n, seed)
    finally:
        source.removeFilter(written)
    if report.singling_out is not None:
        count = report.singling_out.attacks if written.count is None else written.count
        report.singling_out = report.singling_out.model_copy(update={"queries": count})


class _WrittenQueries(logging.Filter):
    """Takes Anonymeter's "could generate only k singling out queries" line and keeps k.

    Anonymeter 1.1.0 stores only the queries that succeeded, so that line is the one place it
    says how many it wrote; the release card says it instead (:attr:`Risk.queries`).
    """

    PATTERN = re.compile(r"could generate only (\d+) singling out queries")

    def __init__(self) -> None:
        super().__init__()
        self.count: int | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        found = self.PATTERN.search(record.getMessage())
        if found is None:
            return True
        self.count = int(found.group(1))
        return False


def _attack_all(report: RiskReport, original: Any, synthetic: Any, control: Any, n: int, seed: int) -> None:
    from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "attack as good as baseline": the risk says it
        so = SinglingOutEvaluator(ori=original, syn=synthetic, control=control, n_attacks=n, seed=seed)
        so.evaluate(mode="univariate")
        used = Counter(c for q in so.queries() for c in re.findall(r'col\("(\w+)"\)', str(q)))
        report.singling_out = _risk(so.risk(), n, [c for c, _ in used.most_common(2) if c in COLUMNS])
        aux = (["domain", "type"], ["weekday", "hour"])
        li = LinkabilityEvaluator(ori=original, syn=synthetic, control=control, aux_cols=aux, n_attacks=n)
        report.linkability = _risk(li.evaluate(n_jobs=1).risk(), n, ["domain+type -> weekday+hour"])
        worst = None
        for secret in COLUMNS:
            others = [c for c in COLUMNS if c != secret]
            ev = InferenceEvaluator(
                ori=original, syn=synthetic, control=control, aux_cols=others, secret=secret, n_attacks=n
            )
            risk = ev.evaluate(n_jobs=1).risk()
            if worst is None or risk.ci[1] > worst[0].ci[1]:
                worst = (risk, secret)
        assert worst is not None
        report.inference = _risk(worst[0], n, [worst[1]])
