"""Rater agreement for the human evaluation (paper Tables 2 and 10): exact, within-one, Gwet's AC1.

Ratings come in long format, one rating a row: ``item_id,rater,dimension,score`` with an
integer score on the 1-5 scale. Agreement is computed for every dimension and every pair of
raters over the items both rated, and once more pooled per dimension group, as the paper
reports histories and queries apart: ``(histories)`` over the seven history dimensions,
``(queries)`` over the two query dimensions (a dimension of neither group pools in
``(other)``). Groups are never pooled together.

Gwet's AC1 is the unweighted coefficient the paper uses because its ratings crowd into the
top categories, where Cohen's kappa collapses (the prevalence paradox). For two raters and
``q`` categories::

    pa = share of items with identical scores
    pi_k = (n_k(rater 1) + n_k(rater 2)) / (2 n)
    pe = sum_k pi_k (1 - pi_k) / (q - 1)
    AC1 = (pa - pe) / (1 - pe)

``q`` is the number of categories of the scale (5), not only the ones used: this is what
Gwet's handbook and irrCAC (``categ.labels``) do when the full scale is declared. Since
``pe <= 1/q``, AC1 is always defined.

Raters are marked as LLM raters by an ``llm:`` name prefix (what ``recworld lunar rate``
writes) or by naming them explicitly; each pair is labelled human-human, human-LLM or
LLM-LLM.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from recworld.capped import read_capped
from recworld.csvsafe import csv_dict_text
from recworld.errors import DataError
from recworld.io import atomic_write_text, claim_output_dir, mark_output_dir
from recworld.lunar.config import RUN_KIND
from recworld.lunar.quality import dims
from recworld.lunar.quality.records import AGREEMENT_FILE, AgreementReport, PairAgreement

SCALE = (1, 2, 3, 4, 5)
COLUMNS = ("item_id", "rater", "dimension", "score")
RATINGS_LIMIT = 256 << 20  # one ratings CSV; a 10,000-item sheet by 20 raters is a few MB
AGREEMENT_KIND = "lunar-agreement"  # the output marker kind of an agreement folder
# An agreement may sit beside the run it feeds or the sheet it was rated on.
AGREEMENT_JOINS = (RUN_KIND, "lunar-annotation")
LLM_PREFIX = "llm:"
# The pooled rows, one per dimension group (never across groups).
GROUPS: dict[str, frozenset[str]] = {
    "(histories)": frozenset(dims.HISTORY),
    "(queries)": frozenset(dims.QUERY),
}
OTHER_GROUP = "(other)"


def group_of(dimension: str) -> str:
    """The pooled row a dimension belongs to."""
    return next((g for g, members in GROUPS.items() if dimension in members), OTHER_GROUP)


@dataclass(frozen=True)
class Rating:
    item_id: str
    rater: str
    dimension: str
    score: int


def gwet_ac1(a: Sequence[object], b: Sequence[object], categories: Sequence[object] = SCALE) -> float:
    """Unweighted Gwet's AC1 of two raters' paired ratings over the declared ``categories``."""
    if len(a) != len(b) or not a:
        raise ValueError("AC1 needs two equally long, non-empty rating lists")
    if len(categories) < 2:
        raise ValueError("AC1 needs at least two categories")
    unknown = (set(a) | set(b)) - set(categories)
    if unknown:
        raise ValueError(f"ratings outside the categories: {sorted(map(str, unknown))}")
    n = len(a)
    pa = sum(x == y for x, y in zip(a, b, strict=True)) / n
    counts = Counter(a) + Counter(b)
    pe = sum((counts[k] / (2 * n)) * (1 - counts[k] / (2 * n)) for k in categories) / (len(categories) - 1)
    return (pa - pe) / (1 - pe)


def pair_agreement(a: Sequence[int], b: Sequence[int]) -> tuple[float, float, float]:
    """(exact, within-one, AC1) of two raters' paired 1-5 scores."""
    n = len(a)
    exact = sum(x == y for x, y in zip(a, b, strict=True)) / n
    within = sum(abs(x - y) <= 1 for x, y in zip(a, b, strict=True)) / n
    return exact, within, gwet_ac1(a, b)


def is_llm(rater: str, llm_raters: Collection[str] = ()) -> bool:
    return rater.startswith(LLM_PREFIX) or rater in llm_raters


def pair_kind(a: str, b: str, llm_raters: Collection[str] = ()) -> str:
    machines = is_llm(a, llm_raters) + is_llm(b, llm_raters)
    return ("human-human", "human-LLM", "LLM-LLM")[machines]


def agreement_rows(ratings: Iterable[Rating], llm_raters: Collection[str] = ()) -> list[PairAgreement]:
    """One row per (dimension, rater pair) with a shared item, then per pair one pooled row per group.

    A group's pooled row is written when the pair shares items on more than one of its dimensions.
    """
    score: dict[tuple[str, str, str], int] = {}
    for r in ratings:
        score[(r.dimension, r.rater, r.item_id)] = r.score
    dimensions = sorted({d for d, _, _ in score})
    raters = sorted({rater for _, rater, _ in score})
    rows: list[PairAgreement] = []
    for ra, rb in combinations(raters, 2):
        pooled: dict[str, tuple[list[int], list[int], set[str]]] = {}
        for dim in dimensions:
            items = sorted(i for d, r, i in score if d == dim and r == ra and (dim, rb, i) in score)
            if not items:
                continue
            a = [score[(dim, ra, i)] for i in items]
            b = [score[(dim, rb, i)] for i in items]
            group = pooled.setdefault(group_of(dim), ([], [], set()))
            group[0].extend(a)
            group[1].extend(b)
            group[2].add(dim)
            rows.append(_row(dim, ra, rb, a, b, llm_raters))
        for name in [*GROUPS, OTHER_GROUP]:
            if name in pooled and len(pooled[name][2]) > 1:
                rows.append(_row(name, ra, rb, pooled[name][0], pooled[name][1], llm_raters))
    return rows


