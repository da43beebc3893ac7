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
Each part is shown only when its input exists, so the section never invents numbers.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Any

from recworld.lunar import timeutil
from recworld.lunar.anchors import (
    DomainMap,
    is_file_source,
    load_anchor_files,
    load_domain_map,
    with_default_zone,
)
from recworld.lunar.quality import dims
from recworld.lunar.quality.records import AgreementReport, Kind, QualityRatingsRun
from recworld.lunar.quality.stats import distribution_counts, fidelity
from recworld.lunar.store import dataset as store
from recworld.mdsafe import md_cell

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


def _dataset_counts(spec: str, tz: tzinfo, domains: DomainMap) -> dict[str, dict[str, int]]:
    """Type/hour/weekday counts of a recworld dataset, straight from its interaction table."""
    import pandas as pd

    from recworld.data import resolve_dataset

    dataset = resolve_dataset(spec)
    inter = dataset.interactions.dropna(subset=["timestamp"])
    moments = pd.to_datetime(inter["timestamp"].astype("int64"), unit="s", utc=True).dt.tz_convert(tz)
    if "type" in inter.columns:
        types = inter["type"].astype(str).value_counts().to_dict()
    else:
        types = {domains.lookup(dataset.domain.value)[1].value: len(inter)}
    return {
        "type": {str(k): int(v) for k, v in types.items()},
        "hour": {str(k): int(v) for k, v in moments.dt.hour.value_counts().items()},
        "weekday": {str(k): int(v) for k, v in moments.dt.day_of_week.value_counts().items()},
    }


def reference_counts(
    spec: str, zone_name: str | None, domain_map: Path | None = None
) -> dict[str, dict[str, int]]:
    """Counts of the reference: LUNAR-format events (their users' zones) or a recworld dataset.

    A dataset's behaviour type comes from the domain table: the shipped ``domains.json``
    with ``domain_map`` on top (the table ``lunar synth --domain-map`` used, by default).
    """
    path = Path(spec)
    if is_file_source(path):
        users = with_default_zone(load_anchor_files(path), zone_name)
        zones = {u.user_id: u.zone for u in users}
        return distribution_counts([r for u in users for r in u.records], zones)
    zone = timeutil.zone(timeutil.default_zone(zone_name))
    return _dataset_counts(spec, zone, load_domain_map(domain_map))


def synthetic_counts(root: Path) -> dict[str, dict[str, int]]:
    zones = {p.user_id: timeutil.zone(p.demographic.timezone) for p in store.profiles(root)}
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


def _num(value: Any, pct: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:.1%}" if pct else f"{value:.3f}"


Table = tuple[str, list[str], list[list[str]]]

# (label, key in "overall" and "rated") of the headline rows of the ratings table.
_HEADLINES: tuple[tuple[str, Kind], ...] = (
    ("log plausibility (mean of 3)", "plausibility"),
    ("profile consistency (mean of 4)", "profile"),
    ("query quality (mean of 2)", "query"),
)


def tables(section: ValidationSection) -> list[Table]:
    """(title, header, rows) of every table the section has data for; both renderers use this."""
    found = (
        _ratings_table(section.ratings),
        _agreement_table(section.agreement),
        _external_table(section.external),
    )
    return [table for table in found if table is not None]


def _ratings_table(run: QualityRatingsRun | None) -> Table | None:
    if run is None:
        return None
    ratings = run.summary
    rows = [
        [label, _num(ratings.overall.get(key)), str(ratings.rated.get(key, 0))]
        for label, key in _HEADLINES
        if key != "query" or ratings.rated.get("query")
    ]
    for dim in (*dims.HISTORY, *dims.QUERY):
        value = ratings.dimensions.get(dim)
        if value is not None:
            rows.append([f"  {dim}", _num(value), ""])
    return f"LLM-rated data quality (1–5; rater {run.model})", ["figure", "mean", "rated"], rows


def _agreement_table(agreement: AgreementReport | None) -> Table | None:
    if agreement is None:
        return None
    rows = [
        [
            r.dimension,
            f"{r.rater_a} / {r.rater_b}",
            r.kind,
            str(r.n),
            _num(r.exact, True),
            _num(r.within_one, True),
            _num(r.ac1),
        ]
        for r in agreement.rows
    ]
    return "Rater agreement", ["dimension", "raters", "kind", "n", "exact", "within one", "Gwet AC1"], rows


def _external_table(ext: ExternalJsd | None) -> Table | None:
    if ext is None:
        return None
    rows = [[dim, _num(ext.jsd[dim])] for dim in DIMS]
    return (
        f"JSD to an external dataset ({ext.reference}; bits, lower is closer)",
        ["dimension", "JSD"],
        rows,
    )


def render_markdown(section: ValidationSection) -> str:
    found = tables(section)
    if not found:
        return ""
    lines = ["", "## Data-quality validation", ""]
    for title, header, rows in found:
        lines += [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
        lines.append("")
    return "\n".join(lines)


def render_html(section: ValidationSection) -> str:
    found = tables(section)
    if not found:
        return ""
    parts = ['<section id="lunar-quality-validation"><h2>Data-quality validation</h2>']
    for title, header, rows in found:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
        parts.append(
            f"<h3>{html.escape(title)}</h3><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )
    parts.append("</section>")
    return "".join(parts)
