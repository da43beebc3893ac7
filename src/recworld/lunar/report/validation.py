"""The report's quality-validation section: LLM-rated quality, rater agreement, external JSD.

* Tables 1 and 9 (LLM-rated plausibility and profile consistency) from
  ``RUN/quality_ratings_run.json`` (``recworld lunar rate``);
* Tables 2 and 10 (exact, within-one, Gwet's AC1 per dimension and rater pair) from
  ``RUN/agreement.json`` (``recworld lunar agreement ... --out RUN``);
* Table 3, external part: JSD of behaviour type, local hour and local weekday between the
  synthetic logs and another behaviour dataset (``report --reference DATASET``): any
  dataset recworld loads (type = the dataset's domain mapped to a LUNAR behaviour type
  through the domain table, or its ``type`` column) or a LUNAR-format events file/folder.

Both files are read back with their record classes (:mod:`recworld.lunar.quality.records`).
Each part is shown only when its input exists, so the section never invents numbers;
:mod:`recworld.lunar.report.quality` says which command would fill a missing part.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Any

from recworld.lunar import localtime
from recworld.lunar.anchors import (
    is_file_source,
    load_anchor_files,
    with_default_zone,
)
from recworld.lunar.quality import dims
from recworld.lunar.quality.records import AgreementReport, Kind, PairAgreement, QualityRatingsRun
from recworld.lunar.quality.stats import distribution_counts, fidelity
from recworld.lunar.report.estimates import MIN_N, TOO_SMALL, share
from recworld.lunar.store import dataset as store
from recworld.reportkit import Cell, Table, cells

DIMS = ("type", "hour", "weekday")


@dataclass(frozen=True)
class ExternalJsd:
    reference: str
    jsd: dict[str, float | None]


@dataclass(frozen=True)
class ValidationSection:
    """What the section shows: each part, or None when its input is not in the folder."""

    ratings: QualityRatingsRun | None
    agreement: AgreementReport | None
    external: ExternalJsd | None

    def to_json(self) -> dict[str, Any]:
        """The ``validation`` object of quality.json."""
        ratings = None
        if self.ratings is not None:
            ratings = {"model": self.ratings.model, **self.ratings.summary.to_json()}
        return {
            "ratings": ratings,
            "agreement": self.agreement.to_json() if self.agreement is not None else None,
            "external_jsd": (
                {"reference": self.external.reference, "jsd": self.external.jsd} if self.external else None
            ),
        }


def _dataset_counts(spec: str, tz: tzinfo) -> dict[str, dict[str, int]]:
    """Type/hour/weekday counts of a recworld dataset, straight from its interaction table.

    A dimension the dataset does not have is left out, so its JSD is not computed: the
    type without a ``type`` column (one type per dataset would only measure the
    vocabulary), the hour when every timestamp is a whole UTC day (a date, not a time).
    """
    import pandas as pd

    from recworld.data import resolve_dataset

    dataset = resolve_dataset(spec)
    inter = dataset.interactions.dropna(subset=["timestamp"])
    seconds = inter["timestamp"].astype("int64")
    moments = pd.to_datetime(seconds, unit="s", utc=True).dt.tz_convert(tz)
    counts = {"weekday": {str(k): int(v) for k, v in moments.dt.day_of_week.value_counts().items()}}
    if "type" in inter.columns:
        counts["type"] = {str(k): int(v) for k, v in inter["type"].astype(str).value_counts().items()}
    if len(seconds) and bool((seconds % 86_400 != 0).any()):
        counts["hour"] = {str(k): int(v) for k, v in moments.dt.hour.value_counts().items()}
    return counts


def reference_counts(
    spec: str, zone_name: str | None, domain_map: Path | None = None
) -> dict[str, dict[str, int]]:
    """Counts of the reference: LUNAR-format events (their users' zones) or a recworld dataset.

    A dataset's behaviour type is its ``type`` column; without one the type dimension is
    left out (a domain mapped to one type would only measure the vocabulary), so
    ``domain_map`` no longer changes the figures.
    """
    path = Path(spec)
    if is_file_source(path):
        users = with_default_zone(load_anchor_files(path), zone_name)
        zones = {u.user_id: u.zone for u in users}
        return distribution_counts([r for u in users for r in u.records], zones)
    zone = localtime.zone(localtime.default_zone(zone_name))
    return _dataset_counts(spec, zone)


def synthetic_counts(root: Path) -> dict[str, dict[str, int]]:
    zones = {p.user_id: localtime.zone(p.demographic.timezone) for p in store.profiles(root)}
    return distribution_counts(store.records(root), zones)


def quality_section(
    root: Path,
    reference: str | None = None,
    reference_timezone: str | None = None,
    domain_map: Path | None = None,
) -> ValidationSection:
    """The section's parts that have input in ``root`` (and the external JSD when ``reference`` is given)."""
    external = None
    if reference is not None:
        ref = reference_counts(reference, reference_timezone, domain_map)
        external = ExternalJsd(reference, fidelity(synthetic_counts(root), ref))
    return ValidationSection(QualityRatingsRun.of(root), AgreementReport.of(root), external)


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


# (label, key in "overall" and "rated") of the headline rows of the ratings table.
_HEADLINES: tuple[tuple[str, Kind], ...] = (
    ("log plausibility (mean of 3)", "plausibility"),
    ("profile consistency (mean of 4)", "profile"),
    ("query quality (mean of 2)", "query"),
)


def ratings_table(run: QualityRatingsRun) -> Table:
    """Tables 1 and 9: the rater's headline means, then each dimension's."""
    ratings = run.summary
    rows = [
        cells(label, _num(ratings.overall.get(key)), str(ratings.rated.get(key, 0)))
        for label, key in _HEADLINES
        if key != "query" or ratings.rated.get("query")
    ]
    for dim in (*dims.HISTORY, *dims.QUERY):
        value = ratings.dimensions.get(dim)
        if value is not None:
            rows.append(cells(f"  {dim}", _num(value), ""))
    return Table(
        key="quality-ratings",
        title=f"LLM-rated data quality (1–5; rater {run.model})",
        columns=["figure", "mean", "rated"],
        rows=rows,
        left=1,
    )


def _ac1(row: PairAgreement) -> Cell:
    if row.n < MIN_N:
        return Cell(f"{row.ac1:.3f} (n={row.n}, {TOO_SMALL})", css="warn")
    return Cell(f"{row.ac1:.3f}")


def agreement_table(agreement: AgreementReport) -> Table:
    """Tables 2 and 10: exact and within-one agreement (exact 95% intervals) and Gwet's AC1."""
    rows = [
        [
            *cells(r.dimension, f"{r.rater_a} / {r.rater_b}", r.kind, str(r.n)),
            Cell(share(round(r.exact * r.n), r.n).text()),
            Cell(share(round(r.within_one * r.n), r.n).text()),
            _ac1(r),
        ]
        for r in agreement.rows
    ]
    return Table(
        key="agreement",
        title="Rater agreement",
        columns=["dimension", "raters", "kind", "n", "exact", "within one", "Gwet AC1"],
        rows=rows,
        caption=f"Agreement shares with exact 95% intervals; an AC1 over fewer than {MIN_N} shared items "
        "is marked n too small.",
        left=2,
    )
