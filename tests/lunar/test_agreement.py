"""Exact, within-one and Gwet's AC1 against the handbook's published example and irrCAC."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from helpers.cli import run_recworld
from recworld.errors import DataError
from recworld.lunar.quality.agreement import Rating, agreement_rows, gwet_ac1, pair_agreement, read_ratings


def _from_table(table: list[list[int]], labels: list[str]) -> tuple[list[str], list[str]]:
    """Expand a contingency table (rows: rater A, columns: rater B) into paired ratings."""
    a: list[str] = []
    b: list[str] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [labels[i]] * count
            b += [labels[j]] * count
    return a, b


def test_ac1_matches_gwet_handbook_abstractors_example() -> None:
    # Gwet's handbook: 100 pregnant women classified by 2 abstractors (Ectopic, AIU, NIU);
    # published AC1 = 0.84933 with pa = 0.89 and pe = 0.26992 (the irrCAC documentation).
    labels = ["Ectopic", "AIU", "NIU"]
    a, b = _from_table([[13, 0, 0], [0, 20, 7], [0, 4, 56]], labels)
    assert gwet_ac1(a, b, labels) == pytest.approx(0.84933, abs=5e-6)


def test_ac1_is_high_where_kappa_collapses() -> None:
    # The prevalence paradox: 90% agreement on an almost constant rating; Cohen's kappa is
    # (0.9 - 0.905) / 0.095 = -0.053, AC1 stays near the raw agreement.
    a = [5] * 19 + [4]
    b = [5] * 18 + [4, 5]
    exact, within, ac1 = pair_agreement(a, b)
    assert exact == pytest.approx(0.9) and within == 1.0
    # pa = 0.9; pi_5 = 38/40, pi_4 = 2/40; pe = (38/40 * 2/40 + 2/40 * 38/40) / (5 - 1)
    pe = 2 * (38 / 40) * (2 / 40) / 4
    assert ac1 == pytest.approx((0.9 - pe) / (1 - pe))


@pytest.mark.parametrize("seed", range(6))
def test_ac1_matches_irrcac_on_random_skewed_ratings(seed: int, irrcac_raw: ModuleType) -> None:
    pd = pytest.importorskip("pandas")
    raw = irrcac_raw
    gen = np.random.default_rng(seed)
    n = int(gen.integers(5, 60))
    a = gen.choice([1, 2, 3, 4, 5], size=n, p=[0.02, 0.03, 0.1, 0.35, 0.5])
    b = np.clip(a + gen.choice([-1, 0, 0, 0, 1], size=n), 1, 5)
    frame = pd.DataFrame({"A": a, "B": b})
    theirs = raw.CAC(frame, categories=[1, 2, 3, 4, 5], digits=10).gwet()["est"]["coefficient_value"]
    assert gwet_ac1(a.tolist(), b.tolist()) == pytest.approx(theirs, abs=1e-8)


def test_rows_per_dimension_pair_and_kind() -> None:
    ratings = [
        Rating("i1", "alice", "scenario_realism", 5),
        Rating("i2", "alice", "scenario_realism", 4),
        Rating("i1", "bob", "scenario_realism", 5),
        Rating("i2", "bob", "scenario_realism", 2),
        Rating("i1", "llm:gpt", "scenario_realism", 4),
        Rating("i1", "alice", "human_likeness", 3),
        Rating("i1", "bob", "human_likeness", 3),
        Rating("i9", "judge7", "human_likeness", 3),
    ]
    rows = agreement_rows(ratings, llm_raters={"judge7"})
    by = {(r.dimension, r.rater_a, r.rater_b): r for r in rows}
    hh = by[("scenario_realism", "alice", "bob")]
    assert (hh.kind, hh.n, hh.exact, hh.within_one) == ("human-human", 2, 0.5, 0.5)
    assert by[("scenario_realism", "alice", "llm:gpt")].kind == "human-LLM"
    assert by[("scenario_realism", "alice", "llm:gpt")].exact == 0.0
    pooled = by[("(queries)", "alice", "bob")]
    assert (pooled.n, pooled.exact) == (3, pytest.approx(2 / 3))
    assert ("human_likeness", "alice", "judge7") not in by  # no shared item: no row
    assert ("(queries)", "alice", "llm:gpt") not in by  # one shared dimension: no pooled row


def test_history_and_query_dimensions_pool_apart_never_together() -> None:
    # alice and bob: two history dimensions and two query dimensions on the same items.
    scores = {
        "record_plausibility": ([5, 5], [5, 4]),
        "affinity_coherence": ([4, 3], [4, 3]),
        "scenario_realism": ([2, 1], [5, 5]),
        "human_likeness": ([1, 2], [5, 5]),
    }
    ratings = [
        Rating(f"i{k}", rater, dim, pair[j][k])
        for dim, pair in scores.items()
        for j, rater in enumerate(("alice", "bob"))
        for k in range(2)
    ]
    by = {r.dimension: r for r in agreement_rows(ratings)}
    assert "(all)" not in by and "(other)" not in by
    histories, queries = by["(histories)"], by["(queries)"]
    assert histories.n == 4 and queries.n == 4
    # Histories: A = [5, 5, 4, 3], B = [5, 4, 4, 3]: the handbook-style check, AC1 = 0.700935.
    assert histories.ac1 == pytest.approx(0.7009345794, abs=1e-9)
    assert histories.exact == pytest.approx(0.75) and queries.exact == 0.0
    assert queries.ac1 < 0 < histories.ac1  # pooled together they would hide the query disagreement


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("body", "line", "needle"),
    [
        ("item_id,rater,dimension\n", 1, "missing column(s) score"),
        ("item_id,rater,dimension,score\na,r,d,6\n", 2, "not an integer from 1 to 5"),
        ("item_id,rater,dimension,score\na,r,d,4\nb,r,d,3.5\n", 3, "score"),
        ("item_id,rater,dimension,score\na,r,d,4\na,r,d,5\n", 3, "duplicate rating (first at line 2)"),
        ("item_id,rater,dimension,score\na,,d,4\n", 2, "rater"),
        ("item_id,rater,dimension,score\na,r,d,4,extra\n", 2, "more cells"),
    ],
)
def test_bad_ratings_name_file_and_line(tmp_path: Path, body: str, line: int, needle: str) -> None:
    path = _write(tmp_path / "r.csv", body)
    with pytest.raises(DataError) as info:
        read_ratings(path)
    assert f"{path}:{line}" in str(info.value)
    assert needle in str(info.value)


def test_empty_scores_are_skipped_and_all_empty_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.csv", "item_id,rater,dimension,score\na,r,d,\nb,r,d,4\n")
    assert read_ratings(path) == [Rating("b", "r", "d", 4)]
    with pytest.raises(DataError, match="no ratings"):
        read_ratings(_write(tmp_path / "e.csv", "item_id,rater,dimension,score\na,r,d,\n"))


def test_cli_prints_and_writes_the_table(tmp_path: Path) -> None:
    lines = ["item_id,rater,dimension,score"]
    for item, (x, y, z) in enumerate([(5, 5, 5), (4, 5, 4), (5, 5, 3)]):
        lines += [f"q{item},ann1,realism,{x}", f"q{item},ann2,realism,{y}", f"q{item},gpt,realism,{z}"]
    path = _write(tmp_path / "ratings.csv", "\n".join(lines) + "\n")
    # Its folder is not recworld's: the default is a new agreement/ folder beside the sheet.
    assert run_recworld("lunar", "agreement", path, "--llm-raters", "gpt").returncode == 0
    out = tmp_path / "agreement"
    assert (out / "agreement.json").is_file()
    result = run_recworld("lunar", "agreement", str(path), "--llm-raters", "gpt", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "human-LLM" in result.stdout and "human-human" in result.stdout
    written = json.loads((out / "agreement.json").read_text())
    hh = next(r for r in written["rows"] if r["kind"] == "human-human")
    assert hh["exact"] == pytest.approx(2 / 3) and hh["within_one"] == 1.0
    assert (out / "agreement.csv").read_text().startswith("dimension,rater_a,rater_b,kind")


def test_cli_bad_file_exits_2_with_location(tmp_path: Path) -> None:
    path = _write(tmp_path / "ratings.csv", "item_id,rater,dimension,score\na,r,d,9\n")
    ran = run_recworld("lunar", "agreement", path)
    assert ran.returncode == 2 and f"{path}:2" in ran.stderr
