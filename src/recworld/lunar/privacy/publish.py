"""The last step before ``RUN/dataset/`` is written: the independent scan and the attacks decide.

Invariant: ``dataset/`` is written only when the independent scanner
(:mod:`~recworld.lunar.privacy.scan`) finds nothing in the documents to be released, the
failures, the log and the manifest text, and every measured risk is within the threshold
(or the run was told ``--accept-risk``). Otherwise :class:`ReleaseRefusedError` (exit 3) names
where and what kind was found, or which risk and columns, and no value.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import tzinfo
from pathlib import Path
from typing import Any

from recworld.errors import RunError
from recworld.lunar.anchors import AnchorUser
from recworld.lunar.privacy import scan
from recworld.lunar.privacy.attack import RiskReport, attack, frame
from recworld.lunar.schemas import BehaviourRecord


class ReleaseRefusedError(RunError):
    """The release failed its privacy checks; ``dataset/`` was not written."""


def findings(
    sources: Iterable[AnchorUser], docs: Mapping[str, Sequence[Any]], files: Sequence[Path]
) -> list[scan.Finding]:
    """The independent scanner over released documents (name -> JSON docs) and working files."""
    anchors = scan.anchors_of(sources)
    out: list[scan.Finding] = []
    texts: list[tuple[str, str]] = []
    for name, items in docs.items():
        for n, doc in enumerate(items):
            out += scan.scan_json(anchors, doc, f"{name}:{n + 1}")
            texts += scan.free_texts(doc, f"{name}:{n + 1}")
    for path in files:
        out += scan.scan_file(anchors, path)
    out += scan.presidio_findings(texts)
    return list(dict.fromkeys(out))


def scan_text(sources: Iterable[AnchorUser], text: str, where: str) -> list[scan.Finding]:
    return list(dict.fromkeys(scan.scan_text(scan.anchors_of(sources), text, where)))


def risks(
    used: Sequence[BehaviourRecord],
    control: Sequence[BehaviourRecord],
    released: Sequence[Mapping[str, Any]],
    zones: Mapping[str, tzinfo],
    threshold: float,
    *,
    seed: int,
) -> RiskReport:
    """Anonymeter's three risks: anchors shown as original, released records as synthetic.

    ``seed`` is the run's (``child_seed(config.seed, "lunar", "anonymeter")``): one seed, one card.
    """
    synthetic = [BehaviourRecord.model_validate(r) for r in released]
    z = dict(zones)
    return attack(frame(used, z), frame(synthetic, z), frame(control, z), threshold, seed=seed)


def verdict(found: Sequence[scan.Finding], report: RiskReport, accept_risk: bool) -> str | None:
    """Why the release is refused (None: it may be published)."""
    if found:
        shown = "; ".join(str(f) for f in found[:8])
        more = f" and {len(found) - 8} more" if len(found) > 8 else ""
        return f"the independent scanner found anchor values in the release: {shown}{more}"
    over = report.over()
    if over and not accept_risk:
        parts = [
            f"{name} {r.high:.3f} > {report.threshold} (columns: {', '.join(r.drivers)})" for name, r in over
        ]
        return (
            "re-identification risk above the threshold: "
            + "; ".join(parts)
            + " (--accept-risk publishes anyway)"
        )
    return None


def dumps(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False, sort_keys=True)


CARD_FILE = "release_card.md"


def card(report: Any) -> str:
    """The release card (``RUN/release_card.md``): columns, the scan, each risk with its interval."""
    lines = ["# Release card", "", "## Columns (allowlist schema)", ""]
    for part in ("kept", "dropped", "unknown_dropped"):
        items = report.columns.get(part) or {}
        lines.append(
            f"- {part.replace('_', ' ')}: " + (", ".join(f"{k} {v}" for k, v in items.items()) or "none")
        )
    lines.append(f"- free text: {report.columns.get('free_text', 'none')}")
    lines += ["", "## Independent scan", ""]
    lines.append(
        f"- findings: {len(report.findings)}" + ("" if not report.findings else " (release refused)")
    )
    lines += [f"  - {f}" for f in report.findings[:50]]
    lines += ["", "## Anonymeter risks (anchors as original, released records as synthetic)", ""]
    risks: RiskReport | None = report.risks
    if risks is not None:
        lines.append(
            f"- records: {risks.original} original, {risks.synthetic} released, {risks.control} control; "
            f"threshold {risks.threshold} on the upper 95% bound"
        )
        lines += [f"- {line}" for line in risks.lines()]
    lines += ["", f"Published: {'yes' if report.published else 'no: ' + str(report.why_not)}", ""]
    return "\n".join(lines)
