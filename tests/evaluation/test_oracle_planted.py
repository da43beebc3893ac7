"""Issue 24.2: the oracle derives every answer from the dataset and the build config alone.

Invariant (``recworld.baselines.oracle``, ``recworld.baselines.next_event``): on
a copy of a suite with the evidence stripped and some labels moved to a wrong
option, the oracle agrees with every kept label and with none of the moved
ones, on every measure and every source (movies with KG, text and image
fields; products with taxonomy, brand and colour), users with same-second ties
included. Its score on the copy is then the kept share.

The copies are planted here by plain JSON editing, with the share and the seed
drawn by hypothesis; the check reads only the run's samples.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.gold_support import build, movie_dataset, plant, question_rows, shop_dataset
from recworld.evaluation import EvalConfig, evaluate_config
from recworld.runner import RunnerConfig


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("planted")
    return {
        "movie": build(movie_dataset(seed=3), root / "movie", per_measure=30),
        "shop": build(shop_dataset(seed=4), root / "shop", per_measure=30),
    }


def oracle_picks(suite: Path, out: Path) -> dict[str, tuple[str, int | None]]:
    """Question id -> (measure, the oracle's pick) from an ordinary eval run."""
    config = EvalConfig(suite_dir=suite, model="oracle", out_dir=out, runner=RunnerConfig(progress=False))
    run = evaluate_config(config).run_dir
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    return {r["question_id"]: (r["measure"], r["parsed_index"]) for r in rows}


def test_the_sources_cover_every_family(sources: dict[str, Path]) -> None:
    measures = {m for suite in sources.values() for m in question_rows(suite)}
    assert {
        "kg_movie_genre",
        "kg_movie_cast",
        "text_logline",
        "mm_poster",
        "taxo_leaf",
        "taxo_root",
    } <= measures
    assert {"assoc_rule", "mem_item_item", "mem_user_user", "kg_prod_brand", "kg_prod_color"} <= measures


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    source=st.sampled_from(["movie", "shop"]), seed=st.integers(0, 10_000), share=st.sampled_from([0.5, 0.3])
)
def test_oracle_agrees_with_kept_labels_and_not_with_moved_ones(
    sources: dict[str, Path], tmp_path_factory: pytest.TempPathFactory, source: str, seed: int, share: float
) -> None:
    root = tmp_path_factory.mktemp("copy")
    planted = plant(sources[source], root / "suite", seed=seed, share=share, evidence={})
    assert all(not r["evidence"] for rows in question_rows(planted.suite).values() for r in rows)
    picks = oracle_picks(planted.suite, root / "run")
    by_measure: dict[str, list[tuple[bool, bool]]] = {}
    for qid, (measure, pick) in picks.items():
        moved = planted.moved[qid]
        by_measure.setdefault(measure, []).append((moved, pick == planted.truth[qid]))
    for measure, rows in by_measure.items():
        right = sum(ok for _, ok in rows)
        assert right == len(rows), (source, measure, f"{right}/{len(rows)} recomputed")
        kept = sum(not moved for moved, _ in rows) / len(rows)
        score = sum(not moved and ok for moved, ok in rows) / len(rows)  # the planted copy's score
        assert abs(score - kept) <= 1e-9, (measure, score, kept)


@pytest.mark.slow
def test_ml100k_oracle_scores_the_kept_share_with_evidence_stripped(
    ml100k_fetched: Path, tmp_path: Path
) -> None:
    from recworld.data.dataset import Dataset

    suite = build(Dataset.load(ml100k_fetched), tmp_path / "suite", per_measure=200, neural=True)
    planted = plant(suite, tmp_path / "planted", seed=11, share=0.5, evidence={})
    config = EvalConfig(
        suite_dir=planted.suite, model="oracle", out_dir=tmp_path / "run", runner=RunnerConfig(progress=False)
    )
    metrics = evaluate_config(config).metrics
    rows = question_rows(planted.suite)
    for measure, entry in metrics.measures.items():
        kept = sum(not planted.moved[r["id"]] for r in rows[measure]) / len(rows[measure])
        print(f"{measure}: oracle {entry.score:.3f} kept share {kept:.3f}")
        assert entry.score is not None and abs(entry.score - kept) <= 0.05, (measure, entry.score, kept)


def test_next_events_follow_the_manifests_tie_rule() -> None:
    """Up to manifest/3 the next item alone is right; after, every item at its timestamp (cut at ties)."""
    import pandas as pd

    from recworld.baselines.next_event import CO_NEXT, NONE, OWN, NextEvents
    from recworld.data.dataset import Dataset
    from recworld.lrworld.config import BuildConfig
    from recworld.lrworld.schema import Entry, PublicQuestion, QuestionFormat, Target

    rows = [("u0", f"a{k}", t) for k, t in enumerate([1, 2, 3, 4, 5, 6, 6, 7])]  # a5 and a6 tie as next
    rows += [("u1", f"b{k}", t) for k, t in enumerate([1, 1, 2, 3, 4, 5, 6])]  # a 5-item cut falls in a tie
    inter = pd.DataFrame(rows, columns=["user_id", "item_id", "timestamp"])
    genre = {"a5": "Own", "a6": "CoNext", "b6": "Next"}
    ids = sorted({r[1] for r in rows})
    items = pd.DataFrame({"item_id": ids, "title": ids, "genres": [[genre.get(i, "Other")] for i in ids]})
    dataset = Dataset.from_frames("ties", "movie", inter, items)

    def ask(user: str, shown: list[str], options: list[str]) -> PublicQuestion:
        return PublicQuestion(
            id=f"ties/kg_movie_genre/{user}", dataset="ties", domain="movie", measure="kg_movie_genre",
            scale="knowledgeability", format=QuestionFormat.MCQ,
            target=Target(kind="user", id=user, text=user),
            history=tuple(Entry(id=i, text=i) for i in shown),
            candidates=tuple(Entry(id=o, text=o) for o in options),
        )  # fmt: skip

    options = ["Own", "CoNext", "Other", "None"]
    legacy = NextEvents(dataset, BuildConfig(), events_are_sets=False)
    sets = NextEvents(dataset, BuildConfig(), events_are_sets=True)
    first = ask("u0", [f"a{k}" for k in range(5)], options)
    assert legacy.scores(first, view=None, field="genres") == [OWN, NONE, NONE, NONE]
    assert sets.scores(first, view=None, field="genres") == [OWN, CO_NEXT, NONE, NONE]
    cut = ask("u1", ["b2", "b3", "b4", "b5"], ["Next", "Other", "x", "y"])  # b1 shares b0's second
    full = ask("u1", ["b1", "b2", "b3", "b4", "b5"], ["Next", "Other", "x", "y"])
    assert legacy.scores(cut, view=None, field="genres")[0] == NONE
    assert sets.scores(cut, view=None, field="genres")[0] == OWN
    assert legacy.scores(full, view=None, field="genres")[0] == OWN
