"""The report's quality-validation section: LLM-rated quality, rater agreement, external JSD.

* Tables 1 and 9 (LLM-rated plausibility and profile consistency) from
  ``RUN/quality_ratings_run.json`` (``recworld lunar rate``);
* Tables 2 and 10 (exact, within-one, Gwet's AC1 per dimension and rater pair) from
  ``RUN/agreement.json`` (``recworld lunar agreement ... --out RUN``);
* Table 3, external part: JSD of behaviour type, local hour and local weekday between the
  synthetic logs and another behaviour dataset (``report --reference DATASET``): any
  dataset recworld loads (type = the dataset's domain mapped to a LUNAR behaviour type, or
  its ``type`` column) or a LUNAR-format events file/folder.

Each part is shown only when its input exists, so the section never invents numbers.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from datetime import tzinfo
from pathlib import Path
from typing import Any

from recworld.io import read_json_object
from recworld.lunar import rubric_dims, store, timeutil
from recworld.lunar.quality import distribution_counts, fidelity
from recworld.lunar.ratings import RUN_FILE

AGREEMENT_FILE = "agreement.json"
DIMS = ("type", "hour", "weekday")


def _dataset_counts(spec: str, tz: tzinfo) -> dict[str, dict[str, int]]:
    """Type/hour/weekday counts of a recworld dataset, straight from its interaction table."""
    import pandas as pd

    from recworld.data import resolve_dataset
    from recworld.lunar.anchors import _DEFAULT, _DOMAIN_OF_DATASET

    dataset = resolve_dataset(spec)
    inter = dataset.interactions.dropna(subset=["timestamp"])
    moments = pd.to_datetime(inter["timestamp"].astype("int64"), unit="s", utc=True).dt.tz_convert(tz)
    if "type" in inter.columns:
        types = inter["type"].astype(str).value_counts().to_dict()
    else:
        btype = _DOMAIN_OF_DATASET.get(dataset.domain.value, _DEFAULT)[1].value
        types = {btype: len(inter)}
    return {
        "type": {str(k): int(v) for k, v in types.items()},
        "hour": {str(k): int(v) for k, v in moments.dt.hour.value_counts().items()},
        "weekday": {str(k): int(v) for k, v in moments.dt.day_of_week.value_counts().items()},
    }


def reference_counts(spec: str, zone_name: str | None) -> dict[str, dict[str, int]]:
    """Counts of the reference: LUNAR-format events (their users' zones) or a recworld dataset."""
    from recworld.lunar.anchors import _EVENT_FILES, load_anchor_files

    path = Path(spec)
    if path.suffix in (".csv", ".jsonl") or (
        path.is_dir() and any((path / n).exists() for n in _EVENT_FILES)
    ):
        users = timeutil.with_default_zone(load_anchor_files(path), zone_name)
        zones = {u.user_id: u.zone for u in users}
        return distribution_counts([r for u in users for r in u.records], zones)
    return _dataset_counts(spec, timeutil.zone(timeutil.default_zone(zone_name)))


def synthetic_counts(root: Path) -> dict[str, dict[str, int]]:
    zones = {p.user_id: timeutil.zone(p.demographic.timezone) for p in store.profiles(root)}
    return distribution_counts(store.records(root), zones)


def quality_section(
    root: Path, reference: str | None = None, reference_timezone: str | None = None
) -> dict[str, Any]:
    """What the section shows, as JSON (also written into quality.json by the report)."""
    out: dict[str, Any] = {"ratings": None, "agreement": None, "external_jsd": None}
    if (root / RUN_FILE).exists():
        run = read_json_object(root / RUN_FILE)
        out["ratings"] = {"model": run.get("model"), **run["summary"]}
    if (root / AGREEMENT_FILE).exists():
        out["agreement"] = read_json_object(root / AGREEMENT_FILE)
    if reference is not None:
        ref = reference_counts(reference, reference_timezone)
        out["external_jsd"] = {"reference": reference, "jsd": fidelity(synthetic_counts(root), ref)}
    return out


def _num(value: Any, pct: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:.1%}" if pct else f"{value:.3f}"


Table = tuple[str, list[str], list[list[str]]]

# (label, key in "overall" and "rated") of the headline rows of the ratings table.
_HEADLINES = (
    ("log plausibility (mean of 3)", "plausibility"),
    ("profile consistency (mean of 4)", "profile"),
    ("query quality (mean of 2)", "query"),
)


def tables(section: Mapping[str, Any]) -> list[Table]:
    """(title, header, rows) of every table the section has data for; both renderers use this."""
    builders = (_ratings_table, _agreement_table, _external_table)
    return [table for build in builders if (table := build(section)) is not None]


def _ratings_table(section: Mapping[str, Any]) -> Table | None:
    ratings = section.get("ratings")
    if not ratings:
        return None
    rows = [
        [label, _num(ratings["overall"][key]), str(ratings["rated"][key])]
        for label, key in _HEADLINES
        if key != "query" or ratings["rated"].get("query")
    ]
    for dim in (*rubric_dims.HISTORY, *rubric_dims.QUERY):
        if ratings["dimensions"].get(dim) is not None:
            rows.append([f"  {dim}", _num(ratings["dimensions"][dim]), ""])
    return f"LLM-rated data quality (1–5; rater {ratings['model']})", ["figure", "mean", "rated"], rows


def _agreement_table(section: Mapping[str, Any]) -> Table | None:
    agreement = section.get("agreement")
    if not agreement:
        return None
    rows = [
        [
            r["dimension"],
            f"{r['rater_a']} / {r['rater_b']}",
            r["kind"],
            str(r["n"]),
            _num(r["exact"], True),
            _num(r["within_one"], True),
            _num(r["ac1"]),
        ]
        for r in agreement["rows"]
    ]
    return "Rater agreement", ["dimension", "raters", "kind", "n", "exact", "within one", "Gwet AC1"], rows


def _external_table(section: Mapping[str, Any]) -> Table | None:
    ext = section.get("external_jsd")
    if not ext:
        return None
    rows = [[dim, _num(ext["jsd"][dim])] for dim in DIMS]
    return (
        f"JSD to an external dataset ({ext['reference']}; bits, lower is closer)",
        ["dimension", "JSD"],
        rows,
    )


def render_markdown(section: Mapping[str, Any]) -> str:
    found = tables(section)
    if not found:
        return ""
    lines = ["", "## Data-quality validation", ""]
    for title, header, rows in found:
        lines += [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        lines.append("")
    return "\n".join(lines)


def render_html(section: Mapping[str, Any]) -> str:
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


def html_page(markdown: str, sections: list[str]) -> str:
    """report.html: the markdown report as preformatted text, then each section's HTML tables.

    Static and self-contained (no script, no external resource); other report sections
    add their HTML to ``sections``.
    """
    body = "".join(s for s in sections if s)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>LUNAR report</title>'
        "<style>body{font-family:sans-serif;max-width:70rem;margin:auto;padding:1rem}"
        "table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #888;padding:.2rem .5rem}"
        "pre{white-space:pre-wrap}</style></head><body><h1>LUNAR report</h1>"
        f"<pre>{html.escape(markdown)}</pre>{body}</body></html>\n"
    )