def _row(
    dim: str, ra: str, rb: str, a: Sequence[int], b: Sequence[int], llm_raters: Collection[str]
) -> PairAgreement:
    exact, within, ac1 = pair_agreement(a, b)
    kind = pair_kind(ra, rb, llm_raters)
    return PairAgreement(
        dimension=dim, rater_a=ra, rater_b=rb, kind=kind, n=len(a), exact=exact, within_one=within, ac1=ac1
    )


# -- reading ratings ---------------------------------------------------------------------------


def read_ratings(path: Path) -> list[Rating]:
    """Long-format ratings; every problem is a DataError naming the file, line and column.

    Rows with an empty score are skipped (an exported sheet not filled in yet), so a
    half-done sheet can be checked; a rating given twice for the same item, rater and
    dimension is an error, not a silent overwrite.
    """
    text = _decode(path)
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise DataError(
            f"missing column(s) {', '.join(missing)}; expected {','.join(COLUMNS)}", path=path, line=1
        )
    out: list[Rating] = []
    seen: dict[tuple[str, str, str], int] = {}
    try:
        for row in reader:
            line = reader.line_num
            rating = _parse_row(row, path, line)
            if rating is None:
                continue
            key = (rating.item_id, rating.rater, rating.dimension)
            if key in seen:
                raise DataError(f"duplicate rating (first at line {seen[key]})", path=path, line=line)
            seen[key] = line
            out.append(rating)
    except csv.Error as exc:
        raise DataError(f"malformed CSV: {exc}", path=path, line=reader.line_num) from None
    if not out:
        raise DataError("no ratings (every score is empty)", path=path)
    return out


def read_all(paths: Sequence[Path]) -> list[Rating]:
    """Ratings from several files (e.g. the humans' sheet and ``lunar rate``'s LLM sheet)."""
    out: list[Rating] = []
    seen: dict[tuple[str, str, str], Path] = {}
    for path in paths:
        for r in read_ratings(path):
            key = (r.item_id, r.rater, r.dimension)
            if key in seen:
                raise DataError(
                    f"rating of {r.item_id}/{r.rater}/{r.dimension} also in {seen[key]}", path=path
                )
            seen[key] = path
            out.append(r)
    return out


def _decode(path: Path) -> str:
    raw = read_capped(path, limit=RATINGS_LIMIT, missing="ratings file not found")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})", path=path, line=line) from None


def _parse_row(row: dict[str | None, object], path: Path, line: int) -> Rating | None:
    if None in row:
        raise DataError("more cells than columns", path=path, line=line)
    cells = {c: str(row.get(c) or "").strip() for c in COLUMNS}
    if not cells["score"]:
        return None
    for column in ("item_id", "rater", "dimension"):
        if not cells[column]:
            raise DataError("empty cell", path=path, line=line, field=column)
    raw = cells["score"]
    if not (raw.isascii() and raw.isdigit() and int(raw) in SCALE):
        raise DataError(
            f"score {raw!r:.20} is not an integer from 1 to 5", path=path, line=line, field="score"
        )
    return Rating(cells["item_id"], cells["rater"], cells["dimension"], int(raw))


# -- writing -----------------------------------------------------------------------------------


def rows_csv(rows: Sequence[PairAgreement]) -> str:
    # Every cell formula-escaped (recworld.csvsafe): a rater may be called =HYPERLINK(...).
    return csv_dict_text(list(PairAgreement.model_fields), [r.model_dump() for r in rows])


def write_agreement(
    ratings: Sequence[Path], llm_raters: Collection[str], out: Path, *, force: bool = False
) -> AgreementReport:
    """Agreement of every rater pair in ``ratings``, written to ``out/agreement.json`` and ``.csv``.

    ``out`` is new, empty, an earlier agreement's folder, a LUNAR run or a rating
    sheet's folder (their markers); anything else needs ``force``, which keeps
    the files it does not write (:func:`recworld.io.claim_output_dir`).
    """
    rows = agreement_rows(read_all(ratings), llm_raters)
    report = AgreementReport(sources=[str(p) for p in ratings], llm_raters=sorted(llm_raters), rows=rows)
    claim_output_dir(out, AGREEMENT_KIND, force=force, joins=AGREEMENT_JOINS)
    report.write(out / AGREEMENT_FILE)
    atomic_write_text(out / "agreement.csv", rows_csv(rows))
    mark_output_dir(out, AGREEMENT_KIND)
    return report


def rows_text(rows: Sequence[PairAgreement]) -> str:
    """A fixed-width table for the terminal."""
    head = f"{'dimension':<28} {'pair':<36} {'kind':<12} {'n':>4} {'exact':>7} {'within1':>8} {'AC1':>7}"
    lines = [head, "-" * len(head)]
    for r in rows:
        pair = f"{r.rater_a} / {r.rater_b}"
        lines.append(
            f"{r.dimension:<28} {pair:<36} {r.kind:<12} {r.n:>4} "
            f"{r.exact:>7.1%} {r.within_one:>8.1%} {r.ac1:>7.3f}"
        )
    return "\n".join(lines)
